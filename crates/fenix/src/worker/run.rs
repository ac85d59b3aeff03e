//! The claim loop: [`Worker::run`] is a short loop over [`Worker::step`],
//! one round of claiming, and a pause whose length and wake-ups the round
//! chose ([`Step::pause`]). A test drives `step` itself, round by round,
//! and reads what each round did, without timers. Around the loop: the
//! tasks that run beside it (the recorder, the lease and slot keepers, the
//! endpoints' watch, the fresh hand-over) and the drain at shutdown.

use std::{
    sync::{atomic::Ordering, Arc},
    time::{Duration, Instant},
};

use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use super::{gate, hands::Claim, watch, Reported, Tick, Worker};
use crate::{
    store::ClaimedDelivery,
    time::{self, Millis},
};

/// Longest idle wait between looks at the queue (the safety net behind wake-ups).
pub(super) const IDLE_POLL: Duration = Duration::from_millis(1000);
/// How often entries of idle endpoints and hosts are dropped from the worker's maps.
const PRUNE_EVERY: Duration = Duration::from_secs(30);
/// After a fair claim came back short, the next one waits this long (or for
/// new work to be committed): it is a few index seeks per app, not free.
const FAIR_RETRY: Duration = Duration::from_millis(50);
/// How long a claimer with full hands waits at most for a job to finish.
const HANDS_FULL_WAIT: Duration = Duration::from_millis(50);
/// How long claiming stays off while the recorder is behind.
const RECORDER_WAIT: Duration = Duration::from_millis(100);
/// How long a drain waits for the recorder to write what the last attempts reported.
const FLUSH_LIMIT: Duration = Duration::from_secs(10);

/// What one round of the claim loop did; it says how long the loop pauses
/// before the next ([`Step::pause`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// This many deliveries were claimed and handed on: the next round at once.
    Claimed(usize),
    /// A fair claim found nothing due in the apps it visited (others were
    /// left out): the next round at once, which waits `FAIR_RETRY` first.
    VisitedEmpty,
    /// Every claimed delivery's endpoint was at its limit (some were put
    /// back): until a job finishes, new work comes, or `BUSY_RETRY`.
    Saturated,
    /// Nothing was due: until new work comes, or the next due time (at most `IDLE_POLL`).
    EmptyQueue(Duration),
    /// The claim failed: no claim for this back-off.
    Failed(Duration),
    /// The hands are full: no claim until a job finishes (at most 50 ms).
    HandsFull,
    /// The last fair claim came back short: no claim for the rest of `FAIR_RETRY`,
    /// unless a job finishes or new work comes.
    FairTooSoon(Duration),
    /// The recorder is behind: no claim for 100 ms.
    RecorderBlocked,
}

/// How long the loop waits after a step, and what ends the wait early
/// (shutdown always does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause {
    pub at_most: Duration,
    /// A job finishing (room in hand, an endpoint's slot free).
    pub on_progress: bool,
    /// New work committed (a wake-up).
    pub on_work: bool,
}

impl Step {
    /// The pause after this step; `None`: the next round at once.
    pub fn pause(self) -> Option<Pause> {
        let (at_most, on_progress, on_work) = match self {
            Step::Claimed(_) | Step::VisitedEmpty => return None,
            Step::Saturated => (gate::BUSY_RETRY, true, true),
            Step::EmptyQueue(wait) => (wait, false, true),
            Step::Failed(backoff) => (backoff, false, false),
            Step::HandsFull => (HANDS_FULL_WAIT, true, false),
            Step::FairTooSoon(left) => (left, true, true),
            Step::RecorderBlocked => (RECORDER_WAIT, false, false),
        };
        Some(Pause { at_most, on_progress, on_work })
    }
}

/// What ended a pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Woken {
    Elapsed,
    Progress,
    Work,
    Shutdown,
}

