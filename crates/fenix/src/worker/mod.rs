//! The delivery worker: plain functions over the store.
//!
//! 1. [`Worker::claim_batch`] leases due deliveries in one short transaction
//!    (committed before any request is sent) and hands each to a task.
//! 2. Each task builds the signed request ([`attempt`]), sends it under the
//!    global and per-endpoint concurrency bounds, and decides the next step
//!    ([`schedule`]).
//! 3. The recorder writes outcomes in batches, each in one transaction, only
//!    where the lease still holds.
//!
//! A process killed at any point loses nothing: a leased delivery whose
//! outcome was never written comes due again when its lease expires.

pub mod attempt;
mod dispatch;
mod record;
pub mod schedule;
mod send;

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::{
    lifecycle::DeliveryStatus,
    secrets::SigningSecret,
    state::SharedState,
    store::{
        deliveries::{BatchContext, ClaimedDelivery, Outcome},
        Store,
    },
    time::{self, Millis},
};

/// Longest idle wait between looks at the queue (the safety net behind wake-ups).
const IDLE_POLL: Duration = Duration::from_millis(1000);
/// A delivery whose endpoint is at its concurrency limit is due again after this.
const BUSY_ENDPOINT_RETRY_MS: Millis = 200;
/// How often entries of idle endpoints and hosts are dropped from the worker's maps.
const PRUNE_EVERY: Duration = Duration::from_secs(30);
/// Longest rate-limit wait slept through while holding a slot; longer waits are deferred.
const MAX_PACING_SLEEP: Duration = Duration::from_millis(250);

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

/// What became of a claimed job at its endpoint's concurrency limit.
enum Admission {
    /// A slot was free: run it now.
    Run(Box<Job>, tokio::sync::OwnedSemaphorePermit),
    /// Queued behind the endpoint's running attempts; one of them runs it next.
    Queued,
    /// The endpoint's queue is full: give it back for a moment.
    Full(Box<Job>),
}

/// One worker per process; cheap to share.
pub struct Worker {
    state: SharedState,
    client: reqwest::Client,
    /// Identifies this process in `lease_owner` (for operators reading the table).
    owner: String,
    global: Arc<Semaphore>,
    per_endpoint: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Attempts in flight per destination host, over all its endpoints
    /// (`FENIX_HOST_CONCURRENCY`): many endpoints on one host cannot flood it.
    per_host: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Claimed jobs waiting for their endpoint's concurrency slot, per endpoint.
    /// They hold no global slot; the claim size shrinks by their number.
    waiting: Mutex<HashMap<String, std::collections::VecDeque<Job>>>,
    /// Set when the worker stops claiming: running tasks finish, queued jobs are not started.
    stopping: std::sync::atomic::AtomicBool,
    /// Claimed jobs handed to a task or to `waiting` and not finished yet. Claiming
    /// runs up to one claim batch ahead of the attempts in flight, so the next
    /// batch is ready when slots free up instead of being fetched then.
    outstanding: std::sync::atomic::AtomicUsize,
    /// Signalled whenever a job finishes, so a claimer held back by full queues resumes.
    progress: tokio::sync::Notify,
    /// Per-endpoint pacing for `rate_limit_per_sec`: the next free send slot.
    pacing: Mutex<HashMap<String, tokio::time::Instant>>,
    /// Deliveries this process holds a lease on and is working on: id → lease token.
    leases: Mutex<HashMap<String, i64>>,
    /// Leases of claimed jobs that will not start because the worker is stopping.
    unstarted: Mutex<Vec<(String, i64)>>,
    results: mpsc::UnboundedSender<Outcome>,
    /// Set while the recorder cannot write: claiming waits, so outcomes held in
    /// memory are written (under their still-valid lease tokens) before this
    /// instance re-claims expired work and sends it twice.
    recorder_blocked: std::sync::atomic::AtomicBool,
    /// Secrets reloaded for jobs whose own were too old to sign with: endpoint → (loaded at, secrets).
    fresh_secrets: Mutex<HashMap<String, (Millis, Secrets)>>,
}

/// A claimed delivery with everything needed to send it.
struct Job {
    claimed: ClaimedDelivery,
    event_type: String,
    event_created_at: Millis,
    envelope: Bytes,
    /// The endpoint URL after the URL rules of the destination policy (checked
    /// once per endpoint and batch: they depend on the URL alone); the address
    /// check runs again before every attempt.
    url: Arc<Result<url::Url, fenix_destination::DestinationError>>,
    /// The URL's host (lower case), the key of the per-host limit; `None` when
    /// the URL is refused (no request is made).
    host: Option<Arc<str>>,
    rate_limit_per_sec: Option<i64>,
    scheme: fenix_signing::Scheme,
    /// The endpoint's live secrets when the batch was claimed (`loaded_at`);
    /// reloaded before signing when older than [`send::SECRETS_FRESH_MS`].
    secrets: Secrets,
    loaded_at: Millis,
}

