//! The task runner: takes the lease of one task at a time (any instance may;
//! a runner that vanished leaves it to another when its lease ends) and acts
//! on its selected deliveries in batches, at most `FENIX_TASK_RATE` per
//! second: a bulk replay re-queues no faster than that (the worker then sends
//! the re-queued deliveries beside fresh ones, so the rate must stay under
//! what it sends for fresh deliveries to keep their latency). Each batch
//! is one transaction ([`crate::store::Store::run_task_batch`]); a task
//! cancelled meanwhile stops at its next batch.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{ids::TaskId, state::SharedState, store::tasks::TaskBatch, time, wake::Reach};

/// How often an idle runner looks for a task.
const IDLE: Duration = Duration::from_millis(500);

/// Batches per second at full rate: small batches keep each transaction short.
const BATCHES_PER_SECOND: usize = 4;

/// Runs until `shutdown`.
pub async fn run(state: SharedState, shutdown: CancellationToken) {
    let owner = format!("tasks-{}", ulid::Ulid::new());
    loop {
        let ran = match state.store.claim_task(&owner, time::now_ms()).await {
            Ok(Some((id, rate))) => run_task(&state, &owner, &id, rate, &shutdown).await,
            Ok(None) => Ok(false),
            Err(e) => Err(anyhow::Error::new(e).context("claiming a task")),
        };
        let pause = match ran {
            Ok(true) => Duration::ZERO,
            Ok(false) => IDLE,
            Err(e) => {
                tracing::warn!(error = format!("{e:#}"), "task runner failed; will retry");
                IDLE
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = shutdown.cancelled() => return,
        }
    }
}

/// Runs the batches of task `id` until it ends, stops being ours, or shutdown
/// (its lease then ends and a runner takes it up again). True when it ran.
async fn run_task(
    state: &SharedState,
    owner: &str,
    id: &TaskId,
    rate: i64,
    shutdown: &CancellationToken,
) -> anyhow::Result<bool> {
    let rate = (rate.max(1) as usize).min(state.settings.task_rate.max(1));
    let batch = (rate / BATCHES_PER_SECOND).clamp(1, 500);
    // The time one batch may take at this rate.
    let pace = Duration::from_secs_f64(batch as f64 / rate as f64);
    tracing::info!(task_id = %id, rate, "task started");
    loop {
        let started = tokio::time::Instant::now();
        match state.store.run_task_batch(id, owner, time::now_ms(), batch as i64).await? {
            TaskBatch::Progressed(_) => state.wake.work_committed(Reach::AllInstances).await,
            TaskBatch::Finished => {
                tracing::info!(task_id = %id, "task succeeded");
                return Ok(true);
            }
            TaskBatch::Stopped => {
                tracing::info!(task_id = %id, "task stopped: cancelled, or taken by another runner");
                return Ok(true);
            }
        }
        tokio::select! {
            _ = tokio::time::sleep_until(started + pace) => {}
            _ = shutdown.cancelled() => return Ok(true),
        }
    }
}
