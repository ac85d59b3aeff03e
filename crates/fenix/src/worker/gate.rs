//! The per-endpoint gate: which claimed job may start now, which waits, and
//! which goes back to the database for a while.
//!
//! It owns the concurrency slots per endpoint (`FENIX_ENDPOINT_CONCURRENCY`)
//! and per destination host (`FENIX_HOST_CONCURRENCY`, over all endpoints of
//! that host), the short local queue behind a busy endpoint, and the pacing of
//! endpoints with a `rate_limit_per_sec`. One slow or rate-limited customer
//! cannot take every slot: over a limit, a job is queued (holding no global
//! slot) or handed back to be deferred.
//!
//! The gate knows nothing of HTTP or the database: it works on anything
//! [`Gated`], so it is tested with plain values.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{
    sync::{OwnedSemaphorePermit, Semaphore},
    time::Instant,
};

/// A job over its endpoint's or host's concurrency limit is due again after this.
pub(super) const BUSY_RETRY: Duration = Duration::from_millis(200);
/// Longest rate-limit wait slept through while holding a slot; longer waits are deferred.
pub(super) const MAX_PACING_SLEEP: Duration = Duration::from_millis(250);

/// What the gate needs to know of a job.
pub(super) trait Gated {
    fn endpoint_id(&self) -> &str;
    /// The destination host (lower case); `None` when no request will be made.
    fn host(&self) -> Option<&Arc<str>>;
    fn rate_limit_per_sec(&self) -> Option<i64>;
}

/// The slots a running job holds: its endpoint's, and its host's (none for a
/// job that makes no request). Dropping them frees them.
pub(super) struct Slots {
    endpoint: OwnedSemaphorePermit,
    host: Option<OwnedSemaphorePermit>,
    /// The host whose slot `host` is.
    host_key: Option<Arc<str>>,
}

/// What became of a claimed job at the gate.
pub(super) enum Admission<J> {
    /// Slots were free: send it after `wait` (its pacing slot).
    Run { job: J, slots: Slots, wait: Duration },
    /// Queued behind the endpoint's running attempts; one of them runs it next.
    Queued,
    /// Over a limit (queue full, host busy, pacing far ahead): give it back,
    /// due again after `after`.
    Defer { job: J, after: Duration },
}

/// The next job of an endpoint, for the task that holds its slots.
pub(super) enum Turn<J> {
    /// Send it after `wait`.
    Run { job: J, wait: Duration },
    /// Give it back, due again after `after`; the slots stay with the task.
    Defer { job: J, after: Duration },
}

/// Concurrency and pacing per endpoint and host.
pub(super) struct Gate<J> {
    endpoint_concurrency: usize,
    host_concurrency: usize,
    per_endpoint: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Attempts in flight per destination host, over all its endpoints: many
    /// endpoints on one host cannot flood it.
    per_host: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Claimed jobs waiting for their endpoint's slot, per endpoint (at most
    /// twice the endpoint's concurrency each). They hold no global slot.
    waiting: Mutex<HashMap<String, VecDeque<J>>>,
    /// Per-endpoint pacing for `rate_limit_per_sec`: the next free send slot.
    pacing: Mutex<HashMap<String, Instant>>,
}

impl<J: Gated> Gate<J> {
    pub(super) fn new(endpoint_concurrency: usize, host_concurrency: usize) -> Gate<J> {
        Gate {
            endpoint_concurrency,
            host_concurrency,
            per_endpoint: Mutex::new(HashMap::new()),
            per_host: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            pacing: Mutex::new(HashMap::new()),
        }
    }

