//! The HTTP calls: one [`Call`] per API operation, sent with the token,
//! answered as a model or as [`Error::Api`], and retried on `429` and `503`
//! when repeating it cannot do anything twice.
//!
//! Idempotent methods (`GET`, `PUT`, `DELETE`) are retried; a `POST` or
//! `PATCH` only when its call says so (`events().send` with an idempotency
//! key: Fenix answers a repeat with the event it already accepted). The wait
//! is the server's `Retry-After` when it sent one, else 0.5 s doubling.

use std::time::Duration;

use reqwest::{header, Method, StatusCode, Url};
use serde::de::DeserializeOwned;

use crate::{Error, Operation};

/// The first wait before a retry without `Retry-After`; each further one doubles.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// No wait is longer, whatever `Retry-After` says.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// The shared part of every call.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    base: Url,
    authorization: String,
    max_retries: u32,
}

/// One request to make.
pub(crate) struct Call<'a> {
    operation: Operation,
    params: &'a [&'a str],
    query: Vec<(&'static str, String)>,
    body: Option<Vec<u8>>,
    idempotency_key: Option<&'a str>,
    retry: bool,
}

impl<'a> Call<'a> {
    /// `operation` with its path parameters in order (`app`, then `ep`, …).
    pub(crate) fn new(operation: Operation, params: &'a [&'a str]) -> Call<'a> {
        let retry = matches!(operation.method, "GET" | "PUT" | "DELETE");
        Call { operation, params, query: Vec::new(), body: None, idempotency_key: None, retry }
    }

    /// A JSON body.
    pub(crate) fn json(mut self, body: &impl serde::Serialize) -> Call<'a> {
        self.body = Some(serde_json::to_vec(body).expect("models serialise to JSON"));
        self
    }

    /// Query parameters, in order.
    pub(crate) fn query_pairs(mut self, pairs: Vec<(&'static str, String)>) -> Call<'a> {
        self.query.extend(pairs);
        self
    }

    /// An `Idempotency-Key` header; makes the call safe to retry.
    pub(crate) fn idempotency_key(mut self, key: Option<&'a str>) -> Call<'a> {
        if key.is_some() {
            self.idempotency_key = key;
            self.retry = true;
        }
        self
    }

    /// Retried even though its method is not idempotent, when `safe` (the caller knows repeating it is).
    pub(crate) fn retry_if(mut self, safe: bool) -> Call<'a> {
        self.retry |= safe;
        self
    }
}

impl Transport {
    pub(crate) fn new(base_url: &str, token: &str, max_retries: u32, timeout: Duration) -> Result<Transport, Error> {
        let invalid = || Error::InvalidBaseUrl(base_url.to_owned());
        let base = Url::parse(base_url).map_err(|_| invalid())?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(invalid());
        }
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("fenix-client-rust/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(Error::Transport)?;
        Ok(Transport { client, base, authorization: format!("Bearer {token}"), max_retries })
    }

    /// Sends `call` and parses its answer.
    pub(crate) async fn send<T: DeserializeOwned>(&self, call: Call<'_>) -> Result<T, Error> {
        let (status, bytes) = self.send_raw(call).await?;
        serde_json::from_slice(&bytes).map_err(|source| Error::Decode { status: status.as_u16(), source })
    }

    /// Sends `call`, whose answer has no body (`204`).
    pub(crate) async fn send_empty(&self, call: Call<'_>) -> Result<(), Error> {
        self.send_raw(call).await.map(drop)
    }

    async fn send_raw(&self, call: Call<'_>) -> Result<(StatusCode, bytes::Bytes), Error> {
        let url = self.url(&call);
        let method = Method::from_bytes(call.operation.method.as_bytes()).expect("the document's methods are valid");
        let mut retries = 0;
        loop {
            let mut request =
                self.client.request(method.clone(), url.clone()).header(header::AUTHORIZATION, &self.authorization);
            if let Some(body) = &call.body {
                request = request.header(header::CONTENT_TYPE, "application/json").body(body.clone());
            }
            if let Some(key) = call.idempotency_key {
                request = request.header("idempotency-key", key);
            }
            let response = request.send().await.map_err(Error::Transport)?;
            let status = response.status();
            let retry_after = retry_after(response.headers());
            let bytes = response.bytes().await.map_err(Error::Transport)?;
            if status.is_success() {
                return Ok((status, bytes));
            }
            let again = matches!(status.as_u16(), 429 | 503) && call.retry && retries < self.max_retries;
            if !again {
                return Err(api_error(status, &bytes, retry_after));
            }
            let backoff = FIRST_BACKOFF.saturating_mul(1 << retries.min(10));
            tokio::time::sleep(retry_after.unwrap_or(backoff).min(MAX_WAIT)).await;
            retries += 1;
        }
    }

    /// The operation's path with each `{…}` replaced by the next parameter
    /// (percent-encoded), under the base URL's own path.
    fn url(&self, call: &Call<'_>) -> Url {
        let mut url = self.base.clone();
        {
            let mut segments = url.path_segments_mut().expect("checked in new");
            segments.pop_if_empty();
            let mut params = call.params.iter();
            for segment in call.operation.path.trim_start_matches('/').split('/') {
                if segment.starts_with('{') {
                    segments.push(params.next().expect("a parameter for every placeholder"));
                } else {
                    segments.push(segment);
                }
            }
        }
        if !call.query.is_empty() {
            url.query_pairs_mut().extend_pairs(call.query.iter().map(|(name, value)| (*name, value.as_str())));
        }
        url
    }
}

/// `Retry-After` in seconds (Fenix never sends the date form).
fn retry_after(headers: &header::HeaderMap) -> Option<Duration> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse().ok().map(Duration::from_secs)
}

/// An error answer's body, read with the code as text rather than the
/// generated `ErrorCode`, so a code newer than this client still reads.
#[derive(serde::Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

/// The `error` object of an error answer.
#[derive(serde::Deserialize)]
struct ErrorDetail {
    code: String,
    message: String,
}

/// The error body, or a stand-in when the answer has none (a proxy's page).
fn api_error(status: StatusCode, bytes: &[u8], retry_after: Option<Duration>) -> Error {
    match serde_json::from_slice::<ErrorBody>(bytes) {
        Ok(body) => {
            Error::Api { status: status.as_u16(), code: body.error.code, message: body.error.message, retry_after }
        }
        Err(_) => Error::Api {
            status: status.as_u16(),
            code: format!("http_{}", status.as_u16()),
            message: String::from_utf8_lossy(bytes).chars().take(200).collect(),
            retry_after,
        },
    }
}
