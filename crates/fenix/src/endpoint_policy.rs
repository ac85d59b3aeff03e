//! Per-endpoint policy: the owner's own request headers and retry rules.
//!
//! Custom headers are checked once, when the owner sets them, so every attempt
//! can send them without a second thought: a name must be an HTTP token, a
//! value visible ASCII, space and tab only (no CR, LF, NUL, other control
//! characters or bytes beyond ASCII: no header injection, and nothing a
//! receiver's server would read differently from Fenix), and no
//! header may change how the request travels (hop-by-hop headers) or override
//! what Fenix itself sends (its `X-Fenix-*` and `webhook-*` headers, `Host`,
//! `Content-Length`, `Content-Type`, `User-Agent`, `Idempotency-Key`). Values
//! of credential headers (`Authorization`, `Cookie`, and any name the owner
//! marks sensitive) are sealed with the master key like signing secrets, bound
//! to the endpoint and the header's name, and every read shows them as
//! [`REDACTED`]. That text is never a value of its own: given back, it only
//! keeps a sealed value already stored, so a read showing it always means a
//! secret is hidden there.
//!
//! The retry policy (an own schedule, status codes that fail at once, an own
//! attempt timeout) stays within the bounds of the global settings; absent, the
//! global ones apply.
//!
//! These checks make the parts of an endpoint's spec (`endpoint_spec`), which
//! stores and reads them.

use std::{collections::BTreeMap, time::Duration};

use base64::{engine::general_purpose::STANDARD, Engine as _};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};

use crate::secrets::{Keyring, MasterKey};

/// Most custom headers per endpoint.
pub const MAX_HEADERS: usize = 20;
/// Most bytes of custom headers per endpoint (names and values together).
pub const MAX_HEADER_BYTES: usize = 8 * 1024;
/// What a read shows instead of a sensitive header's value. Sent back in a
/// `PATCH`, it keeps the value stored.
pub const REDACTED: &str = "[redacted]";
/// Headers whose values are always sealed and redacted: they carry credentials.
const CREDENTIAL_HEADERS: [&str; 2] = ["authorization", "cookie"];
/// Headers about the connection, not the request (RFC 9110 §7.6.1): a proxy
/// or server would act on them, not the receiver's application.
const HOP_BY_HOP: [&str; 6] = ["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"];
/// Headers Fenix sets itself, or that only the HTTP client may set.
const RESERVED: [&str; 6] = ["host", "content-length", "content-type", "user-agent", "idempotency-key", "expect"];
/// Most waits in an endpoint's schedule (the bound of `FENIX_RETRY_SCHEDULE`).
pub const MAX_SCHEDULE_WAITS: usize = 20;
/// Longest single wait in an endpoint's schedule.
pub const MAX_WAIT: Duration = Duration::from_secs(30 * 86_400);
/// Most final status codes per endpoint.
const MAX_FINAL_CODES: usize = 100;

/// A refused policy, as the API answers it (422 with this `code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidPolicy {
    pub code: &'static str,
    /// Names the field or header; never quotes a header's value.
    pub message: String,
}

fn invalid(code: &'static str, message: impl Into<String>) -> InvalidPolicy {
    InvalidPolicy { code, message: message.into() }
}

/// One stored header: `value` in clear, or `sealed` (base64 of the sealed blob).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StoredHeader {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sealed: Option<String>,
}

/// An endpoint's custom headers as stored in its `headers` column (a JSON
/// array, in the order given; sensitive values sealed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredHeaders(Vec<StoredHeader>);

/// What seals a header's value: bound to its endpoint and its name, so a
/// sealed value cannot be moved to another endpoint or header.
fn context(endpoint_id: &str, name: &str) -> String {
    format!("{endpoint_id}/header/{}", name.to_ascii_lowercase())
}

