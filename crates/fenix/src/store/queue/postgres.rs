//! The delivery queue on PostgreSQL: every write is ONE statement over arrays
//! (one round trip, atomic by itself, one prepared statement whatever the
//! batch size), so no BEGIN/COMMIT is sent; claims skip each other's rows
//! (`FOR UPDATE SKIP LOCKED`); multi-row updates lock rows in id order, so two
//! writers never wait on each other in a cycle. The worker's statements run on
//! its own pool, whose sessions plan by index (`WORKER_PLANNER_SETTINGS`).

use crate::store::Result;
use std::collections::{HashMap, HashSet};

use crate::ids::{AppId, DeliveryId};

use sqlx::{PgConnection, PgPool};

use super::{
    plan::{self, Conn, Whole},
    AttemptRecord, ClaimedDelivery, ContextRows, EndpointNow, EndpointTarget, EventPart, FreshLease, Health,
    LeaseChange, Outcome, FRESH_LEASE_TOKEN, NOW_COLUMNS, PARKED, PROMOTE_NEXT, TARGET_COLUMNS,
};
use crate::{
    store::{endpoints::SecretRow, events::Ingested, events::NewEvent, Conflicts, WAKE_CHANNEL},
    time::Millis,
};

/// Due rows as on SQLite, the lane condition included; concurrent claimers
/// skip each other's rows instead of waiting.
///
/// Why the lane condition holds with several instances (READ COMMITTED): the
/// condition is read in the statement's snapshot, and `SKIP LOCKED` plus the
/// re-check of a locked row's own lease keep two claimers off the *same*
/// row, but nothing here locks the *other* rows of the lane. In normal
/// operation that is enough: a lane's rows only ever leave it (a success, a
/// dead letter, a skip), and a claimer whose snapshot is older than such a
/// change still sees the earlier row unfinished and takes nothing behind it
/// (conservative). The one change that puts an earlier row back in a lane is
/// a replay: a claimer whose snapshot predates the replay may take the row
/// that was the head, while another, whose snapshot includes the replay but
/// not the first claim's lease (both uncommitted), takes the replayed row.
/// So every claim of ordered rows is checked again after it commits
/// ([`LANE_RECHECK`], a fresh snapshot that sees every lease committed before
/// ours): a row with an unfinished row ahead of it or another lease in its
/// lane is given back at once. Of two such claims, the one that commits last
/// sees the other's lease and gives its row back (both may, which only
/// delays the lane), so two rows of one lane are never sent at once.
pub static CLAIM_POSTGRES: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| super::lane::claim(" FOR UPDATE OF d SKIP LOCKED"));

/// Of the ordered rows just claimed ($1), those that are not the head of
/// their lane after all ([`CLAIM_POSTGRES`] says when): the same condition,
/// read after the claim committed.
static LANE_RECHECK: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("SELECT d.id FROM deliveries d WHERE d.id = ANY($1) AND NOT ({})", super::lane::lane_head("d", "$2"))
});

