//! Adaptive per-endpoint concurrency: how many attempts one endpoint may
//! have in flight in this process, learnt from how its receiver answers.
//!
//! The rule is TCP's congestion control applied to attempts (AIMD):
//! - **Slow start.** A new endpoint starts at [`INITIAL`] (within the
//!   bounds) and grows by one per fast success, doubling per round of
//!   attempts, until the first overload signal.
//! - **Additive increase.** From then on it grows by one per window of fast
//!   successes (a window: as many as the limit). A success is fast while its latency stays
//!   within [`tolerance`] of the endpoint's recent minimum latency, and it
//!   counts only when the endpoint was busy (at least half its limit in
//!   flight): an endpoint sent little proves nothing about a larger limit.
//! - **Multiplicative decrease.** A 429, any 5xx, a timeout or a failed
//!   connection halves the limit ([`OVERLOAD`]); a window whose mean latency
//!   left the tolerance cuts it by a quarter ([`SLOWER`]). Attempts started
//!   before the last decrease are not counted again: one burst of failures
//!   is one decrease, as TCP reacts once per round trip.
//!
//! - **Slow answers.** An answer of any status that took longer than
//!   [`SLOW_ANSWER`] caps the limit at what that latency justifies:
//!   [`INITIAL`] one-second answers' worth of slot time
//!   (`INITIAL × SLOW_ANSWER / latency`, at least the minimum), and never
//!   counts towards growth. A receiver that holds every request for 8 s,
//!   with a 200 or a 404, keeps one attempt in flight, not ten or more:
//!   time spent waiting on a receiver is what a slot costs the others.
//!
//! Other fast answers (other 4xx, redirects) and refusals before any
//! request (destination blocked, no secret, DNS) say nothing of the
//! receiver's load and change nothing. With `min == max` the limit never
//! moves: Fenix's old fixed limit.
//!
//! Pure state: it is fed plain values and tested with them; the gate owns
//! one per endpoint and drops it with the endpoint's other state when idle.

use std::time::Duration;

use tokio::time::Instant;

use crate::error_class::ErrorClass;

/// A new endpoint's limit (within the bounds): TCP's initial window, small
/// enough that a failing receiver gets fewer requests than a fixed 32 did,
/// and a fast one is past 32 after two rounds.
pub(super) const INITIAL: usize = 10;
/// Factor applied on an overload signal (429, 5xx, timeout, connect failure).
const OVERLOAD: f64 = 0.5;
/// Factor applied when a window's mean latency left the tolerance.
const SLOWER: f64 = 0.75;
/// Latency noise below this is never "rising latency": on loopback or a
/// loaded machine a 0.3 ms answer that took 0.9 ms once is jitter, not load.
const SLACK: Duration = Duration::from_millis(10);
/// Fewest attempts a latency window holds, so a small limit is not judged by one answer.
const MIN_WINDOW: usize = 8;
/// An answer slower than this, whatever its status, is a slow answer: the
/// limit is capped by its latency (see the module's doc).
pub(in crate::worker) const SLOW_ANSWER: Duration = Duration::from_secs(1);
/// Share of the gap to a higher window minimum the recent minimum moves per
/// window: a receiver that became slower for good gets a new baseline after
/// some windows, while a sudden rise is seen at once.
const FORGET: u32 = 8;

/// What one attempt's answer says of its receiver's load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::worker) enum Signal {
    /// A 2xx answer.
    Success,
    /// A 429 or 5xx answer, a timeout, a connection that failed or broke.
    Overload,
    /// Any other answer (another 4xx, a redirect): no sign of load, unless slow.
    Neutral,
    /// No answer because no request was made (destination blocked, no
    /// secret, DNS, TLS): nothing said of the receiver at all.
    NoAnswer,
}

impl Signal {
    /// Sorts an attempt by its response status and error class (`attempt.rs`).
    pub(in crate::worker) fn of(status: Option<u16>, error: Option<ErrorClass>) -> Signal {
        match (status, error) {
            (Some(200..=299), _) => Signal::Success,
            (Some(429 | 500..=599), _) => Signal::Overload,
            (Some(_), _) => Signal::Neutral,
            (None, Some(ErrorClass::Timeout | ErrorClass::Connect | ErrorClass::Request)) => Signal::Overload,
            (None, _) => Signal::NoAnswer,
        }
    }
}

