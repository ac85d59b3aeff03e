//! Deliveries and attempts: the delivery log, what the worker asks of the
//! queue besides its hot path (`next_due_at`, `work_due`, `ended_among`), and
//! cancelling what is still to be sent of an event (`cancel_event`). The
//! claim / record / lease cycle itself is in [`super::queue`].

use crate::store::Result;
use std::sync::LazyLock;

pub use super::queue::{AttemptRecord, BatchContext, ClaimedDelivery, EndpointTarget, Outcome};
use super::{
    apps::CURSOR_END,
    queue::{lane, PARKED},
    sql::Built,
    Store,
};
use crate::{
    ids,
    lifecycle::{shown_status_at, DeliveryStatus},
    time::{self, Millis},
};

/// A delivery as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryRow {
    pub id: crate::ids::DeliveryId,
    pub app_id: crate::ids::AppId,
    pub event_id: crate::ids::EventId,
    /// The event's type, kept on the delivery for the log's filter.
    pub event_type: String,
    pub endpoint_id: crate::ids::EndpointId,
    /// As shown ([`shown_status_at`]): `in_flight` while leased, `scheduled`
    /// while its event's time is ahead.
    pub status: DeliveryStatus,
    pub attempt_count: i64,
    pub next_attempt_at: Option<Millis>,
    pub last_attempt_at: Option<Millis>,
    /// The latest attempt's HTTP status (`None`: no attempt, or no answer).
    pub last_status_code: Option<i64>,
    /// The latest attempt's error, as its detail says it (or its class); `None` when it succeeded or none was made.
    pub last_error: Option<String>,
    pub created_at: Millis,
    pub updated_at: Millis,
    /// Its lane on an ordered endpoint (`""`: the keyless lane); `None` when unordered.
    pub ordering_key: Option<String>,
    /// A `pending` delivery of an ordered endpoint that waits for another of
    /// its lane: that one (the head of the lane, or the one being sent).
    pub blocked_by: Option<String>,
    /// Why a `skipped` delivery was not sent, when its row says it
    /// (`transformation_cancelled`); `None` otherwise.
    pub skip_reason: Option<String>,
}

/// The columns of a [`DeliveryRow`]. A leased row is shown `in_flight`
/// ([`shown_status_at`]), due again (if its worker vanished) when the lease
/// ends; the status is shown at the time bound to `$1`, which every statement
/// selecting these columns binds first.
/// The latest attempt's status and error come from one probe of
/// `attempts_by_delivery` per row, in the same statement (no query per row).
pub fn delivery_columns() -> &'static str {
    static COLUMNS: LazyLock<String> = LazyLock::new(|| {
        format!(
            "id, app_id, event_id, event_type, endpoint_id, {} AS status, attempt_count, \
             COALESCE(lease_until, next_attempt_at) AS next_attempt_at, last_attempt_at, \
             {} AS last_status_code, {} AS last_error, created_at, updated_at, \
             ordering_key, {} AS blocked_by, \
             CASE WHEN deliveries.status = 'skipped' THEN deliveries.skip_reason END AS skip_reason",
            shown_status_at("$1"),
            latest_attempt("a.response_status"),
            latest_attempt("COALESCE(a.error_detail, a.error)"),
            *BLOCKED_BY_SQL
        )
    });
    &COLUMNS
}

/// `what` (on the attempt `a`) of a delivery row's latest attempt.
fn latest_attempt(what: &str) -> String {
    format!(
        "(SELECT {what} FROM attempts a WHERE a.delivery_id = deliveries.id \
         ORDER BY a.attempt_number DESC, a.started_at DESC LIMIT 1)"
    )
}

/// The `failing` filter: `pending` (leased or not) with at least one attempt
/// made; every attempt of a delivery still pending has failed (a success ends it).
const FAILING_SQL: &str =
    "status = 'pending' AND EXISTS (SELECT 1 FROM attempts f WHERE f.delivery_id = deliveries.id)";

/// `blocked_by` of a delivery row: only for an unleased `pending` row of an
/// ordered endpoint (one index probe in its lane), else NULL. What the claim
/// waits for (`store::queue`): the first unfinished row ahead of it (a dead
/// letter counts where the endpoint blocks on one), else a row of its lane
/// being sent (a replayed delivery waits for it).
static BLOCKED_BY_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "CASE WHEN deliveries.lane_seq IS NOT NULL AND deliveries.status = 'pending' \
         AND deliveries.lease_until IS NULL THEN COALESCE((SELECT o.id FROM deliveries o WHERE {} \
         ORDER BY o.lane_seq LIMIT 1), \
         (SELECT l.id FROM deliveries l WHERE {} AND l.lease_until IS NOT NULL LIMIT 1)) END",
        lane::unfinished_ahead_of("deliveries"),
        lane::others_due_in_lane_of("deliveries")
    )
});

