//! The delivery queue on SQLite: one writer connection (writes are serialised
//! in-process), transactions that begin `IMMEDIATE` (the write lock is taken
//! up front, so a transaction that reads first cannot fail to upgrade when
//! another process wrote meanwhile), multi-row statements in chunks that stay
//! well under SQLite's 32766-parameter limit.

use crate::store::Result;
use std::collections::{HashMap, HashSet};

use crate::ids::DeliveryId;

use sqlx::{Connection, QueryBuilder, Sqlite, SqliteConnection, SqlitePool};

use super::{
    plan::{self, Conn, Whole},
    AttemptRecord, ClaimedDelivery, ContextRows, EndpointNow, EndpointTarget, EventPart, FreshLease, Health,
    LeaseChange, Outcome, FRESH_LEASE_TOKEN, NOW_COLUMNS, PARKED, PROMOTE_NEXT, TARGET_COLUMNS,
};
use crate::{
    store::{endpoints::SecretRow, events::Ingested, events::NewEvent},
    time::Millis,
};

/// Due: `pending`, its time has come, and not leased (or its lease ran out).
/// Leased rows keep their place at the front of `deliveries_due` and are
/// stepped over: there are never more of them than the workers have in hand.
/// A delivery of an ordered endpoint (`lane_seq` set) must also be the head
/// of its lane: no delivery of its lane is ahead of it and unfinished
/// (`pending`, or `failed` when the endpoint blocks on a dead letter), and
/// none is being sent (a replayed delivery waits for the one in flight).
/// Rows of unordered endpoints stop at `lane_seq IS NULL`. One writer runs
/// this statement at a time, so one claim sees every other claim's leases.
pub static CLAIM_SQLITE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| super::lane::claim(""));

/// Pushes a lease whose token still matches.
const EXTEND_LEASE: &str = "UPDATE deliveries SET lease_until = $3 \
     WHERE id = $1 AND lease_token = $2 AND lease_until IS NOT NULL AND status = 'pending'";

/// Ends a lease whose token still matches; the row is due again at $3.
const RELEASE_LEASE: &str = "UPDATE deliveries SET next_attempt_at = $3, lease_until = NULL, lease_owner = NULL \
     WHERE id = $1 AND lease_token = $2 AND lease_until IS NOT NULL AND status = 'pending'";

/// Begins a write transaction on the writer: the write lock up front.
async fn begin_write(conn: &mut SqliteConnection) -> Result<sqlx::Transaction<'_, Sqlite>> {
    Ok(conn.begin_with("BEGIN IMMEDIATE").await?)
}

/// One transaction: the plan's reads (keys, endpoints), then multi-row inserts
/// of the events and of their deliveries. The write lock is held from the
/// first read, so no other writer (not even another process) can store a key
/// between the read and the insert.
pub(super) async fn ingest_batch(
    writer: &mut SqliteConnection,
    events: &[NewEvent],
    whole: Whole,
    fresh: Option<&FreshLease>,
) -> Result<(Vec<Ingested>, Vec<ClaimedDelivery>)> {
    let mut tx = begin_write(writer).await?;
    let mut plan = plan::plan(Conn::Sqlite(&mut tx), events).await?;
    if plan.refused_whole(whole) {
        // Dropping the transaction rolls it back: it wrote nothing yet.
        return Ok((plan.answers, Vec::new()));
    }
    // Lane numbers of ordered endpoints, taken inside the write transaction:
    // one writer at a time, so they follow commit order.
    plan::order_lanes(Conn::Sqlite(&mut tx), &mut plan).await?;
    insert_events(&mut tx, &plan.events).await?;
    plan.lease_fresh(fresh);
    insert_deliveries(&mut tx, &plan.deliveries, fresh).await?;
    tx.commit().await?;
    // One writer, keys read inside the transaction: every planned row was written.
    let claimed = plan.deliveries.iter().filter(|d| d.leased).map(ClaimedDelivery::fresh).collect();
    Ok((plan.answers, claimed))
}

