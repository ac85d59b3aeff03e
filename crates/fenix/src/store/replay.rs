//! Re-queueing failed or skipped deliveries with a fresh attempt budget.

use sqlx::QueryBuilder;

use super::{on_write, Backend, BeginWrite, Store};
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
/// statuses and creation window. Written once for both backends.
fn push_scope<'a, DB>(qb: &mut QueryBuilder<'a, DB>, scope: &ReplayScope<'a>)
where
    DB: sqlx::Database,
    &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    DeliveryStatus: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    Millis: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    qb.push(" AND d.endpoint_id = ").push_bind(scope.endpoint_id).push(" AND d.status IN (");
    let mut sep = qb.separated(", ");
    for s in scope.statuses {
        sep.push_bind(*s);
    }
    qb.push(")");
    if let Some(since) = scope.since {
        qb.push(" AND d.created_at >= ").push_bind(since);
    }
    if let Some(until) = scope.until {
        qb.push(" AND d.created_at < ").push_bind(until);
    }
}

/// [`Store::replay_endpoint_batch`]'s statement: up to `batch` matching
/// deliveries whose payload is kept are `pending` again, due `now`, with a
/// fresh attempt budget.
fn replay_batch_query<'a, DB>(scope: &ReplayScope<'a>, now: Millis, batch: i64) -> QueryBuilder<'a, DB>
where
    DB: sqlx::Database,
    &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    DeliveryStatus: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    Millis: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    let mut qb = QueryBuilder::default();
    qb.push("UPDATE deliveries SET status = 'pending', budget_start = attempt_count, next_attempt_at = ");
    qb.push_bind(now).push(", updated_at = ").push_bind(now);
    qb.push(" WHERE id IN (SELECT d.id FROM deliveries d JOIN events e ON e.id = d.event_id");
    qb.push(" WHERE e.payload IS NOT NULL");
    push_scope(&mut qb, scope);
    qb.push(" LIMIT ").push_bind(batch).push(")");
    qb
}

/// [`Store::count_expired_replays`]'s statement: matching deliveries whose payload was purged.
fn expired_replays_query<'a, DB>(scope: &ReplayScope<'a>) -> QueryBuilder<'a, DB>
where
    DB: sqlx::Database,
    &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    DeliveryStatus: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    Millis: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    let mut qb = QueryBuilder::default();
    qb.push("SELECT COUNT(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.payload IS NULL");
    push_scope(&mut qb, scope);
    qb
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

    /// An operator gives up on a dead letter: the `failed` delivery `id` of
    /// `app_id` becomes `skipped` (still replayable). On an ordered endpoint
    /// that blocks on dead letters, its lane goes on: the lane's next delivery
    /// was made due when this one failed, and only a `failed` head held it.
    /// `Err(status)` when the delivery is not failed; `Ok(None)` when unknown.
    pub async fn skip_dead_letter(
        &self,
        app_id: &str,
        id: &str,
        now: Millis,
    ) -> sqlx::Result<Option<Result<(), DeliveryStatus>>> {
        on_write!(self, |pool| {
            let skipped = sqlx::query(
                "UPDATE deliveries SET status = $3, updated_at = $5 WHERE id = $1 AND app_id = $2 AND status = $4",
            )
            .bind(id)
            .bind(app_id)
            .bind(DeliveryStatus::Skipped)
            .bind(DeliveryStatus::Failed)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected();
            if skipped == 1 {
                return Ok(Some(Ok(())));
            }
            let status: Option<DeliveryStatus> = sqlx::query_scalar(&format!(
                "SELECT {SHOWN_STATUS_SQL} FROM deliveries d WHERE d.id = $1 AND d.app_id = $2"
            ))
            .bind(id)
            .bind(app_id)
            .fetch_optional(pool)
            .await?;
            Ok(status.map(Err))
        })
    }

    /// Re-queues one bounded batch of an endpoint's matching deliveries; returns
    /// how many. Call until it answers less than `batch`. Rows already
    /// re-queued are `pending` and no longer match, so a second call adds nothing.
    pub async fn replay_endpoint_batch(&self, scope: &ReplayScope<'_>, now: Millis, batch: i64) -> sqlx::Result<u64> {
        match &self.backend {
            Backend::Sqlite { write, .. } => {
                Ok(replay_batch_query(scope, now, batch).build().execute(write).await?.rows_affected())
            }
            Backend::Postgres { pool, .. } => {
                Ok(replay_batch_query(scope, now, batch).build().execute(pool).await?.rows_affected())
            }
        }
    }

    /// How many of an endpoint's matching deliveries cannot be replayed because their payload was purged.
    pub async fn count_expired_replays(&self, scope: &ReplayScope<'_>) -> sqlx::Result<i64> {
        match &self.backend {
            Backend::Sqlite { write, .. } => expired_replays_query(scope).build_query_scalar().fetch_one(write).await,
            Backend::Postgres { pool, .. } => expired_replays_query(scope).build_query_scalar().fetch_one(pool).await,
        }
    }
}