/// `next_due_at`'s statement: the earliest due time ($1: [`PARKED`] and later
/// are not due) of an unleased row with nothing unfinished ahead in its lane.
static NEXT_DUE_AT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT MIN(d.next_attempt_at) FROM deliveries d WHERE d.status = 'pending' AND d.lease_until IS NULL \
         AND d.next_attempt_at < $1 \
         AND (d.lane_seq IS NULL OR NOT EXISTS (SELECT 1 FROM deliveries o WHERE {}))",
        lane::unfinished_ahead_of("d")
    )
});

/// `work_due`'s statement: the claim's own condition at $1.
static WORK_DUE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT COUNT(*) FROM (SELECT 1 FROM deliveries d WHERE d.status = 'pending' AND d.next_attempt_at <= $1 \
         AND (d.lease_until IS NULL OR d.lease_until <= $1) \
         AND (d.lane_seq IS NULL OR ({})) LIMIT 1) AS due",
        lane::lane_head("d", "$1")
    )
});

/// Filters of the delivery log.
#[derive(Debug, Default, Clone)]
pub struct DeliveryFilter {
    pub endpoint_id: Option<crate::ids::EndpointId>,
    pub event_id: Option<crate::ids::EventId>,
    pub event_type: Option<String>,
    /// As shown: `in_flight` finds the leased `pending` rows, `scheduled`
    /// those waiting for their event's time.
    pub status: Option<DeliveryStatus>,
    /// Only `pending` deliveries with a failed attempt (`?status=failing`), still being retried.
    pub failing: bool,
    pub since: Option<Millis>,
    pub until: Option<Millis>,
    pub cursor: Option<String>,
    pub limit: i64,
    /// Only deliveries of events carrying this channel (`event_labels`).
    pub channel: Option<String>,
    /// Only deliveries of events carrying this tag.
    pub tag: Option<String>,
}

impl Store {
    /// When the next unleased delivery comes due, if any. A lease held by a
    /// worker that vanished is noticed by the idle poll when it runs out.
    /// A delivery waiting behind another in its ordered lane is not counted
    /// (parked ones are not even read): the worker is woken when the one
    /// ahead of it finishes.
    pub async fn next_due_at(&self) -> Result<Option<Millis>> {
        self.writes().scalar(&NEXT_DUE_AT, &[PARKED.into()]).await
    }

    /// True when some delivery is due now and nobody holds it (readiness):
    /// the claim's own condition (lanes included: a delivery waiting in its
    /// ordered lane is not work the worker could do), read on a reader connection.
    pub async fn work_due(&self, now: Millis) -> Result<bool> {
        Ok(self.reads().scalar::<i64>(&WORK_DUE, &[now.into()]).await? > 0)
    }

    /// Those of `ids` (deliveries a worker holds) whose rows are no longer
    /// `pending`: cancelled (or otherwise ended) since they were claimed, so
    /// not to be sent. A deleted row is left out (its endpoint's deletion is
    /// seen by the endpoints' watch). Read in statements of 500 ids on a
    /// reader connection, each a probe of the primary key per id.
    pub async fn ended_among(&self, ids: &[crate::ids::DeliveryId]) -> Result<Vec<String>> {
        let mut ended = Vec::new();
        for chunk in ids.chunks(500) {
            let mut q = Built::new("SELECT id FROM deliveries WHERE status <> 'pending' AND id IN ");
            q.bind_list(chunk);
            ended.extend(self.reads().scalar_all::<String>(&q.sql, &q.values).await?);
        }
        Ok(ended)
    }

    /// One delivery of one app.
    pub async fn get_delivery(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::DeliveryId,
    ) -> Result<Option<DeliveryRow>> {
        let sql = format!("SELECT {} FROM deliveries WHERE id = $2 AND app_id = $3", delivery_columns());
        self.reads().fetch_optional(&sql, &[time::now_ms().into(), id.into(), app_id.into()]).await
    }

