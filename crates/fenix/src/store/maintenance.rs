//! Retention, endpoint health and statistics: the queries behind the
//! maintenance loop, `/metrics` and `…/stats`. Purges run in bounded batches,
//! each its own short transaction, so they never hold up deliveries; they find
//! old rows by id (ids start with their creation time), on the primary key.

use super::{on_read, on_write, Store};
use crate::store::Result;
use crate::{
    ids,
    lifecycle::{DeliveryStatus, EndpointState},
    time::Millis,
};

/// An endpoint's figures over a window.
#[derive(Debug, Clone, Default, sqlx::FromRow)]
pub struct EndpointStats {
    pub attempts: i64,
    pub successes: i64,
}

/// One recorded state change of an endpoint.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StateChange {
    pub id: String,
    pub endpoint_id: String,
    pub state: EndpointState,
    pub reason: String,
    pub created_at: Millis,
}

impl Store {
    /// Forgets the payload bytes of up to `batch` events created before `cutoff` (metadata and digest stay).
    pub async fn purge_payloads(&self, cutoff: Millis, batch: i64) -> Result<u64> {
        on_write!(self, |pool| sqlx::query(
            "UPDATE events SET payload = NULL WHERE id IN \
             (SELECT id FROM events WHERE id < $1 AND payload IS NOT NULL LIMIT $2)"
        )
        .bind(ids::EventId::floor(cutoff))
        .bind(batch)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))
    }

    /// Deletes up to `batch` attempts started before `cutoff` of deliveries in a terminal state
    /// (a delivery still being retried keeps its history).
    pub async fn purge_attempts(&self, cutoff: Millis, batch: i64) -> Result<u64> {
        on_write!(self, |pool| sqlx::query(
            "DELETE FROM attempts WHERE id IN (SELECT a.id FROM attempts a JOIN deliveries d ON d.id = a.delivery_id \
             WHERE a.id < $1 AND d.status IN ('succeeded', 'failed', 'skipped') LIMIT $2)"
        )
        .bind(ids::AttemptId::floor(cutoff))
        .bind(batch)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))
    }

    /// Deletes up to `batch` deliveries in a terminal state created before `cutoff` (with their attempts).
    pub async fn purge_deliveries(&self, cutoff: Millis, batch: i64) -> Result<u64> {
        on_write!(self, |pool| sqlx::query(
            "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE id < $1 \
             AND status IN ('succeeded', 'failed', 'skipped') LIMIT $2)"
        )
        .bind(ids::DeliveryId::floor(cutoff))
        .bind(batch)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))
    }

    /// Active endpoints whose attempts have all failed since before `cutoff`: (id, app_id, failing_since).
    pub async fn failing_endpoints(&self, cutoff: Millis) -> Result<Vec<(String, String, Millis)>> {
        on_read!(self, |pool| sqlx::query_as::<_, (String, String, Millis)>(
            "SELECT id, app_id, failing_since FROM endpoints WHERE state = 'active' AND failing_since IS NOT NULL \
             AND failing_since <= $1"
        )
        .bind(cutoff)
        .fetch_all(pool)
        .await)
    }

    /// Attempts and successes of an endpoint since `since`.
    pub async fn endpoint_stats(&self, endpoint_id: &str, since: Millis) -> Result<EndpointStats> {
        on_read!(self, |pool| sqlx::query_as::<_, EndpointStats>(
            "SELECT COUNT(*) AS attempts, COALESCE(SUM(CASE WHEN error IS NULL THEN 1 ELSE 0 END), 0) AS successes \
             FROM attempts WHERE endpoint_id = $1 AND started_at >= $2"
        )
        .bind(endpoint_id)
        .bind(since)
        .fetch_one(pool)
        .await)
    }

    /// How many of an endpoint's deliveries are in `status`.
    pub async fn count_endpoint_deliveries(&self, endpoint_id: &str, status: DeliveryStatus) -> Result<i64> {
        on_read!(self, |pool| sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM deliveries WHERE endpoint_id = $1 AND status = $2"
        )
        .bind(endpoint_id)
        .bind(status)
        .fetch_one(pool)
        .await)
    }

    /// Queue depth (due now), waiting (pending + in flight) and dead-lettered deliveries, over all apps.
    pub async fn queue_figures(&self, now: Millis) -> Result<crate::metrics::QueueFigures> {
        on_read!(self, |pool| {
            let due: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $1 \
                 AND lease_until IS NULL",
            )
            .bind(now)
            .fetch_one(pool)
            .await?;
            let waiting: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM deliveries WHERE status = 'pending'").fetch_one(pool).await?;
            let dead_letter: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM deliveries WHERE status = 'failed'").fetch_one(pool).await?;
            // Per app, through `deliveries_due_by_app`: how long its oldest
            // due delivery has waited unclaimed (the fair share's health).
            let oldest_due: Vec<(String, Millis)> = sqlx::query_as(
                "SELECT app_id, MIN(next_attempt_at) FROM deliveries WHERE status = 'pending' \
                 AND next_attempt_at <= $1 AND lease_until IS NULL GROUP BY app_id",
            )
            .bind(now)
            .fetch_all(pool)
            .await?;
            Ok(crate::metrics::QueueFigures { due, waiting, dead_letter, oldest_due })
        })
    }

    /// An endpoint's state changes, newest first.
    pub async fn list_state_changes(&self, endpoint_id: &str, limit: i64) -> Result<Vec<StateChange>> {
        on_read!(self, |pool| sqlx::query_as::<_, StateChange>(
            "SELECT id, endpoint_id, state, reason, created_at FROM endpoint_state_changes WHERE endpoint_id = $1 \
             ORDER BY id DESC LIMIT $2"
        )
        .bind(endpoint_id)
        .bind(limit)
        .fetch_all(pool)
        .await)
    }
}
