//! The recorder: writes reported outcomes in batches (one transaction each),
//! only where the lease still holds, then hands what was written to the
//! reactions ([`reactions::after_recorded`]) and settles the leases.
//!
//! While the database is away it retries with back-off and says so
//! ([`Recorder::is_blocked`]): the worker then claims nothing new, so outcomes
//! held in memory are written (under their still-valid lease tokens) before
//! this instance re-claims expired work and sends it twice. An outcome is
//! dropped only if the process dies; then the lease expiry makes the delivery
//! due again.

use std::{
    collections::HashSet,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use tokio::sync::{mpsc, Semaphore};

use super::{
    lease_book::LeaseBook,
    reactions::{self, Notes},
};
use crate::{metrics::Metrics, state::SharedState, store::deliveries::Outcome, store::Store, time};

/// Outcomes taken off the channel per batch.
const BATCH: usize = 512;
/// Batches written at the same time where the database has concurrent writers
/// (their rows are disjoint and locked in id order); one at a time otherwise.
const CONCURRENT_BATCHES: usize = 3;

/// An outcome on its way to the recorder, with what the reactions need to
/// know of its attempt beyond what is written. Opaque outside the worker.
pub struct Reported {
    pub(super) outcome: Outcome,
    pub(super) notes: Notes,
}

impl Reported {
    /// An outcome settled without an attempt (skipped, or its payload purged).
    pub(super) fn without_attempt(outcome: Outcome) -> Reported {
        Reported { outcome, notes: Notes::default() }
    }
}

/// Writes outcomes; one per worker.
pub(super) struct Recorder {
    store: Store,
    leases: Arc<LeaseBook>,
    /// Set while a batch cannot be written.
    blocked: AtomicBool,
}

impl Recorder {
    pub(super) fn new(store: Store, leases: Arc<LeaseBook>) -> Recorder {
        Recorder { store, leases, blocked: AtomicBool::new(false) }
    }

    /// True while outcomes wait for the database.
    pub(super) fn is_blocked(&self) -> bool {
        self.blocked.load(Ordering::Relaxed)
    }

    /// Takes outcomes off `rx` until it closes: each batch is written (several
    /// at once on a database with concurrent writers), then reacted to, then
    /// its leases leave the book.
    pub(super) async fn run(self: Arc<Self>, state: SharedState, mut rx: mpsc::UnboundedReceiver<Reported>) {
        let writers = Arc::new(Semaphore::new(if self.store.concurrent_writes() { CONCURRENT_BATCHES } else { 1 }));
        let mut buf = Vec::with_capacity(BATCH);
        while rx.recv_many(&mut buf, BATCH).await > 0 {
            let Ok(slot) = writers.clone().acquire_owned().await else { return };
            let (outcomes, notes): (Vec<Outcome>, Vec<Notes>) = buf.drain(..).map(|r| (r.outcome, r.notes)).unzip();
            let (me, state) = (self.clone(), state.clone());
            tokio::spawn(async move {
                let applied = me.write(&outcomes, &state.metrics).await;
                drop(slot);
                reactions::after_recorded(&state, &outcomes, &notes, &applied).await;
                me.leases.settled(&outcomes);
            });
        }
    }

    /// Writes one batch, retrying while the database is unavailable. A data
    /// error isolates the refused outcome (written smaller); the others are
    /// written as they are. Answers the deliveries whose row changed: those
    /// whose lease still held.
    pub(super) async fn write(&self, batch: &[Outcome], metrics: &Metrics) -> HashSet<crate::ids::DeliveryId> {
        let mut failures = 0u32;
        let mut applied = HashSet::new();
        let mut todo: Option<Vec<Outcome>> = None;
        loop {
            let part = todo.as_deref().unwrap_or(batch);
            let recorded = self.store.record_outcomes_isolating(part, time::now_ms()).await;
            applied.extend(recorded.applied);
            for (delivery_id, form) in &recorded.degraded {
                metrics.outcome_degraded(form.as_str());
                tracing::error!(delivery_id = %delivery_id, form = form.as_str(), "outcome recorded in a degraded form");
            }
            let Some(e) = recorded.unavailable else { break };
            let pending = recorded.unwritten.len();
            todo = Some(recorded.unwritten);
            failures += 1;
            metrics.worker.recorder_blocked(true, time::now_ms());
            self.blocked.store(true, Ordering::Relaxed);
            tracing::warn!(error = %e, pending, "recording outcomes failed; retrying");
            tokio::time::sleep(Duration::from_millis(200 * u64::from(failures.min(25)))).await;
        }
        metrics.worker.recorder_blocked(false, time::now_ms());
        metrics.worker.progressed(time::now_ms());
        self.blocked.store(false, Ordering::Relaxed);
        let lost = batch.len() - applied.len();
        if lost > 0 {
            tracing::warn!(
                lost,
                "outcomes not applied: another worker took over these deliveries, or the database refused them"
            );
        }
        applied
    }
}