/// The batch's events, in multi-row inserts of 500 (12 parameters a row),
/// then their channels and tags ([`insert_labels`]).
async fn insert_events(tx: &mut sqlx::Transaction<'_, Sqlite>, events: &[(&NewEvent, i64)]) -> Result<()> {
    for chunk in events.chunks(500) {
        let mut qb = QueryBuilder::new(
            "INSERT INTO events (id, app_id, event_type, idempotency_key, payload, payload_sha256, \
             delivery_count, created_at, channels, tags, deliver_at, trace_context) ",
        );
        qb.push_values(chunk, |mut b, (ev, count)| {
            b.push_bind(ev.id.as_str())
                .push_bind(ev.app_id.as_str())
                .push_bind(ev.event_type.as_str())
                .push_bind(ev.idempotency_key.as_deref())
                .push_bind(ev.envelope.as_slice())
                .push_bind(ev.payload_sha256.as_str())
                .push_bind(*count)
                .push_bind(ev.created_at)
                .push_bind(crate::labels::to_json(&ev.channels))
                .push_bind(crate::labels::to_json(&ev.tags))
                .push_bind(ev.deliver_at)
                .push_bind(ev.trace_context.as_deref());
        });
        qb.build().execute(&mut **tx).await?;
    }
    insert_labels(tx, events).await
}

/// One `event_labels` row per channel and tag of the batch's events, in
/// multi-row inserts of 1000 (4 parameters a row).
async fn insert_labels(tx: &mut sqlx::Transaction<'_, Sqlite>, events: &[(&NewEvent, i64)]) -> Result<()> {
    let rows: Vec<(&str, &str, &str, &str)> = events.iter().flat_map(|(ev, _)| plan::label_rows(ev)).collect();
    for chunk in rows.chunks(1000) {
        let mut qb = QueryBuilder::new("INSERT INTO event_labels (app_id, kind, name, event_id) ");
        qb.push_values(chunk, |mut b, (app_id, kind, name, event_id)| {
            b.push_bind(*app_id).push_bind(*kind).push_bind(*name).push_bind(*event_id);
        });
        qb.build().execute(&mut **tx).await?;
    }
    Ok(())
}

/// The batch's deliveries, in multi-row inserts of 1000 (11 parameters a
/// row, 14 with a fresh lease).
async fn insert_deliveries(
    tx: &mut sqlx::Transaction<'_, Sqlite>,
    deliveries: &[plan::NewDelivery<'_>],
    fresh: Option<&FreshLease>,
) -> Result<()> {
    for chunk in deliveries.chunks(1000) {
        let mut qb = QueryBuilder::new(
            "INSERT INTO deliveries (id, app_id, event_id, event_type, endpoint_id, status, attempt_count, \
             next_attempt_at, created_at, updated_at, ordering_key, lane_seq, deliver_at",
        );
        qb.push(if fresh.is_some() { ", lease_until, lease_owner, lease_token) " } else { ") " });
        qb.push_values(chunk, |mut b, d| {
            b.push_bind(d.id.as_str())
                .push_bind(d.app_id)
                .push_bind(d.event_id)
                .push_bind(d.event_type)
                .push_bind(d.endpoint_id.as_str())
                .push("'pending'")
                .push("0")
                .push_bind(d.due)
                .push_bind(d.at)
                .push_bind(d.at)
                .push_bind(d.ordering_key)
                .push_bind(d.lane_seq)
                .push_bind(d.deliver_at);
            if let Some(f) = fresh {
                b.push_bind(d.leased.then_some(f.lease_until))
                    .push_bind(d.leased.then_some(f.owner.as_str()))
                    .push_bind(if d.leased { FRESH_LEASE_TOKEN } else { 0 });
            }
        });
        qb.build().execute(&mut **tx).await?;
    }
    Ok(())
}

/// The state and URL of those of `ids` that still exist, in statements of
/// 500 ids (well under SQLite's parameter limit).
pub(super) async fn endpoints_now(read: &SqlitePool, ids: &[String]) -> Result<Vec<EndpointNow>> {
    let mut all = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut qb = QueryBuilder::new(format!("SELECT {NOW_COLUMNS} FROM endpoints WHERE id IN ("));
        let mut list = qb.separated(", ");
        for id in chunk {
            list.push_bind(id.as_str());
        }
        qb.push(")");
        all.extend(qb.build_query_as::<EndpointNow>().fetch_all(read).await?);
    }
    Ok(all)
}

/// Leases due rows in one statement on the writer.
pub(super) async fn claim_due(
    write: &SqlitePool,
    owner: &str,
    now: Millis,
    lease_until: Millis,
    limit: i64,
) -> Result<Vec<ClaimedDelivery>> {
    Ok(sqlx::query_as(&CLAIM_SQLITE).bind(lease_until).bind(owner).bind(now).bind(limit).fetch_all(write).await?)
}

