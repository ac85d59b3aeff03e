//! One attempt of one job: the destination check, signing with the secrets
//! live now, one HTTP request with the wire contract's headers (no redirects,
//! at most 4 KiB of the response read, stored as NUL-free UTF-8), errors
//! sorted into the classes the log shows ([`ErrorClass`]: `timeout`, `connect`,
//! `tls`, `dns`, `destination_blocked`, `redirect`, `http_status`, …), and the next step the
//! schedule decides. It reports; it changes nothing itself: what follows an
//! outcome happens once it is recorded (`reactions.rs`).

mod authorized;
mod tls_fallback;
mod transformed;

/// A request with the endpoint's OAuth2 bearer token (deliveries and ownership challenges).
pub(super) use authorized::send as send_authorized;
/// A request through the endpoint's own client, the previous identity tried on a TLS failure.
pub(super) use tls_fallback::send_with;

use std::{error::Error as _, time::Duration};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER};

use super::{
    job::Job,
    reactions::Notes,
    recorder::Reported,
    schedule::{self, parse_retry_after, AttemptFacts, Next},
    signing_keys::{self, LiveSecret, Reloaded},
};
use crate::{
    error_class::ErrorClass, ids, state::SharedState, store::deliveries::AttemptRecord, time, transform::Transformed,
};

/// Builds, signs and sends one attempt of `job` under the attempt timeout;
/// decides what comes next.
pub(super) async fn attempt(state: &SharedState, client: &reqwest::Client, keys: &Reloaded, job: &Job) -> Reported {
    let c = &job.claimed;
    let attempt_id = ids::AttemptId::new();
    let started_at = time::now_ms();
    let started = std::time::Instant::now();
    let timeout = attempt_timeout(state, job);
    // One time limit over the whole attempt: the destination re-check (a
    // fresh DNS resolution, which a hostile name server can hold), signing,
    // the request and the excerpt. The duration counts all of it.
    let mut versions: Vec<i64> = Vec::new();
    let mut cancelled = false;
    let mut prepared = Duration::ZERO;
    let deadline = tokio::time::Instant::now() + timeout;
    let span = attempt_span(state, job, attempt_id.as_str());
    let traceparent = span.traceparent_header();
    let out = (&mut versions, &mut cancelled, &mut prepared);
    let sending = check_sign_send(state, client, keys, job, (attempt_id.as_str(), traceparent), deadline, out);
    let timed = tokio::time::timeout_at(deadline, sending).await;
    if cancelled {
        // The endpoint's transformation cancelled the delivery: no attempt.
        span.end_attempt(None, 0, None, crate::lifecycle::DeliveryStatus::Skipped.as_str());
        return Reported::without_attempt(c.outcome(crate::lifecycle::DeliveryStatus::Skipped, None, None));
    }
    let mut result = timed.unwrap_or_else(|_| timed_out(timeout));
    result.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
    let finished = time::now_ms();
    let next = next_step(state, job, &result, finished);
    let notes = Notes {
        error: result.error,
        first_success_ms: (next == Next::Succeeded && c.budget_start == 0).then(|| finished - job.event_created_at),
        gone: next == Next::Gone,
        prepared,
    };
    let (status, next_attempt_at) = (next.status(), next.retry_at());
    span.end_attempt(result.facts.status, result.duration_ms, result.error.map(ErrorClass::as_str), status.as_str());
    tracing::debug!(
        delivery_id = %c.id,
        attempt_id = %attempt_id,
        endpoint_id = %c.endpoint_id,
        status = result.facts.status,
        error = result.error.map(ErrorClass::as_str),
        outcome = status.as_str(),
        "attempt finished"
    );
    let record = attempt_record(job, attempt_id, started_at, result, &versions);
    let outcome = c.outcome(status, Some(record), next_attempt_at);
    Reported { outcome, notes }
}