/// One finished attempt, as the limit learns from it.
#[derive(Debug, Clone, Copy)]
pub(in crate::worker) struct Observation {
    /// When the attempt started (to tell a burst already reacted to).
    pub(in crate::worker) started: Instant,
    pub(in crate::worker) latency: Duration,
    pub(in crate::worker) signal: Signal,
}

/// Latencies of the attempts since the window opened.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    /// Attempts the window holds: the limit when it opened, at least [`MIN_WINDOW`].
    size: usize,
    samples: usize,
    total: Duration,
    min: Option<Duration>,
}

/// One endpoint's limit.
#[derive(Debug, Clone)]
pub(super) struct AdaptiveLimit {
    min: f64,
    max: f64,
    /// The limit, fractional so a multiplicative decrease is exact.
    limit: f64,
    /// Doubling per round until the first decrease.
    slow_start: bool,
    /// Fast successes counted towards the next additive step.
    credit: usize,
    /// The recent minimum latency: the receiver's answer time when not loaded.
    floor: Option<Duration>,
    window: Window,
    /// When the limit was last decreased.
    decreased_at: Option<Instant>,
}

impl AdaptiveLimit {
    /// A new endpoint's limit within `[min, max]` (`min` at least 1).
    pub(super) fn new(min: usize, max: usize) -> AdaptiveLimit {
        let (min, max) = (min.max(1) as f64, max.max(min).max(1) as f64);
        AdaptiveLimit {
            min,
            max,
            limit: (INITIAL as f64).clamp(min, max),
            slow_start: true,
            credit: 0,
            floor: None,
            window: Window::default(),
            decreased_at: None,
        }
    }

    /// Attempts allowed in flight now.
    pub(super) fn current(&self) -> usize {
        self.limit as usize
    }

    /// Learns from one finished attempt; `in_flight` is the endpoint's
    /// attempts in flight when it finished (itself included).
    pub(super) fn observe(&mut self, seen: Observation, in_flight: usize, now: Instant) {
        if self.decreased_at.is_some_and(|at| seen.started < at) {
            // Sent under the limit before the last decrease: already reacted to.
            return;
        }
        match seen.signal {
            Signal::NoAnswer => {}
            Signal::Overload => self.decrease(OVERLOAD, now),
            Signal::Success | Signal::Neutral if seen.latency > SLOW_ANSWER => self.slow(seen.latency, now),
            Signal::Neutral => {}
            Signal::Success => self.success(seen.latency, in_flight, now),
        }
    }

    /// A slow answer: the limit falls to what `latency` justifies, if above it.
    fn slow(&mut self, latency: Duration, now: Instant) {
        let justified = (INITIAL as f64 * SLOW_ANSWER.as_secs_f64() / latency.as_secs_f64()).max(self.min);
        if self.limit > justified {
            self.limit = justified.min(self.max);
            self.slow_start = false;
            self.credit = 0;
            self.decreased_at = Some(now);
            self.window = Window::default();
        }
    }

    fn success(&mut self, latency: Duration, in_flight: usize, now: Instant) {
        let floor = self.floor.map_or(latency, |f| f.min(latency));
        self.floor = Some(floor);
        if self.window.samples == 0 {
            self.window.size = self.current().max(MIN_WINDOW);
        }
        let busy = in_flight as f64 * 2.0 >= self.limit;
        if busy && latency <= tolerance(floor) {
            if self.slow_start {
                self.limit = (self.limit + 1.0).min(self.max);
            } else {
                self.credit += 1;
                if self.credit >= self.current() {
                    self.credit = 0;
                    self.limit = (self.limit + 1.0).min(self.max);
                }
            }
        }
        let w = &mut self.window;
        w.samples += 1;
        w.total += latency;
        w.min = Some(w.min.map_or(latency, |m| m.min(latency)));
        if w.samples < w.size {
            return;
        }
        let mean = w.total / w.samples as u32;
        let window_min = w.min.unwrap_or(latency);
        if mean > tolerance(floor) {
            self.decrease(SLOWER, now);
        } else {
            // Forget an old minimum slowly.
            if window_min > floor {
                self.floor = Some(floor + (window_min - floor) / FORGET);
            }
            self.window = Window::default();
        }
    }