/// What the claim loop remembers from one round to the next.
pub(super) struct Rounds {
    /// Claims failed in a row (the back-off grows with them).
    failures: u32,
    /// When the last fair claim came back short: the next waits a little.
    fair_short_at: Option<Instant>,
    pruned_at: Instant,
}

impl Rounds {
    pub(super) fn new() -> Rounds {
        Rounds { failures: 0, fair_short_at: None, pruned_at: Instant::now() }
    }
}

/// The tasks that run beside the claim loop until shutdown.
struct Beside {
    recorder: JoinHandle<()>,
    keeper: JoinHandle<()>,
    slot_keeper: JoinHandle<()>,
    watcher: JoinHandle<()>,
    taker: JoinHandle<()>,
}

impl Worker {
    /// Runs until `shutdown`, then drains: stops claiming, lets in-flight
    /// attempts finish (bounded by the attempt timeout), writes their outcomes,
    /// and gives back any lease still held.
    pub async fn run(self: Arc<Self>, rx: mpsc::UnboundedReceiver<Reported>, shutdown: CancellationToken) {
        let beside = self.start_beside(rx, &shutdown);
        self.state.metrics.worker.start(time::now_ms(), self.state.settings.worker_stall_after);
        let mut rounds = Rounds::new();
        while !shutdown.is_cancelled() {
            let step = self.step(&mut rounds).await;
            let Some(pause) = step.pause() else { continue };
            let woken = self.pause(pause, &shutdown).await;
            if woken == Woken::Work && matches!(step, Step::FairTooSoon(_)) {
                // New work: the next fair claim need not wait out the rest.
                rounds.fair_short_at = None;
            }
        }
        self.stop(beside).await;
    }

    /// One round: prune idle entries when due, plan the claim from what is
    /// in hand (`hands.rs`), claim (oldest first, or fairly
    /// among apps), hand the claimed jobs on, and open or close the fresh
    /// hand-over by what was found.
    pub(super) async fn step(self: &Arc<Self>, rounds: &mut Rounds) -> Step {
        if rounds.pruned_at.elapsed() >= PRUNE_EVERY {
            self.gate.prune_idle(tokio::time::Instant::now());
            self.global.prune();
            self.reloaded.prune(time::now_ms());
            rounds.pruned_at = Instant::now();
        }
        let (batch, slots) = (self.state.settings.claim_batch.max(1), self.state.settings.worker_concurrency);
        let outstanding = self.outstanding.load(Ordering::Relaxed);
        // Claim in sizeable batches while busy (a claim costs about the same
        // for 10 rows as for 200), at once when idle; leave out apps that
        // hold their share while others have work ([`hands`]).
        let (limit, exclude) = match self.hands.plan(outstanding, slots, batch, Instant::now()) {
            Claim::Wait => return Step::HandsFull,
            Claim::Oldest { limit } => (limit, None),
            Claim::Fair { limit, exclude } => {
                if let Some(left) = rounds.fair_short_at.and_then(|at| FAIR_RETRY.checked_sub(at.elapsed())) {
                    return Step::FairTooSoon(left);
                }
                (limit, Some(exclude))
            }
        };
        let fresh = self.state.wake.fresh();
        if self.recorder.is_blocked() {
            fresh.close();
            return Step::RecorderBlocked;
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
            rounds.fair_short_at = match &claimed {
                Ok(Tick::Claimed(n)) if *n >= limit => None,
                Err(_) => None,
                _ => Some(Instant::now()),
            };
            match claimed {
                Ok(Tick::Claimed(n)) => return Step::Claimed(n),
                Ok(Tick::EmptyQueue) => return Step::VisitedEmpty,
                Ok(Tick::Saturated) | Err(_) => {}
            }
        }
        self.after_claim(claimed, limit, now, rounds).await
    }

