//! How `GET /v1/settings` shows a value: durations as written, lists
//! comma-separated, secrets and the passwords in URLs redacted.

use std::time::Duration;

use super::{bounds::human, Redacted, FOREVER};

/// What a secret shows instead of its value.
pub const REDACTED: &str = "[redacted]";

pub(super) fn dur(d: Duration) -> Option<String> {
    Some(if d == FOREVER { "forever".into() } else { human(d) })
}

pub(super) fn waits(ws: &[Duration]) -> Option<String> {
    list(&ws.iter().map(|d| dur(*d).unwrap_or_default()).collect::<Vec<_>>())
}

pub(super) fn list<T: ToString>(items: &[T]) -> Option<String> {
    Some(items.iter().map(ToString::to_string).collect::<Vec<_>>().join(","))
}

pub(super) fn secret(v: Option<&Redacted>) -> Option<String> {
    v.map(|_| REDACTED.to_string())
}

/// A URL with its password (and, with `query_too`, its query) redacted; not a URL: redacted whole.
pub(super) fn url_redacted(u: &str, query_too: bool) -> String {
    let Ok(mut parsed) = url::Url::parse(u) else { return REDACTED.into() };
    // Inside a URL the brackets of `[redacted]` would be percent-encoded: the bare word reads better.
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("redacted"));
    }
    if query_too && parsed.query().is_some() {
        parsed.set_query(Some("redacted"));
    }
    parsed.to_string()
}
