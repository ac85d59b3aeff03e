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
//! Where the limits live ([`Scope`]):
//! - [`Scope::Process`] (SQLite, one instance): every limit is this
//!   process's alone; a slot pool holds the whole limit, pacing is unbounded.
//! - [`Scope::Shared`] (PostgreSQL, any number of instances): a slot pool
//!   holds only the slots leased from the database (`store::limits`), and
//!   pacing only the send times taken from it. Before admitting a claimed
//!   batch the worker asks the gate what it is short of, asks the database
//!   once for all of it and hands the answers back (all in [`shared`]);
//!   nothing is asked while the pools hold enough, so an endpoint without a
//!   rate limit costs a grant per busy period, not a round trip per
//!   delivery. Idle slots go back at every renewal.
//!
//! How many of an endpoint's slots may be used at once is learnt per
//! endpoint ([`adaptive`]): within `[FENIX_ENDPOINT_CONCURRENCY_MIN,
//! FENIX_ENDPOINT_CONCURRENCY]`, growing while its receiver answers fast and
//! well, shrinking on overload. A job is admitted only while the endpoint's
//! attempts in flight here are under that limit; a pool keeps its slots (the
//! whole maximum, or the leased ones), so the limit moves without touching
//! them. With [`Scope::Shared`] the learnt limit is this instance's and
//! applies inside the shared slots (never more are asked than it allows):
//! the shared `FENIX_ENDPOINT_CONCURRENCY` stays the hard cap.
//!
//! The gate knows nothing of HTTP or the database: it works on anything
//! [`Gated`] and on plain grants, so it is tested with plain values.

use std::{
    collections::{HashMap, HashSet, VecDeque},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{
    sync::{OwnedSemaphorePermit, Semaphore},
    time::Instant,
};

mod adaptive;
mod pace;
mod shared;

use adaptive::AdaptiveLimit;
use pace::{interval_of, prune_pacing, run_length, take_send_time, Pace};

use super::fair;
pub(super) use adaptive::{Observation, Signal};

/// A job over its endpoint's or host's concurrency limit is due again after this.
pub(super) const BUSY_RETRY: Duration = Duration::from_millis(200);
/// Longest rate-limit wait slept through while holding a slot; longer waits are deferred.
pub(super) const MAX_PACING_SLEEP: Duration = Duration::from_millis(250);
/// Shortest deferral of a rate-limited job whose send times ran out: the
/// database grants more within [`MAX_PACING_SLEEP`] of the next free one.
const PACED_RETRY: Duration = Duration::from_millis(20);
/// After the database granted no slot of a limit, it is not asked again for so long.
const ASK_AGAIN_AFTER: Duration = Duration::from_millis(100);

/// Where the limits are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// This process is the only sender (SQLite).
    Process,
    /// Every instance on the database shares each limit (PostgreSQL).
    Shared,
}

/// What the gate needs to know of a job.
pub(super) trait Gated {
    /// The app (tenant) whose delivery it is: a host's slots are shared fairly among apps.
    fn app_id(&self) -> &str;
    fn endpoint_id(&self) -> &str;
    /// The destination host (lower case); `None` when no request will be made.
    fn host(&self) -> Option<&Arc<str>>;
    fn rate_limit_per_sec(&self) -> Option<i64>;
}

/// The slots a running job holds: its endpoint's, and its host's (none for a
/// job that makes no request). Dropping them frees them.
pub(super) struct Slots {
    endpoint: OwnedSemaphorePermit,
    host: Option<HostSlot>,
    /// The host whose slot `host` is.
    host_key: Option<Arc<str>>,
}

/// Slots of each host held per app: a host's slots are shared fairly among
/// the apps sending to it (see [`Gate::host_permit`]).
type HostShares = Arc<Mutex<HashMap<Arc<str>, HashMap<String, fair::Share>>>>;

/// One slot of a host's limit, counted to the app that holds it until dropped.
struct HostSlot {
    _permit: OwnedSemaphorePermit,
    shares: HostShares,
    host: Arc<str>,
    app: String,
}

