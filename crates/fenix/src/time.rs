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

/// The last instant RFC 3339 can write (9999-12-31T23:59:59.999Z): later
/// times (a huge `delay` added to now) are shown as it, where the formatter
/// would fail and `to_string` panic.
const LAST_WRITABLE: Millis = 253_402_300_799_999;

/// The time as a `SystemTime` within what RFC 3339 can write: 1970 to 9999.
fn writable(t: Millis) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(t.clamp(0, LAST_WRITABLE) as u64)
}

/// `2026-11-29T21:04:19Z` (whole seconds), for people: the CLI's listings and log lines.
pub fn rfc3339(t: Millis) -> String {
    humantime::format_rfc3339_seconds(writable(t)).to_string()
}

/// `2026-11-29T21:04:19.123Z`: UTC with milliseconds, the one format of every
/// time Fenix writes (API answers, the envelope's `created_at`, alerts).
pub fn rfc3339_ms(t: Millis) -> String {
    humantime::format_rfc3339_millis(writable(t)).to_string()
}

/// Parses an RFC 3339 timestamp given in a query or body (`since`, `until`):
/// any offset (`Z`, `+01:00`, `-05:30`), fractional seconds, lowercase `t`/`z`.
/// Two readable forms are also taken, as before: a space for the `T`
/// (RFC 3339, 5.6) and no offset at all, meaning UTC. Times before 1970 are refused.
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    let s = s.trim();
    let mut text = s.to_string();
    if text.as_bytes().get(10) == Some(&b' ') {
        text.replace_range(10..11, "T");
    }
    if !has_offset(&text) {
        text.push('Z');
    }
    let t = ::time::OffsetDateTime::parse(&text, &::time::format_description::well_known::Rfc3339).ok()?;
    // Before 1970 is outside the documented range (and before every row).
    i64::try_from(t.unix_timestamp_nanos().div_euclid(1_000_000)).ok().filter(|ms| *ms >= 0)
}

/// Whether an RFC 3339 date-time ends in its offset: `Z`/`z`, or `±hh:mm`
/// after the time (the date's own `-`s sit before position 10).
fn has_offset(s: &str) -> bool {
    let b = s.as_bytes();
    match b.last() {
        Some(b'Z' | b'z') => true,
        _ => b.len() >= 6 && b.len() - 6 > 10 && matches!(b[b.len() - 6], b'+' | b'-'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_past_year_9999_are_written_as_its_last_instant_not_a_panic() {
        assert_eq!(rfc3339_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(LAST_WRITABLE + 1), "9999-12-31T23:59:59Z");
        assert_eq!(rfc3339_ms(-5), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn timestamps_round_trip_through_rfc3339() {
        let t = 1_795_986_259_000;
        assert_eq!(rfc3339_ms(t + 123), "2026-11-29T21:04:19.123Z");
        assert_eq!(parse_rfc3339(&rfc3339_ms(t + 123)), Some(t + 123));
    }

    #[test]
    fn any_rfc3339_offset_is_parsed_to_the_same_instant() {
        let t = 1_795_986_259_000; // 2026-11-29T21:04:19Z
        for s in [
            "2026-11-29T21:04:19Z",
            "2026-11-29T21:04:19+00:00",
            "2026-11-29T21:04:19-00:00",
            "2026-11-29T22:04:19+01:00",
            "2026-11-29T15:34:19-05:30",
            "2026-11-30T06:04:19+09:00",
            "2026-11-29t21:04:19z",
            "2026-11-29T21:04:19.000Z",
            "2026-11-29T21:04:19",
            "2026-11-29 21:04:19",
            "2026-11-29 22:04:19+01:00",
        ] {
            assert_eq!(parse_rfc3339(s), Some(t), "{s}");
        }
        assert_eq!(parse_rfc3339("2026-11-29T22:04:19.5+01:00"), Some(t + 500));
        assert_eq!(parse_rfc3339("2026-11-29T21:04:19.123456789Z"), Some(t + 123));
    }

    #[test]
    fn what_is_not_rfc3339_is_refused() {
        for s in [
            "",
            "yesterday",
            "2026-11-29",
            "2026-11-29T21:04",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-11-29T24:00:00Z",
            "2026-11-29T21:04:19+0100",
            "2026-11-29T21:04:19+01",
            "2026-11-29T21:04:19+24:00",
            "2026-11-29T21:04:19.Z",
            "2026-11-29T21:04:19Z trailing",
            "1795986259",
            "1969-12-31T23:59:59Z",
            "1970-01-01T00:30:00+01:00",
        ] {
            assert_eq!(parse_rfc3339(s), None, "{s:?}");
        }
    }

    proptest::proptest! {
        /// Every instant, written with any offset, parses back to itself.
        #[test]
        fn an_instant_written_with_any_offset_parses_back(
            ms in 0i64..253_402_214_400_000, // 1970 to 9999-12-30
            offset_min in -(23 * 60 + 59)..=(23 * 60 + 59i32),
        ) {
            let utc = ::time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).unwrap();
            let offset = ::time::UtcOffset::from_whole_seconds(offset_min * 60).unwrap();
            let local = utc.to_offset(offset);
            if local.year() <= 9999 && local.year() >= 0 {
                let (h, m) = (offset_min.abs() / 60, offset_min.abs() % 60);
                let sign = if offset_min < 0 { '-' } else { '+' };
                let s = format!(
                    "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{sign}{h:02}:{m:02}",
                    local.year(), u8::from(local.month()), local.day(),
                    local.hour(), local.minute(), local.second(), local.millisecond(),
                );
                proptest::prop_assert_eq!(parse_rfc3339(&s), Some(ms), "{}", s);
            }
        }
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