impl StoredHeaders {
    /// Reads the column; text that is not the stored shape is an error (it
    /// may hold a value: never quote it).
    pub fn from_json(json: &str) -> Result<StoredHeaders, serde_json::Error> {
        serde_json::from_str(json).map(StoredHeaders)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).expect("strings serialize")
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a header of this name (in any case) is among them.
    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|h| h.name.eq_ignore_ascii_case(name))
    }

    /// The headers as every read shows them: sensitive values as [`REDACTED`];
    /// and the names the owner marked sensitive (credential headers are
    /// sensitive without being marked).
    pub fn redacted(&self) -> (BTreeMap<String, String>, Vec<String>) {
        let mut shown = BTreeMap::new();
        let mut marked = Vec::new();
        for h in &self.0 {
            match &h.value {
                Some(v) => shown.insert(h.name.clone(), v.clone()),
                None => {
                    if !is_credential(&h.name) {
                        marked.push(h.name.clone());
                    }
                    shown.insert(h.name.clone(), REDACTED.to_string())
                }
            };
        }
        (shown, marked)
    }

    fn sealed_names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter(|h| h.sealed.is_some()).map(|h| h.name.as_str())
    }

    /// The headers to send, sensitive values opened. Fails (without saying
    /// any value) when a sealed value does not open.
    pub fn open(&self, keyring: &Keyring, endpoint_id: &str) -> anyhow::Result<HeaderMap> {
        let mut map = HeaderMap::with_capacity(self.0.len());
        for h in &self.0 {
            let name = HeaderName::from_bytes(h.name.as_bytes())?;
            let value = match (&h.value, &h.sealed) {
                (Some(v), _) => HeaderValue::from_str(v)?,
                (None, Some(sealed)) => {
                    let blob = STANDARD.decode(sealed)?;
                    let mut v = HeaderValue::from_bytes(&keyring.open(&blob, &context(endpoint_id, &h.name))?)?;
                    v.set_sensitive(true);
                    v
                }
                (None, None) => anyhow::bail!("header {} has no value", h.name),
            };
            map.append(name, value);
        }
        Ok(map)
    }

    /// The same headers with every sealed value under the keyring's current
    /// key (for `fenix rekey`); `None` when nothing needed it.
    pub fn resealed(&self, keyring: &Keyring, endpoint_id: &str) -> anyhow::Result<Option<StoredHeaders>> {
        let mut changed = false;
        let mut out = self.clone();
        for h in &mut out.0 {
            let Some(sealed) = &h.sealed else { continue };
            let blob = STANDARD.decode(sealed)?;
            if keyring.is_current(&blob) {
                continue;
            }
            let ctx = context(endpoint_id, &h.name);
            let clear = keyring.open(&blob, &ctx)?;
            h.sealed = Some(STANDARD.encode(keyring.current.seal(&clear, &ctx)));
            changed = true;
        }
        Ok(changed.then_some(out))
    }
}

fn is_credential(name: &str) -> bool {
    CREDENTIAL_HEADERS.iter().any(|c| name.eq_ignore_ascii_case(c))
}

/// Checks one header name: an HTTP token that neither travels hop by hop
/// nor overrides a header Fenix sends.
fn check_name(name: &str) -> Result<(), InvalidPolicy> {
    if name.is_empty() || HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(invalid(
            "invalid_header_name",
            format!("header name {name:?} is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~)"),
        ));
    }
    let lower = name.to_ascii_lowercase();
    if HOP_BY_HOP.contains(&lower.as_str()) || lower.starts_with("proxy-") {
        return Err(invalid(
            "hop_by_hop_header",
            format!("header {name} is a hop-by-hop header (Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade) and cannot be set"),
        ));
    }
    if RESERVED.contains(&lower.as_str()) || lower.starts_with("x-fenix-") || lower.starts_with("webhook-") {
        return Err(invalid(
            "reserved_header",
            format!("header {name} is set by Fenix or its HTTP client (X-Fenix-*, webhook-*, Host, Content-Length, Content-Type, User-Agent, Idempotency-Key, Expect) and cannot be overridden"),
        ));
    }
    Ok(())
}