impl Drop for HostSlot {
    fn drop(&mut self) {
        // Kept at none held (pruned with idle hosts): how fast the app's
        // answers from the host come is remembered between its deliveries.
        let mut shares = self.shares.lock().expect("host shares lock");
        if let Some(share) = shares.get_mut(&self.host).and_then(|apps| apps.get_mut(&self.app)) {
            share.held = share.held.saturating_sub(1);
        }
    }
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

/// The slots of one limit (an endpoint or a host) this process may hand out.
struct Pool {
    /// Free slots as permits; a running job holds one.
    sem: Arc<Semaphore>,
    /// Permits handed out plus free ones: the whole limit ([`Scope::Process`])
    /// or the slots leased from the database ([`Scope::Shared`]).
    capacity: usize,
    /// When the database last granted none ([`Scope::Shared`]).
    refused_at: Option<Instant>,
}

impl Pool {
    fn new(capacity: usize) -> Pool {
        Pool { sem: Arc::new(Semaphore::new(capacity)), capacity, refused_at: None }
    }
}

/// Concurrency and pacing per endpoint and host.
pub(super) struct Gate<J> {
    scope: Scope,
    /// The most attempts in flight per endpoint (a shared cap with [`Scope::Shared`]).
    endpoint_concurrency: usize,
    /// The least an endpoint's adaptive limit falls to; equal to
    /// `endpoint_concurrency`, the limit is fixed.
    endpoint_min: usize,
    host_concurrency: usize,
    per_endpoint: Mutex<HashMap<String, Pool>>,
    /// Attempts in flight per destination host, over all its endpoints: many
    /// endpoints on one host cannot flood it.
    per_host: Mutex<HashMap<String, Pool>>,
    /// Claimed jobs waiting for their endpoint's slot, per endpoint (at most
    /// twice the endpoint's concurrency each). They hold no global slot.
    waiting: Mutex<HashMap<String, VecDeque<J>>>,
    /// Per-endpoint pacing for `rate_limit_per_sec`.
    pacing: Mutex<HashMap<String, Pace>>,
    /// Per-endpoint adaptive limits: how many of its slots may be used now.
    limits: Mutex<HashMap<String, AdaptiveLimit>>,
    /// Host slots held per app.
    host_shares: HostShares,
}

impl<J: Gated> Gate<J> {
    pub(super) fn new(scope: Scope, endpoint_concurrency: usize, host_concurrency: usize) -> Gate<J> {
        Gate {
            scope,
            endpoint_concurrency,
            endpoint_min: endpoint_concurrency,
            host_concurrency,
            per_endpoint: Mutex::new(HashMap::new()),
            per_host: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            pacing: Mutex::new(HashMap::new()),
            limits: Mutex::new(HashMap::new()),
            host_shares: HostShares::default(),
        }
    }

    /// Lets each endpoint's limit adapt between `min` and the maximum (a
    /// gate made by [`Gate::new`] has a fixed limit: the maximum).
    pub(super) fn adaptive_from(mut self, min: usize) -> Gate<J> {
        self.endpoint_min = min.clamp(1, self.endpoint_concurrency.max(1));
        self
    }

    pub(super) fn scope(&self) -> Scope {
        self.scope
    }

    /// Lets a freshly claimed job in: an endpoint slot or a place in the
    /// endpoint's queue (a full queue, or no slot held here at all, defers
    /// it), then a host slot (a busy host defers it, freeing the endpoint
    /// slot), then its send time (a wait too long to sleep through defers it,
    /// freeing both). The send time comes last: one taken for a job that
    /// cannot run would be lost, and with a rate limit shared by several
    /// instances, lost send times are requests the limit allowed and nobody made.
    ///
    /// Taking the endpoint slot and queueing happen under the queue's lock, as
    /// do taking the next queued job and giving the slot back ([`Gate::next`]):
    /// otherwise a job queued just as the last running attempt found the queue
    /// empty would wait, its lease renewed, until another delivery to that
    /// endpoint came along. A job is queued only behind a slot held by a
    /// running job of this process, the one that will take it.
    pub(super) fn admit(&self, job: J, now: Instant) -> Admission<J> {
        let endpoint = {
            let mut waiting = self.waiting.lock().expect("waiting lock");
            let (sem, capacity) = self.endpoint_pool(job.endpoint_id());
            let limit = self.limit_for(&job);
            let in_flight = capacity.saturating_sub(sem.available_permits());
            let permit = if in_flight < limit { sem.try_acquire_owned().ok() } else { None };
            match permit {
                Some(permit) => permit,
                None => {
                    if let Some(after) = self.shared_pacing_retry(&job, now) {
                        return Admission::Defer { job, after };
                    }
                    let queue = waiting.entry(job.endpoint_id().to_string()).or_default();
                    if capacity == 0 || queue.len() >= limit * 2 {
                        if queue.is_empty() {
                            waiting.remove(job.endpoint_id());
                        }
                        return Admission::Defer { job, after: BUSY_RETRY };
                    }
                    queue.push_back(job);
                    return Admission::Queued;
                }
            }
        };
        let Ok(host) = self.host_permit(job.host(), job.app_id()) else {
            return Admission::Defer { job, after: BUSY_RETRY };
        };
        let wait = match self.pace(&job, now) {
            Ok(wait) => wait,
            Err(after) => return Admission::Defer { job, after },
        };
        let host_key = job.host().cloned();
        Admission::Run { job, slots: Slots { endpoint, host, host_key }, wait }
    }