/// An endpoint secret opened for signing, with the end of its validity.
pub(crate) struct LiveSecret {
    version: i64,
    secret: SigningSecret,
    /// `None` until a rotation retires it.
    expires_at: Option<Millis>,
}

impl LiveSecret {
    /// True while the secret may sign (a retired one stops at its expiry).
    fn is_live(&self, now: Millis) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }
}

/// An endpoint's live secrets, newest first, shared by the jobs of a batch.
type Secrets = Arc<Vec<LiveSecret>>;

impl Worker {
    /// Makes the worker and the receiving end of its outcome channel.
    pub fn new(state: SharedState, client: reqwest::Client) -> (Arc<Worker>, mpsc::UnboundedReceiver<Outcome>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let worker = Worker {
            global: Arc::new(Semaphore::new(state.settings.worker_concurrency)),
            state,
            client,
            owner: format!("{}:{}", hostname(), std::process::id()),
            per_endpoint: Mutex::new(HashMap::new()),
            per_host: Mutex::new(HashMap::new()),
            pacing: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            outstanding: std::sync::atomic::AtomicUsize::new(0),
            stopping: std::sync::atomic::AtomicBool::new(false),
            progress: tokio::sync::Notify::new(),
            leases: Mutex::new(HashMap::new()),
            unstarted: Mutex::new(Vec::new()),
            results: tx,
            recorder_blocked: std::sync::atomic::AtomicBool::new(false),
            fresh_secrets: Mutex::new(HashMap::new()),
        };
        (Arc::new(worker), rx)
    }

    fn store(&self) -> &Store {
        &self.state.store
    }

