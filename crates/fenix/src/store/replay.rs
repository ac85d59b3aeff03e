//! Re-queueing failed or skipped deliveries with a fresh attempt budget.

use crate::store::Result;

use super::{sql::Built, Conflicts, Store};
use crate::{
    lifecycle::{DeliveryStatus, REPLAYABLE_SQL, SHOWN_STATUS_SQL},
    time::Millis,
};

/// Which deliveries of an endpoint to re-queue.
#[derive(Debug, Clone)]
pub struct ReplayScope<'a> {
    pub endpoint_id: &'a crate::ids::EndpointId,
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
fn push_scope<'a>(q: &mut Built<'a>, scope: &ReplayScope<'a>) {
    q.push(" AND d.endpoint_id = ").bind(scope.endpoint_id).push(" AND d.status IN ");
    q.bind_list(scope.statuses.iter().copied());
    if let Some(since) = scope.since {
        q.push(" AND d.created_at >= ").bind(since);
    }
    if let Some(until) = scope.until {
        q.push(" AND d.created_at < ").bind(until);
    }
}

/// The deliveries a batch of an endpoint replay looks at: up to `batch`
/// matching deliveries whose payload is kept, after the cursor `after` in id
/// order (the endpoint's index `deliveries_by_endpoint` gives them in that
/// order). The cursor moves on with every batch, so one replay looks at each
/// delivery once: one it re-queued, skipped again meanwhile (a paused
/// endpoint's worker skips what comes due), is not re-queued and counted again.
fn push_picked<'a>(q: &mut Built<'a>, scope: &ReplayScope<'a>, after: &'a str, batch: i64) {
    q.push("SELECT d.id FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.payload IS NOT NULL");
    q.push(" AND d.id > ").bind(after);
    push_scope(q, scope);
    q.push(" ORDER BY d.id LIMIT ").bind(batch);
}

/// The re-queue of a batch's deliveries: `pending` again, due `now`, with a
/// fresh attempt budget, each only if its status is *still* one of the
/// scope's when its row is updated. The condition is the `UPDATE`'s own, not
/// only the choice's: on PostgreSQL a row another call re-queued first is
/// read again after that call commits, and no longer matches; so the rows
/// counted are those this call changed.
fn push_requeue<'a>(q: &mut Built<'a>, scope: &ReplayScope<'a>, now: Millis) {
    q.push("UPDATE deliveries SET status = 'pending', budget_start = attempt_count, next_attempt_at = ");
    q.bind(now).push(", updated_at = ").bind(now);
    q.push(" WHERE endpoint_id = ").bind(scope.endpoint_id).push(" AND status IN ");
    q.bind_list(scope.statuses.iter().copied());
}

/// A batch of an endpoint replay where several write at once (PostgreSQL),
/// one statement: how many deliveries it looked at, the last of them (the
/// next batch's cursor) and how many it re-queued (fewer when a concurrent
/// call took some first).
fn replay_batch_concurrent<'a>(scope: &ReplayScope<'a>, now: Millis, after: &'a str, batch: i64) -> Built<'a> {
    let mut q = Built::new("WITH picked AS (");
    push_picked(&mut q, scope, after, batch);
    q.push("), requeued AS (");
    push_requeue(&mut q, scope, now);
    q.push(" AND id IN (SELECT id FROM picked) RETURNING id) ");
    q.push("SELECT (SELECT COUNT(*) FROM picked), (SELECT MAX(id) FROM picked), (SELECT COUNT(*) FROM requeued)");
    q
}

/// A batch of an endpoint replay by SQLite's one writer: the ids re-queued.
/// It runs the statement alone, so every delivery looked at is re-queued.
fn replay_batch_alone<'a>(scope: &ReplayScope<'a>, now: Millis, after: &'a str, batch: i64) -> Built<'a> {
    let mut q = Built::default();
    push_requeue(&mut q, scope, now);
    q.push(" AND id IN (");
    push_picked(&mut q, scope, after, batch);
    q.push(") RETURNING id");
    q
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
fn expired_replays_query<'a>(scope: &ReplayScope<'a>) -> Built<'a> {
    let mut q =
        Built::new("SELECT COUNT(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.payload IS NULL");
    push_scope(&mut q, scope);
    q
}

