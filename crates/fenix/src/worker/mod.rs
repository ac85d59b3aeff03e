//! The delivery worker: the claim → attempt → record loop.
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
mod fair;
mod gate;
mod hands;
mod job;
mod lease_book;
pub mod ownership;
mod reactions;
mod recorder;
pub mod schedule;
mod shared_limits;
pub(crate) mod signing_keys;
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
use tokio_util::sync::CancellationToken;

pub use self::recorder::Reported;
use self::{
    fair::FairSlots,
    gate::{Admission, Gate, Observation, Scope, Signal, Slots, Turn},
    hands::{Claim, Hands},
    job::Job,
    lease_book::LeaseBook,
    recorder::Recorder,
    shared_limits::SharedLimits,
    signing_keys::Reloaded,
    watch::Watch,
};
use crate::{
    metrics::AppShareFigure,
    state::SharedState,
    store::{ClaimedDelivery, Store},
    time::{self, Millis},
    wake::Reach,
};

/// Longest idle wait between looks at the queue (the safety net behind wake-ups).
const IDLE_POLL: Duration = Duration::from_millis(1000);
/// How often entries of idle endpoints and hosts are dropped from the worker's maps.
const PRUNE_EVERY: Duration = Duration::from_secs(30);
/// After a fair claim came back short, the next one waits this long (or for
/// new work to be committed): it is a few index seeks per app, not free.
const FAIR_RETRY: Duration = Duration::from_millis(50);
/// How many apps a fair claim visits at most (the next one goes on from there).
const FAIR_APPS: usize = 32;
/// How long a drain waits for the recorder to write what the last attempts reported.
const FLUSH_LIMIT: Duration = Duration::from_secs(10);

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
        // Instances on one PostgreSQL share every limit; SQLite has one instance.
        let scope = if state.store.is_postgres() { Scope::Shared } else { Scope::Process };
        let owner = format!("{}:{}", hostname(), std::process::id());
        let worker = Worker {
            global: FairSlots::new(settings.worker_concurrency),
            gate: Gate::new(scope, settings.endpoint_concurrency, settings.host_concurrency)
                .adaptive_from(settings.endpoint_concurrency_min),
            limits: SharedLimits::new(&owner),
            recorder: Arc::new(Recorder::new(state.store.clone(), leases.clone())),
            leases,
            client,
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

    /// Runs until `shutdown`, then drains: stops claiming, lets in-flight
    /// attempts finish (bounded by the attempt timeout), writes their outcomes,
    /// and gives back any lease still held.
    pub async fn run(self: Arc<Self>, rx: mpsc::UnboundedReceiver<Reported>, shutdown: CancellationToken) {
        let recorder = tokio::spawn(self.recorder.clone().run(self.state.clone(), rx));
        let keeper = tokio::spawn(self.leases.clone().keep_alive(
            self.state.store.clone(),
            self.state.settings.lease_duration,
            shutdown.clone(),
        ));
        let slot_keeper = tokio::spawn({
            let (me, shutdown) = (self.clone(), shutdown.clone());
            async move {
                let lease = me.state.settings.lease_duration;
                me.limits.keep_alive(&me.gate, &me.state.store, lease, shutdown).await
            }
        });
        let watcher = tokio::spawn(self.clone().watch_endpoints(shutdown.clone()));
        let fresh = self.state.wake.fresh();
        let taker = tokio::spawn(self.clone().take_fresh(fresh.take(&self.owner, self.state.settings.lease_duration)));
        let mut failures = 0u32;
        let batch = self.state.settings.claim_batch.max(1);
        let slots = self.state.settings.worker_concurrency;
        // When the last fair claim came back short: the next waits a little.
        let mut fair_short_at: Option<std::time::Instant> = None;
        self.state.metrics.worker.start(time::now_ms(), self.state.settings.worker_stall_after);
        let mut pruned_at = std::time::Instant::now();
        while !shutdown.is_cancelled() {
            if pruned_at.elapsed() >= PRUNE_EVERY {
                self.gate.prune_idle(tokio::time::Instant::now());
                self.global.prune();
                self.reloaded.prune(time::now_ms());
                pruned_at = std::time::Instant::now();
            }
            let outstanding = self.outstanding.load(Ordering::Relaxed);
            // Claim in sizeable batches while busy (a claim costs about the same
            // for 10 rows as for 200), at once when idle; leave out apps that
            // hold their share while others have work ([`hands`]).
            let (limit, exclude) = match self.hands.plan(outstanding, slots, batch, std::time::Instant::now()) {
                Claim::Wait => {
                    tokio::select! {
                        _ = self.progress.notified() => {}
                        _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                        _ = shutdown.cancelled() => break,
                    }
                    continue;
                }
                Claim::Oldest { limit } => (limit, None),
                Claim::Fair { limit, exclude } => {
                    if let Some(left) = fair_short_at.and_then(|at| FAIR_RETRY.checked_sub(at.elapsed())) {
                        tokio::select! {
                            _ = self.progress.notified() => {}
                            _ = self.state.wake.notified() => fair_short_at = None,
                            _ = tokio::time::sleep(left) => {}
                            _ = shutdown.cancelled() => break,
                        }
                        continue;
                    }
                    (limit, Some(exclude))
                }
            };
            if self.recorder.is_blocked() {
                fresh.close();
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    _ = shutdown.cancelled() => break,
                }
                continue;
            }
            let now = time::now_ms();
            let claimed = match &exclude {
                None => self.claim_batch(now, limit).await,
                Some(exclude) => self.claim_fair(now, limit, exclude).await,
            };
            if claimed.is_ok() {
                self.state.metrics.worker.progressed(time::now_ms());
            }
            if exclude.is_some() {
                // Apps were left out: an empty or short answer does not mean
                // the queue is empty (no fresh hand-over, no idle sleep).
                fresh.close();
                fair_short_at = match claimed {
                    Ok(Tick::Claimed(n)) if n >= limit => None,
                    Err(_) => None,
                    _ => Some(std::time::Instant::now()),
                };
                if !matches!(claimed, Err(_) | Ok(Tick::Saturated)) {
                    continue;
                }
            }
            match claimed {
                Ok(Tick::Claimed(n)) => {
                    failures = 0;
                    // A claim that found less than it asked for emptied the
                    // queue: fresh deliveries may come straight from ingestion
                    // (never ahead of a backlog).
                    if n < limit {
                        fresh.open(self.room());
                    } else {
                        fresh.close();
                    }
                }
                Ok(Tick::Saturated) => {
                    // Every claimed delivery's endpoint is busy: wait for one
                    // to free up, or for new work (another app's: the busy
                    // ones are left out of the next claim).
                    failures = 0;
                    fresh.close();
                    tokio::select! {
                        _ = self.progress.notified() => {}
                        _ = self.state.wake.notified() => {}
                        _ = tokio::time::sleep(gate::BUSY_RETRY) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
                Ok(Tick::EmptyQueue) => {
                    failures = 0;
                    let wait = self.idle_wait(now).await;
                    // Nothing is due: fresh deliveries may come straight from ingestion.
                    fresh.open(self.room());
                    tokio::select! {
                        _ = self.state.wake.notified() => {}
                        _ = tokio::time::sleep(wait) => {}
                        _ = shutdown.cancelled() => {}
                    }
                }
                Err(e) => {
                    failures += 1;
                    fresh.close();
                    tracing::warn!(error = format!("{e:#}"), "claiming deliveries failed; retrying");
                    let backoff = Duration::from_millis(200 * u64::from(failures.min(25)));
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
            }
        }
        // Stopping before any await: no task starts an attempt from here.
        // Fresh deliveries still on their way are set aside (released below);
        // any sent after this is given back by the ingestion queue.
        self.stopping.store(true, Ordering::Relaxed);
        fresh.stop();
        let _ = taker.await;
        self.drain().await;
        keeper.abort();
        slot_keeper.abort();
        watcher.abort();
        self.limits.release(self.store()).await;
        recorder.abort();
        let released = self.leases.release_all(self.store(), time::now_ms()).await;
        tracing::info!(released, "worker stopped");
    }

    /// Stops starting jobs: those queued at the gate are set aside; running
    /// attempts finish (bounded by the attempt timeout; tasks still waiting
    /// for a global slot get one and set their job aside); the recorder
    /// writes what they reported (bounded too). What is still leased after
    /// this is released by the caller.
    async fn drain(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        for job in self.gate.take_waiting() {
            self.set_aside(&job);
        }
        let limit = self.state.settings.attempt_timeout + Duration::from_secs(2);
        if tokio::time::timeout(limit, self.until_no_job_outstanding()).await.is_err() {
            tracing::warn!("some attempts did not finish in time; their leases are released");
        }
        // The recorder settles each lease it records.
        if tokio::time::timeout(FLUSH_LIMIT, self.leases.until_empty()).await.is_err() {
            tracing::warn!("some outcomes were not recorded in time; their leases are released");
        }
    }

    /// Returns once every claimed job is finished or set aside. (Waiting for
    /// every global slot instead would miss a task spawned but not yet
    /// waiting for its slot: it would wait behind the drain, its lease held
    /// to the end.)
    async fn until_no_job_outstanding(&self) {
        loop {
            let progress = self.progress.notified();
            if self.outstanding.load(Ordering::Relaxed) == 0 {
                return;
            }
            progress.await;
        }
    }

    /// How long to sleep when nothing is due: until the next due time, at most [`IDLE_POLL`].
    async fn idle_wait(&self, now: Millis) -> Duration {
        match self.store().next_due_at().await {
            Ok(Some(at)) if at > now => Duration::from_millis((at - now) as u64).min(IDLE_POLL),
            Ok(Some(_)) => Duration::from_millis(25),
            Ok(None) => IDLE_POLL,
            Err(_) => IDLE_POLL,
        }
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

    /// Reads the endpoints of the jobs in hand every [`watch::WATCH_EVERY`],
    /// until `shutdown` (a failed read keeps the last one: the claim-time
    /// state then holds, as before).
    async fn watch_endpoints(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(watch::WATCH_EVERY) => {}
                _ = shutdown.cancelled() => return,
            }
            let ids = self.gate.endpoint_ids();
            let at = time::now_ms();
            match self.store().endpoints_now(&ids).await {
                Ok(found) => {
                    let found = found.into_iter().map(|e| (e.id, watch::Now { url: e.url, state: e.state })).collect();
                    self.watch.read(at, &ids, found);
                }
                Err(e) => tracing::warn!(error = %e, "reading the endpoints of the jobs in hand failed; retrying"),
            }
        }
    }

    /// Starts the fresh deliveries ingestion hands over (leased to this
    /// worker at insert), until the hand-over stops; then sets aside what is
    /// still on its way, to be released with the other leases.
    async fn take_fresh(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Vec<ClaimedDelivery>>) {
        let fresh = self.state.wake.fresh();
        while let Some(mut claimed) = rx.recv().await {
            // What arrived while the last hand-over was being started goes
            // together: one context read and one ask for shared limits for
            // all of it (on PostgreSQL each is a round trip or more).
            while let Ok(more) = rx.try_recv() {
                claimed.extend(more);
            }
            if self.stopping.load(Ordering::Relaxed) {
                for c in &claimed {
                    self.leases.set_aside(&c.id, c.lease_token);
                }
                continue;
            }
            tracing::debug!(deliveries = claimed.len(), "fresh deliveries taken");
            self.leases.hold(&claimed);
            if let Err(e) = self.start(claimed, time::now_ms()).await {
                tracing::warn!(error = format!("{e:#}"), "starting fresh deliveries failed; they were given back");
            }
            fresh.refill(self.room());
        }
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
        *self.fair_cursor.lock().expect("cursor lock") = last.clone();
        let apps: Vec<&String> = apps.iter().filter(|a| !exclude.contains(*a)).collect();
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
        // A delivery whose endpoint is at its concurrency limit waits in the
        // gate's queue (holding no global slot) and starts when a slot of that
        // endpoint frees; beyond a short queue, over its host's limit, or paced
        // far into the future, it goes back to the database for a while. One
        // slow customer cannot take every slot.
        let mut deferred: Vec<(String, i64, Millis)> = Vec::new();
        let mut started = 0usize;
        // Per app: whether any of its jobs ran or queued, else its shortest deferral.
        let mut admitted: HashMap<String, Result<(), Duration>> = HashMap::new();
        let policy = &self.state.policy;
        let jobs = job::prepare(claimed, ctx, now, &self.state.keyring, |url| policy.check_url(url));
        // Slots and send times shared with other instances, asked for once per batch if short.
        let ready: Vec<&Job> = jobs.iter().filter_map(|j| j.as_ref().ok()).collect();
        self.limits.reserve(&self.gate, self.store(), &ready, self.state.settings.lease_duration).await;
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
            self.hands.add(&job.claimed.app_id);
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
                    self.hands.remove(&job.claimed.app_id);
                    deferred.push((job.claimed.id.clone(), job.claimed.lease_token, now + after.as_millis() as i64));
                }
            }
        }
        let at = std::time::Instant::now();
        for (app, seen) in admitted {
            if let Err(after) = seen {
                self.hands.busy(&app, after, at);
            }
        }
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
                let signal = Signal::of(status, a.error.as_deref());
                let seen = Observation { started, latency: started.elapsed(), signal };
                if signal != Signal::NoAnswer {
                    self.global.observe(&app, seen.latency);
                }
                self.gate.observe(&job, seen, tokio::time::Instant::now());
            }
            // A limit that shrank leaves more queued than it justifies: those
            // go back to the database, out of this app's hands.
            self.give_back(&self.gate.shed(&endpoint_id), gate::BUSY_RETRY).await;
            let _ = self.results.send(reported);
            self.hands.attempted(&job.claimed.app_id);
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
    async fn next_job(&self, endpoint_id: &str, mut slots: Slots) -> Option<(Job, Duration, Slots)> {
        loop {
            if self.stopping.load(Ordering::Relaxed) {
                return None;
            }
            let (turn, kept) = self.gate.next(endpoint_id, slots, tokio::time::Instant::now())?;
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
    fn finished_one(&self, app_id: &str) {
        self.outstanding.fetch_sub(1, Ordering::Relaxed);
        self.hands.remove(app_id);
        self.progress.notify_one();
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "fenix".into())
}
