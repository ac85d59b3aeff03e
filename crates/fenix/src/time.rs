//! Timestamps as milliseconds since the Unix epoch (the unit stored in every
//! time column, on both backends) and their RFC 3339 rendering in the API.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// Now, from the system clock.
pub fn now_ms() -> Millis {
    SystemTime::now().duration_since(UNIX_EPOCH).map(millis).unwrap_or(0)
}

/// A duration in milliseconds, saturating at `i64::MAX` (a `u128` cast with
/// `as` would wrap a huge duration to a negative number).
pub fn millis(d: Duration) -> Millis {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Adds a duration, saturating.
pub fn add(t: Millis, d: Duration) -> Millis {
    t.saturating_add(millis(d))
}

/// Subtracts a duration, saturating: "older than a huge retention" is a time
/// before every row, never (as wrapped arithmetic made it) a time after them all.
pub fn sub(t: Millis, d: Duration) -> Millis {
    t.saturating_sub(millis(d))
}

/// `2026-11-29T21:04:19Z` (seconds precision, as in the envelope).
pub fn rfc3339(t: Millis) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(t.max(0) as u64)).to_string()
}

/// `2026-11-29T21:04:19.123Z` (milliseconds, for the log API).
pub fn rfc3339_ms(t: Millis) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(t.max(0) as u64)).to_string()
}

/// Parses an RFC 3339 timestamp given in a query (`since`, `until`).
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    let t = humantime::parse_rfc3339_weak(s.trim()).ok()?;
    t.duration_since(UNIX_EPOCH).ok().map(millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_round_trip_through_rfc3339() {
        let t = 1_795_986_259_000;
        assert_eq!(rfc3339(t), "2026-11-29T21:04:19Z");
        assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
    }

    #[test]
    fn arithmetic_with_huge_durations_saturates_instead_of_wrapping() {
        let now = 1_795_986_259_000;
        assert!(sub(now, Duration::MAX) < 0, "a time before every row");
        assert_eq!(add(now, Duration::MAX), i64::MAX);
        assert_eq!(sub(now, Duration::from_secs(60)), now - 60_000);
        assert!(sub(now, Duration::from_secs(10_000 * 365 * 86_400)) < now);
    }
}