/// Checks one header value: visible ASCII, space and tab only (docs/api.md).
/// `HeaderValue` alone would take bytes beyond ASCII (`é`, U+0085) and send
/// them raw, which receivers' servers read in different ways.
fn check_value(name: &str, value: &str) -> Result<(), InvalidPolicy> {
    if value.chars().all(|c| c == '\t' || (' '..='~').contains(&c)) {
        return Ok(());
    }
    Err(invalid(
        "invalid_header_value",
        format!(
            "the value of header {name} must be visible ASCII, space and tab only (no CR, LF, NUL, other control \
             characters or non-ASCII characters)"
        ),
    ))
}

/// One header a transformation returned (`transform`), by the same rules as
/// the owner's own: a valid name that is neither hop-by-hop nor Fenix's, a
/// value of visible ASCII, space and tab.
pub fn check_header(name: &str, value: &str) -> Result<(), InvalidPolicy> {
    check_name(name)?;
    check_value(name, value)
}

/// The owner's headers, checked and made ready to store: values of credential
/// headers and of the names in `sensitive` sealed under `key` for `endpoint_id`.
/// A sensitive header given as [`REDACTED`] keeps its value from `previous`
/// (the headers stored so far), if it was stored sealed there.
pub fn parse_headers(
    given: &BTreeMap<String, String>,
    sensitive: &[String],
    previous: &StoredHeaders,
    key: &MasterKey,
    endpoint_id: &str,
) -> Result<StoredHeaders, InvalidPolicy> {
    check_counts(given, sensitive)?;
    let mut bytes = 0;
    let mut out: Vec<StoredHeader> = Vec::with_capacity(given.len());
    for (name, value) in given {
        check_name(name)?;
        if out.iter().any(|h| h.name.eq_ignore_ascii_case(name)) {
            return Err(invalid(
                "duplicate_header",
                format!("header {name} is given twice (names are case-insensitive)"),
            ));
        }
        check_value(name, value)?;
        bytes += name.len() + value.len();
        let secret = is_credential(name) || sensitive.iter().any(|s| s.eq_ignore_ascii_case(name));
        out.push(stored_header(name, value, secret, previous, (key, endpoint_id))?);
    }
    if bytes > MAX_HEADER_BYTES {
        return Err(invalid(
            "headers_too_large",
            format!("headers take {bytes} bytes (names and values); at most {MAX_HEADER_BYTES} are allowed"),
        ));
    }
    Ok(StoredHeaders(out))
}

/// At most [`MAX_HEADERS`] headers, and every name in `sensitive` among them.
fn check_counts(given: &BTreeMap<String, String>, sensitive: &[String]) -> Result<(), InvalidPolicy> {
    if given.len() > MAX_HEADERS {
        return Err(invalid(
            "too_many_headers",
            format!("headers has {} entries; at most {MAX_HEADERS} are allowed", given.len()),
        ));
    }
    for s in sensitive {
        if !given.keys().any(|n| n.eq_ignore_ascii_case(s)) {
            return Err(invalid(
                "invalid_sensitive_headers",
                format!("sensitive_headers names {s:?}, which is not in headers"),
            ));
        }
    }
    Ok(())
}

