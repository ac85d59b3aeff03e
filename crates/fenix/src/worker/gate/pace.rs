//! The send times of rate-limited endpoints: a run of times one interval
//! apart, taken one per attempt ([`take_send_time`]).

use std::{collections::HashMap, time::Duration};

use tokio::time::Instant;

use super::{MAX_PACING_SLEEP, PACED_RETRY};

/// The send times of a rate-limited endpoint: `next`, then one per 1/rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Pace {
    /// The next send time (a time already past means "now").
    pub(super) next: Instant,
    /// Where the run of send times ends: `None` is never ([`Scope::Process`]);
    /// with [`Scope::Shared`], the end of the run taken from the database
    /// (or, after a refusal, its next free send time: an empty run).
    pub(super) until: Option<Instant>,
}

/// Takes `pace`'s next send time: `Ok(wait)` until it, or `Err(after)`: none
/// close enough, defer the job that long.
pub(super) fn take_send_time(pace: &mut Pace, interval: Duration, now: Instant) -> Result<Duration, Duration> {
    let slot = pace.next.max(now);
    let wait = slot - now;
    match pace.until {
        None if wait > MAX_PACING_SLEEP => Err(wait),
        // The run is used up: the database grants more once its next free
        // time is within MAX_PACING_SLEEP.
        Some(until) if slot >= until => {
            Err(until.saturating_duration_since(now).saturating_sub(MAX_PACING_SLEEP).max(PACED_RETRY))
        }
        _ => {
            pace.next = slot + interval;
            Ok(wait)
        }
    }
}

/// How many send times a run taken from the database holds: about
/// [`MAX_PACING_SLEEP`]'s worth, at least one.
pub(super) fn run_length(interval: Duration) -> usize {
    (MAX_PACING_SLEEP.as_micros() / interval.as_micros().max(1)).max(1) as usize
}

/// The time between two sends at `rate` per second.
pub(super) fn interval_of(rate: i64) -> Duration {
    Duration::from_secs_f64(1.0 / rate as f64)
}

/// Drops pacing entries whose send times are all in the past (or used up):
/// the same as having none.
pub(super) fn prune_pacing(map: &mut HashMap<String, Pace>, now: Instant) {
    map.retain(|_, pace| pace.next > now && pace.until.is_none_or(|until| until > now));
}