/// [`CLAIM_SQLITE`] for one app.
static CLAIM_OF_APP_SQLITE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| super::claim_of_app(&CLAIM_SQLITE));

/// Leases one app's due rows in one statement on the writer.
pub(super) async fn claim_due_of_app(
    write: &SqlitePool,
    owner: &str,
    now: Millis,
    lease_until: Millis,
    limit: i64,
    app_id: &crate::ids::AppId,
) -> Result<Vec<ClaimedDelivery>> {
    Ok(sqlx::query_as(CLAIM_OF_APP_SQLITE.as_str())
        .bind(lease_until)
        .bind(owner)
        .bind(now)
        .bind(limit)
        .bind(app_id)
        .fetch_all(write)
        .await?)
}

/// Reads a claim's events, endpoints and live secrets on readers, one query
/// each, the ids spelled out as `IN ($1, $2, …)`.
pub(super) async fn batch_context(
    read: &SqlitePool,
    event_ids: &[&str],
    endpoint_ids: &[&str],
    now: Millis,
) -> Result<ContextRows> {
    let mut events =
        QueryBuilder::new("SELECT id, event_type, payload, created_at, trace_context FROM events WHERE id IN (");
    let mut ids = events.separated(", ");
    for id in event_ids {
        ids.push_bind(*id);
    }
    events.push(")");
    let mut endpoints = QueryBuilder::new(format!("SELECT {TARGET_COLUMNS} FROM endpoints WHERE id IN ("));
    let mut ids = endpoints.separated(", ");
    for id in endpoint_ids {
        ids.push_bind(*id);
    }
    endpoints.push(")");
    let mut secrets = QueryBuilder::new(
        "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets \
         WHERE (expires_at IS NULL OR expires_at > ",
    );
    secrets.push_bind(now).push(") AND endpoint_id IN (");
    let mut ids = secrets.separated(", ");
    for id in endpoint_ids {
        ids.push_bind(*id);
    }
    secrets.push(") ORDER BY endpoint_id, version DESC");
    // Three reads side by side, each on a reader of its own: the context is
    // in hand after the slowest, not after all three.
    Ok(tokio::try_join!(
        events.build_query_as::<EventPart>().fetch_all(read),
        endpoints.build_query_as::<EndpointTarget>().fetch_all(read),
        secrets.build_query_as::<SecretRow>().fetch_all(read),
    )?)
}

