//! Deliveries and attempts: the worker's claim/record cycle and the delivery log.
//!
//! A claim is its own short transaction that leases due rows: `lease_until`,
//! `lease_owner` and a fresh `lease_token`, no indexed column (the row stays
//! `pending`; the API shows a leased row as `in_flight`). No transaction is
//! ever held open across an HTTP request. Results are written later, in
//! batches, only where the lease token still matches.

use std::{collections::HashMap, sync::LazyLock};

use sqlx::QueryBuilder;

use super::{apps::CURSOR_END, endpoints::SecretRow, on_read, on_write, BeginWrite, Store};
use crate::{
    lifecycle::{DeliveryStatus, EndpointState, SHOWN_STATUS_SQL},
    time::Millis,
};

/// A delivery as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryRow {
    pub id: String,
    pub app_id: String,
    pub event_id: String,
    pub endpoint_id: String,
    /// As shown ([`SHOWN_STATUS_SQL`]): `in_flight` while leased.
    pub status: DeliveryStatus,
    pub attempt_count: i64,
    pub next_attempt_at: Option<Millis>,
    pub last_attempt_at: Option<Millis>,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// The columns of a [`DeliveryRow`]. A leased row is shown `in_flight`
/// ([`SHOWN_STATUS_SQL`]), due again (if its worker vanished) when the lease ends.
pub fn delivery_columns() -> &'static str {
    static COLUMNS: LazyLock<String> = LazyLock::new(|| {
        format!(
            "id, app_id, event_id, endpoint_id, {SHOWN_STATUS_SQL} AS status, attempt_count, \
             COALESCE(lease_until, next_attempt_at) AS next_attempt_at, last_attempt_at, created_at, updated_at"
        )
    });
    &COLUMNS
}

/// An attempt as stored; `id` is the `X-Fenix-Delivery-Id` that was sent.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AttemptRecord {
    pub id: String,
    pub delivery_id: String,
    pub endpoint_id: String,
    pub attempt_number: i64,
    pub started_at: Millis,
    pub duration_ms: i64,
    pub response_status: Option<i64>,
    pub response_excerpt: Option<String>,
    pub error: Option<String>,
    pub error_detail: Option<String>,
    /// JSON array of the secret versions that signed the request.
    pub signed_with: String,
}

/// A delivery this worker holds a lease on.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ClaimedDelivery {
    pub id: String,
    pub app_id: String,
    pub event_id: String,
    pub endpoint_id: String,
    pub attempt_count: i64,
    pub budget_start: i64,
    pub lease_token: i64,
}

/// What the worker needs to send a batch: envelopes, endpoints and live secrets.
#[derive(Debug, Default)]
pub struct BatchContext {
    /// event id → (type, envelope bytes (`None` when retention purged them), created at).
    pub events: HashMap<String, (String, Option<Vec<u8>>, Millis)>,
    /// endpoint id → what sending needs of it.
    pub endpoints: HashMap<String, EndpointTarget>,
    /// endpoint id → live secrets, newest first.
    pub secrets: HashMap<String, Vec<SecretRow>>,
}

/// The result of working on one claimed delivery.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub delivery_id: String,
    pub endpoint_id: String,
    pub app_id: String,
    pub event_id: String,
    pub lease_token: i64,
    /// The request made, if one was made (a skip makes none).
    pub attempt: Option<AttemptRecord>,
    /// `pending` (a retry at `next_attempt_at`), `succeeded`, `failed` or `skipped`.
    pub status: DeliveryStatus,
    pub attempt_count: i64,
    pub next_attempt_at: Option<Millis>,
    pub last_attempt_at: Option<Millis>,
}

/// Filters of the delivery log.
#[derive(Debug, Default, Clone)]
pub struct DeliveryFilter {
    pub endpoint_id: Option<String>,
    pub event_id: Option<String>,
    /// As shown: `in_flight` finds the leased `pending` rows.
    pub status: Option<DeliveryStatus>,
    pub since: Option<Millis>,
    pub until: Option<Millis>,
    pub cursor: Option<String>,
    pub limit: i64,
}

#[derive(sqlx::FromRow)]
struct EventPart {
    id: String,
    event_type: String,
    payload: Option<Vec<u8>>,
    created_at: Millis,
}

/// The parts of an endpoint the worker needs to send to it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EndpointTarget {
    pub id: String,
    pub url: String,
    pub state: EndpointState,
    pub signature_scheme: String,
    pub rate_limit_per_sec: Option<i64>,
}

