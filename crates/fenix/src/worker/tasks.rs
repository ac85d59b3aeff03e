//! The task runner: takes the lease of one task at a time (any instance may;
//! a runner that vanished leaves it to another when its lease ends) and acts
//! on its selected deliveries in batches, at most `FENIX_TASK_RATE` per
//! second. Each batch is one transaction
//! ([`crate::store::Store::run_task_batch`]); a task cancelled meanwhile
//! stops at its next batch.
//!
//! A bulk replay also goes no faster than the worker sends: re-queued
//! deliveries join the same due index as fresh ones, oldest due first, so a
//! replay re-queueing faster than its deliveries are claimed would grow a
//! backlog that every fresh delivery then waits behind. Before each batch
//! the runner counts its app's deliveries that are due and not yet claimed;
//! while a quarter of a batch still waits, it holds the next one back (for
//! [`HOLD_AT_MOST`] at most, so that a backlog the worker cannot take, such
//! as a paused or rate-limited endpoint's, slows the task without stopping
//! it). The task then runs at the smaller of its rate and what the worker
//! drains, and a fresh delivery waits behind at most about one batch (a
//! fiftieth of a second at the task's rate).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{
    lifecycle::TaskKind,
    state::SharedState,
    store::tasks::{ClaimedTask, SelectBatch, TaskBatch},
    time,
    wake::Reach,
};

/// How often an idle runner looks for a task.
const IDLE: Duration = Duration::from_millis(500);

/// Batches per second at full rate: small batches keep each transaction
/// short, and the backlog a fresh delivery may wait behind small.
const BATCHES_PER_SECOND: usize = 50;

/// Longest a runner holds its next batch back while its app's deliveries
/// wait to be claimed.
const HOLD_AT_MOST: Duration = Duration::from_secs(1);

/// Runs until `shutdown`.
pub async fn run(state: SharedState, shutdown: CancellationToken) {
    let owner = format!("tasks-{}", ulid::Ulid::new());
    loop {
        let ran = match state.store.claim_task(&owner, time::now_ms()).await {
            Ok(Some(task)) => run_task(&state, &owner, &task, &shutdown).await,
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

/// Runs the batches of `task` until it ends, stops being ours, or shutdown
/// (its lease then ends and a runner takes it up again). True when it ran.
async fn run_task(
    state: &SharedState,
    owner: &str,
    task: &ClaimedTask,
    shutdown: &CancellationToken,
) -> anyhow::Result<bool> {
    let id = &task.id;
    let rate = (task.rate_per_s.max(1) as usize).min(state.settings.task_rate.max(1));
    let batch = (rate / BATCHES_PER_SECOND).clamp(1, 500);
    // Held back while this many of the app's deliveries wait to be claimed.
    let hold_at = (batch / 4).max(1) as i64;
    // The time one batch may take at this rate.
    let pace = Duration::from_secs_f64(batch as f64 / rate as f64);
    tracing::info!(task_id = %id, rate, "task started");
    if task.selecting.is_some() && !finish_selection(state, owner, task, shutdown).await? {
        return Ok(true);
    }
    let mut held = Duration::ZERO;
    loop {
        let started = tokio::time::Instant::now();
        if held < HOLD_AT_MOST && replay_waits(state, task, hold_at).await? {
            held += pace;
        } else {
            held = Duration::ZERO;
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
        }
        tokio::select! {
            _ = tokio::time::sleep_until(started + pace) => {}
            _ = shutdown.cancelled() => return Ok(true),
        }
    }
}

/// Finishes the selection of a task whose creator stopped halfway (one
/// short transaction per batch, as the creator does). False when the task
/// stopped being ours meanwhile, or on shutdown.
async fn finish_selection(
    state: &SharedState,
    owner: &str,
    task: &ClaimedTask,
    shutdown: &CancellationToken,
) -> anyhow::Result<bool> {
    tracing::info!(task_id = %task.id, "finishing the selection of a task whose creation stopped halfway");
    loop {
        if shutdown.is_cancelled() {
            return Ok(false);
        }
        match state.store.select_task_batch(&task.id, owner, time::now_ms()).await? {
            SelectBatch::Selected(_) => tokio::task::yield_now().await,
            SelectBatch::Complete => return Ok(true),
            SelectBatch::Stopped => return Ok(false),
        }
    }
}

/// Whether `task` is a replay whose app still has `hold_at` or more
/// deliveries due and not claimed (an operator's task across apps: any
/// app's). Cancel and skip tasks send nothing: they are never held.
async fn replay_waits(state: &SharedState, task: &ClaimedTask, hold_at: i64) -> anyhow::Result<bool> {
    if task.kind != TaskKind::Replay {
        return Ok(false);
    }
    let now = time::now_ms();
    let waiting = match &task.app_id {
        Some(app_id) => state.store.unclaimed_due_of_app(app_id, now, hold_at).await?,
        None => state.store.unclaimed_due(now, hold_at).await?,
    };
    Ok(waiting >= hold_at)
}
