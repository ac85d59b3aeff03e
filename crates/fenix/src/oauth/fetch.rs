//! One token request (RFC 6749 §4.4.2): `grant_type=client_credentials`
//! (with `scope` and `audience` when set) posted to the token URL, the
//! client authenticated by its method: HTTP Basic, the form body, or a JWT
//! client assertion (RFC 7523 §2.2). The token URL passes the destination
//! policy again before every request (a name may have moved to a forbidden
//! address since it was set), and the HTTP client's resolver checks every
//! connection's address as for deliveries. The answer is read up to
//! [`MAX_ANSWER_BYTES`]; it must be JSON with an `access_token` of header-safe
//! text and a `token_type` of `bearer` (any case).
//!
//! Errors ([`TokenError`]) explain what failed without quoting the answer's
//! token or the client's credential.

use std::time::Duration;

use base64::{engine::general_purpose::STANDARD, Engine as _};
use rand::RngCore;

use super::spec::{AuthMethod, Credential, EndpointAuth, KeyAlgorithm};
use crate::secrets::Keyring;

/// Most bytes of a token endpoint's answer read.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Longest access token taken.
const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// How long a token without `expires_in` is used.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);
/// Longest a token is used, whatever `expires_in` says.
const MAX_LIFETIME: Duration = Duration::from_secs(86_400);
/// How long a client assertion is valid.
const ASSERTION_LIFETIME_S: u64 = 60;
/// RFC 7523 §2.2.
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// An access token in clear. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessToken([redacted])")
    }
}

impl AccessToken {
    /// A token read back from the cache (checked when it was fetched).
    pub(super) fn from_cache(text: String) -> AccessToken {
        AccessToken(text)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `Authorization: Bearer <token>`, marked sensitive.
    pub fn header_value(&self) -> reqwest::header::HeaderValue {
        let mut v = reqwest::header::HeaderValue::from_str(&format!("Bearer {}", self.0))
            .expect("checked to be visible ASCII when fetched");
        v.set_sensitive(true);
        v
    }
}

/// A token the endpoint answered, and how long it may be used.
#[derive(Debug)]
pub struct Fetched {
    pub token: AccessToken,
    /// `expires_in` (bounded), or [`DEFAULT_LIFETIME`].
    pub lifetime: Duration,
}

/// Why no token was fetched: the attempt fails with `auth_token` and this detail.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the token URL is refused by the destination policy: {0}")]
    Destination(fenix_destination::DestinationError),
    #[error("the endpoint's OAuth2 credential could not be opened")]
    Credential,
    #[error("the client assertion could not be signed")]
    Assertion,
    #[error("the token request failed: {0}")]
    Request(String),
    #[error("the token endpoint answered {status}{}", .error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default())]
    Status { status: u16, error: Option<String> },
    #[error("the token endpoint's answer is larger than 64 KiB")]
    TooLarge,
    #[error("the token endpoint's answer is not a JSON object")]
    NotJson,
    #[error("the token endpoint's answer has no usable access_token")]
    NoAccessToken,
    #[error("the token endpoint's answer has token_type {0:?}, not bearer")]
    NotBearer(String),
    #[error("no token within the attempt's time")]
    TimedOut,
}

/// What a fetch sends through: the common outbound client and the policy.
pub struct Fetcher<'a> {
    pub client: &'a reqwest::Client,
    pub destinations: &'a fenix_destination::CheckingResolver,
    pub keyring: &'a Keyring,
}

/// Fetches a token for endpoint `endpoint_id` with `auth`.
pub async fn fetch(f: &Fetcher<'_>, endpoint_id: &str, auth: &EndpointAuth) -> Result<Fetched, TokenError> {
    let url = f.destinations.check_destination(&auth.token_url).await.map_err(TokenError::Destination)?;
    let credential = auth.open(f.keyring, endpoint_id).map_err(|_| TokenError::Credential)?;
    let (body, basic_auth) = form(auth, &credential)?;
    let mut request = f.client.post(url);
    if let Some(value) = basic_auth {
        request = request.header(reqwest::header::AUTHORIZATION, value);
    }
    let response = request
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| failed(&e))?;
    let status = response.status().as_u16();
    let body = read_capped(response).await?;
    judge(status, &body)
}

/// The request's form body, and the `Authorization` header of
/// `client_secret_basic`.
fn form(
    auth: &EndpointAuth,
    credential: &Credential,
) -> Result<(String, Option<reqwest::header::HeaderValue>), TokenError> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", "client_credentials");
    if let Some(scope) = &auth.scope {
        form.append_pair("scope", scope);
    }
    if let Some(audience) = &auth.audience {
        form.append_pair("audience", audience);
    }
    let mut header = None;
    match (credential, auth.token_endpoint_auth_method) {
        (Credential::Secret(secret), AuthMethod::ClientSecretBasic) => {
            let mut value = reqwest::header::HeaderValue::from_str(&basic(&auth.client_id, secret))
                .map_err(|_| TokenError::Credential)?;
            value.set_sensitive(true);
            header = Some(value);
        }
        (Credential::Secret(secret), _) => {
            form.append_pair("client_id", &auth.client_id).append_pair("client_secret", secret);
        }
        (Credential::Key { algorithm, pem }, _) => {
            let jwt = assertion(*algorithm, pem, &auth.client_id, &auth.token_url)?;
            form.append_pair("client_id", &auth.client_id)
                .append_pair("client_assertion_type", ASSERTION_TYPE)
                .append_pair("client_assertion", &jwt);
        }
    }
    Ok((form.finish(), header))
}