    /// Lets a freshly claimed job in: its pacing slot first (a wait too long to
    /// sleep through defers it), then an endpoint slot or a place in the
    /// endpoint's queue (a full queue defers it), then a host slot (a busy host
    /// defers it, freeing the endpoint slot).
    ///
    /// Taking the endpoint slot and queueing happen under the queue's lock, as
    /// do taking the next queued job and giving the slot back ([`Gate::next`]):
    /// otherwise a job queued just as the last running attempt found the queue
    /// empty would wait, its lease renewed, until another delivery to that
    /// endpoint came along.
    pub(super) fn admit(&self, job: J, now: Instant) -> Admission<J> {
        let wait = self.pace(&job, now);
        if wait > MAX_PACING_SLEEP {
            return Admission::Defer { job, after: wait };
        }
        let sem = self.endpoint_semaphore(job.endpoint_id());
        let endpoint = {
            let mut waiting = self.waiting.lock().expect("waiting lock");
            match sem.try_acquire_owned() {
                Ok(permit) => permit,
                Err(_) => {
                    let queue = waiting.entry(job.endpoint_id().to_string()).or_default();
                    if queue.len() >= self.endpoint_concurrency * 2 {
                        return Admission::Defer { job, after: BUSY_RETRY };
                    }
                    queue.push_back(job);
                    return Admission::Queued;
                }
            }
        };
        let Ok(host) = self.host_permit(job.host()) else {
            return Admission::Defer { job, after: BUSY_RETRY };
        };
        let host_key = job.host().cloned();
        Admission::Run { job, slots: Slots { endpoint, host, host_key }, wait }
    }

    /// The next job queued behind `endpoint_id`, for the task holding that
    /// endpoint's `slots`; `None` (the slots given back, the endpoint's under
    /// the lock [`Gate::admit`] queues under) when none is queued.
    ///
    /// Same endpoint, so normally the same host, whose slot the task keeps;
    /// the endpoint's URL may have changed since, though: then the new host's
    /// slot is taken, or the job deferred when that host is busy.
    pub(super) fn next(&self, endpoint_id: &str, slots: Slots, now: Instant) -> Option<(Turn<J>, Slots)> {
        let Slots { endpoint, mut host, mut host_key } = slots;
        let job = {
            let mut waiting = self.waiting.lock().expect("waiting lock");
            let job = waiting.get_mut(endpoint_id).and_then(|q| q.pop_front());
            if waiting.get(endpoint_id).is_some_and(|q| q.is_empty()) {
                waiting.remove(endpoint_id);
            }
            match job {
                Some(job) => job,
                None => {
                    drop(endpoint);
                    return None;
                }
            }
        };
        if job.host() != host_key.as_ref() {
            drop(host.take());
            match self.host_permit(job.host()) {
                Ok(permit) => (host, host_key) = (permit, job.host().cloned()),
                Err(()) => {
                    let slots = Slots { endpoint, host: None, host_key: None };
                    return Some((Turn::Defer { job, after: BUSY_RETRY }, slots));
                }
            }
        }
        let slots = Slots { endpoint, host, host_key };
        let wait = self.pace(&job, now);
        if wait > MAX_PACING_SLEEP {
            return Some((Turn::Defer { job, after: wait }, slots));
        }
        Some((Turn::Run { job, wait }, slots))
    }

    /// Every queued job, taken out (the worker is stopping: they will not start).
    pub(super) fn take_waiting(&self) -> Vec<J> {
        self.waiting.lock().expect("waiting lock").drain().flat_map(|(_, jobs)| jobs).collect()
    }

    /// Drops the entries of endpoints and hosts that are idle: no attempt
    /// running (nobody else holds their semaphore, so all its permits are
    /// free), no job waiting, pacing slot in the past. Without this, every
    /// endpoint ever sent to stayed in memory.
    pub(super) fn prune_idle(&self, now: Instant) {
        let waiting: HashSet<String> = {
            let mut waiting = self.waiting.lock().expect("waiting lock");
            waiting.retain(|_, q| !q.is_empty());
            waiting.keys().cloned().collect()
        };
        prune_semaphores(&mut self.per_endpoint.lock().expect("endpoint semaphores lock"), |id| waiting.contains(id));
        prune_semaphores(&mut self.per_host.lock().expect("host semaphores lock"), |_| false);
        prune_pacing(&mut self.pacing.lock().expect("pacing lock"), now);
    }

