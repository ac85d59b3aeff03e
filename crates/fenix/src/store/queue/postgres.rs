//! The delivery queue on PostgreSQL: every write is ONE statement over arrays
//! (one round trip, atomic by itself, one prepared statement whatever the
//! batch size), so no BEGIN/COMMIT is sent; claims skip each other's rows
//! (`FOR UPDATE SKIP LOCKED`); multi-row updates lock rows in id order, so two
//! writers never wait on each other in a cycle. The worker's statements run on
//! its own pool, whose sessions plan by index (`WORKER_PLANNER_SETTINGS`).

use std::collections::{HashMap, HashSet};

use sqlx::{pool::PoolConnection, PgPool, Postgres};

use super::{
    plan::{self, Conn, Whole},
    ClaimedDelivery, ContextRows, EndpointTarget, EventPart, Health, LeaseChange, Outcome, TARGET_COLUMNS,
};
use crate::{
    store::{deliveries::AttemptRecord, endpoints::SecretRow, events::Ingested, events::NewEvent, WAKE_CHANNEL},
    time::Millis,
};

/// Due rows as on SQLite; concurrent claimers skip each other's rows instead of waiting.
pub const CLAIM_POSTGRES: &str = "UPDATE deliveries SET lease_until = $1, lease_owner = $2, \
     lease_token = lease_token + 1, updated_at = $3 \
     WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $3 \
                  AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_attempt_at LIMIT $4 \
                  FOR UPDATE SKIP LOCKED) \
     RETURNING id, app_id, event_id, endpoint_id, attempt_count, budget_start, lease_token";

/// The events of a batch, their deliveries and the wake-up of every
/// instance, in ONE statement. An idempotency key another instance stored
/// since the plan read it leaves its event out (`ON CONFLICT … DO NOTHING`),
/// and with it that event's deliveries; the answer counts the events written.
/// The deliveries' foreign key to their event is checked at the end of the
/// statement, when the events are in. The `NOTIFY` (only when a delivery was
/// written and $16) is delivered at commit.
const INGEST_BATCH: &str = "\
    WITH e AS ( \
        INSERT INTO events (id, app_id, event_type, idempotency_key, payload, payload_sha256, delivery_count, \
                            created_at) \
        SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[], \
                             $7::int8[], $8::int8[]) \
        ON CONFLICT (app_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING \
        RETURNING id), \
    d AS ( \
        INSERT INTO deliveries (id, app_id, event_id, event_type, endpoint_id, status, attempt_count, \
                                next_attempt_at, created_at, updated_at) \
        SELECT u.id, u.app_id, u.event_id, u.event_type, u.endpoint_id, 'pending', 0, u.at, u.at, u.at \
        FROM UNNEST($9::text[], $10::text[], $11::text[], $12::text[], $13::int8[], $14::text[]) \
             AS u(id, app_id, event_id, endpoint_id, at, event_type) \
        WHERE u.event_id IN (SELECT id FROM e) \
        RETURNING 1) \
    SELECT (SELECT COUNT(*) FROM e) AS written, \
           (SELECT COUNT(*) FROM (SELECT pg_notify($15, '') FROM (SELECT 1 FROM d LIMIT 1) AS any_delivery \
                                  WHERE $16) AS notified) AS notified";

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
    writer: &mut PoolConnection<Postgres>,
    events: &[NewEvent],
    whole: Whole,
) -> sqlx::Result<Vec<Ingested>> {
    let mut plan = plan::plan(Conn::Postgres(writer), events).await?;
    if plan.events.is_empty() || plan.refused_whole(whole) {
        return Ok(plan.answers);
    }
    let (evs, ds) = (&plan.events, &plan.deliveries);
    let (written, _notified): (i64, i64) = sqlx::query_as(INGEST_BATCH)
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
        .fetch_one(&mut **writer)
        .await?;
    if written < plan.events.len() as i64 {
        // Another instance stored some of these keys after the plan read them.
        let mut stored = HashMap::new();
        let keys: Vec<(String, String)> =
            plan.events.iter().filter_map(|(e, _)| Some((e.app_id.clone(), e.idempotency_key.clone()?))).collect();
        let mut conn = Conn::Postgres(writer);
        for (app_id, key) in keys {
            if let Some(event) = conn.event_by_key(&app_id, &key).await? {
                stored.insert((app_id, key), event);
            }
        }
        plan.lost_keys_to(&stored);
    }
    Ok(plan.answers)
}