    /// The step a claim of `limit` at `now` makes, and the fresh hand-over
    /// it opens or closes.
    async fn after_claim(&self, claimed: anyhow::Result<Tick>, limit: usize, now: Millis, rounds: &mut Rounds) -> Step {
        let fresh = self.state.wake.fresh();
        if claimed.is_ok() {
            rounds.failures = 0;
        }
        match claimed {
            Ok(Tick::Claimed(n)) => {
                // A claim that found less than it asked for emptied the
                // queue: fresh deliveries may come straight from ingestion
                // (never ahead of a backlog).
                if n < limit {
                    fresh.open(self.room());
                } else {
                    fresh.close();
                }
                Step::Claimed(n)
            }
            Ok(Tick::Saturated) => {
                // Every claimed delivery's endpoint is busy: wait for one
                // to free up, or for new work (another app's: the busy
                // ones are left out of the next claim).
                fresh.close();
                Step::Saturated
            }
            Ok(Tick::EmptyQueue) => {
                let wait = self.idle_wait(now).await;
                // Nothing is due: fresh deliveries may come straight from ingestion.
                fresh.open(self.room());
                Step::EmptyQueue(wait)
            }
            Err(e) => {
                rounds.failures += 1;
                fresh.close();
                tracing::warn!(error = format!("{e:#}"), "claiming deliveries failed; retrying");
                Step::Failed(Duration::from_millis(200 * u64::from(rounds.failures.min(25))))
            }
        }
    }

    /// Waits as `pause` says, or until `shutdown`.
    async fn pause(&self, pause: Pause, shutdown: &CancellationToken) -> Woken {
        tokio::select! {
            _ = self.progress.notified(), if pause.on_progress => Woken::Progress,
            _ = self.state.wake.notified(), if pause.on_work => Woken::Work,
            _ = tokio::time::sleep(pause.at_most) => Woken::Elapsed,
            _ = shutdown.cancelled() => Woken::Shutdown,
        }
    }

    /// Starts the tasks that run beside the claim loop.
    fn start_beside(self: &Arc<Self>, rx: mpsc::UnboundedReceiver<Reported>, shutdown: &CancellationToken) -> Beside {
        let lease = self.state.settings.lease_duration;
        let recorder = tokio::spawn(self.recorder.clone().run(self.state.clone(), rx));
        let keeper = tokio::spawn(self.leases.clone().keep_alive(self.state.store.clone(), lease, shutdown.clone()));
        let slot_keeper = tokio::spawn({
            let (me, shutdown) = (self.clone(), shutdown.clone());
            async move { me.limits.keep_alive(&me.gate, &me.state.store, lease, shutdown).await }
        });
        let watcher = tokio::spawn(self.clone().watch_endpoints(shutdown.clone()));
        let taker = tokio::spawn(self.clone().take_fresh(self.state.wake.fresh().take(&self.owner, lease)));
        Beside { recorder, keeper, slot_keeper, watcher, taker }
    }

    /// After the loop: the drain, then the tasks beside it stop and every
    /// lease still held is given back.
    async fn stop(&self, beside: Beside) {
        // Stopping before any await: no task starts an attempt from here.
        // Fresh deliveries still on their way are set aside (released below);
        // any sent after this is given back by the ingestion queue.
        self.stopping.store(true, Ordering::Relaxed);
        self.state.wake.fresh().stop();
        let _ = beside.taker.await;
        self.drain().await;
        beside.keeper.abort();
        beside.slot_keeper.abort();
        beside.watcher.abort();
        self.limits.release(self.store()).await;
        beside.recorder.abort();
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
            let held: Vec<_> = self.leases.held().into_iter().map(|(id, _)| id).collect();
            let at = time::now_ms();
            let read = async {
                Ok::<_, crate::store::Error>((
                    self.store().endpoints_now(&ids).await?,
                    self.store().ended_among(&held).await?,
                ))
            };
            match read.await {
                Ok((found, ended)) => {
                    let found = found
                        .into_iter()
                        .map(|e| (e.id.into_string(), watch::Now { url: e.url, state: e.state }))
                        .collect();
                    self.watch.read(at, &ids, found, ended);
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
}