    fn endpoint_semaphore(&self, endpoint_id: &str) -> Arc<Semaphore> {
        let mut map = self.per_endpoint.lock().expect("endpoint semaphores lock");
        semaphore_of(&mut map, endpoint_id, self.endpoint_concurrency)
    }

    /// A slot of the destination host's limit, if one is free (a job without
    /// a host makes no request and needs none).
    fn host_permit(&self, host: Option<&Arc<str>>) -> Result<Option<OwnedSemaphorePermit>, ()> {
        let Some(host) = host else { return Ok(None) };
        let sem = semaphore_of(&mut self.per_host.lock().expect("host semaphores lock"), host, self.host_concurrency);
        sem.try_acquire_owned().map(Some).map_err(|_| ())
    }

    /// How long the endpoint's rate limit makes this job wait; the slot is
    /// taken only when the wait is short enough to sleep through.
    fn pace(&self, job: &J, now: Instant) -> Duration {
        let Some(rate) = job.rate_limit_per_sec().filter(|r| *r > 0) else { return Duration::ZERO };
        let mut pacing = self.pacing.lock().expect("pacing lock");
        let next = pacing.entry(job.endpoint_id().to_string()).or_insert(now);
        let slot = (*next).max(now);
        let wait = slot - now;
        if wait <= MAX_PACING_SLEEP {
            *next = slot + Duration::from_secs_f64(1.0 / rate as f64);
        }
        wait
    }
}

/// The semaphore of `key` in `map`, made with `permits` on first use.
fn semaphore_of(map: &mut HashMap<String, Arc<Semaphore>>, key: &str, permits: usize) -> Arc<Semaphore> {
    if let Some(sem) = map.get(key) {
        return sem.clone();
    }
    let sem = Arc::new(Semaphore::new(permits));
    map.insert(key.to_string(), sem.clone());
    sem
}

/// Drops semaphores nobody holds (no permit out: each permit keeps a handle)
/// unless `keep` says the key still has work waiting. Runs under the map's
/// lock, the only place handles are handed out, so none can appear meanwhile.
fn prune_semaphores(map: &mut HashMap<String, Arc<Semaphore>>, keep: impl Fn(&str) -> bool) {
    map.retain(|key, sem| Arc::strong_count(sem) > 1 || keep(key));
}