/// The events of a batch, their deliveries and the wake-up of every
/// instance, in ONE statement. An idempotency key another instance stored
/// since the plan read it leaves its event out (`ON CONFLICT … DO NOTHING`),
/// and with it that event's deliveries; the answer counts the events written.
/// Deliveries have no per-row foreign keys (migration 0014): they are written
/// only for events written here, and only to the endpoints ($20) still there
/// when their rows are locked (`FOR KEY SHARE`, in id order, until commit),
/// so an endpoint's deletion waits for this batch and then deletes its
/// deliveries, or came first and gets none. The apps' rows are locked
/// before those (`owners`, read first: the store's lock order, `store`'s
/// module doc), and not left to the events' foreign-key check, which would
/// lock them at the end of the statement, after the endpoints, the order an
/// app's deletion reverses (the two waited on each other until PostgreSQL
/// aborted one). An app deleted first leaves its endpoints out and its events
/// fail that check: nothing of the batch is stored. The `NOTIFY` (only when a
/// delivery was written unleased and $16) is delivered at commit.
/// Deliveries with a `lease_until` ($23) are leased fresh to this instance's
/// worker ($21, token $22: see `wake.rs`); the ids of those written are answered.
/// A scheduled event's time is on its row and on each of its deliveries'
/// ($30, $31: `NULL` for an event sent at once). Its trace context ($32,
/// `NULL` while tracing is off) is on the event's row only.
const INGEST_BATCH: &str = "\
    WITH owners AS ( \
        SELECT id FROM apps WHERE id = ANY($2::text[]) ORDER BY id FOR KEY SHARE), \
    targets AS ( \
        SELECT id FROM endpoints WHERE id = ANY($20::text[]) AND app_id IN (SELECT id FROM owners) \
        ORDER BY id FOR KEY SHARE), \
    e AS ( \
        INSERT INTO events (id, app_id, event_type, idempotency_key, payload, payload_sha256, delivery_count, \
                            created_at, channels, tags, deliver_at, trace_context) \
        SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[], \
                             $7::int8[], $8::int8[], $24::text[], $25::text[], $30::int8[], $32::text[]) \
        ON CONFLICT (app_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING \
        RETURNING id), \
    l AS ( \
        INSERT INTO event_labels (app_id, kind, name, event_id) \
        SELECT u.app_id, u.kind, u.name, u.event_id \
        FROM UNNEST($26::text[], $27::text[], $28::text[], $29::text[]) AS u(app_id, kind, name, event_id) \
        WHERE u.event_id IN (SELECT id FROM e)), \
    d AS ( \
        INSERT INTO deliveries (id, app_id, event_id, event_type, endpoint_id, status, attempt_count, \
                                next_attempt_at, created_at, updated_at, ordering_key, lane_seq, \
                                lease_until, lease_owner, lease_token, deliver_at) \
        SELECT u.id, u.app_id, u.event_id, u.event_type, u.endpoint_id, 'pending', 0, u.due, u.at, u.at, \
               u.ordering_key, u.lane_seq, u.lease_until, CASE WHEN u.lease_until IS NULL THEN NULL ELSE $21 END, \
               CASE WHEN u.lease_until IS NULL THEN 0 ELSE $22 END, u.deliver_at \
        FROM UNNEST($9::text[], $10::text[], $11::text[], $12::text[], $13::int8[], $14::text[], $17::text[], \
                    $18::int8[], $19::int8[], $23::int8[], $31::int8[]) \
             AS u(id, app_id, event_id, endpoint_id, at, event_type, ordering_key, lane_seq, due, lease_until, \
                  deliver_at) \
        WHERE u.event_id IN (SELECT id FROM e) AND u.endpoint_id IN (SELECT id FROM targets) \
        RETURNING id, lease_until IS NOT NULL AS leased) \
    SELECT (SELECT COUNT(*) FROM owners) AS apps, (SELECT COUNT(*) FROM e) AS written, \
           (SELECT COUNT(*) FROM (SELECT pg_notify($15, '') FROM (SELECT 1 FROM d WHERE NOT leased LIMIT 1) AS any_delivery \
                                  WHERE $16) AS notified) AS notified, \
           (SELECT array_agg(id) FROM d WHERE leased) AS leased";

/// A batch of outcomes in one statement: the attempts (any whose delivery was
/// deleted meanwhile is skipped), the delivery rows whose lease token still
/// holds (answered), and the endpoints' failure runs: any success clears
/// `failing_since` ($19), a batch of failures only starts it ($20).
const RECORD_OUTCOMES: &str = "\
    WITH attempt AS ( \
        INSERT INTO attempts (id, delivery_id, endpoint_id, attempt_number, started_at, duration_ms, \
                              response_status, response_excerpt, error, error_detail, signed_with) \
        SELECT a.* FROM UNNEST($1::text[], $2::text[], $3::text[], $4::int8[], $5::int8[], $6::int8[], \
                               $7::int8[], $8::text[], $9::text[], $10::text[], $11::text[]) \
             AS a(id, delivery_id, endpoint_id, attempt_number, started_at, duration_ms, response_status, \
                  response_excerpt, error, error_detail, signed_with) \
        WHERE EXISTS (SELECT 1 FROM deliveries d WHERE d.id = a.delivery_id)), \
    healthy AS ( \
        UPDATE endpoints SET failing_since = NULL WHERE failing_since IS NOT NULL AND id = ANY($19)), \
    failing AS ( \
        UPDATE endpoints SET failing_since = $18 WHERE failing_since IS NULL AND id = ANY($20)), \
    outcome AS ( \
        UPDATE deliveries AS d SET status = u.status, attempt_count = u.attempt_count, \
               next_attempt_at = u.next_at, last_attempt_at = COALESCE(u.last_at, d.last_attempt_at), \
               lease_owner = NULL, lease_until = NULL, updated_at = $18 \
        FROM UNNEST($12::text[], $13::int8[], $14::text[], $15::int8[], $16::int8[], $17::int8[]) \
             AS u(id, token, status, attempt_count, next_at, last_at) \
        WHERE d.id = u.id AND d.lease_token = u.token AND d.lease_until IS NOT NULL AND d.status = 'pending' \
        RETURNING d.id) \
    SELECT id FROM outcome";

