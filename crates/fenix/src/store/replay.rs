//! Re-queueing failed or skipped deliveries with a fresh attempt budget.

use sqlx::QueryBuilder;

use super::{on_write, BeginWrite, Store};
use crate::{
    lifecycle::{DeliveryStatus, REPLAYABLE_SQL, SHOWN_STATUS_SQL},
    time::Millis,
};

/// Which deliveries of an endpoint to re-queue.
#[derive(Debug, Clone)]
pub struct ReplayScope<'a> {
    pub endpoint_id: &'a str,
    /// Replayable statuses ([`DeliveryStatus::REPLAYABLE`]).
    pub statuses: &'a [DeliveryStatus],
    pub since: Option<Millis>,
    pub until: Option<Millis>,
}

/// Why a single delivery could not be replayed.
#[derive(Debug, PartialEq, Eq)]
pub enum ReplayRefusal {
    NotFound,
    /// `succeeded`, `pending` or `in_flight`.
    NotReplayable(DeliveryStatus),
    PayloadExpired,
}

/// Appends the scope's conditions on `d` (deliveries) to a query: endpoint,
/// statuses and creation window.
macro_rules! push_scope {
    ($qb:expr, $scope:expr) => {{
        $qb.push(" AND d.endpoint_id = ").push_bind($scope.endpoint_id).push(" AND d.status IN (");
        let mut sep = $qb.separated(", ");
        for s in $scope.statuses {
            sep.push_bind(*s);
        }
        $qb.push(")");
        if let Some(since) = $scope.since {
            $qb.push(" AND d.created_at >= ").push_bind(since);
        }
        if let Some(until) = $scope.until {
            $qb.push(" AND d.created_at < ").push_bind(until);
        }
    }};
}

impl Store {
    /// Re-queues one delivery if it is `failed` or `skipped` and its payload is still kept.
    pub async fn replay_delivery(
        &self,
        app_id: &str,
        id: &str,
        now: Millis,
    ) -> sqlx::Result<Result<(), ReplayRefusal>> {
        on_write!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            let row: Option<(DeliveryStatus, bool)> = sqlx::query_as(&format!(
                "SELECT {SHOWN_STATUS_SQL}, e.payload IS NOT NULL FROM deliveries d JOIN events e ON e.id = d.event_id \
                 WHERE d.id = $1 AND d.app_id = $2"
            ))
            .bind(id)
            .bind(app_id)
            .fetch_optional(&mut *tx)
            .await?;
            let refusal = match row {
                None => Some(ReplayRefusal::NotFound),
                Some((status, _)) if !status.is_replayable() => Some(ReplayRefusal::NotReplayable(status)),
                Some((_, false)) => Some(ReplayRefusal::PayloadExpired),
                Some(_) => None,
            };
            if let Some(r) = refusal {
                return Ok(Err(r));
            }
            sqlx::query(&format!(
                "UPDATE deliveries SET status = 'pending', budget_start = attempt_count, next_attempt_at = $2, \
                 updated_at = $2 WHERE id = $1 AND {REPLAYABLE_SQL}"
            ))
            .bind(id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(Ok(()))
        })
    }

    /// Re-queues one bounded batch of an endpoint's matching deliveries; returns
    /// how many. Call until it answers less than `batch`. Rows already
    /// re-queued are `pending` and no longer match, so a second call adds nothing.
    pub async fn replay_endpoint_batch(&self, scope: &ReplayScope<'_>, now: Millis, batch: i64) -> sqlx::Result<u64> {
        on_write!(self, |pool| {
            let mut qb = QueryBuilder::new(
                "UPDATE deliveries SET status = 'pending', budget_start = attempt_count, next_attempt_at = ",
            );
            qb.push_bind(now).push(", updated_at = ").push_bind(now);
            qb.push(" WHERE id IN (SELECT d.id FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.payload IS NOT NULL");
            push_scope!(qb, scope);
            qb.push(" LIMIT ").push_bind(batch).push(")");
            qb.build().execute(pool).await.map(|r| r.rows_affected())
        })
    }

    /// How many of an endpoint's matching deliveries cannot be replayed because their payload was purged.
    pub async fn count_expired_replays(&self, scope: &ReplayScope<'_>) -> sqlx::Result<i64> {
        on_write!(self, |pool| {
            let mut qb = QueryBuilder::new(
                "SELECT COUNT(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.payload IS NULL",
            );
            push_scope!(qb, scope);
            qb.build_query_scalar::<i64>().fetch_one(pool).await
        })
    }
}
