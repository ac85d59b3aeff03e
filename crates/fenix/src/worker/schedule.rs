//! What happens after an attempt: the pure rules of the retry schedule.

use std::time::Duration;

use crate::{
    lifecycle::DeliveryStatus,
    time::{self, Millis},
};

/// The facts about one attempt that decide what comes next.
#[derive(Debug, Clone, Default)]
pub struct AttemptFacts {
    /// The HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// `Retry-After` of a 429 or 503, when given.
    pub retry_after: Option<Duration>,
}

/// Where a delivery goes after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// 2xx: done.
    Succeeded,
    /// Failed, try again at this time.
    RetryAt(Millis),
    /// Failed and the attempt budget is spent (dead letter; replayable).
    Failed,
    /// The receiver answered 410 Gone: the delivery fails and the endpoint is disabled.
    Gone,
}

impl Next {
    /// The delivery's status after this step: `pending` again for a retry.
    pub fn status(&self) -> DeliveryStatus {
        match self {
            Next::Succeeded => DeliveryStatus::Succeeded,
            Next::RetryAt(_) => DeliveryStatus::Pending,
            Next::Failed | Next::Gone => DeliveryStatus::Failed,
        }
    }

    /// When the next attempt is due, for a retry.
    pub fn retry_at(&self) -> Option<Millis> {
        match self {
            Next::RetryAt(t) => Some(*t),
            _ => None,
        }
    }
}

/// Decides the next step after attempt number `n` of the current budget (1-based).
///
/// Only 2xx succeeds. After a failure the next attempt waits `schedule[n-1]`;
/// a 429/503 `Retry-After` longer than that is honoured, capped at four times
/// the scheduled wait. With `schedule.len() + 1` attempts spent the delivery fails.
pub fn next_step(facts: &AttemptFacts, n: u32, schedule: &[Duration], now: Millis) -> Next {
    match facts.status {
        Some(s) if (200..300).contains(&s) => return Next::Succeeded,
        Some(410) => return Next::Gone,
        _ => {}
    }
    let Some(wait) = schedule.get(n.saturating_sub(1) as usize).copied() else {
        return Next::Failed;
    };
    let wait = match (facts.status, facts.retry_after) {
        (Some(429 | 503), Some(asked)) if asked > wait => asked.min(wait * 4),
        _ => wait,
    };
    Next::RetryAt(time::add(now, wait))
}

/// [`next_step`] under an endpoint's own policy: an answer whose status is
/// one of its `final_status_codes` fails the delivery at once, without retry.
pub fn next_step_for(
    facts: &AttemptFacts,
    n: u32,
    schedule: &[Duration],
    final_status_codes: &[u16],
    now: Millis,
) -> Next {
    match facts.status {
        Some(s) if final_status_codes.contains(&s) => Next::Failed,
        _ => next_step(facts, n, schedule, now),
    }
}

/// Parses `Retry-After` as delta-seconds or an HTTP date.
pub fn parse_retry_after(v: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate(v)?;
    at.duration_since(now).ok()
}

fn httpdate(v: &str) -> Option<std::time::SystemTime> {
    humantime::parse_rfc3339_weak(v).ok().or_else(|| parse_imf_fixdate(v))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`
fn parse_imf_fixdate(v: &str) -> Option<std::time::SystemTime> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.len() != 6 || parts[5] != "GMT" {
        return None;
    }
    let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .iter()
        .position(|m| *m == parts[2])?
        + 1;
    let text = format!("{}-{:02}-{:02}T{}Z", parts[3], month, parts[1].parse::<u32>().ok()?, parts[4]);
    humantime::parse_rfc3339(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule() -> Vec<Duration> {
        crate::settings::parse_schedule("1m,5m,30m,2h").unwrap()
    }

    fn status(s: u16) -> AttemptFacts {
        AttemptFacts { status: Some(s), retry_after: None }
    }

    #[test]
    fn only_2xx_succeeds() {
        assert_eq!(next_step(&status(204), 1, &schedule(), 0), Next::Succeeded);
        assert_eq!(next_step(&status(302), 1, &schedule(), 0), Next::RetryAt(60_000));
        assert_eq!(next_step(&status(500), 1, &schedule(), 0), Next::RetryAt(60_000));
        assert_eq!(next_step(&AttemptFacts::default(), 1, &schedule(), 0), Next::RetryAt(60_000));
    }

    #[test]
    fn the_default_schedule_waits_1m_5m_30m_2h_then_fails() {
        let waits: Vec<Next> = (1..=5).map(|n| next_step(&status(500), n, &schedule(), 0)).collect();
        assert_eq!(
            waits,
            vec![
                Next::RetryAt(60_000),
                Next::RetryAt(300_000),
                Next::RetryAt(1_800_000),
                Next::RetryAt(7_200_000),
                Next::Failed
            ]
        );
    }

    #[test]
    fn retry_after_is_honoured_up_to_four_times_the_scheduled_wait() {
        let asked = |secs| AttemptFacts { status: Some(429), retry_after: Some(Duration::from_secs(secs)) };
        assert_eq!(next_step(&asked(10), 1, &schedule(), 0), Next::RetryAt(60_000));
        assert_eq!(next_step(&asked(120), 1, &schedule(), 0), Next::RetryAt(120_000));
        assert_eq!(next_step(&asked(100_000), 1, &schedule(), 0), Next::RetryAt(240_000));
    }

    #[test]
    fn each_step_leaves_the_delivery_in_its_status() {
        let steps = [Next::Succeeded, Next::RetryAt(60_000), Next::Failed, Next::Gone];
        let after: Vec<_> = steps.iter().map(|n| (n.status(), n.retry_at())).collect();
        assert_eq!(
            after,
            [
                (DeliveryStatus::Succeeded, None),
                (DeliveryStatus::Pending, Some(60_000)),
                (DeliveryStatus::Failed, None),
                (DeliveryStatus::Failed, None)
            ]
        );
    }

    #[test]
    fn gone_is_reported_as_such() {
        assert_eq!(next_step(&status(410), 1, &schedule(), 0), Next::Gone);
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(784_111_717);
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(Duration::from_secs(60)));
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn an_endpoints_final_status_fails_at_once_and_others_retry() {
        let finals = [400, 404];
        assert_eq!(next_step_for(&status(404), 1, &schedule(), &finals, 0), Next::Failed);
        assert_eq!(next_step_for(&status(401), 1, &schedule(), &finals, 0), Next::RetryAt(60_000));
        assert_eq!(next_step_for(&status(500), 1, &schedule(), &finals, 0), Next::RetryAt(60_000));
        assert_eq!(next_step_for(&status(200), 1, &schedule(), &finals, 0), Next::Succeeded);
    }
}