/// Pushes the leases whose token still matches.
const EXTEND_LEASES: &str = "UPDATE deliveries AS d SET lease_until = $3 \
     FROM UNNEST($1::text[], $2::int8[]) AS u(id, token) \
     WHERE d.id = u.id AND d.lease_token = u.token AND d.lease_until IS NOT NULL AND d.status = 'pending'";

/// Ends the leases whose token still matches; the rows are due again at $3.
const RELEASE_LEASES: &str = "UPDATE deliveries AS d SET next_attempt_at = $3, lease_until = NULL, lease_owner = NULL \
     FROM UNNEST($1::text[], $2::int8[]) AS u(id, token) \
     WHERE d.id = u.id AND d.lease_token = u.token AND d.lease_until IS NOT NULL AND d.status = 'pending'";

/// The plan's reads (keys, endpoints), then [`INGEST_BATCH`]. Reads in a
/// transaction would guard nothing more at READ COMMITTED: a key another
/// instance stores meanwhile is met by `ON CONFLICT` and answered here with
/// that instance's event (one read per such key, only then).
pub(super) async fn ingest_batch(
    writer: &mut PgConnection,
    events: &[NewEvent],
    whole: Whole,
    fresh: Option<&FreshLease>,
) -> Result<(Vec<Ingested>, Vec<ClaimedDelivery>)> {
    // A batch that lost a conflict stored nothing: planned and written again.
    let mut conflicts = Conflicts::default();
    loop {
        match ingest_once(writer, events, whole, fresh).await {
            Err(e) if conflicts.again(&e).await => {}
            done => return done,
        }
    }
}

/// Locks the rows of the apps of a batch's events (`FOR KEY SHARE`, in id
/// order) in a batch's transaction, before any endpoint's: the store's lock order.
const LOCK_APPS: &str = "SELECT id FROM apps WHERE id = ANY($1) ORDER BY id FOR KEY SHARE";

/// [`ingest_batch`], once.
async fn ingest_once(
    writer: &mut PgConnection,
    events: &[NewEvent],
    whole: Whole,
    fresh: Option<&FreshLease>,
) -> Result<(Vec<Ingested>, Vec<ClaimedDelivery>)> {
    let mut plan = plan::plan(Conn::Postgres(&mut *writer), events).await?;
    if plan.events.is_empty() || plan.refused_whole(whole) {
        return Ok((plan.answers, Vec::new()));
    }
    // Deliveries to ordered endpoints: their lane numbers are taken in a
    // transaction that keeps the endpoints' rows locked until the events are
    // in (batches to unordered endpoints only stay one statement).
    plan.lease_fresh(fresh);
    let (written, leased) = if plan.lane_counts().is_empty() {
        insert_batch(writer, &plan, fresh).await?
    } else {
        // sqlx's transaction: rolled back if dropped on an error, so the held
        // writer never goes back to its pool inside a transaction.
        let mut tx = sqlx::Connection::begin(&mut *writer).await?;
        let apps: Vec<&str> = plan.events.iter().map(|(e, _)| e.app_id.as_str()).collect();
        sqlx::query(LOCK_APPS).bind(&apps).execute(&mut *tx).await?;
        plan::order_lanes(Conn::Postgres(&mut tx), &mut plan).await?;
        let written = insert_batch(&mut tx, &plan, fresh).await?;
        tx.commit().await?;
        written
    };
    // Only the rows written: an event whose key another instance stored
    // meanwhile, or an endpoint deleted meanwhile, left some out.
    let leased: HashSet<String> = leased.into_iter().collect();
    let claimed =
        plan.deliveries.iter().filter(|d| leased.contains(d.id.as_str())).map(ClaimedDelivery::fresh).collect();
    Ok((after_insert(writer, plan, written).await?, claimed))
}