/// The span of this attempt, a child of its event's ingestion span (empty with tracing off).
fn attempt_span(state: &SharedState, job: &Job, attempt_id: &str) -> crate::traces::Attempt {
    let c = &job.claimed;
    // Borrowed ids only: with tracing off nothing is copied or made.
    let facts = crate::traces::AttemptFacts {
        app_id: c.app_id.as_str(),
        endpoint_id: c.endpoint_id.as_str(),
        event_id: c.event_id.as_str(),
        event_type: &job.event_type,
        delivery_id: c.id.as_str(),
        attempt_id,
        attempt_number: c.attempt_count + 1,
        host: job.host.as_deref(),
    };
    state.traces.attempt(job.trace_context.as_deref(), &facts)
}

/// The endpoint's own timeout, never beyond the global one the lease is sized for.
fn attempt_timeout(state: &SharedState, job: &Job) -> Duration {
    job.policy.attempt_timeout.map_or(state.settings.attempt_timeout, |t| t.min(state.settings.attempt_timeout))
}

/// What the schedule (the endpoint's or the global one) makes of `result`,
/// counted within the delivery's current retry budget.
fn next_step(state: &SharedState, job: &Job, result: &AttemptResult, finished: time::Millis) -> Next {
    let c = &job.claimed;
    let n_in_budget = u32::try_from(c.attempt_count - c.budget_start + 1).unwrap_or(u32::MAX);
    let retry_schedule = job.policy.retry_schedule.as_deref().unwrap_or(&state.settings.retry_schedule);
    schedule::next_step_for(&result.facts, n_in_budget, retry_schedule, &job.policy.final_status_codes, finished)
}

/// The attempt as the log keeps it, signed with the secret `versions`.
fn attempt_record(
    job: &Job,
    id: ids::AttemptId,
    started_at: time::Millis,
    result: AttemptResult,
    versions: &[i64],
) -> AttemptRecord {
    let c = &job.claimed;
    AttemptRecord {
        id,
        delivery_id: c.id.clone(),
        endpoint_id: c.endpoint_id.clone(),
        attempt_number: c.attempt_count + 1,
        started_at,
        duration_ms: result.duration_ms,
        response_status: result.facts.status.map(i64::from),
        // Both come from the network: made storable on both backends.
        response_excerpt: result.excerpt.map(|e| storable_text(&e).into_owned()),
        error: result.error.map(|e| e.as_str().to_owned()),
        error_detail: result.detail.map(|d| storable_detail(&d)),
        signed_with: serde_json::to_string(versions).expect("numbers serialize"),
    }
}

/// The destination check, then signing with the secrets live now, then the request.
async fn check_sign_send(
    state: &SharedState,
    client: &reqwest::Client,
    keys: &Reloaded,
    job: &Job,
    (attempt_id, traceparent): (&str, Option<HeaderValue>),
    deadline: tokio::time::Instant,
    (versions, cancelled, prepared): (&mut Vec<i64>, &mut bool, &mut Duration),
) -> AttemptResult {
    let url = match check_destination(state, &job.url).await {
        Ok(url) => url,
        Err(e) => return refused(ErrorClass::of_destination(&e), e.to_string()),
    };
    let transformed = match transform(state, job, url, deadline, cancelled, prepared).await {
        Ok(transformed) => transformed,
        Err(result) => return result,
    };
    let body = transformed.as_ref().map_or_else(|| job.envelope.clone(), |t| Bytes::from(t.body.clone()));
    let mut headers = match sign(state, keys, job, attempt_id, &body, versions).await {
        Ok(headers) => headers,
        Err(refusal) => return refusal,
    };
    let Some(custom) = &job.policy.headers else {
        return refused(
            ErrorClass::SealedHeader,
            "a sensitive custom header of the endpoint could not be opened".into(),
        );
    };
    let (url, method) = match &transformed {
        None => {
            add_custom_headers(&mut headers, custom);
            (url.clone(), reqwest::Method::POST)
        }
        Some(t) => {
            add_transformed_headers(&mut headers, t, custom);
            (t.url_on(url), t.method.to_http())
        }
    };
    // Only while tracing is on: the attempt's own span, for the receiver to
    // join the trace. Last, so no custom or script header replaces it.
    if let Some(traceparent) = traceparent {
        headers.insert(HeaderName::from_static(crate::traces::TRACEPARENT), traceparent);
    }
    let request = Request { method, url, headers, body };
    let auth = job.policy.auth.as_ref();
    tls_fallback::send_with(&job.policy.client, client, request, |client, request| {
        authorized::send(state, client, &job.claimed.endpoint_id, auth, deadline, request)
    })
    .await
}

