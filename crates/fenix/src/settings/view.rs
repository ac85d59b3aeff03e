//! How `GET /v1/settings` shows a value: durations in the syntax they are
//! written in (`90d`, `30s`, `1500ms`: [`show_duration`]), lists
//! comma-separated, secrets and the passwords in URLs redacted.

use std::time::Duration;

use super::{Redacted, FOREVER};

/// What a secret shows instead of its value.
pub const REDACTED: &str = "[redacted]";

pub(super) fn dur(d: Duration) -> Option<String> {
    Some(if d == FOREVER { "forever".into() } else { show_duration(d) })
}

/// A duration in the syntax the settings, the CLI and the API's `expires_in`
/// take: a whole number of its largest unit that divides it (`90d`, `36h`,
/// `90s`, `1500ms`). humantime's own format would show 90 days as
/// "2months 29days 2h 52m 48s" (its month is 30.44 days).
pub fn show_duration(d: Duration) -> String {
    const UNITS: [(&str, u128); 7] = [
        ("d", 86_400_000_000_000),
        ("h", 3_600_000_000_000),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ];
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    let (unit, size) = UNITS.iter().find(|(_, size)| nanos.is_multiple_of(*size)).copied().unwrap_or(("ns", 1));
    format!("{}{unit}", nanos / size)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_shown_as_they_are_written_and_read_back_the_same() {
        for (d, shown) in [
            (Duration::from_secs(90 * 86_400), "90d"),
            (Duration::from_secs(36 * 3600), "36h"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::ZERO, "0s"),
        ] {
            assert_eq!(show_duration(d), shown);
            assert_eq!(super::super::parse_duration(shown).unwrap(), d, "{shown} reads back");
        }
    }
}