/// [`INGEST_BATCH`] for a plan; answers how many events were written and
/// the ids of the deliveries written leased to `fresh`.
async fn insert_batch(
    writer: &mut sqlx::PgConnection,
    plan: &plan::Plan<'_>,
    fresh: Option<&FreshLease>,
) -> Result<(i64, Vec<String>)> {
    let (evs, ds) = (&plan.events, &plan.deliveries);
    let lease_until = fresh.map(|f| f.lease_until);
    // Each channel and tag of the events, one `event_labels` row each (only
    // those of the events written: `l` keeps the rows of `e`'s ids).
    let labels: Vec<(&str, &str, &str, &str)> = evs.iter().flat_map(|(e, _)| plan::label_rows(e)).collect();
    let (_apps, written, _notified, leased): (i64, i64, i64, Option<Vec<String>>) = sqlx::query_as(INGEST_BATCH)
        .bind(evs.iter().map(|(e, _)| e.id.as_str()).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.app_id.as_str()).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.event_type.as_str()).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.idempotency_key.as_deref()).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.envelope.as_slice()).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.payload_sha256.as_str()).collect::<Vec<_>>())
        .bind(evs.iter().map(|(_, n)| *n).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.created_at).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.id.as_str()).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.app_id).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.event_id).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.endpoint_id.as_str()).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.at).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.event_type).collect::<Vec<_>>())
        .bind(WAKE_CHANNEL)
        .bind(plan.makes_deliveries())
        .bind(ds.iter().map(|d| d.ordering_key).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.lane_seq).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.due).collect::<Vec<_>>())
        .bind(plan.endpoint_ids())
        .bind(fresh.map(|f| f.owner.as_str()))
        .bind(FRESH_LEASE_TOKEN)
        .bind(ds.iter().map(|d| lease_until.filter(|_| d.leased)).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| crate::labels::to_json(&e.channels)).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| crate::labels::to_json(&e.tags)).collect::<Vec<_>>())
        .bind(labels.iter().map(|l| l.0).collect::<Vec<_>>())
        .bind(labels.iter().map(|l| l.1).collect::<Vec<_>>())
        .bind(labels.iter().map(|l| l.2).collect::<Vec<_>>())
        .bind(labels.iter().map(|l| l.3).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.deliver_at).collect::<Vec<_>>())
        .bind(ds.iter().map(|d| d.deliver_at).collect::<Vec<_>>())
        .bind(evs.iter().map(|(e, _)| e.trace_context.as_deref()).collect::<Vec<_>>())
        .fetch_one(&mut *writer)
        .await?;
    Ok((written, leased.unwrap_or_default()))
}

/// The rest of [`ingest_batch`] after the write.
async fn after_insert(writer: &mut PgConnection, mut plan: plan::Plan<'_>, written: i64) -> Result<Vec<Ingested>> {
    if written < plan.events.len() as i64 {
        // Another instance stored some of these keys after the plan read them.
        let mut stored = HashMap::new();
        let keys: Vec<(AppId, String)> =
            plan.events.iter().filter_map(|(e, _)| Some((e.app_id.clone(), e.idempotency_key.clone()?))).collect();
        let mut conn = Conn::Postgres(&mut *writer);
        for (app_id, key) in keys {
            if let Some(event) = conn.event_by_key(&app_id, &key).await? {
                stored.insert((app_id, key), event);
            }
        }
        plan.lost_keys_to(&stored);
    }
    Ok(plan.answers)
}

