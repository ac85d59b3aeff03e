//! The delivery worker: the claim → attempt → record loop (`run.rs`: a short
//! loop over one round of claiming, `Worker::step`, that tests drive).
//!
//! 1. [`Worker::claim_batch`] leases due deliveries in one short transaction
//!    (committed before any request is sent), enters them in the
//!    [`lease_book`], turns them into jobs ([`job`]) and lets each through
//!    the per-endpoint [`gate`] (run now, queue, or defer).
//! 2. A task per running job takes a global slot, makes the attempt
//!    ([`attempt`]: destination check, signing, one HTTP request, the next
//!    step by the retry rules of [`schedule`]) and reports it to the
//!    [`recorder`]; then it runs the jobs queued behind the same endpoint.
//! 3. The recorder writes outcomes in batches, each in one transaction, only
//!    where the lease still holds; then every reaction to them happens in one
//!    place ([`reactions`]) and their leases leave the book.
//!
//! A process killed at any point loses nothing: a leased delivery whose
//! outcome was never written comes due again when its lease expires.

pub mod attempt;
mod clients;
mod fair;
mod gate;
mod hands;
mod job;
mod lease_book;
pub mod ownership;
mod reactions;
mod recorder;
mod run;
pub mod schedule;
mod shared_limits;
pub(crate) mod signing_keys;
pub mod tasks;
#[cfg(test)]
mod tests;
mod watch;

