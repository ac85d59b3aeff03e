//! Re-queueing failed or skipped deliveries with a fresh attempt budget.

use crate::store::{Error, Result};
use sqlx::QueryBuilder;

use super::{on_write, Backend, Conflicts, Store};
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

/// The deliveries a batch of an endpoint replay looks at: up to `batch`
/// matching deliveries whose payload is kept, after the cursor `after` in id
/// order (the endpoint's index `deliveries_by_endpoint` gives them in that
/// order). The cursor moves on with every batch, so one replay looks at each
/// delivery once: one it re-queued, skipped again meanwhile (a paused
/// endpoint's worker skips what comes due), is not re-queued and counted again.
fn push_picked<'a, DB>(qb: &mut QueryBuilder<'a, DB>, scope: &ReplayScope<'a>, after: &'a str, batch: i64)
where
    DB: sqlx::Database,
    &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    DeliveryStatus: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    Millis: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    qb.push("SELECT d.id FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.payload IS NOT NULL");
    qb.push(" AND d.id > ").push_bind(after);
    push_scope(qb, scope);
    qb.push(" ORDER BY d.id LIMIT ").push_bind(batch);
}

/// The re-queue of a batch's deliveries: `pending` again, due `now`, with a
/// fresh attempt budget, each only if its status is *still* one of the
/// scope's when its row is updated. The condition is the `UPDATE`'s own, not
/// only the choice's: on PostgreSQL a row another call re-queued first is
/// read again after that call commits, and no longer matches; so the rows
/// counted are those this call changed.
fn push_requeue<'a, DB>(qb: &mut QueryBuilder<'a, DB>, scope: &ReplayScope<'a>, now: Millis)
where
    DB: sqlx::Database,
    &'a str: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    DeliveryStatus: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
    Millis: sqlx::Encode<'a, DB> + sqlx::Type<DB>,
{
    qb.push("UPDATE deliveries SET status = 'pending', budget_start = attempt_count, next_attempt_at = ");
    qb.push_bind(now).push(", updated_at = ").push_bind(now);
    qb.push(" WHERE endpoint_id = ").push_bind(scope.endpoint_id).push(" AND status IN (");
    let mut sep = qb.separated(", ");
    for s in scope.statuses {
        sep.push_bind(*s);
    }
    qb.push(")");
}

/// A batch of an endpoint replay on PostgreSQL, one statement: how many
/// deliveries it looked at, the last of them (the next batch's cursor) and
/// how many it re-queued (fewer when a concurrent call took some first).
fn replay_batch_postgres<'a>(
    scope: &ReplayScope<'a>,
    now: Millis,
    after: &'a str,
    batch: i64,
) -> QueryBuilder<'a, sqlx::Postgres> {
    let mut qb = QueryBuilder::new("WITH picked AS (");
    push_picked(&mut qb, scope, after, batch);
    qb.push("), requeued AS (");
    push_requeue(&mut qb, scope, now);
    qb.push(" AND id IN (SELECT id FROM picked) RETURNING id) ");
    qb.push("SELECT (SELECT COUNT(*) FROM picked), (SELECT MAX(id) FROM picked), (SELECT COUNT(*) FROM requeued)");
    qb
}

/// A batch of an endpoint replay on SQLite: the ids re-queued. Its one
/// writer runs the statement alone, so every delivery looked at is re-queued.
fn replay_batch_sqlite<'a>(
    scope: &ReplayScope<'a>,
    now: Millis,
    after: &'a str,
    batch: i64,
) -> QueryBuilder<'a, sqlx::Sqlite> {
    let mut qb = QueryBuilder::default();
    push_requeue(&mut qb, scope, now);
    qb.push(" AND id IN (");
    push_picked(&mut qb, scope, after, batch);
    qb.push(") RETURNING id");
    qb
}