/// Due: `pending`, its time has come, and not leased (or its lease ran out).
/// Leased rows keep their place at the front of `deliveries_due` and are
/// stepped over: there are never more of them than the workers have in hand.
pub const CLAIM_SQLITE: &str = "UPDATE deliveries SET lease_until = $1, lease_owner = $2, \
     lease_token = lease_token + 1, updated_at = $3 \
     WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $3 \
                  AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_attempt_at LIMIT $4) \
     RETURNING id, app_id, event_id, endpoint_id, attempt_count, budget_start, lease_token";

/// PostgreSQL: concurrent claimers skip each other's rows instead of waiting.
pub const CLAIM_POSTGRES: &str = "UPDATE deliveries SET lease_until = $1, lease_owner = $2, \
     lease_token = lease_token + 1, updated_at = $3 \
     WHERE id IN (SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $3 \
                  AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_attempt_at LIMIT $4 \
                  FOR UPDATE SKIP LOCKED) \
     RETURNING id, app_id, event_id, endpoint_id, attempt_count, budget_start, lease_token";

/// A batch of outcomes on PostgreSQL, in one statement (one round trip,
/// atomic): the attempts (arrays, one prepared statement whatever the batch
/// size; any whose delivery was deleted meanwhile is skipped), the delivery
/// rows whose lease token still holds (answered), and the endpoints' failure
/// runs: any success clears `failing_since` ($19), a batch of failures only
/// starts it ($20).
const RECORD_POSTGRES: &str = "\
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

impl Store {
    /// Leases up to `limit` due deliveries (fresh, retrying, or whose lease expired) until `lease_until`.
    pub async fn claim_due(
        &self,
        owner: &str,
        now: Millis,
        lease_until: Millis,
        limit: i64,
    ) -> sqlx::Result<Vec<ClaimedDelivery>> {
        match &self.backend {
            super::Backend::Sqlite { write, .. } => {
                sqlx::query_as::<_, ClaimedDelivery>(CLAIM_SQLITE)
                    .bind(lease_until)
                    .bind(owner)
                    .bind(now)
                    .bind(limit)
                    .fetch_all(write)
                    .await
            }
            super::Backend::Postgres { worker, .. } => {
                sqlx::query_as::<_, ClaimedDelivery>(CLAIM_POSTGRES)
                    .bind(lease_until)
                    .bind(owner)
                    .bind(now)
                    .bind(limit)
                    .fetch_all(worker)
                    .await
            }
        }
    }

    /// Loads envelopes, endpoints and live secrets for a claimed batch, one query each.
    pub async fn batch_context(&self, claimed: &[ClaimedDelivery], now: Millis) -> sqlx::Result<BatchContext> {
        let mut event_ids: Vec<&str> = claimed.iter().map(|c| c.event_id.as_str()).collect();
        event_ids.sort_unstable();
        event_ids.dedup();
        let mut endpoint_ids: Vec<&str> = claimed.iter().map(|c| c.endpoint_id.as_str()).collect();
        endpoint_ids.sort_unstable();
        endpoint_ids.dedup();
        let mut ctx = BatchContext::default();
        if claimed.is_empty() {
            return Ok(ctx);
        }
        const EVENTS: &str = "SELECT id, event_type, payload, created_at FROM events WHERE id";
        const ENDPOINTS: &str = "SELECT id, url, state, signature_scheme, rate_limit_per_sec FROM endpoints WHERE id";
        const SECRETS: &str = "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets \
             WHERE (expires_at IS NULL OR expires_at > $1) AND endpoint_id";
        const SECRETS_ORDER: &str = " ORDER BY endpoint_id, version DESC";
        let (events, endpoints, secrets) = match &self.backend {
            // One statement whatever the batch's size: arrays.
            super::Backend::Postgres { pool, .. } => (
                sqlx::query_as::<_, EventPart>(&format!("{EVENTS} = ANY($1)")).bind(&event_ids).fetch_all(pool).await?,
                sqlx::query_as::<_, EndpointTarget>(&format!("{ENDPOINTS} = ANY($1)"))
                    .bind(&endpoint_ids)
                    .fetch_all(pool)
                    .await?,
                sqlx::query_as::<_, SecretRow>(&format!("{SECRETS} = ANY($2){SECRETS_ORDER}"))
                    .bind(now)
                    .bind(&endpoint_ids)
                    .fetch_all(pool)
                    .await?,
            ),
            super::Backend::Sqlite { read: pool, .. } => {
                let in_list = |sql: &str, first: usize, ids: &[&str]| {
                    let marks: Vec<String> = (first..first + ids.len()).map(|i| format!("${i}")).collect();
                    format!("{sql} IN ({})", marks.join(", "))
                };
                let (events_sql, endpoints_sql) =
                    (in_list(EVENTS, 1, &event_ids), in_list(ENDPOINTS, 1, &endpoint_ids));
                let mut events = sqlx::query_as::<_, EventPart>(&events_sql);
                for id in &event_ids {
                    events = events.bind(*id);
                }
                let mut endpoints = sqlx::query_as::<_, EndpointTarget>(&endpoints_sql);
                let secrets_sql = format!("{}{SECRETS_ORDER}", in_list(SECRETS, 2, &endpoint_ids));
                let mut secrets = sqlx::query_as::<_, SecretRow>(&secrets_sql).bind(now);
                for id in &endpoint_ids {
                    endpoints = endpoints.bind(*id);
                    secrets = secrets.bind(*id);
                }
                (events.fetch_all(pool).await?, endpoints.fetch_all(pool).await?, secrets.fetch_all(pool).await?)
            }
        };
        for e in events {
            ctx.events.insert(e.id, (e.event_type, e.payload, e.created_at));
        }
        for e in endpoints {
            ctx.endpoints.insert(e.id.clone(), e);
        }
        for s in secrets {
            ctx.secrets.entry(s.endpoint_id.clone()).or_default().push(s);
        }
        Ok(ctx)
    }