    /// The delivery log of an app, newest first.
    pub async fn list_deliveries(&self, app_id: &crate::ids::AppId, f: &DeliveryFilter) -> Result<Vec<DeliveryRow>> {
        let mut q = Built::new(format!("SELECT {} FROM deliveries WHERE app_id = ", delivery_columns()));
        // `$1`: the time the statuses are shown at (the columns' and the status filter's).
        q.values.push(time::now_ms().into());
        q.bind(app_id);
        // A delivery's id starts with its creation time (`DeliveryId::new_at`), so
        // the time window is also a range of the primary key, and every index
        // below ends with `id`: a window far in the past is a seek, not a walk
        // through every newer row. One upper bound (the cursor or the window's
        // end, whichever is lower): SQLite's range scan uses only one.
        let mut upper = f.cursor.clone().unwrap_or_else(|| CURSOR_END.into());
        if let Some(u) = f.until {
            upper = upper.min(ids::DeliveryId::floor(u).into_string());
        }
        q.push(" AND id < ").bind(upper);
        if let Some(s) = f.since {
            q.push(" AND id >= ").bind(ids::DeliveryId::floor(s).into_string());
        }
        if let Some(v) = &f.endpoint_id {
            q.push(" AND endpoint_id = ").bind(v);
        }
        if let Some(v) = &f.event_id {
            q.push(" AND event_id = ").bind(v);
        }
        if let Some(v) = &f.event_type {
            q.push(" AND event_type = ").bind(v);
        }
        // The events carrying the label, on `event_labels`' key, and their
        // deliveries on `deliveries_by_event`; or, when most events carry it,
        // the planner walks the app's log and probes the key per row.
        for (kind, name) in super::events::label_filters(f.channel.as_deref(), f.tag.as_deref()) {
            q.push(" AND event_id IN (");
            super::events::labelled_events(&mut q, app_id.as_str(), kind, name);
            q.push(")");
        }
        if let Some(status) = f.status {
            match status.shown_condition("$1") {
                Some(condition) => q.push(" AND ").push(&condition),
                None => q.push(" AND status = ").bind(status),
            };
        }
        if f.failing {
            q.push(" AND ").push(FAILING_SQL);
        }
        if let Some(s) = f.since {
            q.push(" AND created_at >= ").bind(s);
        }
        if let Some(u) = f.until {
            q.push(" AND created_at < ").bind(u);
        }
        q.push(" ORDER BY id DESC LIMIT ").bind(f.limit);
        self.reads().fetch_all(&q.sql, &q.values).await
    }

    /// One attempt of one app (an attempt id is the `X-Fenix-Delivery-Id` a
    /// receiver logged), found through its delivery, which holds the app.
    pub async fn get_attempt(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::AttemptId,
    ) -> Result<Option<AttemptRecord>> {
        let sql = "SELECT a.id, a.delivery_id, a.endpoint_id, a.attempt_number, a.started_at, a.duration_ms, \
             a.response_status, a.response_excerpt, a.error, a.error_detail, a.signed_with \
             FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE a.id = $1 AND d.app_id = $2";
        self.reads().fetch_optional(sql, &[id.into(), app_id.into()]).await
    }

    /// A delivery's attempts, oldest first.
    pub async fn list_attempts(&self, delivery_id: &crate::ids::DeliveryId) -> Result<Vec<AttemptRecord>> {
        let sql = "SELECT id, delivery_id, endpoint_id, attempt_number, started_at, duration_ms, response_status, \
             response_excerpt, error, error_detail, signed_with FROM attempts WHERE delivery_id = $1 \
             ORDER BY attempt_number, started_at";
        self.reads().fetch_all(sql, &[delivery_id.into()]).await
    }
}

/// Cancels the pending deliveries of event $1 of app $2 at $3: they become
/// `skipped`, `cancelled`, and lose any lease (the worker holding one then
/// writes nothing for it, and does not start it: `worker::watch`).
const CANCEL_EVENT: &str = "UPDATE deliveries SET status = 'skipped', skip_reason = 'cancelled', \
     lease_until = NULL, lease_owner = NULL, updated_at = $3 \
     WHERE event_id = $1 AND app_id = $2 AND status = 'pending' RETURNING id, lane_seq";

impl Store {
    /// Cancels what is still to be sent of one event of one app: each of its
    /// deliveries still `pending` (scheduled, waiting for its first attempt
    /// or a retry, or in a worker's hands but not started) becomes `skipped`
    /// with the reason `cancelled` (a replay can still send it). Answers how
    /// many; `None` when the event is not the app's. On an ordered endpoint
    /// the lane goes on: its next delivery, parked behind a cancelled one, is
    /// due now (or at its own scheduled time), in the same transaction.
    pub async fn cancel_event(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::EventId,
        now: Millis,
    ) -> Result<Option<u64>> {
        let mut tx = self.writes().begin_write().await?;
        let known: Option<String> = tx
            .scalar_optional("SELECT id FROM events WHERE id = $1 AND app_id = $2", &[id.into(), app_id.into()])
            .await?;
        if known.is_none() {
            return Ok(None);
        }
        let cancelled: Vec<(String, Option<i64>)> =
            tx.conn().fetch_all(CANCEL_EVENT, &[id.into(), app_id.into(), now.into()]).await?;
        for (delivery, _) in cancelled.iter().filter(|(_, lane_seq)| lane_seq.is_some()) {
            let values = [delivery.into(), now.into(), PARKED.into()];
            tx.execute(super::queue::PROMOTE_NEXT, &values).await?;
        }
        tx.commit().await?;
        Ok(Some(cancelled.len() as u64))
    }
}