/// The request the endpoint's transformation made, if it has one; the
/// attempt's result instead when the script cancelled (`cancelled` set) or
/// failed. Only an endpoint with a transformation pays for one
/// (`transformed.rs`); the time it takes is Fenix's, not the receiver's
/// (`Notes::prepared`).
async fn transform(
    state: &SharedState,
    job: &Job,
    url: &url::Url,
    deadline: tokio::time::Instant,
    cancelled: &mut bool,
    prepared: &mut Duration,
) -> Result<Option<Transformed>, AttemptResult> {
    let Some(script) = &job.policy.transformation else {
        return Ok(None);
    };
    let preparing = std::time::Instant::now();
    let made = transformed::prepare(state, job, script, url, deadline.into_std()).await;
    *prepared = preparing.elapsed();
    match made {
        transformed::Prepared::Send(t) => Ok(Some(t)),
        transformed::Prepared::Cancelled => {
            *cancelled = true;
            Err(refused(ErrorClass::TransformationFailed, "cancelled".into()))
        }
        transformed::Prepared::Failed(result) => Err(result),
    }
}

/// The wire contract's headers for `body`, signed with the endpoint's
/// secrets live now; `versions` names the secrets that signed.
async fn sign(
    state: &SharedState,
    keys: &Reloaded,
    job: &Job,
    attempt_id: &str,
    body: &[u8],
    versions: &mut Vec<i64>,
) -> Result<HeaderMap, AttemptResult> {
    let now = time::now_ms();
    let c = &job.claimed;
    let secrets =
        keys.secrets_for(&state.store, &state.keyring, &c.endpoint_id, &job.secrets, job.loaded_at, now).await;
    let live: Vec<&LiveSecret> = secrets.iter().filter(|s| s.is_live(now)).collect();
    if live.is_empty() {
        return Err(refused(ErrorClass::NoSecret, "the endpoint has no usable signing secret".into()));
    }
    let message = Message {
        endpoint_id: c.endpoint_id.as_str(),
        id: c.event_id.as_str(),
        event_type: &job.event_type,
        attempt_id,
        body,
    };
    let headers = signed_headers(&live, job.scheme, &message, now)?;
    *versions = live.iter().map(|s| s.version).collect();
    Ok(headers)
}

/// The script's headers, then the sealed custom ones it was not given (they
/// win over a header of the same name); Fenix's own stay.
fn add_transformed_headers(headers: &mut HeaderMap, t: &Transformed, custom: &HeaderMap) {
    for (name, value) in &t.headers {
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            if !headers.contains_key(&n) {
                headers.insert(n, v);
            }
        }
    }
    for (name, value) in custom.iter().filter(|(_, v)| v.is_sensitive()) {
        if !WireHeaders::is_own(name) {
            headers.insert(name.clone(), value.clone());
        }
    }
}

/// What is signed and sent: a delivery's event, or an ownership challenge.
pub(super) struct Message<'a> {
    /// The endpoint whose keys sign (Ed25519 signatures name their key by it).
    pub(super) endpoint_id: &'a str,
    /// The event id (`webhook-id`, `X-Fenix-Event-Id`), part of what is signed.
    pub(super) id: &'a str,
    pub(super) event_type: &'a str,
    pub(super) attempt_id: &'a str,
    pub(super) body: &'a [u8],
}