/// Drops pacing slots already in the past: the same as having none.
fn prune_pacing(map: &mut HashMap<String, Instant>, now: Instant) {
    map.retain(|_, next| *next > now);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job as the gate sees it.
    #[derive(Debug, PartialEq)]
    struct Probe {
        name: &'static str,
        endpoint: &'static str,
        host: Option<Arc<str>>,
        rate: Option<i64>,
    }

    impl Gated for Probe {
        fn endpoint_id(&self) -> &str {
            self.endpoint
        }

        fn host(&self) -> Option<&Arc<str>> {
            self.host.as_ref()
        }

        fn rate_limit_per_sec(&self) -> Option<i64> {
            self.rate
        }
    }

    fn probe(name: &'static str, endpoint: &'static str, host: &str) -> Probe {
        Probe { name, endpoint, host: Some(Arc::from(host)), rate: None }
    }

    /// What the gate did with a job, by name.
    #[derive(Debug, PartialEq)]
    enum Seen {
        Run(&'static str, Duration),
        Queued,
        Defer(&'static str, Duration),
    }

    fn admit(gate: &Gate<Probe>, job: Probe, now: Instant, held: &mut Vec<Slots>) -> Seen {
        match gate.admit(job, now) {
            Admission::Run { job, slots, wait } => {
                held.push(slots);
                Seen::Run(job.name, wait)
            }
            Admission::Queued => Seen::Queued,
            Admission::Defer { job, after } => Seen::Defer(job.name, after),
        }
    }

    #[test]
    fn the_gate_runs_up_to_the_endpoint_concurrency_queues_twice_that_and_defers_the_rest() {
        let gate = Gate::new(2, 64);
        let now = Instant::now();
        let mut held = Vec::new();
        let names = ["a", "b", "c", "d", "e", "f", "g"];
        let seen: Vec<Seen> = names.iter().map(|n| admit(&gate, probe(n, "ep1", "h"), now, &mut held)).collect();
        assert_eq!(
            seen,
            [
                Seen::Run("a", Duration::ZERO),
                Seen::Run("b", Duration::ZERO),
                Seen::Queued,
                Seen::Queued,
                Seen::Queued,
                Seen::Queued,
                Seen::Defer("g", BUSY_RETRY),
            ]
        );
        assert_eq!(
            admit(&gate, probe("x", "ep2", "h"), now, &mut held),
            Seen::Run("x", Duration::ZERO),
            "another endpoint is not held back by a busy one"
        );
        let queued: Vec<&str> = gate.take_waiting().iter().map(|p| p.name).collect();
        assert_eq!(queued, ["c", "d", "e", "f"]);
    }

    #[test]
    fn a_finished_job_hands_its_slots_to_the_next_queued_one_and_frees_them_when_none_is_left() {
        let gate = Gate::new(1, 64);
        let now = Instant::now();
        let mut held = Vec::new();
        assert_eq!(admit(&gate, probe("a", "ep", "h"), now, &mut held), Seen::Run("a", Duration::ZERO));
        assert_eq!(admit(&gate, probe("b", "ep", "h"), now, &mut held), Seen::Queued);
        assert_eq!(admit(&gate, probe("c", "ep", "h"), now, &mut held), Seen::Queued);
        let mut slots = held.pop().unwrap();
        let mut order = Vec::new();
        while let Some((turn, kept)) = gate.next("ep", slots, now) {
            match turn {
                Turn::Run { job, wait } => order.push((job.name, wait)),
                Turn::Defer { job, .. } => panic!("{} deferred", job.name),
            }
            slots = kept;
        }
        assert_eq!(order, [("b", Duration::ZERO), ("c", Duration::ZERO)], "queued jobs run in order");
        // The queue was empty: the slot was given back, so the next job runs at once.
        assert_eq!(admit(&gate, probe("d", "ep", "h"), now, &mut held), Seen::Run("d", Duration::ZERO));
    }

    #[test]
    fn the_host_limit_spans_endpoints_and_a_job_without_a_host_needs_no_slot() {
        let gate = Gate::new(8, 2);
        let now = Instant::now();
        let mut held = Vec::new();
        assert_eq!(admit(&gate, probe("a", "ep1", "h"), now, &mut held), Seen::Run("a", Duration::ZERO));
        assert_eq!(admit(&gate, probe("b", "ep2", "h"), now, &mut held), Seen::Run("b", Duration::ZERO));
        assert_eq!(admit(&gate, probe("c", "ep3", "h"), now, &mut held), Seen::Defer("c", BUSY_RETRY));
        assert_eq!(admit(&gate, probe("d", "ep3", "other"), now, &mut held), Seen::Run("d", Duration::ZERO));
        let refused = Probe { name: "e", endpoint: "ep4", host: None, rate: None };
        assert_eq!(admit(&gate, refused, now, &mut held), Seen::Run("e", Duration::ZERO));
        // The deferred job freed its endpoint slot: ep3 is not left busy.
        drop(held.remove(0));
        assert_eq!(admit(&gate, probe("f", "ep3", "h"), now, &mut held), Seen::Run("f", Duration::ZERO));
    }

    #[test]
    fn a_queued_job_whose_host_changed_to_a_busy_one_is_deferred_and_the_slots_kept() {
        let gate = Gate::new(1, 1);
        let now = Instant::now();
        let mut held = Vec::new();
        assert_eq!(admit(&gate, probe("a", "ep", "h1"), now, &mut held), Seen::Run("a", Duration::ZERO));
        assert_eq!(admit(&gate, probe("x", "other", "h2"), now, &mut held), Seen::Run("x", Duration::ZERO));
        // The endpoint's URL moved to h2 after `a` was claimed.
        assert_eq!(admit(&gate, probe("b", "ep", "h2"), now, &mut held), Seen::Queued);
        assert_eq!(admit(&gate, probe("c", "ep", "h1"), now, &mut held), Seen::Queued);
        let slots = held.remove(0);
        let Some((Turn::Defer { job, after }, slots)) = gate.next("ep", slots, now) else {
            panic!("b must be deferred: h2 is busy")
        };
        assert_eq!((job.name, after), ("b", BUSY_RETRY));
        // h1's slot was given up for h2 and is taken again for c.
        let Some((Turn::Run { job, .. }, slots)) = gate.next("ep", slots, now) else { panic!("c must run") };
        assert_eq!(job.name, "c");
        assert!(gate.next("ep", slots, now).is_none());
    }

    #[test]
    fn pacing_spaces_sends_by_the_rate_limit_and_defers_a_wait_too_long_to_sleep_through() {
        let gate = Gate::new(8, 64);
        let now = Instant::now();
        let mut held = Vec::new();
        let paced = |name| Probe { name, endpoint: "ep", host: Some(Arc::from("h")), rate: Some(10) };
        let ms = Duration::from_millis;
        let seen: Vec<Seen> =
            ["a", "b", "c", "d", "e"].iter().map(|n| admit(&gate, paced(n), now, &mut held)).collect();
        assert_eq!(
            seen,
            [
                Seen::Run("a", ms(0)),
                Seen::Run("b", ms(100)),
                Seen::Run("c", ms(200)),
                Seen::Defer("d", ms(300)),
                // A deferred job does not take the pacing slot: the next one is told the same.
                Seen::Defer("e", ms(300)),
            ]
        );
        assert_eq!(admit(&gate, paced("f"), now + ms(300), &mut held), Seen::Run("f", ms(0)));
        assert_eq!(
            admit(&gate, probe("g", "ep", "h"), now, &mut held),
            Seen::Run("g", ms(0)),
            "no rate limit, no pacing"
        );
    }

    #[test]
    fn idle_endpoints_and_hosts_are_pruned_and_busy_or_awaited_ones_kept() {
        let gate = Gate::new(1, 64);
        let now = Instant::now();
        let mut held = Vec::new();
        admit(&gate, probe("a", "busy", "h1"), now, &mut held);
        admit(&gate, probe("b", "busy", "h1"), now, &mut held);
        admit(&gate, probe("c", "idle", "h2"), now, &mut held);
        drop(held.pop());
        gate.prune_idle(now);
        let mut endpoints: Vec<String> = gate.per_endpoint.lock().unwrap().keys().cloned().collect();
        endpoints.sort();
        assert_eq!(endpoints, ["busy"]);
        assert_eq!(gate.per_host.lock().unwrap().keys().collect::<Vec<_>>(), ["h1"]);
    }

    #[test]
    fn idle_semaphores_are_pruned_and_busy_or_awaited_ones_kept() {
        let mut map: HashMap<String, Arc<Semaphore>> =
            ["idle", "busy", "awaited"].iter().map(|k| (k.to_string(), Arc::new(Semaphore::new(2)))).collect();
        let permit = map["busy"].clone().try_acquire_owned().unwrap();
        prune_semaphores(&mut map, |k| k == "awaited");
        let mut left: Vec<_> = map.keys().cloned().collect();
        left.sort();
        assert_eq!(left, ["awaited", "busy"]);
        drop(permit);
        prune_semaphores(&mut map, |_| false);
        assert!(map.is_empty(), "every slot free and nothing waiting: all pruned");
    }

    #[test]
    fn pacing_slots_in_the_past_are_pruned() {
        let now = Instant::now();
        let mut map = HashMap::from([
            ("past".to_string(), now - Duration::from_millis(1)),
            ("now".to_string(), now),
            ("future".to_string(), now + Duration::from_secs(1)),
        ]);
        prune_pacing(&mut map, now);
        assert_eq!(map.keys().collect::<Vec<_>>(), ["future"]);
    }
}