    /// Runs until `shutdown`, then drains: stops claiming, lets in-flight
    /// attempts finish (bounded by the attempt timeout), writes their outcomes,
    /// and gives back any lease still held.
    pub async fn run(self: Arc<Self>, rx: mpsc::UnboundedReceiver<Outcome>, shutdown: CancellationToken) {
        let recorder = tokio::spawn(record::record_loop(self.clone(), rx));
        let extender = tokio::spawn(self.clone().extend_loop(shutdown.clone()));
        let mut failures = 0u32;
        let batch = self.state.settings.claim_batch.max(1);
        let ahead = self.state.settings.worker_concurrency + batch;
        self.state.metrics.worker.start(time::now_ms(), self.state.settings.worker_stall_after);
        let mut pruned_at = std::time::Instant::now();
        while !shutdown.is_cancelled() {
            if pruned_at.elapsed() >= PRUNE_EVERY {
                self.prune_idle();
                pruned_at = std::time::Instant::now();
            }
            let outstanding = self.outstanding.load(std::sync::atomic::Ordering::Relaxed);
            let free = ahead.saturating_sub(outstanding);
            // Claim in sizeable batches while busy (a claim costs about the same
            // for 10 rows as for 200), at once when idle.
            if free == 0 || (free < batch / 4 && outstanding > 0) {
                tokio::select! {
                    _ = self.progress.notified() => {}
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    _ = shutdown.cancelled() => break,
                }
                continue;
            }
            if self.recorder_blocked.load(std::sync::atomic::Ordering::Relaxed) {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    _ = shutdown.cancelled() => break,
                }
                continue;
            }
            let now = time::now_ms();
            let claimed = self.claim_batch(now, free.min(batch)).await;
            if claimed.is_ok() {
                self.state.metrics.worker.progressed(time::now_ms());
            }
            match claimed {
                Ok(Tick::Claimed(_)) => failures = 0,
                Ok(Tick::Saturated) => {
                    // Every claimed delivery's endpoint is busy: wait for one to free up.
                    failures = 0;
                    tokio::select! {
                        _ = self.progress.notified() => {}
                        _ = tokio::time::sleep(Duration::from_millis(BUSY_ENDPOINT_RETRY_MS as u64)) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
                Ok(Tick::EmptyQueue) => {
                    failures = 0;
                    let wait = self.idle_wait(now).await;
                    tokio::select! {
                        _ = self.state.wake.notified() => {}
                        _ = tokio::time::sleep(wait) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
                Err(e) => {
                    failures += 1;
                    tracing::warn!(error = format!("{e:#}"), "claiming deliveries failed; retrying");
                    let backoff = Duration::from_millis(200 * u64::from(failures.min(25)));
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = shutdown.cancelled() => break,
                    }
                }
            }
        }
        self.stopping.store(true, std::sync::atomic::Ordering::Relaxed);
        // Jobs queued behind a busy endpoint will not start now.
        let queued: Vec<Job> =
            self.waiting.lock().expect("waiting lock").drain().flat_map(|(_, jobs)| jobs.into_iter()).collect();
        for job in &queued {
            self.set_aside(job);
        }
        // Drain: wait for running attempts, bounded (claimed jobs still waiting
        // for a slot get it first, and set themselves aside).
        let limit = self.state.settings.attempt_timeout + Duration::from_secs(2);
        let all = u32::try_from(self.state.settings.worker_concurrency).unwrap_or(u32::MAX);
        if tokio::time::timeout(limit, self.global.acquire_many(all)).await.is_err() {
            tracing::warn!("some attempts did not finish in time; their leases are released");
        }
        extender.abort();
        // Let the recorder write what the finished attempts reported; it forgets each lease it records.
        let flush_until = std::time::Instant::now() + Duration::from_secs(10);
        while !self.leases.lock().expect("leases lock").is_empty() && std::time::Instant::now() < flush_until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        recorder.abort();
        let mut leftover: Vec<(String, i64)> = self.leases.lock().expect("leases lock").drain().collect();
        leftover.append(&mut self.unstarted.lock().expect("unstarted lock"));
        if !leftover.is_empty() {
            if let Err(e) = self.store().release_leases(&leftover, time::now_ms()).await {
                tracing::warn!(error = %e, count = leftover.len(), "could not release leases; they will expire");
            }
        }
        tracing::info!(released = leftover.len(), "worker stopped");
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

    /// Claims up to `limit` due deliveries and starts an attempt for each.
    pub async fn claim_batch(self: &Arc<Self>, now: Millis, limit: usize) -> anyhow::Result<Tick> {
        let lease_until = time::add(now, self.state.settings.lease_duration);
        let claimed = self.store().claim_due(&self.owner, now, lease_until, limit as i64).await?;
        if claimed.is_empty() {
            return Ok(Tick::EmptyQueue);
        }
        let n = claimed.len();
        {
            let mut leases = self.leases.lock().expect("leases lock");
            for c in &claimed {
                leases.insert(c.id.clone(), c.lease_token);
            }
        }
        let ctx = match self.store().batch_context(&claimed, now).await {
            Ok(ctx) => ctx,
            Err(e) => {
                // Give the batch back rather than wait for the leases to expire.
                let leases: Vec<_> = claimed.iter().map(|c| (c.id.clone(), c.lease_token)).collect();
                let _ = self.store().release_leases(&leases, now).await;
                self.forget(&leases);
                return Err(e.into());
            }
        };
        // A delivery whose endpoint is at its concurrency limit waits in a local
        // queue (holding no global slot) and starts when a slot of that endpoint
        // frees; beyond a short queue it goes back to the database for a moment.
        // Rate-limited deliveries far in the future go back too. One slow customer
        // cannot take every slot.
        let mut deferred: Vec<(String, i64, Millis)> = Vec::new();
        let mut started = 0usize;
        for job in self.prepare(claimed, ctx, now) {
            match job {
                Ok(job) => {
                    let wait = self.pace(&job);
                    if wait > MAX_PACING_SLEEP {
                        deferred.push((job.claimed.id.clone(), job.claimed.lease_token, now + wait.as_millis() as i64));
                        continue;
                    }
                    match self.admit(job) {
                        Admission::Run(job, endpoint_permit) => {
                            // The destination host's limit, over all its endpoints: over it,
                            // the delivery goes back for a moment, holding no slot.
                            let Ok(host_permit) = self.host_permit(job.host.as_deref()) else {
                                deferred.push((
                                    job.claimed.id.clone(),
                                    job.claimed.lease_token,
                                    now + BUSY_ENDPOINT_RETRY_MS,
                                ));
                                continue;
                            };
                            // The task waits for a global slot itself: claiming goes on meanwhile.
                            let me = self.clone();
                            started += 1;
                            self.outstanding.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            tokio::spawn(async move { me.execute(*job, endpoint_permit, host_permit, wait).await });
                        }
                        Admission::Queued => {}
                        Admission::Full(job) => {
                            deferred.push((
                                job.claimed.id.clone(),
                                job.claimed.lease_token,
                                now + BUSY_ENDPOINT_RETRY_MS,
                            ));
                        }
                    }
                }
                Err(outcome) => {
                    started += 1;
                    let _ = self.results.send(*outcome);
                }
            }
        }
        let saturated = started == 0 && !deferred.is_empty();
        if !deferred.is_empty() {
            self.defer(deferred).await;
        }
        if saturated {
            return Ok(Tick::Saturated);
        }
        Ok(Tick::Claimed(n))
    }

    /// A claimed job that will not be sent (the worker is stopping): its lease
    /// is given back with the others at the end, not waited for.
    fn set_aside(&self, job: &Job) {
        self.leases.lock().expect("leases lock").remove(&job.claimed.id);
        self.unstarted.lock().expect("unstarted lock").push((job.claimed.id.clone(), job.claimed.lease_token));
        self.outstanding.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn forget(&self, leases: &[(String, i64)]) {
        let mut map = self.leases.lock().expect("leases lock");
        for (id, _) in leases {
            map.remove(id);
        }
    }

    /// Turns claimed rows into jobs; deliveries that must not be sent become
    /// outcomes at once (paused or disabled endpoint → `skipped`).
    fn prepare(
        &self,
        claimed: Vec<ClaimedDelivery>,
        ctx: BatchContext,
        ctx_loaded_at: Millis,
    ) -> Vec<Result<Job, Box<Outcome>>> {
        let mut envelopes: HashMap<String, Option<Bytes>> = HashMap::new();
        let mut secrets: HashMap<String, Secrets> = HashMap::new();
        type Checked = Arc<Result<url::Url, fenix_destination::DestinationError>>;
        let mut urls: HashMap<String, Checked> = HashMap::new();
        let mut hosts: HashMap<String, Option<Arc<str>>> = HashMap::new();
        let BatchContext { mut events, endpoints, secrets: sealed } = ctx;
        claimed
            .into_iter()
            .map(|c| {
                let settle = |status: DeliveryStatus| {
                    Box::new(Outcome {
                        delivery_id: c.id.clone(),
                        endpoint_id: c.endpoint_id.clone(),
                        app_id: c.app_id.clone(),
                        event_id: c.event_id.clone(),
                        lease_token: c.lease_token,
                        attempt: None,
                        status,
                        attempt_count: c.attempt_count,
                        next_attempt_at: None,
                        last_attempt_at: None,
                    })
                };
                let Some(target) = endpoints.get(&c.endpoint_id) else {
                    return Err(settle(DeliveryStatus::Skipped));
                };
                if !target.state.sends() {
                    return Err(settle(DeliveryStatus::Skipped));
                }
                let event_type = events.get(&c.event_id).map(|e| e.0.clone()).unwrap_or_default();
                let event_created_at = events.get(&c.event_id).map(|e| e.2).unwrap_or_default();
                let envelope = envelopes
                    .entry(c.event_id.clone())
                    .or_insert_with(|| events.get_mut(&c.event_id).and_then(|e| e.1.take()).map(Bytes::from))
                    .clone();
                let Some(envelope) = envelope else {
                    tracing::warn!(delivery_id = %c.id, "payload purged by retention before delivery; marking failed");
                    return Err(settle(DeliveryStatus::Failed));
                };
                let keys = secrets
                    .entry(c.endpoint_id.clone())
                    .or_insert_with(|| Arc::new(self.open_secrets(&c.endpoint_id, sealed.get(&c.endpoint_id))))
                    .clone();
                let scheme =
                    fenix_signing::Scheme::parse(&target.signature_scheme).unwrap_or(fenix_signing::Scheme::FenixV1);
                let url = urls
                    .entry(c.endpoint_id.clone())
                    .or_insert_with(|| Arc::new(self.state.policy.check_url(&target.url)))
                    .clone();
                let host = hosts
                    .entry(c.endpoint_id.clone())
                    .or_insert_with(|| {
                        url.as_ref().as_ref().ok().and_then(|u| u.host_str()).map(|h| Arc::from(h.to_ascii_lowercase()))
                    })
                    .clone();
                Ok(Job {
                    host,
                    url,
                    rate_limit_per_sec: target.rate_limit_per_sec,
                    scheme,
                    secrets: keys,
                    loaded_at: ctx_loaded_at,
                    event_type,
                    event_created_at,
                    envelope,
                    claimed: c,
                })
            })
            .collect()
    }

    fn open_secrets(
        &self,
        endpoint_id: &str,
        rows: Option<&Vec<crate::store::endpoints::SecretRow>>,
    ) -> Vec<LiveSecret> {
        rows.into_iter()
            .flatten()
            .filter_map(|r| match self.state.keyring.open_secret(&r.sealed, endpoint_id) {
                Ok(secret) => Some(LiveSecret { version: r.version, secret, expires_at: r.expires_at }),
                Err(e) => {
                    tracing::error!(
                        endpoint_id,
                        version = r.version,
                        error = format!("{e:#}"),
                        "cannot open endpoint secret"
                    );
                    None
                }
            })
            .collect()
    }
}

fn hostname() -> String {
    std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "fenix".into())
}