/// One checked header as stored: in clear, or (`secret`) sealed under the key
/// for the endpoint, or, given as [`REDACTED`], the value sealed in `previous`.
fn stored_header(
    name: &str,
    value: &str,
    secret: bool,
    previous: &StoredHeaders,
    (key, endpoint_id): (&MasterKey, &str),
) -> Result<StoredHeader, InvalidPolicy> {
    let was_sealed = || previous.0.iter().any(|h| h.name.eq_ignore_ascii_case(name) && h.sealed.is_some());
    let placeholder = value.trim().eq_ignore_ascii_case(REDACTED);
    if !secret && placeholder && was_sealed() {
        // Un-marking a sensitive header takes its value again: its stored
        // one is never turned into plain text, and "[redacted]" is not it.
        return Err(invalid(
            "invalid_header_value",
            format!("header {name} is no longer sensitive: give its value, not {REDACTED:?}"),
        ));
    }
    if placeholder && (!secret || value != REDACTED) {
        // Stored as text, reads would show a secret hidden where there is none.
        return Err(invalid(
            "invalid_header_value",
            format!(
                "header {name} is {REDACTED:?}, the text reads show for a hidden value: it only keeps a sensitive \
                 value already stored under that name; give the header's real value"
            ),
        ));
    }
    if !secret {
        return Ok(StoredHeader { name: name.to_string(), value: Some(value.to_string()), sealed: None });
    }
    if value == REDACTED {
        let kept = previous.0.iter().find(|h| h.name.eq_ignore_ascii_case(name)).and_then(|h| h.sealed.clone());
        let Some(sealed) = kept else {
            return Err(invalid(
                "invalid_header_value",
                format!("header {name} is {REDACTED:?} but has no stored sensitive value to keep; give its value"),
            ));
        };
        return Ok(StoredHeader { name: name.to_string(), value: None, sealed: Some(sealed) });
    }
    let sealed = key.seal(value.as_bytes(), &context(endpoint_id, name));
    Ok(StoredHeader { name: name.to_string(), value: None, sealed: Some(STANDARD.encode(sealed)) })
}

/// The names stored sealed so far, for a `PATCH` that changes `headers`
/// without `sensitive_headers`: what was sensitive stays sensitive.
pub fn still_sensitive(previous: &StoredHeaders) -> Vec<String> {
    previous.sealed_names().filter(|n| !is_credential(n)).map(str::to_string).collect()
}

/// An endpoint's own retry schedule: at most [`MAX_SCHEDULE_WAITS`] waits
/// like `FENIX_RETRY_SCHEDULE`, each at most [`MAX_WAIT`]. Stored as
/// milliseconds (a JSON array).
pub fn parse_schedule(waits: &[String]) -> Result<Vec<Duration>, InvalidPolicy> {
    if waits.len() > MAX_SCHEDULE_WAITS {
        return Err(invalid(
            "invalid_retry_schedule",
            format!("retry_schedule has {} waits; at most {MAX_SCHEDULE_WAITS} are allowed", waits.len()),
        ));
    }
    waits
        .iter()
        .map(|w| match humantime::parse_duration(w.trim()) {
            Ok(d) if d <= MAX_WAIT => Ok(d),
            _ => Err(invalid(
                "invalid_retry_schedule",
                format!("retry_schedule entry {w:?} must be a duration such as 30s, 5m or 2h, at most 30d"),
            )),
        })
        .collect()
}