/// One transaction: the attempts, the delivery rows whose lease token still
/// holds (one `UPDATE … FROM (VALUES …)` per chunk, SQLite ≥ 3.33), the
/// endpoints' failure runs. Usually every row is updated; only when some lease
/// was lost are the rows carrying this write read back (our token and
/// timestamp: nobody else writes inside this transaction).
pub(super) async fn record_outcomes(
    write: &SqlitePool,
    outcomes: &[Outcome],
    attempts: &[&AttemptRecord],
    health: &Health<'_>,
    now: Millis,
) -> Result<HashSet<DeliveryId>> {
    let mut applied = HashSet::new();
    let mut tx = write.begin_with("BEGIN IMMEDIATE").await?;
    insert_attempts(&mut tx, attempts).await?;
    for chunk in outcomes.chunks(500) {
        let mut qb = QueryBuilder::new(
            "UPDATE deliveries SET status = u.column3, attempt_count = u.column4, next_attempt_at = u.column5, \
             last_attempt_at = COALESCE(u.column6, deliveries.last_attempt_at), lease_owner = NULL, \
             lease_until = NULL, updated_at = ",
        );
        qb.push_bind(now).push(" FROM (");
        qb.push_values(chunk, |mut b, o| {
            b.push_bind(o.delivery_id.as_str())
                .push_bind(o.lease_token)
                .push_bind(o.status)
                .push_bind(o.attempt_count)
                .push_bind(o.next_attempt_at)
                .push_bind(o.last_attempt_at);
        });
        qb.push(
            ") AS u WHERE deliveries.id = u.column1 AND deliveries.lease_token = u.column2 \
             AND deliveries.lease_until IS NOT NULL AND deliveries.status = 'pending'",
        );
        let n = qb.build().execute(&mut *tx).await?.rows_affected() as usize;
        if n == chunk.len() {
            applied.extend(chunk.iter().map(|o| o.delivery_id.clone()));
            continue;
        }
        let mut qb =
            QueryBuilder::new("SELECT id, lease_token FROM deliveries WHERE lease_owner IS NULL AND updated_at = ");
        qb.push_bind(now).push(" AND id IN (");
        let mut sep = qb.separated(", ");
        for o in chunk {
            sep.push_bind(o.delivery_id.as_str());
        }
        qb.push(")");
        let rows: Vec<(DeliveryId, i64)> = qb.build_query_as().fetch_all(&mut *tx).await?;
        let tokens: HashMap<&str, i64> = chunk.iter().map(|o| (o.delivery_id.as_str(), o.lease_token)).collect();
        applied.extend(rows.into_iter().filter(|(id, t)| tokens.get(id.as_str()) == Some(t)).map(|(id, _)| id));
    }
    update_health(&mut tx, health, now).await?;
    // The head of an ordered lane is final: the lane's next delivery is due.
    for o in outcomes.iter().filter(|o| o.in_lane && o.status.is_final() && applied.contains(&o.delivery_id)) {
        sqlx::query(PROMOTE_NEXT).bind(&o.delivery_id).bind(now).bind(PARKED).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(applied)
}

/// Inserts attempts in multi-row statements (11 parameters a row), skipping
/// any whose delivery was deleted meanwhile.
async fn insert_attempts(tx: &mut SqliteConnection, attempts: &[&AttemptRecord]) -> Result<()> {
    for chunk in attempts.chunks(500) {
        let mut qb = QueryBuilder::new(
            "INSERT INTO attempts (id, delivery_id, endpoint_id, attempt_number, started_at, duration_ms, \
             response_status, response_excerpt, error, error_detail, signed_with) \
             SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8, \
             v.column9, v.column10, v.column11 FROM (",
        );
        qb.push_values(chunk.iter(), |mut b, a| {
            b.push_bind(a.id.as_str())
                .push_bind(a.delivery_id.as_str())
                .push_bind(a.endpoint_id.as_str())
                .push_bind(a.attempt_number)
                .push_bind(a.started_at)
                .push_bind(a.duration_ms)
                .push_bind(a.response_status)
                .push_bind(a.response_excerpt.as_deref())
                .push_bind(a.error.as_deref())
                .push_bind(a.error_detail.as_deref())
                .push_bind(a.signed_with.as_str());
        });
        qb.push(") AS v WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.id = v.column2)");
        qb.build().execute(&mut *tx).await?;
    }
    Ok(())
}

/// Clears the failure run of the endpoints that had a success and starts it
/// for those that had only failures: two statements per batch at most.
async fn update_health(tx: &mut SqliteConnection, health: &Health<'_>, now: Millis) -> Result<()> {
    if !health.healthy.is_empty() {
        let mut qb =
            QueryBuilder::new("UPDATE endpoints SET failing_since = NULL WHERE failing_since IS NOT NULL AND id IN (");
        let mut sep = qb.separated(", ");
        for id in &health.healthy {
            sep.push_bind(*id);
        }
        qb.push(")");
        qb.build().execute(&mut *tx).await?;
    }
    if !health.failing.is_empty() {
        let mut qb = QueryBuilder::new("UPDATE endpoints SET failing_since = ");
        qb.push_bind(now).push(" WHERE failing_since IS NULL AND id IN (");
        let mut sep = qb.separated(", ");
        for id in &health.failing {
            sep.push_bind(*id);
        }
        qb.push(")");
        qb.build().execute(&mut *tx).await?;
    }
    Ok(())
}

/// Updates leased rows whose token still matches, one statement per row in
/// one transaction (a single writer: nothing to order against).
pub(super) async fn update_leases(
    write: &SqlitePool,
    change: LeaseChange,
    leases: &[(DeliveryId, i64)],
    at: Millis,
) -> Result<()> {
    let sql = match change {
        LeaseChange::Extend => EXTEND_LEASE,
        LeaseChange::Release => RELEASE_LEASE,
    };
    let mut tx = write.begin_with("BEGIN IMMEDIATE").await?;
    for (id, token) in leases {
        sqlx::query(sql).bind(id).bind(*token).bind(at).execute(&mut *tx).await?;
    }
    Ok(tx.commit().await?)
}
