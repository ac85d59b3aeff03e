//! Background upkeep, once per `FENIX_MAINTENANCE_INTERVAL`: payload and log
//! retention in bounded batches (the operator's over every app, then each
//! app's own shorter one), and disabling endpoints whose attempts have
//! all failed for `FENIX_DISABLE_AFTER_FAILING`.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{ids, lifecycle::EndpointState, operator, retention, settings::FOREVER, state::SharedState, time};

/// Rows touched per purge transaction.
const PURGE_BATCH: i64 = 1000;
/// Pause between purge batches, so deliveries get the writer in between.
const PURGE_PAUSE: Duration = Duration::from_millis(20);

/// Runs until `shutdown`.
pub async fn run(state: SharedState, shutdown: CancellationToken) {
    loop {
        if let Err(e) = run_once(&state).await {
            tracing::warn!(error = format!("{e:#}"), "maintenance pass failed; will retry");
        }
        tokio::select! {
            _ = tokio::time::sleep(state.settings.maintenance_interval) => {}
            _ = shutdown.cancelled() => return,
        }
    }
}

/// One pass of every maintenance job.
pub async fn run_once(state: &SharedState) -> anyhow::Result<()> {
    let now = time::now_ms();
    let s = &state.settings;
    // `forever` retentions skip their purge; any other cutoff saturates (a huge
    // retention once wrapped to a cutoff in the future and purged everything).
    let mut payloads = 0;
    if s.payload_retention != FOREVER {
        let cutoff = time::sub(now, s.payload_retention);
        payloads = purge(|| state.store.purge_payloads(cutoff, PURGE_BATCH)).await?;
        payloads += purge(|| state.store.purge_transformed_requests(cutoff, PURGE_BATCH)).await?;
    }
    let (mut attempts, mut deliveries) = (0, 0);
    if s.log_retention != FOREVER {
        let log_cutoff = time::sub(now, s.log_retention);
        attempts = purge(|| state.store.purge_attempts(log_cutoff, PURGE_BATCH)).await?;
        deliveries = purge(|| state.store.purge_deliveries(log_cutoff, PURGE_BATCH)).await?;
    }
    let (p, a, d) = purge_by_app_retention(state, now).await?;
    let (payloads, attempts, deliveries) = (payloads + p, attempts + a, deliveries + d);
    if payloads + attempts + deliveries > 0 {
        tracing::info!(payloads, attempts, deliveries, "retention purge");
    }
    // Full budgets of tenant-triggered requests read like no row (`send_budgets`).
    state.store.purge_spent_budgets(now).await?;
    let cutoff = time::sub(now, s.disable_after_failing);
    for (endpoint_id, app_id, since) in state.store.failing_endpoints(cutoff).await? {
        let reason = format!(
            "every attempt failed since {} (longer than FENIX_DISABLE_AFTER_FAILING = {})",
            time::rfc3339(since),
            humantime::format_duration(s.disable_after_failing)
        );
        if state
            .store
            .set_endpoint_state(
                &endpoint_id,
                EndpointState::Disabled,
                &reason,
                &ids::StateChangeId::new().into_string(),
                now,
            )
            .await?
        {
            tracing::warn!(%endpoint_id, "endpoint disabled automatically: {reason}");
            operator::endpoint_disabled(state, &app_id, &endpoint_id, &reason).await;
        }
    }
    crate::tls_expiry::check(state, now).await?;
    operator::flush(state, now).await;
    Ok(())
}

/// The purges of apps whose own retention (`retention.rs`) is shorter than
/// the operator's, each over that app alone: (payloads, attempts, deliveries).
async fn purge_by_app_retention(state: &SharedState, now: time::Millis) -> anyhow::Result<(u64, u64, u64)> {
    let s = &state.settings;
    let store = &state.store;
    let (mut payloads, mut attempts, mut deliveries) = (0, 0, 0);
    for (app, own) in store.apps_with_own_retention().await? {
        if let Some(cutoff) = own.payload.and_then(|r| retention::shorter_cutoff(now, r, s.payload_retention)) {
            payloads += purge(|| store.purge_app_payloads(&app, cutoff, PURGE_BATCH)).await?;
            payloads += purge(|| store.purge_app_transformed_requests(&app, cutoff, PURGE_BATCH)).await?;
        }
        if let Some(cutoff) = own.log.and_then(|r| retention::shorter_cutoff(now, r, s.log_retention)) {
            attempts += purge(|| store.purge_app_attempts(&app, cutoff, PURGE_BATCH)).await?;
            deliveries += purge(|| store.purge_app_deliveries(&app, cutoff, PURGE_BATCH)).await?;
        }
    }
    Ok((payloads, attempts, deliveries))
}

async fn purge<F, Fut>(mut batch: F) -> crate::store::Result<u64>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::store::Result<u64>>,
{
    let mut total = 0;
    loop {
        let n = batch().await?;
        total += n;
        if n < PURGE_BATCH as u64 {
            return Ok(total);
        }
        tokio::time::sleep(PURGE_PAUSE).await;
    }
}
