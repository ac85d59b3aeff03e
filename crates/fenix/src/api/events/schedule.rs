//! When a sent event's deliveries first come due: at once, or later, as its
//! `deliver_at` (an RFC 3339 time) or its `delay` (a duration from now) asks
//! — one of them, never both, at most `FENIX_MAX_SCHEDULE_AHEAD` ahead. A
//! time that has already passed means now: a producer whose clock runs a
//! little behind, or whose queue held the request, is not refused for it.
//!
//! Every refusal is `422 invalid_schedule`, its message naming the field,
//! before anything of the event (or of its batch) is stored.

use std::time::Duration;

use crate::{
    api::{code::Code, duration::DurationIn, error::ApiError},
    time::{self, Millis},
};

/// The event's time as sent: `deliver_at`, `delay`, or neither.
pub(super) struct Requested<'a> {
    pub(super) deliver_at: Option<&'a str>,
    pub(super) delay: Option<&'a DurationIn>,
}

impl Requested<'_> {
    /// When the event's deliveries are first due, for an event accepted at
    /// `now`: `None` for at once (neither field, or a time not after `now`),
    /// else the time, at most `max_ahead` after `now`.
    pub(super) fn due_at(&self, now: Millis, max_ahead: Duration) -> Result<Option<Millis>, ApiError> {
        let at = match (self.deliver_at, self.delay) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => return Err(refused("give deliver_at or delay, not both")),
            (Some(text), None) => time::parse_rfc3339(text).ok_or_else(|| {
                refused("deliver_at must be an RFC 3339 time such as 2026-12-24T18:00:00Z (at or after 1970)")
            })?,
            (None, Some(delay)) => time::add(now, delay.parse("delay", Code::InvalidSchedule)?),
        };
        if at <= now {
            return Ok(None);
        }
        if at > time::add(now, max_ahead) {
            let max = crate::settings::show_duration(max_ahead);
            return Err(refused(&format!(
                "an event may be scheduled at most {max} ahead (FENIX_MAX_SCHEDULE_AHEAD); {} is later",
                time::rfc3339_ms(at)
            )));
        }
        Ok(Some(at))
    }
}

fn refused(message: &str) -> ApiError {
    ApiError::new(Code::InvalidSchedule, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Millis = 1_795_986_259_000;
    const DAY: Duration = Duration::from_secs(86_400);

    fn due(deliver_at: Option<&str>, delay: Option<serde_json::Value>) -> Result<Option<Millis>, String> {
        let delay: Option<DurationIn> = delay.map(|v| serde_json::from_value(v).unwrap());
        Requested { deliver_at, delay: delay.as_ref() }.due_at(NOW, 30 * DAY).map_err(|e| {
            assert_eq!(e.code, Code::InvalidSchedule);
            e.message
        })
    }

    #[test]
    fn neither_field_or_a_time_gone_by_is_at_once() {
        assert_eq!(due(None, None), Ok(None));
        assert_eq!(due(Some("2026-11-29T21:04:18Z"), None), Ok(None));
        assert_eq!(due(Some(&time::rfc3339_ms(NOW)), None), Ok(None));
    }

    #[test]
    fn a_time_or_a_delay_ahead_is_when_the_deliveries_come_due() {
        assert_eq!(due(Some("2026-11-29T22:04:20+01:00"), None), Ok(Some(NOW + 1_000)));
        assert_eq!(due(Some("2026-11-29T21:04:20.5Z"), None), Ok(Some(NOW + 1_500)));
        assert_eq!(due(None, Some(serde_json::json!("90s"))), Ok(Some(NOW + 90_000)));
        assert_eq!(due(None, Some(serde_json::json!("2h"))), Ok(Some(NOW + 7_200_000)));
        assert_eq!(due(None, Some(serde_json::json!("30d"))), Ok(Some(NOW + 30 * 86_400_000)));
    }

    #[test]
    fn both_fields_an_unreadable_one_or_a_time_past_the_maximum_is_refused() {
        let both = due(Some("2026-11-30T00:00:00Z"), Some(serde_json::json!("1h"))).unwrap_err();
        assert!(both.contains("not both"), "{both}");
        let unreadable = due(Some("tomorrow"), None).unwrap_err();
        assert!(unreadable.contains("RFC 3339"), "{unreadable}");
        let delay = due(None, Some(serde_json::json!("soon"))).unwrap_err();
        assert!(delay.starts_with("delay must be a duration"), "{delay}");
        let far = due(None, Some(serde_json::json!("31d"))).unwrap_err();
        assert!(far.contains("at most 30d ahead (FENIX_MAX_SCHEDULE_AHEAD)"), "{far}");
        assert!(due(Some("2027-01-01T00:00:00Z"), None).unwrap_err().contains("FENIX_MAX_SCHEDULE_AHEAD"));
        // Past year 9999 (388,000 years of seconds, or more): refused, not a panic.
        for huge in [serde_json::json!(12_243_980_687_051_u64), serde_json::json!(u64::MAX)] {
            let far = due(None, Some(huge)).unwrap_err();
            assert!(far.contains("FENIX_MAX_SCHEDULE_AHEAD); 9999-12-31T23:59:59.999Z is later"), "{far}");
        }
    }
}
