//! Keeping leases alive and writing outcomes.

use std::{
    sync::{Arc, Weak},
    time::Duration,
};

use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;

use super::Worker;
use crate::{lifecycle::DeliveryStatus, state::SharedState, store::deliveries::Outcome, time};

impl Worker {
    /// Keeps leases of running attempts alive, so a slow receiver never lets a
    /// second worker start the same delivery.
    pub(super) async fn extend_loop(self: Arc<Self>, shutdown: CancellationToken) {
        let every = self.state.settings.lease_duration / 3;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.cancelled() => return,
            }
            let held: Vec<(String, i64)> =
                self.leases.lock().expect("leases lock").iter().map(|(k, v)| (k.clone(), *v)).collect();
            let until = time::add(time::now_ms(), self.state.settings.lease_duration);
            if let Err(e) = self.store().extend_leases(&held, until).await {
                tracing::warn!(error = %e, "could not extend leases");
            }
        }
    }
}

/// Writes outcomes in batches (one transaction each), retrying while the
/// database is away: an outcome is dropped only if the process dies, and then
/// the lease expiry makes the delivery due again. On PostgreSQL several batches
/// are written at once (their rows are disjoint and locked in id order); SQLite
/// has one writer, so one at a time.
pub(super) async fn record_loop(worker: Arc<Worker>, mut rx: mpsc::UnboundedReceiver<Outcome>) {
    let state = worker.state.clone();
    let weak = Arc::downgrade(&worker);
    drop(worker);
    let writers = Arc::new(Semaphore::new(if state.store.is_postgres() { RECORDERS_POSTGRES } else { 1 }));
    let mut buf = Vec::with_capacity(512);
    while rx.recv_many(&mut buf, 512).await > 0 {
        let Ok(slot) = writers.clone().acquire_owned().await else { return };
        let batch = std::mem::replace(&mut buf, Vec::with_capacity(512));
        let (state, weak) = (state.clone(), weak.clone());
        tokio::spawn(async move {
            record_batch(&state, &weak, batch).await;
            drop(slot);
        });
    }
}

/// Batches of outcomes written at the same time on PostgreSQL.
const RECORDERS_POSTGRES: usize = 3;

async fn record_batch(state: &SharedState, weak: &Weak<Worker>, buf: Vec<Outcome>) {
    let mut failures = 0u32;
    let mut applied = std::collections::HashSet::new();
    let mut todo: Option<Vec<Outcome>> = None;
    // A data error isolates the refused outcome (written smaller); the others
    // are written as they are. Only an unavailable database makes us wait.
    loop {
        let part = todo.as_deref().unwrap_or(&buf);
        let recorded = state.store.record_outcomes_isolating(part, time::now_ms()).await;
        applied.extend(recorded.applied);
        for (delivery_id, form) in &recorded.degraded {
            state.metrics.outcome_degraded(form.as_str());
            tracing::error!(delivery_id = %delivery_id, form = form.as_str(), "outcome recorded in a degraded form");
        }
        let Some(e) = recorded.unavailable else { break };
        let pending = recorded.unwritten.len();
        todo = Some(recorded.unwritten);
        failures += 1;
        state.metrics.worker.recorder_blocked(true, time::now_ms());
        if let Some(w) = weak.upgrade() {
            w.recorder_blocked.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        tracing::warn!(error = %e, pending, "recording outcomes failed; retrying");
        tokio::time::sleep(Duration::from_millis(200 * u64::from(failures.min(25)))).await;
    }
    state.metrics.worker.recorder_blocked(false, time::now_ms());
    state.metrics.worker.progressed(time::now_ms());
    if let Some(w) = weak.upgrade() {
        w.recorder_blocked.store(false, std::sync::atomic::Ordering::Relaxed);
    }
    let lost = buf.len() - applied.len();
    if lost > 0 {
        tracing::warn!(
            lost,
            "outcomes not applied: another worker took over these deliveries, or the database refused them"
        );
    }
    let now = time::now_ms();
    // A retry just scheduled may come due before the worker's next look at the queue.
    if buf.iter().any(|o| o.status == DeliveryStatus::Pending && applied.contains(&o.delivery_id)) {
        state.wake.work_committed(crate::wake::Reach::ThisInstance).await;
    }
    for o in buf.iter().filter(|o| applied.contains(&o.delivery_id)) {
        state.metrics.finished(&o.app_id, o.status);
        if o.status == DeliveryStatus::Failed
            && o.attempt.is_some()
            && state.operator_app_id.as_deref() != Some(o.app_id.as_str())
        {
            state.alerts.dead_lettered(&o.endpoint_id, &o.app_id, &o.delivery_id, now);
        }
    }
    if let Some(w) = weak.upgrade() {
        let mut leases = w.leases.lock().expect("leases lock");
        for o in &buf {
            if leases.get(&o.delivery_id) == Some(&o.lease_token) {
                leases.remove(&o.delivery_id);
            }
        }
    }
}