/// Leases due rows in one statement on the worker's pool.
pub(super) async fn claim_due(
    worker: &PgPool,
    owner: &str,
    now: Millis,
    lease_until: Millis,
    limit: i64,
) -> sqlx::Result<Vec<ClaimedDelivery>> {
    sqlx::query_as(CLAIM_POSTGRES).bind(lease_until).bind(owner).bind(now).bind(limit).fetch_all(worker).await
}

/// Reads a claim's events, endpoints and live secrets, one statement each
/// whatever the batch's size (arrays).
pub(super) async fn batch_context(
    pool: &PgPool,
    event_ids: &[&str],
    endpoint_ids: &[&str],
    now: Millis,
) -> sqlx::Result<ContextRows> {
    let events =
        sqlx::query_as::<_, EventPart>("SELECT id, event_type, payload, created_at FROM events WHERE id = ANY($1)")
            .bind(event_ids)
            .fetch_all(pool)
            .await?;
    let endpoints =
        sqlx::query_as::<_, EndpointTarget>(&format!("SELECT {TARGET_COLUMNS} FROM endpoints WHERE id = ANY($1)"))
            .bind(endpoint_ids)
            .fetch_all(pool)
            .await?;
    let secrets = sqlx::query_as::<_, SecretRow>(
        "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets \
         WHERE (expires_at IS NULL OR expires_at > $1) AND endpoint_id = ANY($2) \
         ORDER BY endpoint_id, version DESC",
    )
    .bind(now)
    .bind(endpoint_ids)
    .fetch_all(pool)
    .await?;
    Ok((events, endpoints, secrets))
}

/// [`RECORD_OUTCOMES`] on the worker's pool, the rows in id order; answers the
/// deliveries whose row was updated.
pub(super) async fn record_outcomes(
    worker: &PgPool,
    outcomes: &[Outcome],
    attempts: &[&AttemptRecord],
    health: &Health<'_>,
    now: Millis,
) -> sqlx::Result<HashSet<String>> {
    let mut outcomes: Vec<&Outcome> = outcomes.iter().collect();
    outcomes.sort_unstable_by(|a, b| a.delivery_id.cmp(&b.delivery_id));
    let column = |f: fn(&AttemptRecord) -> &str| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
    let optional = |f: fn(&AttemptRecord) -> Option<&str>| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
    let number = |f: fn(&AttemptRecord) -> i64| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
    let ids: Vec<String> = sqlx::query_scalar(RECORD_OUTCOMES)
        .bind(column(|a| &a.id))
        .bind(column(|a| &a.delivery_id))
        .bind(column(|a| &a.endpoint_id))
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
        .bind(&health.failing)
        .fetch_all(worker)
        .await?;
    Ok(ids.into_iter().collect())
}

/// Updates the leased rows whose token still matches in one statement, rows in id order.
pub(super) async fn update_leases(
    worker: &PgPool,
    change: LeaseChange,
    leases: &[(String, i64)],
    at: Millis,
) -> sqlx::Result<()> {
    let sql = match change {
        LeaseChange::Extend => EXTEND_LEASES,
        LeaseChange::Release => RELEASE_LEASES,
    };
    let mut sorted: Vec<&(String, i64)> = leases.iter().collect();
    sorted.sort_unstable();
    sqlx::query(sql)
        .bind(sorted.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>())
        .bind(sorted.iter().map(|(_, t)| *t).collect::<Vec<_>>())
        .bind(at)
        .execute(worker)
        .await
        .map(|_| ())
}