    /// Writes a batch of outcomes in one transaction. An attempt is always kept
    /// (it happened) unless its delivery was deleted meanwhile; the delivery row
    /// changes only where our lease token still holds, so a worker that lost its
    /// lease never overwrites a newer outcome. Returns how many outcomes were
    /// discarded for a lost lease.
    pub async fn record_outcomes(&self, outcomes: &[Outcome], now: Millis) -> sqlx::Result<usize> {
        Ok(outcomes.len() - self.record_outcomes_applied(outcomes, now).await?.len())
    }

    /// [`Store::record_outcomes`], answering the ids of the deliveries whose row
    /// was updated (the others lost their lease): side effects such as metrics
    /// and operator events follow only those.
    pub async fn record_outcomes_applied(
        &self,
        outcomes: &[Outcome],
        now: Millis,
    ) -> sqlx::Result<std::collections::HashSet<String>> {
        let mut applied = std::collections::HashSet::new();
        if outcomes.is_empty() {
            return Ok(applied);
        }
        let attempts: Vec<&AttemptRecord> = outcomes.iter().filter_map(|o| o.attempt.as_ref()).collect();
        // Endpoint health: any success clears `failing_since`; failures start it.
        let mut health: HashMap<&str, bool> = HashMap::new();
        for o in outcomes.iter().filter(|o| o.attempt.is_some()) {
            *health.entry(o.endpoint_id.as_str()).or_default() |= o.status == DeliveryStatus::Succeeded;
        }
        match &self.backend {
            super::Backend::Sqlite { write, .. } => {
                let mut tx = write.begin_write().await?;
                insert_attempts_sqlite(&mut tx, &attempts).await?;
                // One statement for the whole batch (UPDATE … FROM VALUES, SQLite ≥ 3.33).
                // Usually every row is updated; only when some lease was lost do we
                // read back which rows carry this write (our token and timestamp:
                // nobody else writes inside this transaction).
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
                    let mut qb = QueryBuilder::new(
                        "SELECT id, lease_token FROM deliveries WHERE lease_owner IS NULL AND updated_at = ",
                    );
                    qb.push_bind(now).push(" AND id IN (");
                    let mut sep = qb.separated(", ");
                    for o in chunk {
                        sep.push_bind(o.delivery_id.as_str());
                    }
                    qb.push(")");
                    let rows: Vec<(String, i64)> = qb.build_query_as().fetch_all(&mut *tx).await?;
                    let tokens: HashMap<&str, i64> =
                        chunk.iter().map(|o| (o.delivery_id.as_str(), o.lease_token)).collect();
                    applied.extend(
                        rows.into_iter().filter(|(id, t)| tokens.get(id.as_str()) == Some(t)).map(|(id, _)| id),
                    );
                }
                update_health_sqlite(&mut tx, &health, now).await?;
                tx.commit().await?;
                Ok(applied)
            }
            super::Backend::Postgres { worker, .. } => {
                // Rows are locked in id order, as every other multi-row write of
                // deliveries does, so two writers never wait on each other in a cycle.
                let mut outcomes: Vec<&Outcome> = outcomes.iter().collect();
                outcomes.sort_unstable_by(|a, b| a.delivery_id.cmp(&b.delivery_id));
                let column = |f: fn(&AttemptRecord) -> &str| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
                let optional =
                    |f: fn(&AttemptRecord) -> Option<&str>| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
                let number = |f: fn(&AttemptRecord) -> i64| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
                let ids: Vec<String> = sqlx::query_scalar(RECORD_POSTGRES)
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
                    .bind(endpoints_by_health(&health, true))
                    .bind(endpoints_by_health(&health, false))
                    .fetch_all(worker)
                    .await?;
                applied.extend(ids);
                Ok(applied)
            }
        }
    }

    /// Pushes the lease of deliveries still being worked on.
    pub async fn extend_leases(&self, leases: &[(String, i64)], lease_until: Millis) -> sqlx::Result<()> {
        self.update_leases(
            leases,
            lease_until,
            "UPDATE deliveries AS d SET lease_until = $3 FROM UNNEST($1::text[], $2::int8[]) AS u(id, token) \
             WHERE d.id = u.id AND d.lease_token = u.token AND d.lease_until IS NOT NULL AND d.status = 'pending'",
            "UPDATE deliveries SET lease_until = $3 \
             WHERE id = $1 AND lease_token = $2 AND lease_until IS NOT NULL AND status = 'pending'",
        )
        .await
    }

    /// Gives leased deliveries back (graceful shutdown, deferral): due again at `at`, attempt not counted.
    pub async fn release_leases(&self, leases: &[(String, i64)], at: Millis) -> sqlx::Result<()> {
        self.update_leases(
            leases,
            at,
            "UPDATE deliveries AS d SET next_attempt_at = $3, lease_until = NULL, lease_owner = NULL \
             FROM UNNEST($1::text[], $2::int8[]) AS u(id, token) \
             WHERE d.id = u.id AND d.lease_token = u.token AND d.lease_until IS NOT NULL AND d.status = 'pending'",
            "UPDATE deliveries SET next_attempt_at = $3, lease_until = NULL, lease_owner = NULL \
             WHERE id = $1 AND lease_token = $2 AND lease_until IS NOT NULL AND status = 'pending'",
        )
        .await
    }

    /// Updates leased rows whose token still matches: one
    /// statement on PostgreSQL (rows locked in id order), one per row on SQLite
    /// (a single writer: nothing to order against).
    async fn update_leases(&self, leases: &[(String, i64)], at: Millis, pg: &str, sqlite: &str) -> sqlx::Result<()> {
        if leases.is_empty() {
            return Ok(());
        }
        match &self.backend {
            super::Backend::Sqlite { write, .. } => {
                let mut tx = write.begin_write().await?;
                for (id, token) in leases {
                    sqlx::query(sqlite).bind(id).bind(*token).bind(at).execute(&mut *tx).await?;
                }
                tx.commit().await
            }
            super::Backend::Postgres { worker, .. } => {
                let mut sorted: Vec<&(String, i64)> = leases.iter().collect();
                sorted.sort_unstable();
                sqlx::query(pg)
                    .bind(sorted.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>())
                    .bind(sorted.iter().map(|(_, t)| *t).collect::<Vec<_>>())
                    .bind(at)
                    .execute(worker)
                    .await
                    .map(|_| ())
            }
        }
    }

    /// When the next unleased delivery comes due, if any. A lease held by a
    /// worker that vanished is noticed by the idle poll when it runs out.
    pub async fn next_due_at(&self) -> sqlx::Result<Option<Millis>> {
        on_write!(self, |pool| sqlx::query_scalar::<_, Option<i64>>(
            "SELECT MIN(next_attempt_at) FROM deliveries WHERE status = 'pending' AND lease_until IS NULL"
        )
        .fetch_one(pool)
        .await)
    }

    /// True when some delivery is due now and nobody holds it (readiness):
    /// the claim's own condition, read on a reader connection.
    pub async fn work_due(&self, now: Millis) -> sqlx::Result<bool> {
        on_read!(self, |pool| sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM (SELECT 1 FROM deliveries WHERE status = 'pending' AND next_attempt_at <= $1 \
             AND (lease_until IS NULL OR lease_until <= $1) LIMIT 1) AS due"
        )
        .bind(now)
        .fetch_one(pool)
        .await
        .map(|n| n > 0))
    }

    /// One delivery of one app.
    pub async fn get_delivery(&self, app_id: &str, id: &str) -> sqlx::Result<Option<DeliveryRow>> {
        on_read!(self, |pool| sqlx::query_as::<_, DeliveryRow>(&format!(
            "SELECT {} FROM deliveries WHERE id = $1 AND app_id = $2",
            delivery_columns()
        ))
        .bind(id)
        .bind(app_id)
        .fetch_optional(pool)
        .await)
    }

    /// The delivery log of an app, newest first.
    pub async fn list_deliveries(&self, app_id: &str, f: &DeliveryFilter) -> sqlx::Result<Vec<DeliveryRow>> {
        on_read!(self, |pool| {
            let mut qb = QueryBuilder::new(format!("SELECT {} FROM deliveries WHERE app_id = ", delivery_columns()));
            qb.push_bind(app_id);
            qb.push(" AND id < ").push_bind(f.cursor.clone().unwrap_or_else(|| CURSOR_END.into()));
            if let Some(v) = &f.endpoint_id {
                qb.push(" AND endpoint_id = ").push_bind(v.clone());
            }
            if let Some(v) = &f.event_id {
                qb.push(" AND event_id = ").push_bind(v.clone());
            }
            if let Some(status) = f.status {
                match status.shown_condition() {
                    Some(condition) => qb.push(" AND ").push(condition),
                    None => qb.push(" AND status = ").push_bind(status),
                };
            }
            if let Some(s) = f.since {
                qb.push(" AND created_at >= ").push_bind(s);
            }
            if let Some(u) = f.until {
                qb.push(" AND created_at < ").push_bind(u);
            }
            qb.push(" ORDER BY id DESC LIMIT ").push_bind(f.limit);
            qb.build_query_as::<DeliveryRow>().fetch_all(pool).await
        })
    }

    /// A delivery's attempts, oldest first.
    pub async fn list_attempts(&self, delivery_id: &str) -> sqlx::Result<Vec<AttemptRecord>> {
        on_read!(self, |pool| {
            sqlx::query_as::<_, AttemptRecord>(
            "SELECT id, delivery_id, endpoint_id, attempt_number, started_at, duration_ms, response_status, response_excerpt, \
             error, error_detail, signed_with FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number, started_at"
        )
        .bind(delivery_id)
        .fetch_all(pool)
        .await
        })
    }
}