    /// The next job queued behind `endpoint_id`, for the task holding that
    /// endpoint's `slots`; `None` (the slots given back, the endpoint's under
    /// the lock [`Gate::admit`] queues under) when none is queued, or when
    /// the endpoint has more in flight than its limit allows now (it
    /// shrank): then the others in flight take the queue, and the one that
    /// finds itself within the limit, at the latest the last one, runs it.
    ///
    /// Same endpoint, so normally the same host, whose slot the task keeps;
    /// the endpoint's URL may have changed since, though: then the new host's
    /// slot is taken, or the job deferred when that host is busy.
    pub(super) fn next(&self, endpoint_id: &str, slots: Slots, now: Instant) -> Option<(Turn<J>, Slots)> {
        let Slots { endpoint, mut host, mut host_key } = slots;
        let job = {
            let mut waiting = self.waiting.lock().expect("waiting lock");
            let front = waiting.get(endpoint_id).and_then(|q| q.front());
            if front.is_some_and(|job| self.in_flight(endpoint_id) > self.limit_for(job)) {
                drop(endpoint);
                return None;
            }
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
            match self.host_permit(job.host(), job.app_id()) {
                Ok(permit) => (host, host_key) = (permit, job.host().cloned()),
                Err(()) => {
                    let slots = Slots { endpoint, host: None, host_key: None };
                    return Some((Turn::Defer { job, after: BUSY_RETRY }, slots));
                }
            }
        }
        let slots = Slots { endpoint, host, host_key };
        match self.pace(&job, now) {
            Ok(wait) => Some((Turn::Run { job, wait }, slots)),
            Err(after) => Some((Turn::Defer { job, after }, slots)),
        }
    }

    /// The jobs queued behind `endpoint_id` beyond twice its limit now,
    /// taken out to be given back: after its limit shrank (slow answers),
    /// what was queued under the old one would hold its app's place in the
    /// worker for minutes.
    pub(super) fn shed(&self, endpoint_id: &str) -> Vec<J> {
        let mut waiting = self.waiting.lock().expect("waiting lock");
        let Some(queue) = waiting.get_mut(endpoint_id) else { return Vec::new() };
        let Some(front) = queue.front() else { return Vec::new() };
        let keep = self.limit_for(front) * 2;
        if queue.len() <= keep {
            return Vec::new();
        }
        queue.split_off(keep).into()
    }

    /// The endpoints this process holds slots of or queues jobs for (and
    /// those idle since the last prune): whose jobs may still be sent.
    pub(super) fn endpoint_ids(&self) -> Vec<String> {
        self.per_endpoint.lock().expect("endpoint slots lock").keys().cloned().collect()
    }

    /// Every queued job, taken out (the worker is stopping: they will not start).
    pub(super) fn take_waiting(&self) -> Vec<J> {
        self.waiting.lock().expect("waiting lock").drain().flat_map(|(_, jobs)| jobs).collect()
    }