/// Durations as the API shows them (`30s`, `5m`, `1h 30m`).
pub fn show_duration(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// Status codes that fail a delivery at once: 4xx only, because a 5xx or a
/// timeout is what retries are for; 408 and 429 ask the sender to come back
/// later, and 410 is already final (it disables the endpoint). Sorted, without repeats.
pub fn parse_final_codes(codes: &[i64]) -> Result<Vec<u16>, InvalidPolicy> {
    if codes.len() > MAX_FINAL_CODES {
        return Err(invalid(
            "invalid_final_status_codes",
            format!("final_status_codes has {} entries; at most {MAX_FINAL_CODES} are allowed", codes.len()),
        ));
    }
    let mut out = Vec::with_capacity(codes.len());
    for &c in codes {
        if !(400..=499).contains(&c) || matches!(c, 408 | 410 | 429) {
            return Err(invalid(
                "invalid_final_status_codes",
                format!("final_status_codes entry {c} must be a 4xx status other than 408, 410 and 429"),
            ));
        }
        out.push(c as u16);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// An endpoint's own attempt timeout: more than zero and at most `global`
/// (`FENIX_ATTEMPT_TIMEOUT`, which the lease duration is sized for).
pub fn parse_attempt_timeout(raw: &str, global: Duration) -> Result<Duration, InvalidPolicy> {
    match humantime::parse_duration(raw.trim()) {
        Ok(d) if !d.is_zero() && d <= global => Ok(d),
        _ => Err(invalid(
            "invalid_attempt_timeout",
            format!(
                "attempt_timeout must be a duration such as 5s, more than zero and at most {} (FENIX_ATTEMPT_TIMEOUT)",
                show_duration(global)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    fn parse(pairs: &[(&str, &str)], sensitive: &[&str]) -> Result<StoredHeaders, InvalidPolicy> {
        let sensitive: Vec<String> = sensitive.iter().map(|s| s.to_string()).collect();
        parse_headers(&headers(pairs), &sensitive, &StoredHeaders::default(), &MasterKey::generate(), "ep_1")
    }

    fn code(pairs: &[(&str, &str)]) -> &'static str {
        parse(pairs, &[]).unwrap_err().code
    }

    #[test]
    fn refused_headers_have_their_codes() {
        assert_eq!(code(&[("X-A", "a\r\nX-B: b")]), "invalid_header_value");
        assert_eq!(code(&[("X-A", "a\nb")]), "invalid_header_value");
        assert_eq!(code(&[("X-A", "a\0b")]), "invalid_header_value");
        assert_eq!(code(&[("X-A", "a\x7fb")]), "invalid_header_value");
        assert_eq!(code(&[("X A", "a")]), "invalid_header_name");
        assert_eq!(code(&[("", "a")]), "invalid_header_name");
        for hop in ["Connection", "keep-alive", "Proxy-Authorization", "TE", "Trailer", "Transfer-Encoding", "Upgrade"]
        {
            assert_eq!(code(&[(hop, "x")]), "hop_by_hop_header", "{hop}");
        }
        for own in [
            "Host",
            "Content-Length",
            "content-type",
            "User-Agent",
            "Idempotency-Key",
            "X-Fenix-Signature",
            "webhook-id",
        ] {
            assert_eq!(code(&[(own, "x")]), "reserved_header", "{own}");
        }
        assert_eq!(code(&[("X-A", "1"), ("x-a", "2")]), "duplicate_header");
    }

    #[test]
    fn limits_on_count_and_size() {
        let many: Vec<(String, String)> = (0..=MAX_HEADERS).map(|i| (format!("X-H{i}"), "v".into())).collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert_eq!(code(&many), "too_many_headers");
        let big = "v".repeat(MAX_HEADER_BYTES);
        assert_eq!(code(&[("X-Big", &big)]), "headers_too_large");
    }

    #[test]
    fn credential_and_marked_values_are_sealed_and_redacted() {
        let key = MasterKey::generate();
        let given = headers(&[("Authorization", "Bearer s3cret"), ("X-Api-Key", "k3y"), ("X-Tenant", "acme")]);
        let stored = parse_headers(&given, &["x-api-key".into()], &StoredHeaders::default(), &key, "ep_1").unwrap();
        let json = stored.to_json();
        assert!(!json.contains("s3cret") && !json.contains("k3y") && json.contains("acme"), "{json}");
        let (shown, marked) = StoredHeaders::from_json(&json).unwrap().redacted();
        assert_eq!(shown["Authorization"], REDACTED);
        assert_eq!(shown["X-Api-Key"], REDACTED);
        assert_eq!(shown["X-Tenant"], "acme");
        assert_eq!(marked, vec!["X-Api-Key".to_string()]);
        let ring = Keyring { current: key, previous: vec![] };
        let map = StoredHeaders::from_json(&json).unwrap().open(&ring, "ep_1").unwrap();
        assert_eq!(map["authorization"], "Bearer s3cret");
        assert_eq!(map["x-api-key"], "k3y");
        assert!(StoredHeaders::from_json(&json).unwrap().open(&ring, "ep_2").is_err(), "bound to its endpoint");
    }

    #[test]
    fn redacted_keeps_the_stored_value_and_only_that() {
        let key = MasterKey::generate();
        let first = parse_headers(&headers(&[("Cookie", "a=1")]), &[], &StoredHeaders::default(), &key, "ep").unwrap();
        let kept = parse_headers(&headers(&[("Cookie", REDACTED)]), &[], &first, &key, "ep").unwrap();
        assert_eq!(kept, first);
        let err = parse_headers(&headers(&[("Authorization", REDACTED)]), &[], &first, &key, "ep").unwrap_err();
        assert_eq!(err.code, "invalid_header_value");
        let marked =
            parse_headers(&headers(&[("X-Key", "k")]), &["X-Key".into()], &StoredHeaders::default(), &key, "ep")
                .unwrap();
        let unmarked = parse_headers(&headers(&[("X-Key", REDACTED)]), &[], &marked, &key, "ep").unwrap_err();
        assert_eq!(unmarked.code, "invalid_header_value", "a sensitive value is never stored as the text [redacted]");
        let plain = parse_headers(&headers(&[("X-Key", "now-public")]), &[], &marked, &key, "ep").unwrap();
        assert_eq!(plain.redacted().0["X-Key"], "now-public");
    }

    #[test]
    fn values_beyond_visible_ascii_are_refused() {
        for value in ["café", "a\u{85}b", "a\u{a0}b", "日本", "a\u{2028}b"] {
            assert_eq!(code(&[("X-A", value)]), "invalid_header_value", "{value:?}");
        }
        let fine = parse(&[("X-A", "Visible ASCII ~!@#$%^&*()_+{}|:\"<>?\tand tab")], &[]).unwrap();
        assert_eq!(fine.redacted().0["X-A"], "Visible ASCII ~!@#$%^&*()_+{}|:\"<>?\tand tab");
    }

    #[test]
    fn the_redacted_text_is_refused_where_no_stored_secret_stands_behind_it() {
        for value in [REDACTED, "[REDACTED]", " [redacted] "] {
            assert_eq!(code(&[("X-Plain", value)]), "invalid_header_value", "plain {value:?}");
            assert_eq!(code(&[("Authorization", value)]), "invalid_header_value", "new secret {value:?}");
            assert_eq!(parse(&[("X-Key", value)], &["X-Key"]).unwrap_err().code, "invalid_header_value");
        }
        let key = MasterKey::generate();
        let stored = parse_headers(&headers(&[("Cookie", "a=1")]), &[], &StoredHeaders::default(), &key, "ep").unwrap();
        let variant = parse_headers(&headers(&[("Cookie", "[REDACTED]")]), &[], &stored, &key, "ep").unwrap_err();
        assert_eq!(variant.code, "invalid_header_value", "only the exact placeholder keeps a stored value");
        assert_eq!(parse_headers(&headers(&[("Cookie", REDACTED)]), &[], &stored, &key, "ep").unwrap(), stored);
    }

    #[test]
    fn marking_an_absent_header_is_refused() {
        assert_eq!(parse(&[("X-A", "1")], &["X-B"]).unwrap_err().code, "invalid_sensitive_headers");
    }

    #[test]
    fn retry_policy_bounds() {
        assert_eq!(
            parse_schedule(&["30s".into(), "5m".into()]).unwrap(),
            vec![Duration::from_secs(30), Duration::from_secs(300)]
        );
        assert_eq!(parse_schedule(&["soon".into()]).unwrap_err().code, "invalid_retry_schedule");
        assert_eq!(parse_schedule(&vec!["1s".to_string(); 21]).unwrap_err().code, "invalid_retry_schedule");
        assert_eq!(parse_final_codes(&[404, 400, 404]).unwrap(), vec![400, 404]);
        for bad in [200, 408, 410, 429, 500, 99_999] {
            assert_eq!(parse_final_codes(&[bad]).unwrap_err().code, "invalid_final_status_codes");
        }
        let global = Duration::from_secs(10);
        assert_eq!(parse_attempt_timeout("2s", global).unwrap(), Duration::from_secs(2));
        assert_eq!(parse_attempt_timeout("11s", global).unwrap_err().code, "invalid_attempt_timeout");
        assert_eq!(parse_attempt_timeout("0s", global).unwrap_err().code, "invalid_attempt_timeout");
        let s = parse_schedule(&["1s".into(), "1h 30m".into()]).unwrap();
        assert_eq!(show_duration(s[1]), "1h 30m");
    }
}