use std::{
    collections::{HashMap, HashSet},
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use tokio::sync::{mpsc, Notify};

use self::{
    fair::FairSlots,
    gate::{Admission, Gate, Observation, Scope, Signal, Slots, Turn},
    hands::Hands,
    job::Job,
    lease_book::LeaseBook,
    recorder::Recorder,
    shared_limits::SharedLimits,
    signing_keys::Reloaded,
    watch::Watch,
};
pub use self::{
    recorder::Reported,
    run::{Pause, Step},
};
pub use crate::error_class::ErrorClass;
use crate::{
    ids::{AppId, DeliveryId, EndpointId},
    metrics::AppShareFigure,
    state::SharedState,
    store::{deliveries::Outcome, ClaimedDelivery, Store},
    time::{self, Millis},
    wake::Reach,
};

/// How many apps a fair claim visits at most (the next one goes on from there).
const FAIR_APPS: usize = 32;

/// Whether a claim found work.
#[derive(Debug, PartialEq, Eq)]
pub enum Tick {
    /// This many deliveries were claimed and handed to tasks.
    Claimed(usize),
    /// Nothing was due.
    EmptyQueue,
    /// Work was claimed but its endpoints were all at their limits (some was put back).
    Saturated,
}

/// One worker per process; cheap to share.
pub struct Worker {
    state: SharedState,
    client: reqwest::Client,
    /// Endpoints' own clients (client certificates, CAs).
    clients: clients::Clients,
    /// Identifies this process in `lease_owner` (for operators reading the table).
    owner: String,
    /// Attempts in flight in this process (`FENIX_WORKER_CONCURRENCY`),
    /// shared fairly among apps ([`fair`]).
    global: Arc<FairSlots>,
    gate: Gate<Job>,
    /// The gate's limits shared with other instances (PostgreSQL).
    limits: SharedLimits,
    leases: Arc<LeaseBook>,
    recorder: Arc<Recorder>,
    results: mpsc::UnboundedSender<Reported>,
    /// Secrets reloaded for jobs whose own were too old to sign with.
    reloaded: Reloaded,
    /// Set when the worker stops claiming: running tasks finish, queued jobs are not started.
    stopping: AtomicBool,
    /// Claimed jobs handed to a task or queued at the gate and not finished
    /// yet. Claiming runs up to one claim batch ahead of the attempts in
    /// flight, so the next batch is ready when slots free up instead of being
    /// fetched then.
    outstanding: AtomicUsize,
    /// Signalled whenever a job finishes, so a claimer held back by full queues resumes.
    progress: Notify,
    /// The jobs of `outstanding`, per app: what the next claim may take ([`hands`]).
    hands: Arc<Hands>,
    /// The app a fair claim visited last: the next one starts after it.
    fair_cursor: std::sync::Mutex<String>,
    /// The endpoints of the jobs in hand as last read: a job whose endpoint
    /// was paused, moved or deleted since its claim is not sent ([`watch`]).
    watch: Watch,
}

impl Worker {
    /// Makes the worker and the receiving end of its outcome channel.
    pub fn new(state: SharedState, client: reqwest::Client) -> (Arc<Worker>, mpsc::UnboundedReceiver<Reported>) {
        let (results, rx) = mpsc::unbounded_channel();
        let leases = Arc::new(LeaseBook::new());
        let settings = &state.settings;
        let scope = if state.store.shares_limits() { Scope::Shared } else { Scope::Process };
        let owner = format!("{}:{}", hostname(), std::process::id());
        let worker = Worker {
            global: FairSlots::new(settings.worker_concurrency),
            gate: Gate::new(scope, settings.endpoint_concurrency, settings.host_concurrency)
                .adaptive_from(settings.endpoint_concurrency_min),
            limits: SharedLimits::new(&owner),
            recorder: Arc::new(Recorder::new(state.store.clone(), leases.clone())),
            leases,
            client,
            clients: clients::Clients::new(state.outbound.clone()),
            owner,
            results,
            reloaded: Reloaded::default(),
            stopping: AtomicBool::new(false),
            outstanding: AtomicUsize::new(0),
            progress: Notify::new(),
            hands: Arc::default(),
            fair_cursor: std::sync::Mutex::new(String::new()),
            watch: Watch::default(),
            state,
        };
        let (slots, hands) = (worker.global.clone(), worker.hands.clone());
        worker.state.metrics.shares.register(Box::new(move || {
            let loads = slots.loads();
            let figures: Vec<AppShareFigure> = hands
                .snapshot()
                .into_iter()
                .map(|(app_id, in_hand)| {
                    let in_flight = loads.get(app_id.as_str()).map_or(0, |l| l.held);
                    AppShareFigure { in_flight, waiting: in_hand.saturating_sub(in_flight), app_id }
                })
                .collect();
            figures
        }));
        (Arc::new(worker), rx)
    }

    fn store(&self) -> &Store {
        &self.state.store
    }

    /// How many claimed jobs the worker keeps in hand at most: one claim
    /// batch beyond the attempts in flight.
    fn ahead(&self) -> usize {
        self.state.settings.worker_concurrency + self.state.settings.claim_batch.max(1)
    }

    /// The free places in hand: how many more jobs the worker may take now.
    fn room(&self) -> usize {
        self.ahead().saturating_sub(self.outstanding.load(Ordering::Relaxed))
    }

    /// Claims up to `limit` due deliveries of apps not in `exclude`, a share
    /// of `limit` each, visiting at most [`FAIR_APPS`] apps round-robin, and
    /// starts an attempt for each.
    async fn claim_fair(
        self: &Arc<Self>,
        now: Millis,
        limit: usize,
        exclude: &HashSet<String>,
    ) -> anyhow::Result<Tick> {
        let after = self.fair_cursor.lock().expect("cursor lock").clone();
        let apps = self.store().apps_with_pending(&after, FAIR_APPS).await?;
        let Some(last) = apps.last() else { return Ok(Tick::EmptyQueue) };
        *self.fair_cursor.lock().expect("cursor lock") = last.to_string();
        let apps: Vec<&AppId> = apps.iter().filter(|a| !exclude.contains(a.as_str())).collect();
        if apps.is_empty() {
            return Ok(Tick::EmptyQueue);
        }
        let share = (limit / apps.len()).max(1);
        let lease_until = time::add(now, self.state.settings.lease_duration);
        let mut claimed = Vec::new();
        for app in apps {
            let want = share.min(limit.saturating_sub(claimed.len()));
            if want == 0 {
                break;
            }
            claimed.extend(self.store().claim_due_of_app(&self.owner, now, lease_until, want as i64, app).await?);
        }
        if claimed.is_empty() {
            return Ok(Tick::EmptyQueue);
        }
        self.leases.hold(&claimed);
        self.start(claimed, now).await
    }

    /// Claims up to `limit` due deliveries and starts an attempt for each.
    pub async fn claim_batch(self: &Arc<Self>, now: Millis, limit: usize) -> anyhow::Result<Tick> {
        let lease_until = time::add(now, self.state.settings.lease_duration);
        let claimed = self.store().claim_due(&self.owner, now, lease_until, limit as i64).await?;
        if claimed.is_empty() {
            return Ok(Tick::EmptyQueue);
        }
        self.leases.hold(&claimed);
        self.start(claimed, now).await
    }

    /// Starts an attempt for each delivery leased to this worker (claimed,
    /// or handed over fresh), already in the lease book.
    async fn start(self: &Arc<Self>, claimed: Vec<ClaimedDelivery>, now: Millis) -> anyhow::Result<Tick> {
        let n = claimed.len();
        let ctx = match self.store().batch_context(&claimed, now).await {
            Ok(ctx) => ctx,
            Err(e) => {
                // Give the batch back rather than wait for the leases to expire.
                let leases: Vec<_> = claimed.iter().map(|c| (c.id.clone(), c.lease_token)).collect();
                let _ = self.store().release_leases(&leases, now).await;
                self.leases.forget(&leases);
                return Err(e.into());
            }
        };
        // Only a batch that met a payload gone asks which were erased on request (`store::expunge`).
        let gone: Vec<&str> = ctx.events.iter().filter(|(_, e)| e.1.is_none()).map(|(id, _)| id.as_str()).collect();
        let erased = match self.store().erased_events(&gone).await {
            Ok(erased) => erased,
            Err(e) => {
                let leases: Vec<_> = claimed.iter().map(|c| (c.id.clone(), c.lease_token)).collect();
                let _ = self.store().release_leases(&leases, now).await;
                self.leases.forget(&leases);
                return Err(e.into());
            }
        };
        let policy = &self.state.policy;
        let (keyring, clients) = (&self.state.keyring, &self.clients);
        let jobs = job::prepare(claimed, ctx, &erased, now, keyring, clients, |url| policy.check_url(url));
        // Slots and send times shared with other instances, asked for once per batch if short.
        let ready: Vec<&Job> = jobs.iter().filter_map(|j| j.as_ref().ok()).collect();
        self.limits.reserve(&self.gate, self.store(), &ready, self.state.settings.lease_duration).await;
        let (started, deferred) = self.admit_all(jobs, now);
        let saturated = started == 0 && !deferred.is_empty();
        if !deferred.is_empty() {
            self.leases.defer(self.store(), deferred).await;
            // Due again later: a claim loop idling since before (fresh
            // deliveries start outside it) must read its next due time again.
            self.state.wake.work_committed(Reach::ThisInstance).await;
        }
        if saturated {
            return Ok(Tick::Saturated);
        }
        Ok(Tick::Claimed(n))
    }

    /// Lets each prepared job through the gate: a task for those that may
    /// run now, a place in the endpoint's queue, or a deferral (given back to
    /// the database by the caller). A job that must not be sent is reported
    /// without an attempt. Answers how many were started or reported, and
    /// the deferrals (id, lease token, due at).
    ///
    /// A delivery whose endpoint is at its concurrency limit waits in the
    /// gate's queue (holding no global slot) and starts when a slot of that
    /// endpoint frees; beyond a short queue, over its host's limit, or paced
    /// far into the future, it goes back to the database for a while. One
    /// slow customer cannot take every slot.
    fn admit_all(
        self: &Arc<Self>,
        jobs: Vec<Result<Job, Box<Outcome>>>,
        now: Millis,
    ) -> (usize, Vec<(DeliveryId, i64, Millis)>) {
        let mut deferred: Vec<(DeliveryId, i64, Millis)> = Vec::new();
        let mut started = 0usize;
        // Per app: whether any of its jobs ran or queued, else its shortest deferral.
        let mut admitted: HashMap<AppId, Result<(), Duration>> = HashMap::new();
        for job in jobs {
            let job = match job {
                Ok(job) => job,
                Err(outcome) => {
                    started += 1;
                    let _ = self.results.send(Reported::without_attempt(*outcome));
                    continue;
                }
            };
            // Counted before the gate sees it: a queued job may be taken and
            // finished by a running task at once.
            self.outstanding.fetch_add(1, Ordering::Relaxed);
            self.hands.add(job.claimed.app_id.as_str());
            let app_id = job.claimed.app_id.clone();
            let admission = self.gate.admit(job, tokio::time::Instant::now());
            let seen = admitted.entry(app_id).or_insert(Err(Duration::MAX));
            match (&admission, &seen) {
                (Admission::Defer { after, .. }, Err(shortest)) => *seen = Err(*after.min(shortest)),
                (Admission::Defer { .. }, Ok(())) => {}
                _ => *seen = Ok(()),
            }
            match admission {
                Admission::Run { job, slots, wait } => {
                    // The task waits for a global slot itself: claiming goes on meanwhile.
                    started += 1;
                    let me = self.clone();
                    tokio::spawn(async move { me.execute(job, slots, wait).await });
                }
                Admission::Queued => {}
                Admission::Defer { job, after } => {
                    self.outstanding.fetch_sub(1, Ordering::Relaxed);
                    self.hands.remove(job.claimed.app_id.as_str());
                    deferred.push((job.claimed.id.clone(), job.claimed.lease_token, now + after.as_millis() as i64));
                }
            }
        }
        let at = std::time::Instant::now();
        for (app, seen) in admitted {
            if let Err(after) = seen {
                self.hands.busy(app.as_str(), after, at);
            }
        }
        (started, deferred)
    }

    /// Takes a global slot, sends the job and reports its outcome, then the
    /// jobs queued behind the same endpoint, one after the other, keeping the
    /// endpoint's and host's slots.
    async fn execute(self: Arc<Self>, job: Job, mut slots: Slots, wait: Duration) {
        let app: Arc<str> = Arc::from(job.claimed.app_id.as_str());
        let _global = self.global.acquire(&app).await;
        if self.stopping.load(Ordering::Relaxed) {
            self.set_aside(&job);
            return;
        }
        let endpoint_id = job.claimed.endpoint_id.clone();
        let (mut job, mut wait) = (job, wait);
        loop {
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            if !self.watch.still_holds(&job) {
                // Paused, disabled, moved or deleted since its claim: given
                // back, due at once, to be prepared again under the new state.
                self.give_back(std::slice::from_ref(&job), Duration::ZERO).await;
                self.state.wake.work_committed(Reach::ThisInstance).await;
                match self.next_job(&endpoint_id, slots).await {
                    Some((next, next_wait, kept)) => {
                        (job, wait, slots) = (next, next_wait, kept);
                        continue;
                    }
                    None => return,
                }
            }
            let started = tokio::time::Instant::now();
            let reported = attempt::attempt(&self.state, &self.client, &self.reloaded, &job).await;
            // The answer teaches the endpoint's limit, before its slot is reused.
            if let Some(a) = &reported.outcome.attempt {
                let status = a.response_status.and_then(|s| u16::try_from(s).ok());
                let signal = Signal::of(status, reported.notes.error);
                let latency = started.elapsed().saturating_sub(reported.notes.prepared);
                let seen = Observation { started, latency, signal };
                if signal != Signal::NoAnswer {
                    self.global.observe(&app, seen.latency);
                }
                self.gate.observe(&job, seen, tokio::time::Instant::now());
            }
            // A limit that shrank leaves more queued than it justifies: those
            // go back to the database, out of this app's hands.
            self.give_back(&self.gate.shed(endpoint_id.as_str()), gate::BUSY_RETRY).await;
            let _ = self.results.send(reported);
            self.hands.attempted(job.claimed.app_id.as_str());
            self.finished_one(&job.claimed.app_id);
            match self.next_job(&endpoint_id, slots).await {
                Some((next, next_wait, kept)) => (job, wait, slots) = (next, next_wait, kept),
                None => return,
            }
        }
    }

    /// The next job queued behind `endpoint_id` for the task holding its
    /// `slots`, with its wait, if any (none once the worker is stopping:
    /// queued leases are given back); the slots go back when there is none.
    async fn next_job(&self, endpoint_id: &EndpointId, mut slots: Slots) -> Option<(Job, Duration, Slots)> {
        loop {
            if self.stopping.load(Ordering::Relaxed) {
                return None;
            }
            let (turn, kept) = self.gate.next(endpoint_id.as_str(), slots, tokio::time::Instant::now())?;
            slots = kept;
            match turn {
                Turn::Run { job, wait } => return Some((job, wait, slots)),
                Turn::Defer { job, after } => self.give_back(std::slice::from_ref(&job), after).await,
            }
        }
    }

    /// Gives claimed jobs back to the database, due `after` from now, and
    /// counts them done with.
    async fn give_back(&self, jobs: &[Job], after: Duration) {
        if jobs.is_empty() {
            return;
        }
        let at = time::now_ms() + after.as_millis() as i64;
        let back = jobs.iter().map(|j| (j.claimed.id.clone(), j.claimed.lease_token, at)).collect();
        self.leases.defer(self.store(), back).await;
        for j in jobs {
            self.finished_one(&j.claimed.app_id);
        }
    }

    /// A claimed job that will not be sent (the worker is stopping).
    fn set_aside(&self, job: &Job) {
        self.leases.set_aside(&job.claimed.id, job.claimed.lease_token);
        self.finished_one(&job.claimed.app_id);
    }

    /// One claimed job is done with (sent, given back or dropped at shutdown):
    /// room for the claimer.
    fn finished_one(&self, app_id: &AppId) {
        self.outstanding.fetch_sub(1, Ordering::Relaxed);
        self.hands.remove(app_id.as_str());
        self.progress.notify_one();
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "fenix".into())
}