    /// Drops the entries of endpoints and hosts that are idle: no attempt
    /// running (nobody else holds their semaphore, so all its permits are
    /// free), no job waiting, no slot leased from the database, pacing slot
    /// in the past. Without this, every endpoint ever sent to stayed in memory.
    pub(super) fn prune_idle(&self, now: Instant) {
        let waiting: HashSet<String> = {
            let mut waiting = self.waiting.lock().expect("waiting lock");
            waiting.retain(|_, q| !q.is_empty());
            waiting.keys().cloned().collect()
        };
        let leased = |pool: &Pool| self.scope == Scope::Shared && pool.capacity > 0;
        prune_pools(&mut self.per_endpoint.lock().expect("endpoint slots lock"), |id, pool| {
            waiting.contains(id) || leased(pool)
        });
        prune_pools(&mut self.per_host.lock().expect("host slots lock"), |_, pool| leased(pool));
        prune_pacing(&mut self.pacing.lock().expect("pacing lock"), now);
        let mut shares = self.host_shares.lock().expect("host shares lock");
        shares.retain(|_, apps| {
            apps.retain(|_, share| share.held > 0);
            !apps.is_empty()
        });
        drop(shares);
        // An endpoint without slots here has nothing in flight: its limit is
        // learnt again from the start if it comes back.
        let kept: HashSet<String> = self.per_endpoint.lock().expect("endpoint slots lock").keys().cloned().collect();
        self.limits.lock().expect("limits lock").retain(|id, _| kept.contains(id));
    }

    /// Learns from one finished attempt of `job` (its slots still held): its
    /// endpoint's limit, and how fast its app's answers from its host come.
    pub(super) fn observe(&self, job: &J, seen: Observation, now: Instant) {
        if seen.signal != Signal::NoAnswer {
            if let Some(host) = job.host() {
                let mut shares = self.host_shares.lock().expect("host shares lock");
                if let Some(share) = shares.get_mut(host).and_then(|apps| apps.get_mut(job.app_id())) {
                    share.observe(seen.latency);
                }
            }
        }
        let endpoint_id = job.endpoint_id();
        if self.endpoint_min >= self.endpoint_concurrency {
            return;
        }
        let in_flight = self.in_flight(endpoint_id);
        let mut limits = self.limits.lock().expect("limits lock");
        let limit = limits
            .entry(endpoint_id.to_string())
            .or_insert_with(|| AdaptiveLimit::new(self.endpoint_min, self.endpoint_concurrency));
        let before = limit.current();
        limit.observe(seen, in_flight, now);
        if limit.current() != before {
            tracing::debug!(endpoint_id, from = before, to = limit.current(), "endpoint concurrency limit changed");
        }
    }

    /// How many of its endpoint's attempts may be in flight for `job` to
    /// start: the adaptive limit, or for an endpoint with a rate limit the
    /// maximum. Its own rate is what its receiver takes; and its jobs hold
    /// their slots while they wait for their send times, which the adaptive
    /// limit would count as load and starve the rate of.
    fn limit_for(&self, job: &J) -> usize {
        match job.rate_limit_per_sec() {
            Some(rate) if rate > 0 => self.endpoint_concurrency,
            _ => self.limit_of(job.endpoint_id()),
        }
    }

    /// The endpoint's adaptive limit: its attempts allowed in flight now.
    fn limit_of(&self, endpoint_id: &str) -> usize {
        if self.endpoint_min >= self.endpoint_concurrency {
            return self.endpoint_concurrency;
        }
        let mut limits = self.limits.lock().expect("limits lock");
        limits
            .entry(endpoint_id.to_string())
            .or_insert_with(|| AdaptiveLimit::new(self.endpoint_min, self.endpoint_concurrency))
            .current()
    }

    /// The endpoint's slots held here by jobs (running, or about to).
    fn in_flight(&self, endpoint_id: &str) -> usize {
        let map = self.per_endpoint.lock().expect("endpoint slots lock");
        map.get(endpoint_id).map_or(0, |p| p.capacity.saturating_sub(p.sem.available_permits()))
    }

    /// The endpoint's slot semaphore and its capacity, the pool made on first use.
    fn endpoint_pool(&self, endpoint_id: &str) -> (Arc<Semaphore>, usize) {
        let mut map = self.per_endpoint.lock().expect("endpoint slots lock");
        let pool = pool_of(&mut map, endpoint_id, self.initial(self.endpoint_concurrency));
        (pool.sem.clone(), pool.capacity)
    }