/// RFC 6749 §2.3.1: each part form-encoded, then Basic.
fn basic(client_id: &str, secret: &str) -> String {
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    format!("Basic {}", STANDARD.encode(format!("{}:{}", enc(client_id), enc(secret))))
}

/// A client assertion (RFC 7523 §3): issued by and about the client, for
/// the token URL, valid one minute, with a random id.
pub fn assertion(algorithm: KeyAlgorithm, pem: &str, client_id: &str, token_url: &str) -> Result<String, TokenError> {
    let key = algorithm.key(pem.as_bytes()).map_err(|_| TokenError::Assertion)?;
    let mut jti = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut jti);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": token_url,
        "jti": hex::encode(jti),
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_S,
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(algorithm.jwt()), &claims, &key).map_err(|_| TokenError::Assertion)
}

/// A client error as a token error (a timeout as the attempt's own).
fn failed(e: &reqwest::Error) -> TokenError {
    if e.is_timeout() {
        TokenError::TimedOut
    } else {
        TokenError::Request(explain(e))
    }
}

/// A client error's explanation: what kind of failure, and its causes
/// (addresses, TLS and resolver messages; never the request's body).
fn explain(e: &reqwest::Error) -> String {
    use std::error::Error as _;
    let mut source = e.source();
    let mut chain = Vec::new();
    while let Some(s) = source {
        if let Some(d) = s.downcast_ref::<fenix_destination::DestinationError>() {
            return format!("the destination policy refused it: {d}");
        }
        chain.push(s.to_string());
        source = s.source();
    }
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    if chain.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {}", chain.join(": "))
    }
}

/// The answer's body, at most [`MAX_ANSWER_BYTES`].
async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, TokenError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failed(&e))? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(TokenError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The token of a `2xx` answer; an error answer's `error` code is kept
/// when it is a short code (RFC 6749 §5.2), never its description.
pub fn judge(status: u16, body: &[u8]) -> Result<Fetched, TokenError> {
    let json: Option<serde_json::Map<String, serde_json::Value>> = serde_json::from_slice(body).ok();
    if !(200..300).contains(&status) {
        let error = json
            .as_ref()
            .and_then(|j| j.get("error")?.as_str())
            .filter(|e| e.len() <= 64 && e.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b)))
            .map(str::to_string);
        return Err(TokenError::Status { status, error });
    }
    let json = json.ok_or(TokenError::NotJson)?;
    let token = json
        .get("access_token")
        .and_then(|t| t.as_str())
        .filter(|t| !t.is_empty() && t.len() <= MAX_TOKEN_BYTES && t.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or(TokenError::NoAccessToken)?;
    match json.get("token_type").and_then(|t| t.as_str()) {
        Some(t) if t.eq_ignore_ascii_case("bearer") => {}
        Some(t) => return Err(TokenError::NotBearer(t.chars().take(20).filter(|c| c.is_ascii_graphic()).collect())),
        None => return Err(TokenError::NotBearer(String::new())),
    }
    let expires_in = match json.get("expires_in") {
        Some(serde_json::Value::Number(n)) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Some(serde_json::Value::String(s)) => s.parse::<u64>().ok(),
        _ => None,
    };
    let lifetime = expires_in.map_or(DEFAULT_LIFETIME, |s| Duration::from_secs(s).min(MAX_LIFETIME));
    Ok(Fetched { token: AccessToken(token.to_string()), lifetime })
}

/// How long before its expiry a token is no longer used: a tenth of its
/// lifetime, at most a minute (so it is not sent as it expires).
pub fn use_for(lifetime: Duration) -> Duration {
    lifetime - (lifetime / 10).min(Duration::from_secs(60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_answer_gives_its_token_and_lifetime() {
        let f = judge(200, br#"{"access_token":"abc.def","token_type":"Bearer","expires_in":120}"#).unwrap();
        assert_eq!((f.token.expose(), f.lifetime), ("abc.def", Duration::from_secs(120)));
        let f = judge(200, br#"{"access_token":"t","token_type":"bearer"}"#).unwrap();
        assert_eq!(f.lifetime, DEFAULT_LIFETIME);
        assert_eq!(use_for(Duration::from_secs(120)), Duration::from_secs(108));
        assert_eq!(use_for(Duration::from_secs(3600)), Duration::from_secs(3540));
    }

    #[test]
    fn a_bad_answer_is_an_error_that_quotes_no_token() {
        let e = judge(200, br#"{"access_token":"s3cr3t","token_type":"mac"}"#).unwrap_err();
        assert!(matches!(e, TokenError::NotBearer(_)));
        assert!(!e.to_string().contains("s3cr3t"));
        assert!(matches!(judge(200, b"<html>"), Err(TokenError::NotJson)));
        assert!(matches!(judge(200, br#"{"token_type":"bearer"}"#), Err(TokenError::NoAccessToken)));
        let spaced = br#"{"access_token":"a b","token_type":"bearer"}"#;
        assert!(matches!(judge(200, spaced), Err(TokenError::NoAccessToken)));
        let e = judge(401, br#"{"error":"invalid_client","error_description":"secret s3cr3t wrong"}"#).unwrap_err();
        assert_eq!(e.to_string(), "the token endpoint answered 401 (invalid_client)");
    }

    #[test]
    fn basic_credentials_are_form_encoded_first() {
        let v = basic("a:b", "p w");
        assert_eq!(v, format!("Basic {}", STANDARD.encode("a%3Ab:p+w")));
    }
}