impl Store {
    /// Re-queues one delivery if it is `failed` or `skipped` and its payload
    /// is still kept. Only the call whose `UPDATE` changed the row answers
    /// `Ok`: of concurrent replays of one delivery (on any instance), the
    /// others find it `pending` (or `in_flight`) when their `UPDATE` reads the
    /// row, change nothing, and are refused with the status they found.
    pub async fn replay_delivery(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::DeliveryId,
        now: Millis,
    ) -> Result<Result<(), ReplayRefusal>> {
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
    async fn requeue_delivery(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::DeliveryId,
        now: Millis,
    ) -> Result<bool> {
        let sql = format!(
            "UPDATE deliveries SET status = 'pending', budget_start = attempt_count, next_attempt_at = $3, \
             updated_at = $3 WHERE id = $1 AND app_id = $2 AND {REPLAYABLE_SQL} \
             AND EXISTS (SELECT 1 FROM events e WHERE e.id = deliveries.event_id AND e.payload IS NOT NULL)"
        );
        Ok(self.writes().execute(&sql, &[id.into(), app_id.into(), now.into()]).await? == 1)
    }

    /// Why a delivery is not replayable, as its row is now; `None` when it is.
    async fn replay_refusal(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::DeliveryId,
    ) -> Result<Option<ReplayRefusal>> {
        let sql = format!(
            "SELECT {SHOWN_STATUS_SQL}, e.payload IS NOT NULL FROM deliveries d JOIN events e ON e.id = d.event_id \
             WHERE d.id = $1 AND d.app_id = $2"
        );
        let row: Option<(DeliveryStatus, bool)> =
            self.writes().fetch_optional(&sql, &[id.into(), app_id.into()]).await?;
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
        app_id: &crate::ids::AppId,
        id: &crate::ids::DeliveryId,
        now: Millis,
    ) -> Result<Option<Result<(), DeliveryStatus>>> {
        let db = self.writes();
        let sql = "UPDATE deliveries SET status = $3, updated_at = $5 WHERE id = $1 AND app_id = $2 AND status = $4";
        let values =
            [id.into(), app_id.into(), DeliveryStatus::Skipped.into(), DeliveryStatus::Failed.into(), now.into()];
        if db.execute(sql, &values).await? == 1 {
            return Ok(Some(Ok(())));
        }
        let sql = format!("SELECT {SHOWN_STATUS_SQL} FROM deliveries d WHERE d.id = $1 AND d.app_id = $2");
        let status: Option<DeliveryStatus> = db.scalar_optional(&sql, &[id.into(), app_id.into()]).await?;
        Ok(status.map(Err))
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
        let db = self.writes();
        let (looked, last, requeued) = if db.concurrent_writes() {
            let q = replay_batch_concurrent(scope, now, after, batch);
            let mut conflicts = Conflicts::default();
            loop {
                match db.fetch_one::<(i64, Option<String>, i64)>(&q.sql, &q.values).await {
                    Err(e) if conflicts.again(&e).await => {}
                    row => break row?,
                }
            }
        } else {
            let q = replay_batch_alone(scope, now, after, batch);
            let ids: Vec<String> = db.scalar_all(&q.sql, &q.values).await?;
            let n = ids.len() as i64;
            (n, ids.into_iter().max(), n)
        };
        let next = if looked < batch { None } else { last };
        Ok(ReplayedBatch { requeued: requeued as u64, next })
    }

    /// How many of an endpoint's matching deliveries cannot be replayed because their payload was purged.
    pub async fn count_expired_replays(&self, scope: &ReplayScope<'_>) -> Result<i64> {
        let q = expired_replays_query(scope);
        self.writes().scalar(&q.sql, &q.values).await
    }
}