/// One batch of an endpoint replay ([`Store::replay_endpoint_batch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayedBatch {
    /// Deliveries this batch re-queued: rows it changed, none counted twice
    /// by concurrent replays.
    pub requeued: u64,
    /// Where the next batch starts (after this id); `None` when the
    /// endpoint's matching deliveries are all looked at.
    pub next: Option<String>,
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
    /// Re-queues one delivery if it is `failed` or `skipped` and its payload
    /// is still kept. Only the call whose `UPDATE` changed the row answers
    /// `Ok`: of concurrent replays of one delivery (on any instance), the
    /// others find it `pending` (or `in_flight`) when their `UPDATE` reads the
    /// row, change nothing, and are refused with the status they found.
    pub async fn replay_delivery(&self, app_id: &str, id: &str, now: Millis) -> Result<Result<(), ReplayRefusal>> {
        // A row found replayable again right after the `UPDATE` missed it
        // (re-queued by another call, failed again since) is tried again.
        for _ in 0..3 {
            if self.requeue_delivery(app_id, id, now).await? {
                return Ok(Ok(()));
            }
            match self.replay_refusal(app_id, id).await? {
                Some(refusal) => return Ok(Err(refusal)),
                None => continue,
            }
        }
        Ok(Err(ReplayRefusal::NotReplayable(DeliveryStatus::Pending)))
    }

    /// The one statement of [`Store::replay_delivery`]: true when it re-queued the row.
    async fn requeue_delivery(&self, app_id: &str, id: &str, now: Millis) -> Result<bool> {
        let sql = format!(
            "UPDATE deliveries SET status = 'pending', budget_start = attempt_count, next_attempt_at = $3, \
             updated_at = $3 WHERE id = $1 AND app_id = $2 AND {REPLAYABLE_SQL} \
             AND EXISTS (SELECT 1 FROM events e WHERE e.id = deliveries.event_id AND e.payload IS NOT NULL)"
        );
        on_write!(self, |pool| {
            let done = sqlx::query(&sql).bind(id).bind(app_id).bind(now).execute(pool).await?;
            Ok(done.rows_affected() == 1)
        })
    }

    /// Why a delivery is not replayable, as its row is now; `None` when it is.
    async fn replay_refusal(&self, app_id: &str, id: &str) -> Result<Option<ReplayRefusal>> {
        let sql = format!(
            "SELECT {SHOWN_STATUS_SQL}, e.payload IS NOT NULL FROM deliveries d JOIN events e ON e.id = d.event_id \
             WHERE d.id = $1 AND d.app_id = $2"
        );
        let row: Option<(DeliveryStatus, bool)> =
            on_write!(self, |pool| sqlx::query_as(&sql).bind(id).bind(app_id).fetch_optional(pool).await)?;
        Ok(match row {
            None => Some(ReplayRefusal::NotFound),
            Some((status, _)) if !status.is_replayable() => Some(ReplayRefusal::NotReplayable(status)),
            Some((_, false)) => Some(ReplayRefusal::PayloadExpired),
            Some(_) => None,
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
    ) -> Result<Option<Result<(), DeliveryStatus>>> {
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

    /// Re-queues an endpoint's matching deliveries in bounded batches (one
    /// statement each, so a large replay never holds the database long);
    /// answers how many it re-queued. Exact under concurrent replays of the
    /// same endpoint: each re-queue is counted by the one call that made it.
    pub async fn replay_endpoint(&self, scope: &ReplayScope<'_>, now: Millis, batch: i64) -> Result<u64> {
        let (mut total, mut after) = (0, String::new());
        loop {
            let done = self.replay_endpoint_batch(scope, now, &after, batch).await?;
            total += done.requeued;
            match done.next {
                Some(next) => after = next,
                None => return Ok(total),
            }
        }
    }

    /// Re-queues the matching deliveries among the next `batch` of the
    /// endpoint after the id `after` (`""`: from the first).
    pub async fn replay_endpoint_batch(
        &self,
        scope: &ReplayScope<'_>,
        now: Millis,
        after: &str,
        batch: i64,
    ) -> Result<ReplayedBatch> {
        let (looked, last, requeued) = match &self.backend {
            Backend::Sqlite { write, .. } => {
                let ids: Vec<String> =
                    replay_batch_sqlite(scope, now, after, batch).build_query_scalar().fetch_all(write).await?;
                let n = ids.len() as i64;
                (n, ids.into_iter().max(), n)
            }
            Backend::Postgres { pool, .. } => {
                let mut conflicts = Conflicts::default();
                loop {
                    let row: Result<(i64, Option<String>, i64)> = replay_batch_postgres(scope, now, after, batch)
                        .build_query_as()
                        .fetch_one(pool)
                        .await
                        .map_err(Error::from);
                    match row {
                        Err(e) if conflicts.again(&e).await => {}
                        row => break row?,
                    }
                }
            }
        };
        let next = if looked < batch { None } else { last };
        Ok(ReplayedBatch { requeued: requeued as u64, next })
    }

    /// How many of an endpoint's matching deliveries cannot be replayed because their payload was purged.
    pub async fn count_expired_replays(&self, scope: &ReplayScope<'_>) -> Result<i64> {
        Ok(match &self.backend {
            Backend::Sqlite { write, .. } => expired_replays_query(scope).build_query_scalar().fetch_one(write).await?,
            Backend::Postgres { pool, .. } => expired_replays_query(scope).build_query_scalar().fetch_one(pool).await?,
        })
    }
}