    /// A slot of the destination host's limit for `app`, if one is free to
    /// it (a job without a host makes no request and needs none). The last
    /// [`host_reserve`] free slots of a host go only to an app known to answer
    /// fast, or holding none of the host's slots (as the worker's slots,
    /// [`fair`]): apps whose receivers on a shared host (a chat service's
    /// incoming webhooks, a shared gateway) hold every request for seconds
    /// cannot keep another app off that host.
    fn host_permit(&self, host: Option<&Arc<str>>, app: &str) -> Result<Option<HostSlot>, ()> {
        let Some(host) = host else { return Ok(None) };
        let mut map = self.per_host.lock().expect("host slots lock");
        let pool = pool_of(&mut map, host, self.initial(self.host_concurrency));
        let mut shares = self.host_shares.lock().expect("host shares lock");
        let apps = shares.entry(host.clone()).or_default();
        let share = apps.get(app).copied().unwrap_or_default();
        let free = pool.sem.available_permits();
        if free <= host_reserve(pool.capacity) && !share.may_take_reserved() {
            return Err(());
        }
        let Ok(permit) = pool.sem.clone().try_acquire_owned() else { return Err(()) };
        apps.entry(app.to_string()).or_default().held += 1;
        Ok(Some(HostSlot {
            _permit: permit,
            shares: self.host_shares.clone(),
            host: host.clone(),
            app: app.to_string(),
        }))
    }

    /// A new pool's capacity: the whole limit when this process is alone,
    /// nothing until the database grants some when the limit is shared.
    fn initial(&self, limit: usize) -> usize {
        match self.scope {
            Scope::Process => limit,
            Scope::Shared => 0,
        }
    }

    /// The endpoint's rate limit: `Ok(wait)` before sending (the send time is
    /// taken), or `Err(after)`: no send time close enough, defer the job.
    fn pace(&self, job: &J, now: Instant) -> Result<Duration, Duration> {
        let Some(rate) = job.rate_limit_per_sec().filter(|r| *r > 0) else { return Ok(Duration::ZERO) };
        let interval = interval_of(rate);
        let mut pacing = self.pacing.lock().expect("pacing lock");
        let pace = pacing
            .entry(job.endpoint_id().to_string())
            .or_insert(Pace { next: now, until: (self.scope == Scope::Shared).then_some(now) });
        take_send_time(pace, interval, now)
    }

    /// With [`Scope::Shared`], a rate-limited job that finds no free slot is
    /// not queued: send times are taken only for jobs holding a slot, so a
    /// queued one would find the run used up and be given back one by one by
    /// the task that took it. It is deferred with the rest of its batch, due
    /// when its endpoint's next run can be granted.
    fn shared_pacing_retry(&self, job: &J, now: Instant) -> Option<Duration> {
        if self.scope == Scope::Process || job.rate_limit_per_sec().is_none_or(|r| r <= 0) {
            return None;
        }
        let pacing = self.pacing.lock().expect("pacing lock");
        let until = pacing.get(job.endpoint_id()).and_then(|p| p.until).unwrap_or(now);
        Some(until.saturating_duration_since(now).saturating_sub(MAX_PACING_SLEEP).max(PACED_RETRY))
    }
}

/// The free slots of a host's pool of `capacity` kept from an app with slow
/// answers that holds its share ([`fair`]): a sixteenth, none of fewer than
/// sixteen slots (a small pool, or the few slots leased from the database
/// for a batch, would otherwise keep its last slot from the one app using it).
pub(super) fn host_reserve(capacity: usize) -> usize {
    capacity / 16
}

/// The pool of `key` in `map`, made with `capacity` slots on first use.
fn pool_of<'m>(map: &'m mut HashMap<String, Pool>, key: &str, capacity: usize) -> &'m mut Pool {
    if !map.contains_key(key) {
        map.insert(key.to_string(), Pool::new(capacity));
    }
    map.get_mut(key).expect("just inserted")
}

/// Drops pools nobody holds a slot of (each permit keeps a handle on the
/// semaphore) unless `keep` says the key still has work waiting or slots
/// leased. Runs under the map's lock, the only place handles are handed out,
/// so none can appear meanwhile.
fn prune_pools(map: &mut HashMap<String, Pool>, keep: impl Fn(&str, &Pool) -> bool) {
    map.retain(|key, pool| Arc::strong_count(&pool.sem) > 1 || keep(key, pool));
}

#[cfg(test)]
pub(super) mod tests;
