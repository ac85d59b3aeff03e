//! Retention, endpoint health and statistics: the queries behind the
//! maintenance loop, `/metrics` and `…/stats`. Purges run in bounded batches,
//! each its own short transaction, so they never hold up deliveries; they find
//! old rows by id (ids start with their creation time), on the primary key.

use super::Store;
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
    pub id: crate::ids::StateChangeId,
    pub endpoint_id: crate::ids::EndpointId,
    pub state: EndpointState,
    pub reason: String,
    pub created_at: Millis,
}

impl Store {
    /// Forgets the payload bytes of up to `batch` events created before `cutoff` (metadata and digest stay).
    ///
    /// An event with a delivery still `pending` (scheduled, or between
    /// retries) keeps its payload until that delivery ends, or it could never
    /// be sent; a later pass takes it. The retry schedule bounds how long
    /// that is after the event's time, and `FENIX_MAX_SCHEDULE_AHEAD` stays
    /// under the retention.
    pub async fn purge_payloads(&self, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql = "UPDATE events SET payload = NULL WHERE id IN \
             (SELECT id FROM events WHERE id < $1 AND payload IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = 'pending') \
             LIMIT $2)";
        self.writes().execute(sql, &[(&ids::EventId::floor(cutoff)).into(), batch.into()]).await
    }

    /// Forgets the transformed requests (migration 0022) of up to `batch`
    /// deliveries of events created before `cutoff`: they hold the payload
    /// in another shape, so they go with it (but not while the delivery is
    /// still to be attempted: every attempt sends the same bytes).
    pub async fn purge_transformed_requests(&self, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql = "UPDATE deliveries SET transformed_request = NULL, transformed_body = NULL WHERE id IN \
             (SELECT id FROM deliveries WHERE event_id < $1 AND transformed_request IS NOT NULL \
             AND status <> 'pending' LIMIT $2)";
        self.writes().execute(sql, &[(&ids::EventId::floor(cutoff)).into(), batch.into()]).await
    }

    /// Deletes up to `batch` attempts started before `cutoff` of deliveries in a terminal state
    /// (a delivery still being retried keeps its history).
    pub async fn purge_attempts(&self, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql =
            "DELETE FROM attempts WHERE id IN (SELECT a.id FROM attempts a JOIN deliveries d ON d.id = a.delivery_id \
             WHERE a.id < $1 AND d.status IN ('succeeded', 'failed', 'skipped') LIMIT $2)";
        self.writes().execute(sql, &[(&ids::AttemptId::floor(cutoff)).into(), batch.into()]).await
    }

    /// Deletes up to `batch` deliveries in a terminal state created before `cutoff` (with their attempts).
    pub async fn purge_deliveries(&self, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql = "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE id < $1 \
             AND status IN ('succeeded', 'failed', 'skipped') LIMIT $2)";
        self.writes().execute(sql, &[(&ids::DeliveryId::floor(cutoff)).into(), batch.into()]).await
    }

    /// Active endpoints whose attempts have all failed since before `cutoff`: (id, app_id, failing_since).
    pub async fn failing_endpoints(&self, cutoff: Millis) -> Result<Vec<(ids::EndpointId, ids::AppId, Millis)>> {
        let sql =
            "SELECT id, app_id, failing_since FROM endpoints WHERE state = 'active' AND failing_since IS NOT NULL \
             AND failing_since <= $1";
        self.reads().fetch_all(sql, &[cutoff.into()]).await
    }

    /// Attempts and successes of an endpoint since `since`.
    pub async fn endpoint_stats(&self, endpoint_id: &crate::ids::EndpointId, since: Millis) -> Result<EndpointStats> {
        let sql =
            "SELECT COUNT(*) AS attempts, COALESCE(SUM(CASE WHEN error IS NULL THEN 1 ELSE 0 END), 0) AS successes \
             FROM attempts WHERE endpoint_id = $1 AND started_at >= $2";
        self.reads().fetch_one(sql, &[endpoint_id.into(), since.into()]).await
    }

    /// How many of an endpoint's deliveries are in `status`.
    pub async fn count_endpoint_deliveries(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        status: DeliveryStatus,
    ) -> Result<i64> {
        let sql = "SELECT COUNT(*) FROM deliveries WHERE endpoint_id = $1 AND status = $2";
        self.reads().scalar(sql, &[endpoint_id.into(), status.into()]).await
    }

    /// Queue depth (due now), waiting (pending + in flight) and dead-lettered deliveries, over all apps.
    pub async fn queue_figures(&self, now: Millis) -> Result<crate::metrics::QueueFigures> {
        let mut held = self.reads().acquire().await?;
        let mut db = held.conn();
        let sql = "SELECT COUNT(*) FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $1 \
             AND lease_until IS NULL";
        let due: i64 = db.scalar(sql, &[now.into()]).await?;
        let waiting: i64 = db.scalar("SELECT COUNT(*) FROM deliveries WHERE status = 'pending'", &[]).await?;
        let dead_letter: i64 = db.scalar("SELECT COUNT(*) FROM deliveries WHERE status = 'failed'", &[]).await?;
        // Per app, in one pass over its pending rows: how long its oldest due
        // delivery has waited unclaimed (the fair share's health), and its
        // whole backlog: every delivery that should be sent by now and is not
        // finished, claimed ones included (a worker holds the oldest in hand
        // while their endpoint is at its limit) and deferred ones (given back
        // for later without an attempt: `attempt_count = budget_start`, not
        // scheduled ahead), but not those waiting for a retry. The backlog
        // waits since a delivery's creation (or scheduled time) until its
        // first attempt, since it came due after that.
        let sql =
            "SELECT app_id, MIN(CASE WHEN lease_until IS NULL AND next_attempt_at <= $1 THEN next_attempt_at END), \
             MIN(CASE WHEN attempt_count > 0 THEN next_attempt_at WHEN deliver_at > created_at THEN deliver_at \
             ELSE created_at END), COUNT(*) FROM deliveries WHERE status = 'pending' AND (next_attempt_at <= $1 \
             OR (attempt_count = budget_start AND (deliver_at IS NULL OR deliver_at <= $1))) GROUP BY app_id";
        let rows: Vec<(String, Option<Millis>, Millis, i64)> = db.fetch_all(sql, &[now.into()]).await?;
        let oldest_due = rows.iter().filter_map(|(app, unclaimed, _, _)| Some((app.clone(), (*unclaimed)?))).collect();
        let backlog = rows.into_iter().map(|(app, _, oldest, count)| (app, count, oldest)).collect();
        Ok(crate::metrics::QueueFigures { due, waiting, dead_letter, oldest_due, backlog })
    }

    /// An endpoint's state changes, newest first.
    pub async fn list_state_changes(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        limit: i64,
    ) -> Result<Vec<StateChange>> {
        let sql =
            "SELECT id, endpoint_id, state, reason, created_at FROM endpoint_state_changes WHERE endpoint_id = $1 \
             ORDER BY id DESC LIMIT $2";
        self.reads().fetch_all(sql, &[endpoint_id.into(), limit.into()]).await
    }
}