/// Signs `message` with the `live` secrets in `scheme` at `now` and makes the
/// wire contract's headers: the one signing path of deliveries and of
/// ownership challenges (`ownership.rs`).
pub(super) fn signed_headers(
    live: &[&LiveSecret],
    scheme: fenix_signing::Scheme,
    message: &Message<'_>,
    now: time::Millis,
) -> Result<HeaderMap, AttemptResult> {
    let timestamp = now / 1000;
    let signature =
        match signing_keys::signature_header(scheme, message.endpoint_id, live, message.id, timestamp, message.body) {
            Ok(signature) => signature,
            Err(e) => return Err(refused(ErrorClass::Signing, e.to_string())),
        };
    Ok(WireHeaders {
        event_id: message.id,
        event_type: message.event_type,
        attempt_id: message.attempt_id,
        timestamp,
        scheme,
        signature: &signature,
    }
    .to_map())
}

/// The endpoint's own headers: checked when set never to collide with the
/// wire contract's; if one ever did, Fenix's own value stays.
pub(super) fn add_custom_headers(headers: &mut HeaderMap, custom: &HeaderMap) {
    for (name, value) in custom {
        if !headers.contains_key(name) {
            headers.insert(name.clone(), value.clone());
        }
    }
}

/// The destination policy, again, before every attempt: the URL rules (their
/// verdict for this batch), and for a host name a fresh resolution with
/// every address checked; answers the URL to send to. The HTTP client's
/// resolver checks again whenever it opens a connection; this check also
/// covers a pooled connection, which would not resolve again.
pub(super) async fn check_destination<'u>(
    state: &SharedState,
    checked: &'u Result<url::Url, fenix_destination::DestinationError>,
) -> Result<&'u url::Url, fenix_destination::DestinationError> {
    let url = checked.as_ref().map_err(Clone::clone)?;
    if let Some(url::Host::Domain(host)) = url.host() {
        state.destinations.resolve_checked(host).await?;
    }
    Ok(url)
}

/// Most response bytes kept (and read) per attempt.
pub const EXCERPT_BYTES: usize = 4096;

/// What one request did.
#[derive(Debug, Clone)]
pub struct AttemptResult {
    pub facts: AttemptFacts,
    pub excerpt: Option<String>,
    /// `None` on success.
    pub error: Option<ErrorClass>,
    /// A short human explanation of the error (never contains the payload).
    pub detail: Option<String>,
    pub duration_ms: i64,
}

/// A request ready to send.
#[derive(Clone)]
pub struct Request {
    /// `POST`, or what an endpoint's transformation chose.
    pub method: reqwest::Method,
    pub url: reqwest::Url,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Sends one request and classifies what happened. The caller puts the whole
/// attempt (destination re-check included) under the attempt timeout and
/// measures its duration; `duration_ms` is left 0 here.
pub async fn send(client: &reqwest::Client, req: Request) -> AttemptResult {
    let outcome = async {
        let resp = client.request(req.method, req.url).headers(req.headers).body(req.body).send().await?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, std::time::SystemTime::now()));
        let excerpt = read_excerpt(resp).await;
        Ok::<_, reqwest::Error>((status, retry_after, excerpt))
    }
    .await;
    match outcome {
        Err(e) => {
            let (class, detail) = classify(&e);
            failure(class, detail, 0)
        }
        Ok((status, retry_after, excerpt)) => {
            let error = match status {
                200..=299 => None,
                300..=399 => Some(ErrorClass::Redirect),
                _ => Some(ErrorClass::HttpStatus),
            };
            let detail = error.map(|e| match e {
                ErrorClass::Redirect => format!("the receiver answered {status}; redirects are not followed"),
                _ => format!("the receiver answered {status}"),
            });
            AttemptResult {
                facts: AttemptFacts { status: Some(status), retry_after },
                excerpt,
                error,
                detail,
                duration_ms: 0,
            }
        }
    }
}