/// Inserts attempts on SQLite in multi-row statements, skipping any whose
/// delivery was deleted meanwhile.
async fn insert_attempts_sqlite(tx: &mut sqlx::SqliteConnection, attempts: &[&AttemptRecord]) -> sqlx::Result<()> {
    // 11 parameters a row; stay well under SQLite's 32766-parameter limit.
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

/// The endpoints of a batch that had a success (`healthy`) or only failures.
fn endpoints_by_health<'a>(health: &HashMap<&'a str, bool>, healthy: bool) -> Vec<&'a str> {
    health.iter().filter(|(_, ok)| **ok == healthy).map(|(id, _)| *id).collect()
}

/// Starts or clears each endpoint's `failing_since` on SQLite: two statements
/// per batch at most.
async fn update_health_sqlite(
    tx: &mut sqlx::SqliteConnection,
    health: &HashMap<&str, bool>,
    now: Millis,
) -> sqlx::Result<()> {
    for healthy in [true, false] {
        let ids = endpoints_by_health(health, healthy);
        if ids.is_empty() {
            continue;
        }
        let mut qb = if healthy {
            QueryBuilder::new("UPDATE endpoints SET failing_since = NULL WHERE failing_since IS NOT NULL AND id IN (")
        } else {
            let mut qb = QueryBuilder::new("UPDATE endpoints SET failing_since = ");
            qb.push_bind(now).push(" WHERE failing_since IS NULL AND id IN (");
            qb
        };
        let mut sep = qb.separated(", ");
        for id in ids {
            sep.push_bind(id);
        }
        qb.push(")");
        qb.build().execute(&mut *tx).await?;
    }
    Ok(())
}