/// The state and URL of those of `ids` that still exist: one statement over an array.
pub(super) async fn endpoints_now(worker: &PgPool, ids: &[String]) -> Result<Vec<EndpointNow>> {
    static NOW_POSTGRES: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| format!("SELECT {NOW_COLUMNS} FROM endpoints WHERE id = ANY($1)"));
    Ok(sqlx::query_as(NOW_POSTGRES.as_str()).bind(ids).fetch_all(worker).await?)
}

/// Leases due rows in one statement on the worker's pool.
pub(super) async fn claim_due(
    worker: &PgPool,
    owner: &str,
    now: Millis,
    lease_until: Millis,
    limit: i64,
) -> Result<Vec<ClaimedDelivery>> {
    let claimed: Vec<ClaimedDelivery> =
        sqlx::query_as(&CLAIM_POSTGRES).bind(lease_until).bind(owner).bind(now).bind(limit).fetch_all(worker).await?;
    keep_lane_heads(worker, claimed, now).await
}

/// [`CLAIM_POSTGRES`] for one app.
static CLAIM_OF_APP_POSTGRES: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| super::claim_of_app(&CLAIM_POSTGRES));

/// Leases one app's due rows, then keeps the heads of their lanes as [`claim_due`] does.
pub(super) async fn claim_due_of_app(
    worker: &PgPool,
    owner: &str,
    now: Millis,
    lease_until: Millis,
    limit: i64,
    app_id: &crate::ids::AppId,
) -> Result<Vec<ClaimedDelivery>> {
    let claimed: Vec<ClaimedDelivery> = sqlx::query_as(CLAIM_OF_APP_POSTGRES.as_str())
        .bind(lease_until)
        .bind(owner)
        .bind(now)
        .bind(limit)
        .bind(app_id)
        .fetch_all(worker)
        .await?;
    keep_lane_heads(worker, claimed, now).await
}

/// Of a committed claim, gives back every ordered row that is not the head
/// of its lane after all ([`CLAIM_POSTGRES`] says why this can happen) and
/// answers the rest. Costs nothing for a claim without ordered rows.
pub(super) async fn keep_lane_heads(
    worker: &PgPool,
    mut claimed: Vec<ClaimedDelivery>,
    now: Millis,
) -> Result<Vec<ClaimedDelivery>> {
    let ordered: Vec<&str> = claimed.iter().filter(|c| c.lane_seq.is_some()).map(|c| c.id.as_str()).collect();
    if ordered.is_empty() {
        return Ok(claimed);
    }
    let behind: Vec<DeliveryId> = sqlx::query_scalar(&LANE_RECHECK).bind(&ordered).bind(now).fetch_all(worker).await?;
    if behind.is_empty() {
        return Ok(claimed);
    }
    let give_back: Vec<(DeliveryId, i64)> =
        claimed.iter().filter(|c| behind.contains(&c.id)).map(|c| (c.id.clone(), c.lease_token)).collect();
    update_leases(worker, LeaseChange::Release, &give_back, now).await?;
    claimed.retain(|c| !behind.contains(&c.id));
    Ok(claimed)
}

/// Reads a claim's events, endpoints and live secrets, one statement each
/// whatever the batch's size (arrays).
pub(super) async fn batch_context(
    pool: &PgPool,
    event_ids: &[&str],
    endpoint_ids: &[&str],
    now: Millis,
) -> Result<ContextRows> {
    let endpoints_sql = format!("SELECT {TARGET_COLUMNS} FROM endpoints WHERE id = ANY($1)");
    // Three reads side by side, each on a connection of its own: the
    // context is in hand after the slowest, not after all three.
    Ok(tokio::try_join!(
        sqlx::query_as::<_, EventPart>(
            "SELECT id, event_type, payload, created_at, trace_context FROM events WHERE id = ANY($1)"
        )
        .bind(event_ids)
        .fetch_all(pool),
        sqlx::query_as::<_, EndpointTarget>(&endpoints_sql).bind(endpoint_ids).fetch_all(pool),
        sqlx::query_as::<_, SecretRow>(
            "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets \
             WHERE (expires_at IS NULL OR expires_at > $1) AND endpoint_id = ANY($2) \
             ORDER BY endpoint_id, version DESC",
        )
        .bind(now)
        .bind(endpoint_ids)
        .fetch_all(pool),
    )?)
}