/// The attempt did not finish within `timeout` (destination check, request or excerpt).
pub fn timed_out(timeout: Duration) -> AttemptResult {
    failure(ErrorClass::Timeout, format!("no complete response within {}", humantime::format_duration(timeout)), 0)
}

/// No request was made: the destination check or signing refused it.
pub fn refused(class: ErrorClass, detail: String) -> AttemptResult {
    failure(class, detail, 0)
}

fn failure(class: ErrorClass, detail: String, duration_ms: i64) -> AttemptResult {
    AttemptResult {
        facts: AttemptFacts::default(),
        excerpt: None,
        error: Some(class),
        detail: Some(detail),
        duration_ms,
    }
}

/// Reads at most [`EXCERPT_BYTES`] of the body, never the whole of a large one.
async fn read_excerpt(mut resp: reqwest::Response) -> Option<String> {
    let mut buf = Vec::new();
    while buf.len() < EXCERPT_BYTES {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                let take = chunk.len().min(EXCERPT_BYTES - buf.len());
                buf.extend_from_slice(&chunk[..take]);
            }
            _ => break,
        }
    }
    if buf.is_empty() {
        return None;
    }
    Some(storable_excerpt(&buf))
}

/// The text kept of a response body's first bytes, whatever they are: valid
/// UTF-8 without NUL, at most [`EXCERPT_BYTES`] long. PostgreSQL refuses NUL in
/// `TEXT` (a binary answer once stopped every outcome from being recorded), so
/// each NUL and each invalid UTF-8 sequence becomes U+FFFD (`�`); a cut inside
/// a multi-byte character at the end drops that character.
pub fn storable_excerpt(bytes: &[u8]) -> String {
    let bytes = &bytes[..bytes.len().min(EXCERPT_BYTES)];
    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => bytes.len(),
    };
    let mut s = storable_text(&String::from_utf8_lossy(&bytes[..valid])).into_owned();
    let mut end = s.len().min(EXCERPT_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

/// Text that came from the network (an error's explanation, a response
/// excerpt) made fit for both databases: each NUL becomes U+FFFD.
pub fn storable_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Longest error explanation kept (resolver and TLS errors can quote what a
/// server sent).
pub const DETAIL_BYTES: usize = 1024;

/// An error's explanation as stored: NUL-free, at most [`DETAIL_BYTES`].
pub fn storable_detail(detail: &str) -> String {
    let mut s = storable_text(detail).into_owned();
    let mut end = s.len().min(DETAIL_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

/// Sorts a client error into a log error class with a short explanation.
fn classify(e: &reqwest::Error) -> (ErrorClass, String) {
    let mut source: Option<&(dyn std::error::Error + 'static)> = e.source();
    let mut chain = String::new();
    let mut tls = false;
    while let Some(s) = source {
        if let Some(d) = s.downcast_ref::<fenix_destination::DestinationError>() {
            return (ErrorClass::of_destination(d), d.to_string());
        }
        // A TLS alert (a receiver refusing the client certificate: `UnknownCA`)
        // arrives as an I/O error holding rustls' error.
        let inner = s.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref());
        tls |= s.is::<rustls::Error>() || inner.is_some_and(|i| i.is::<rustls::Error>());
        chain.push_str(&s.to_string());
        chain.push_str(": ");
        source = s.source();
    }
    let lower = chain.to_ascii_lowercase();
    match crate::egress::refusal_in(&lower) {
        Some(crate::egress::EgressRefusal::DestinationBlocked) => {
            return (ErrorClass::DestinationBlocked, "the egress forwarder refused the destination's address".into())
        }
        Some(crate::egress::EgressRefusal::ReceiverUnreachable) => {
            return (ErrorClass::Connect, "could not connect: the egress proxy could not reach the receiver".into())
        }
        Some(crate::egress::EgressRefusal::Proxy(why)) => return (ErrorClass::Proxy, why.into()),
        None => {}
    }
    if e.is_timeout() {
        (ErrorClass::Timeout, "the attempt timed out".into())
    } else if tls || lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        (ErrorClass::Tls, format!("TLS failed: {}", chain.trim_end_matches(": ")))
    } else if lower.contains("dns") || lower.contains("resolve") {
        (ErrorClass::Dns, format!("DNS failed: {}", chain.trim_end_matches(": ")))
    } else if e.is_connect() {
        (ErrorClass::Connect, format!("could not connect: {}", chain.trim_end_matches(": ")))
    } else if e.is_body() || e.is_decode() {
        (ErrorClass::ResponseBody, "the response body could not be read".into())
    } else {
        (ErrorClass::Request, format!("the request failed: {}", chain.trim_end_matches(": ")))
    }
}

/// The wire contract's headers for one attempt.
pub struct WireHeaders<'a> {
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub attempt_id: &'a str,
    pub timestamp: i64,
    pub scheme: fenix_signing::Scheme,
    pub signature: &'a str,
}

impl WireHeaders<'_> {
    /// Whether `name` is one of the headers Fenix itself sends.
    pub fn is_own(name: &HeaderName) -> bool {
        let n = name.as_str();
        n.starts_with("x-fenix-") || n.starts_with("webhook-") || n == "idempotency-key" || n == "content-type"
    }

    /// Builds the header map (values that are not valid header text are impossible here:
    /// ids, types and signatures are ASCII by construction).
    pub fn to_map(&self) -> HeaderMap {
        let mut h = HeaderMap::with_capacity(10);
        let mut put = |name: &'static str, value: &str| {
            if let Ok(v) = HeaderValue::from_str(value) {
                h.insert(HeaderName::from_static(name), v);
            }
        };
        put("x-fenix-event-id", self.event_id);
        put("x-fenix-event-type", self.event_type);
        put("x-fenix-delivery-id", self.attempt_id);
        put("idempotency-key", self.event_id);
        let ts = self.timestamp.to_string();
        match self.scheme {
            fenix_signing::Scheme::StandardWebhooks => {
                put("webhook-id", self.event_id);
                put("webhook-timestamp", &ts);
                put("webhook-signature", self.signature);
            }
            _ => {
                put("x-fenix-timestamp", &ts);
                put("x-fenix-signature", self.signature);
            }
        }
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_excerpt_is_valid_utf8_without_nul() {
        let s = storable_excerpt(b"ok\0\xff\xfe{\"a\":1}\0");
        assert_eq!(s, "ok\u{FFFD}\u{FFFD}\u{FFFD}{\"a\":1}\u{FFFD}");
        assert!(!s.contains('\0'));
    }

    #[test]
    fn an_excerpt_of_nul_bytes_stays_within_the_cap() {
        let s = storable_excerpt(&[0u8; EXCERPT_BYTES * 2]);
        assert!(s.len() <= EXCERPT_BYTES);
        assert!(s.chars().all(|c| c == '\u{FFFD}'));
        assert_eq!(s.chars().count(), EXCERPT_BYTES / 3);
    }

    #[test]
    fn a_character_cut_by_the_cap_is_dropped() {
        let mut body = vec![b'a'; EXCERPT_BYTES - 1];
        body.extend_from_slice("é".as_bytes());
        assert_eq!(storable_excerpt(&body).len(), EXCERPT_BYTES - 1);
    }

    #[test]
    fn detail_text_loses_its_nul_bytes() {
        assert_eq!(storable_text("a\0b"), "a\u{FFFD}b");
        assert!(matches!(storable_text("plain"), std::borrow::Cow::Borrowed("plain")));
    }
}