    fn decrease(&mut self, factor: f64, now: Instant) {
        self.limit = (self.limit * factor).max(self.min);
        self.slow_start = false;
        self.credit = 0;
        self.decreased_at = Some(now);
        self.window = Window::default();
    }
}

/// The highest latency that still counts as fast: twice the recent minimum,
/// and never less than the minimum plus [`SLACK`].
fn tolerance(floor: Duration) -> Duration {
    (floor * 2).max(floor + SLACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Feeds `n` attempts answered alike, each started at `at` and seen
    /// finished at `at + latency`, with the limit's worth in flight.
    fn feed(limit: &mut AdaptiveLimit, n: usize, at: Instant, latency: Duration, signal: Signal) {
        for _ in 0..n {
            let in_flight = limit.current();
            limit.observe(Observation { started: at, latency, signal }, in_flight, at + latency);
        }
    }

    /// Rounds of `limit.current()` attempts each, one after the other.
    fn rounds(limit: &mut AdaptiveLimit, n: usize, mut at: Instant, latency: Duration, signal: Signal) -> Instant {
        for _ in 0..n {
            feed(limit, limit.current(), at, latency, signal);
            at += latency;
        }
        at
    }

    #[test]
    fn signals_are_sorted_by_what_they_say_of_the_receivers_load() {
        assert_eq!(Signal::of(Some(204), None), Signal::Success);
        for status in [429, 500, 502, 503, 504] {
            assert_eq!(Signal::of(Some(status), Some(ErrorClass::HttpStatus)), Signal::Overload, "{status}");
        }
        for error in [ErrorClass::Timeout, ErrorClass::Connect, ErrorClass::Request] {
            assert_eq!(Signal::of(None, Some(error)), Signal::Overload, "{error}");
        }
        assert_eq!(Signal::of(Some(404), Some(ErrorClass::HttpStatus)), Signal::Neutral);
        assert_eq!(Signal::of(Some(301), Some(ErrorClass::Redirect)), Signal::Neutral);
        for error in [ErrorClass::DestinationBlocked, ErrorClass::Dns, ErrorClass::Tls, ErrorClass::NoSecret] {
            assert_eq!(Signal::of(None, Some(error)), Signal::NoAnswer, "{error}");
        }
    }

    #[test]
    fn the_limit_doubles_per_round_of_fast_successes_up_to_the_maximum() {
        let mut limit = AdaptiveLimit::new(1, 128);
        assert_eq!(limit.current(), INITIAL);
        let at = rounds(&mut limit, 1, Instant::now(), 5 * MS, Signal::Success);
        assert_eq!(limit.current(), 2 * INITIAL, "one round of fast successes doubles it");
        rounds(&mut limit, 10, at, 5 * MS, Signal::Success);
        assert_eq!(limit.current(), 128, "never past the maximum");
    }

    #[test]
    fn after_a_decrease_it_grows_by_one_per_window_of_fast_successes() {
        let mut limit = AdaptiveLimit::new(1, 128);
        let start = Instant::now();
        let at = rounds(&mut limit, 2, start, 5 * MS, Signal::Success);
        assert_eq!(limit.current(), 40);
        feed(&mut limit, 1, at, 5 * MS, Signal::Overload);
        assert_eq!(limit.current(), 20);
        let at = at + 10 * MS;
        rounds(&mut limit, 1, at, 5 * MS, Signal::Success);
        assert_eq!(limit.current(), 21, "additive increase: +1 for a round");
    }

    #[test]
    fn overload_halves_the_limit_once_per_burst() {
        let mut limit = AdaptiveLimit::new(1, 64);
        let start = Instant::now();
        let at = rounds(&mut limit, 2, start, 5 * MS, Signal::Success);
        assert_eq!(limit.current(), 40);
        // Forty attempts in flight answer 503 one after the other: one decrease.
        for (signal, n) in [(Signal::Overload, 1), (Signal::Overload, 39)] {
            feed(&mut limit, n, at, 5 * MS, signal);
        }
        assert_eq!(limit.current(), 20, "one burst, one halving");
        // The next round, sent under the new limit, times out: halved again.
        let later = at + 10 * MS;
        feed(&mut limit, 20, later, Duration::from_secs(10), Signal::Overload);
        assert_eq!(limit.current(), 10);
        let later = later + Duration::from_secs(11);
        feed(&mut limit, 1, later, 5 * MS, Signal::Overload);
        assert_eq!(limit.current(), 5);
    }

    #[test]
    fn rising_latency_shrinks_the_limit() {
        let mut limit = AdaptiveLimit::new(1, 64);
        let at = rounds(&mut limit, 1, Instant::now(), 50 * MS, Signal::Success);
        let before = limit.current();
        assert_eq!(before, 20);
        // Answers now take four times as long: slower, not failed.
        feed(&mut limit, before, at, 200 * MS, Signal::Success);
        assert_eq!(limit.current(), 15, "a window of slow answers cuts a quarter");
        // Jitter within the tolerance does not.
        let mut steady = AdaptiveLimit::new(1, 64);
        let at = rounds(&mut steady, 1, Instant::now(), 50 * MS, Signal::Success);
        feed(&mut steady, 20, at, 90 * MS, Signal::Success);
        assert!(steady.current() >= 20, "{}", steady.current());
    }

    #[test]
    fn sub_millisecond_jitter_is_not_rising_latency() {
        let mut limit = AdaptiveLimit::new(1, 64);
        let at = rounds(&mut limit, 1, Instant::now(), Duration::from_micros(300), Signal::Success);
        rounds(&mut limit, 2, at, Duration::from_micros(2_000), Signal::Success);
        assert!(limit.current() >= 40, "{}", limit.current());
    }

    #[test]
    fn the_limit_stays_within_its_bounds_and_min_equal_max_is_fixed() {
        let mut limit = AdaptiveLimit::new(2, 64);
        let mut at = Instant::now();
        for _ in 0..20 {
            feed(&mut limit, 1, at, 5 * MS, Signal::Overload);
            at += Duration::from_secs(1);
        }
        assert_eq!(limit.current(), 2, "never below the minimum");
        let mut fixed = AdaptiveLimit::new(32, 32);
        assert_eq!(fixed.current(), 32);
        let at = rounds(&mut fixed, 3, Instant::now(), 5 * MS, Signal::Success);
        feed(&mut fixed, 1, at, 5 * MS, Signal::Overload);
        assert_eq!(fixed.current(), 32, "min = max: the old fixed limit");
        assert_eq!(AdaptiveLimit::new(1, 4).current(), 4, "the first limit is within the maximum");
    }

    #[test]
    fn an_endpoint_sent_little_does_not_grow_its_limit() {
        let mut limit = AdaptiveLimit::new(1, 128);
        let at = Instant::now();
        for _ in 0..100 {
            limit.observe(Observation { started: at, latency: 5 * MS, signal: Signal::Success }, 1, at);
        }
        assert_eq!(limit.current(), INITIAL);
    }

    #[test]
    fn fast_neutral_answers_and_refusals_change_nothing() {
        let mut limit = AdaptiveLimit::new(1, 64);
        feed(&mut limit, 100, Instant::now(), 50 * MS, Signal::Neutral);
        assert_eq!(limit.current(), INITIAL);
        feed(&mut limit, 100, Instant::now(), Duration::from_secs(5), Signal::NoAnswer);
        assert_eq!(limit.current(), INITIAL, "a slow refusal made no request");
    }

    #[test]
    fn slow_answers_of_any_status_cap_the_limit_at_what_their_latency_justifies() {
        for signal in [Signal::Neutral, Signal::Success] {
            let mut limit = AdaptiveLimit::new(1, 128);
            let at = Instant::now();
            feed(&mut limit, 10, at, Duration::from_secs(8), signal);
            assert_eq!(limit.current(), 1, "{signal:?}: 8 s answers justify one attempt in flight");
            // Steady slow successes never grow it back.
            let later = at + Duration::from_secs(9);
            rounds(&mut limit, 20, later, Duration::from_secs(8), signal);
            assert_eq!(limit.current(), 1, "{signal:?}");
        }
        let mut limit = AdaptiveLimit::new(1, 128);
        feed(&mut limit, 10, Instant::now(), Duration::from_secs(2), Signal::Success);
        assert_eq!(limit.current(), INITIAL / 2, "2 s answers: half the initial limit");
        let mut floor = AdaptiveLimit::new(3, 128);
        feed(&mut floor, 10, Instant::now(), Duration::from_secs(8), Signal::Neutral);
        assert_eq!(floor.current(), 3, "never below the minimum");
    }
}