/// [`RECORD_OUTCOMES`] on the worker's pool, the rows in id order; answers the
/// deliveries whose row was updated.
pub(super) async fn record_outcomes(
    worker: &PgPool,
    outcomes: &[Outcome],
    attempts: &[&AttemptRecord],
    health: &Health<'_>,
    now: Millis,
) -> Result<HashSet<DeliveryId>> {
    let mut outcomes: Vec<&Outcome> = outcomes.iter().collect();
    outcomes.sort_unstable_by(|a, b| a.delivery_id.cmp(&b.delivery_id));
    let column = |f: fn(&AttemptRecord) -> &str| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
    let optional = |f: fn(&AttemptRecord) -> Option<&str>| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
    let number = |f: fn(&AttemptRecord) -> i64| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
    let lanes_move = outcomes.iter().any(|o| o.in_lane && o.status.is_final());
    let query = sqlx::query_scalar(RECORD_OUTCOMES)
        .bind(column(|a| a.id.as_str()))
        .bind(column(|a| a.delivery_id.as_str()))
        .bind(column(|a| a.endpoint_id.as_str()))
        .bind(number(|a| a.attempt_number))
        .bind(number(|a| a.started_at))
        .bind(number(|a| a.duration_ms))
        .bind(attempts.iter().map(|a| a.response_status).collect::<Vec<_>>())
        .bind(optional(|a| a.response_excerpt.as_deref()))
        .bind(optional(|a| a.error.as_deref()))
        .bind(optional(|a| a.error_detail.as_deref()))
        .bind(column(|a| &a.signed_with))
        .bind(outcomes.iter().map(|o| o.delivery_id.as_str()).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.lease_token).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.status).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.attempt_count).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.next_attempt_at).collect::<Vec<_>>())
        .bind(outcomes.iter().map(|o| o.last_attempt_at).collect::<Vec<_>>())
        .bind(now)
        .bind(&health.healthy)
        .bind(&health.failing);
    if !lanes_move {
        let ids: Vec<DeliveryId> = query.fetch_all(worker).await?;
        return Ok(ids.into_iter().collect());
    }
    // A lane's head is final: its next delivery is made due in the same
    // transaction, under the locks of the batch's endpoints (taken first, in
    // id order). Ingestion takes the same lock before it decides whether a
    // new delivery is parked, so one of the two always sees the other: a
    // delivery is never left parked behind a head that is already final.
    let mut endpoints: Vec<&str> = outcomes.iter().map(|o| o.endpoint_id.as_str()).collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    let mut tx = worker.begin().await?;
    sqlx::query("SELECT id FROM endpoints WHERE id = ANY($1) ORDER BY id FOR UPDATE")
        .bind(&endpoints)
        .execute(&mut *tx)
        .await?;
    let ids: Vec<DeliveryId> = query.fetch_all(&mut *tx).await?;
    let applied: HashSet<DeliveryId> = ids.into_iter().collect();
    for o in outcomes.iter().filter(|o| o.in_lane && o.status.is_final() && applied.contains(&o.delivery_id)) {
        sqlx::query(PROMOTE_NEXT).bind(&o.delivery_id).bind(now).bind(PARKED).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(applied)
}

/// Updates the leased rows whose token still matches in one statement, rows in id order.
pub(super) async fn update_leases(
    worker: &PgPool,
    change: LeaseChange,
    leases: &[(DeliveryId, i64)],
    at: Millis,
) -> Result<()> {
    let sql = match change {
        LeaseChange::Extend => EXTEND_LEASES,
        LeaseChange::Release => RELEASE_LEASES,
    };
    let mut sorted: Vec<&(DeliveryId, i64)> = leases.iter().collect();
    sorted.sort_unstable();
    sqlx::query(sql)
        .bind(sorted.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>())
        .bind(sorted.iter().map(|(_, t)| *t).collect::<Vec<_>>())
        .bind(at)
        .execute(worker)
        .await?;
    Ok(())
}
