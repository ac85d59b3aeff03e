//! Endpoints and their sealed signing secrets.

use super::{
    apps::CURSOR_END,
    on_read, on_write,
    ownership::{start_challenge_in, NewChallenge},
    BeginWrite, Conflicts, Store,
};
use crate::{
    lifecycle::{EndpointState, OnDeadLetter, SigningAlgorithm, SHOWN_ENDPOINT_STATE_SQL},
    time::Millis,
};

/// An endpoint as stored (`event_types` is a JSON array).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EndpointRow {
    pub id: String,
    pub app_id: String,
    pub url: String,
    pub description: String,
    pub event_types: String,
    pub state: EndpointState,
    pub state_reason: Option<String>,
    pub state_changed_at: Option<Millis>,
    pub rate_limit_per_sec: Option<i64>,
    pub signature_scheme: String,
    pub created_at: Millis,
    pub updated_at: Millis,
    /// Custom request headers, sensitive values sealed (`endpoint_policy::StoredHeaders`).
    pub headers: String,
    /// Own retry schedule in milliseconds (JSON array); `None` = the global one.
    pub retry_schedule: Option<String>,
    /// 4xx statuses that fail a delivery at once (JSON array).
    pub final_status_codes: String,
    /// Own attempt timeout; `None` = the global one.
    pub attempt_timeout_ms: Option<i64>,
    /// Ordered delivery: one delivery at a time per lane, in event order.
    pub ordered: bool,
    /// What an ordered lane does after a dead letter.
    pub on_dead_letter: OnDeadLetter,
    /// What the current key signs with (a rotation may change it).
    pub signing_algorithm: SigningAlgorithm,
}

const ENDPOINT_COLUMNS: &str = "id, app_id, url, description, event_types, state, state_reason, state_changed_at, \
     rate_limit_per_sec, signature_scheme, created_at, updated_at, \
     headers, retry_schedule, final_status_codes, attempt_timeout_ms, ordered, on_dead_letter, \
     signing_algorithm";

/// [`ENDPOINT_COLUMNS`] as read: `state` is the state the endpoint *shows*
/// (`pending_verification` while its ownership is unproved).
pub(super) fn shown_columns() -> String {
    ENDPOINT_COLUMNS.replacen(", state,", &format!(", {SHOWN_ENDPOINT_STATE_SQL} AS state,"), 1)
}

/// Applies an [`EndpointPatch`]: a field bound `NULL` (or flagged 0) is left as it is.
const UPDATE_ENDPOINT: &str = "UPDATE endpoints SET url = COALESCE($3, url), description = COALESCE($4, description), \
     event_types = COALESCE($5, event_types), \
     rate_limit_per_sec = CASE WHEN $6 = 1 THEN $7 ELSE rate_limit_per_sec END, updated_at = $8, \
     headers = COALESCE($9, headers), \
     retry_schedule = CASE WHEN $10 = 1 THEN $11 ELSE retry_schedule END, \
     final_status_codes = COALESCE($12, final_status_codes), \
     attempt_timeout_ms = CASE WHEN $13 = 1 THEN $14 ELSE attempt_timeout_ms END, \
     ordered = COALESCE($15, ordered), on_dead_letter = COALESCE($16, on_dead_letter) \
     WHERE id = $1 AND app_id = $2";

/// A new endpoint with its first secret, already sealed.
#[derive(Debug)]
pub struct NewEndpoint {
    pub row: EndpointRow,
    pub sealed_secret: Vec<u8>,
    /// `whpk_…` when the first key is Ed25519.
    pub public_key: Option<String>,
}

/// Changes to an endpoint; `None` leaves a field as it is.
#[derive(Debug, Default)]
pub struct EndpointPatch {
    pub url: Option<String>,
    pub description: Option<String>,
    pub event_types: Option<String>,
    pub rate_limit_per_sec: Option<Option<i64>>,
    pub headers: Option<String>,
    pub retry_schedule: Option<Option<String>>,
    pub final_status_codes: Option<String>,
    pub attempt_timeout_ms: Option<Option<i64>>,
    pub ordered: Option<bool>,
    pub on_dead_letter: Option<OnDeadLetter>,
    /// With a new `url` when ownership must be proved: the endpoint becomes
    /// unverified with this challenge in the same transaction.
    pub challenge: Option<NewChallenge>,
}

/// One sealed secret version.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SecretRow {
    pub endpoint_id: String,
    pub version: i64,
    pub sealed: Vec<u8>,
    pub created_at: Millis,
    pub expires_at: Option<Millis>,
}

/// One live Ed25519 key version's public half: what receivers may read.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PublicKeyRow {
    pub endpoint_id: String,
    pub version: i64,
    /// `whpk_…`.
    pub public_key: String,
    pub created_at: Millis,
    /// `None` until a rotation retires it.
    pub expires_at: Option<Millis>,
}

impl Store {
    /// Inserts the endpoint and its secret version 1 in one transaction, with no limit.
    pub async fn insert_endpoint(&self, new: &NewEndpoint) -> sqlx::Result<()> {
        self.insert_endpoint_within(new, i64::MAX).await.map(|_| ())
    }

    /// Inserts the endpoint and its secret version 1 in one transaction, unless
    /// its app already has `max_per_app` endpoints (then `Ok(false)`, nothing stored).
    /// Concurrent creates for one app are serialised, so they cannot overshoot
    /// the limit: on PostgreSQL by locking the app's row before counting, on
    /// SQLite by the write transaction (`BEGIN IMMEDIATE`, one writer).
    pub async fn insert_endpoint_within(&self, new: &NewEndpoint, max_per_app: i64) -> sqlx::Result<bool> {
        self.insert_endpoint_challenged(new, max_per_app, None).await
    }

    /// As [`Store::insert_endpoint_within`]; with a `challenge`, the endpoint
    /// is stored unverified with it (it is never sent an event before it answers).
    ///
    /// An app that is gone (deleted before, or while this waited for its
    /// row) is `Err(sqlx::Error::RowNotFound)`, nothing stored: the app's row
    /// is locked first (the store's lock order), `FOR NO KEY UPDATE` on
    /// PostgreSQL, which creations of the app's endpoints wait on and its
    /// ingestion does not.
    pub async fn insert_endpoint_challenged(
        &self,
        new: &NewEndpoint,
        max_per_app: i64,
        challenge: Option<&NewChallenge>,
    ) -> sqlx::Result<bool> {
        let mut conflicts = Conflicts::default();
        loop {
            match self.insert_endpoint_once(new, max_per_app, challenge).await {
                Err(e) if conflicts.again(&e).await => {}
                done => return done,
            }
        }
    }

    async fn insert_endpoint_once(
        &self,
        new: &NewEndpoint,
        max_per_app: i64,
        challenge: Option<&NewChallenge>,
    ) -> sqlx::Result<bool> {
        let r = &new.row;
        let lock_app = if self.is_postgres() {
            "SELECT id FROM apps WHERE id = $1 FOR NO KEY UPDATE"
        } else {
            "SELECT id FROM apps WHERE id = $1"
        };
        on_write!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            let app: Option<String> = sqlx::query_scalar(lock_app).bind(&r.app_id).fetch_optional(&mut *tx).await?;
            if app.is_none() {
                tx.rollback().await?;
                return Err(sqlx::Error::RowNotFound);
            }
            let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM endpoints WHERE app_id = $1")
                .bind(&r.app_id)
                .fetch_one(&mut *tx)
                .await?;
            if count >= max_per_app {
                tx.rollback().await?;
                return Ok(false);
            }
            sqlx::query(&format!(
                "INSERT INTO endpoints ({ENDPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"
            ))
            .bind(&r.id)
            .bind(&r.app_id)
            .bind(&r.url)
            .bind(&r.description)
            .bind(&r.event_types)
            .bind(r.state)
            .bind(&r.state_reason)
            .bind(r.state_changed_at)
            .bind(r.rate_limit_per_sec)
            .bind(&r.signature_scheme)
            .bind(r.created_at)
            .bind(r.updated_at)
            .bind(&r.headers)
            .bind(&r.retry_schedule)
            .bind(&r.final_status_codes)
            .bind(r.attempt_timeout_ms)
            .bind(r.ordered)
            .bind(r.on_dead_letter)
            .bind(r.signing_algorithm)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO endpoint_secrets (endpoint_id, version, sealed, created_at, expires_at, public_key) \
                 VALUES ($1, 1, $2, $3, NULL, $4)",
            )
            .bind(&r.id)
            .bind(&new.sealed_secret)
            .bind(r.created_at)
            .bind(&new.public_key)
            .execute(&mut *tx)
            .await?;
            if let Some(c) = challenge {
                start_challenge_in!(tx, &r.id, c, r.created_at).await?;
            }
            tx.commit().await.map(|_| true)
        })
    }

    /// One endpoint of one app.
    pub async fn get_endpoint(&self, app_id: &str, id: &str) -> sqlx::Result<Option<EndpointRow>> {
        on_read!(self, |pool| sqlx::query_as::<_, EndpointRow>(&format!(
            "SELECT {} FROM endpoints WHERE id = $1 AND app_id = $2",
            shown_columns()
        ))
        .bind(id)
        .bind(app_id)
        .fetch_optional(pool)
        .await)
    }

    /// An app's endpoints, newest first, strictly before `cursor`.
    pub async fn list_endpoints(
        &self,
        app_id: &str,
        cursor: Option<&str>,
        limit: i64,
    ) -> sqlx::Result<Vec<EndpointRow>> {
        on_read!(self, |pool| sqlx::query_as::<_, EndpointRow>(&format!(
            "SELECT {} FROM endpoints WHERE app_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
            shown_columns()
        ))
        .bind(app_id)
        .bind(cursor.unwrap_or(CURSOR_END))
        .bind(limit)
        .fetch_all(pool)
        .await)
    }

    /// Applies a patch; returns false when the endpoint does not exist.
    pub async fn update_endpoint(&self, app_id: &str, id: &str, p: &EndpointPatch, now: Millis) -> sqlx::Result<bool> {
        let (set_rate, rate) = match p.rate_limit_per_sec {
            Some(v) => (1_i64, v),
            None => (0, None),
        };
        let (set_schedule, schedule) = match &p.retry_schedule {
            Some(v) => (1_i64, v.clone()),
            None => (0, None),
        };
        let (set_timeout, timeout) = match p.attempt_timeout_ms {
            Some(v) => (1_i64, v),
            None => (0, None),
        };
        on_write!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            let changed = sqlx::query(UPDATE_ENDPOINT)
                .bind(id)
                .bind(app_id)
                .bind(&p.url)
                .bind(&p.description)
                .bind(&p.event_types)
                .bind(set_rate)
                .bind(rate)
                .bind(now)
                .bind(&p.headers)
                .bind(set_schedule)
                .bind(&schedule)
                .bind(&p.final_status_codes)
                .bind(set_timeout)
                .bind(timeout)
                .bind(p.ordered)
                .bind(p.on_dead_letter)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                > 0;
            if let (true, Some(_), Some(c)) = (changed, &p.url, &p.challenge) {
                start_challenge_in!(tx, id, c, now).await?;
            }
            tx.commit().await?;
            Ok(changed)
        })
    }

    /// Deletes an endpoint with its deliveries (and their attempts) and
    /// secrets. The deliveries go in the same transaction, after the endpoint
    /// row: on PostgreSQL a delivery has no foreign key to its endpoint
    /// (migration 0014), and an ingestion that fans out to this endpoint holds
    /// a lock on its row until it commits, so its deliveries are in (and
    /// deleted here) or it no longer finds the endpoint and writes none.
    ///
    /// The app's row is locked first (`FOR KEY SHARE` on PostgreSQL: the
    /// store's lock order), so an app's deletion waits for this one or this
    /// one for it, never both; a conflict that still happens runs it again.
    pub async fn delete_endpoint(&self, app_id: &str, id: &str) -> sqlx::Result<bool> {
        let mut conflicts = Conflicts::default();
        loop {
            match self.delete_endpoint_once(app_id, id).await {
                Err(e) if conflicts.again(&e).await => {}
                done => return done,
            }
        }
    }

    async fn delete_endpoint_once(&self, app_id: &str, id: &str) -> sqlx::Result<bool> {
        let lock_app = if self.is_postgres() {
            "SELECT id FROM apps WHERE id = $1 FOR KEY SHARE"
        } else {
            "SELECT id FROM apps WHERE id = $1"
        };
        on_write!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            let _: Option<String> = sqlx::query_scalar(lock_app).bind(app_id).fetch_optional(&mut *tx).await?;
            let deleted = sqlx::query("DELETE FROM endpoints WHERE id = $1 AND app_id = $2")
                .bind(id)
                .bind(app_id)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                > 0;
            if deleted {
                sqlx::query("DELETE FROM deliveries WHERE endpoint_id = $1").bind(id).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(deleted)
        })
    }

    /// Sets an endpoint's state and records why (paused by an operator, disabled after a 410, …).
    pub async fn set_endpoint_state(
        &self,
        endpoint_id: &str,
        state: EndpointState,
        reason: &str,
        change_id: &str,
        now: Millis,
    ) -> sqlx::Result<bool> {
        on_write!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            let changed = sqlx::query(
                "UPDATE endpoints SET state = $2, state_reason = $3, state_changed_at = $4, updated_at = $4, \
                 failing_since = CASE WHEN $2 = 'active' THEN NULL ELSE failing_since END \
                 WHERE id = $1 AND state <> $2",
            )
            .bind(endpoint_id)
            .bind(state)
            .bind(reason)
            .bind(now)
            .execute(&mut *tx)
            .await?
            .rows_affected()
                > 0;
            if changed {
                sqlx::query(
                    "INSERT INTO endpoint_state_changes (id, endpoint_id, state, reason, created_at) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(change_id)
                .bind(endpoint_id)
                .bind(state)
                .bind(reason)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok(changed)
        })
    }

    /// Secrets that still sign at `now` (current first, then older by version, newest first).
    pub async fn live_secrets(&self, endpoint_id: &str, now: Millis) -> sqlx::Result<Vec<SecretRow>> {
        on_read!(self, |pool| sqlx::query_as::<_, SecretRow>(
            "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets \
             WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY version DESC"
        )
        .bind(endpoint_id)
        .bind(now)
        .fetch_all(pool)
        .await)
    }

    /// The public keys of an endpoint's live Ed25519 key versions, newest first.
    pub async fn endpoint_public_keys(&self, endpoint_id: &str, now: Millis) -> sqlx::Result<Vec<PublicKeyRow>> {
        on_read!(self, |pool| sqlx::query_as::<_, PublicKeyRow>(
            "SELECT endpoint_id, version, public_key, created_at, expires_at FROM endpoint_secrets \
             WHERE endpoint_id = $1 AND public_key IS NOT NULL AND (expires_at IS NULL OR expires_at > $2) \
             ORDER BY version DESC"
        )
        .bind(endpoint_id)
        .bind(now)
        .fetch_all(pool)
        .await)
    }

    /// The public keys of every live Ed25519 key version of an app's
    /// endpoints, by endpoint, newest first (the app's public-key document).
    pub async fn app_public_keys(&self, app_id: &str, now: Millis) -> sqlx::Result<Vec<PublicKeyRow>> {
        on_read!(self, |pool| sqlx::query_as::<_, PublicKeyRow>(
            "SELECT s.endpoint_id, s.version, s.public_key, s.created_at, s.expires_at \
             FROM endpoint_secrets s JOIN endpoints e ON e.id = s.endpoint_id \
             WHERE e.app_id = $1 AND s.public_key IS NOT NULL AND (s.expires_at IS NULL OR s.expires_at > $2) \
             ORDER BY s.endpoint_id, s.version DESC"
        )
        .bind(app_id)
        .bind(now)
        .fetch_all(pool)
        .await)
    }

    /// Every stored secret (for `fenix rekey`).
    pub async fn all_secrets(&self) -> sqlx::Result<Vec<SecretRow>> {
        on_write!(self, |pool| sqlx::query_as::<_, SecretRow>(
            "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets"
        )
        .fetch_all(pool)
        .await)
    }

    /// Replaces one secret version's sealed bytes (re-encryption under a new master key).
    pub async fn reseal_secret(&self, endpoint_id: &str, version: i64, sealed: &[u8]) -> sqlx::Result<()> {
        on_write!(self, |pool| sqlx::query(
            "UPDATE endpoint_secrets SET sealed = $3 WHERE endpoint_id = $1 AND version = $2"
        )
        .bind(endpoint_id)
        .bind(version)
        .bind(sealed)
        .execute(pool)
        .await
        .map(|_| ()))
    }

    /// Makes `sealed` the current secret: the previous current one (and any other
    /// still-live one) expires at `old_expires_at` at the latest, retired secrets
    /// are deleted, and at most `max_old` older secrets stay live. Returns the new version,
    /// or `RowNotFound` when the endpoint does not exist (any more).
    pub async fn rotate_secret(
        &self,
        endpoint_id: &str,
        sealed_for: impl Fn(i64) -> Vec<u8>,
        now: Millis,
        old_expires_at: Millis,
        max_old: i64,
    ) -> sqlx::Result<i64> {
        self.rotate_key(endpoint_id, sealed_for, (SigningAlgorithm::Hmac, None), now, old_expires_at, max_old).await
    }

    /// [`Store::rotate_secret`] to a key of any algorithm: `algorithm` (with
    /// the public key of an Ed25519 one) becomes the endpoint's
    /// `signing_algorithm` in the same transaction.
    pub async fn rotate_key(
        &self,
        endpoint_id: &str,
        sealed_for: impl Fn(i64) -> Vec<u8>,
        (algorithm, public_key): (SigningAlgorithm, Option<&str>),
        now: Millis,
        old_expires_at: Millis,
        max_old: i64,
    ) -> sqlx::Result<i64> {
        // Two rotations at once would both read the same latest version and
        // both insert the next one (a unique violation, answered 500): on
        // PostgreSQL the endpoint's row is locked first, so rotations of one
        // endpoint run one after the other; SQLite's write transaction
        // (`BEGIN IMMEDIATE`, one writer) serialises them already.
        let lock = if self.is_postgres() {
            "SELECT id FROM endpoints WHERE id = $1 FOR UPDATE"
        } else {
            "SELECT id FROM endpoints WHERE id = $1"
        };
        on_write!(self, |pool| {
            let mut tx = pool.begin_write().await?;
            // An endpoint deleted meanwhile is `RowNotFound` (the API's 404), not a foreign-key error.
            let _: String = sqlx::query_scalar(lock).bind(endpoint_id).fetch_one(&mut *tx).await?;
            let current: i64 =
                sqlx::query_scalar("SELECT COALESCE(MAX(version), 0) FROM endpoint_secrets WHERE endpoint_id = $1")
                    .bind(endpoint_id)
                    .fetch_one(&mut *tx)
                    .await?;
            sqlx::query(
                "UPDATE endpoint_secrets SET expires_at = $2 WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2)",
            )
            .bind(endpoint_id)
            .bind(old_expires_at)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM endpoint_secrets WHERE endpoint_id = $1 AND expires_at <= $2")
                .bind(endpoint_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "DELETE FROM endpoint_secrets WHERE endpoint_id = $1 AND version <= $2 - $3 AND expires_at IS NOT NULL",
            )
            .bind(endpoint_id)
            .bind(current)
            .bind(max_old)
            .execute(&mut *tx)
            .await?;
            let version = current + 1;
            sqlx::query(
                "INSERT INTO endpoint_secrets (endpoint_id, version, sealed, created_at, expires_at, public_key) \
                 VALUES ($1, $2, $3, $4, NULL, $5)",
            )
            .bind(endpoint_id)
            .bind(version)
            .bind(sealed_for(version))
            .bind(now)
            .bind(public_key)
            .execute(&mut *tx)
            .await?;
            sqlx::query("UPDATE endpoints SET signing_algorithm = $2 WHERE id = $1")
                .bind(endpoint_id)
                .bind(algorithm)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(version)
        })
    }
}

impl Store {
    /// Every endpoint's stored custom headers, for those that have any (for `fenix rekey`).
    pub async fn all_endpoint_headers(&self) -> sqlx::Result<Vec<(String, String)>> {
        on_write!(self, |pool| sqlx::query_as::<_, (String, String)>(
            "SELECT id, headers FROM endpoints WHERE headers <> '[]' ORDER BY id"
        )
        .fetch_all(pool)
        .await)
    }

    /// Replaces an endpoint's stored headers if they are still `old` (a change
    /// made meanwhile through the API wins: its values are sealed under the
    /// current key already). Answers whether the row was changed.
    pub async fn reseal_endpoint_headers(&self, endpoint_id: &str, old: &str, new: &str) -> sqlx::Result<bool> {
        on_write!(self, |pool| sqlx::query("UPDATE endpoints SET headers = $3 WHERE id = $1 AND headers = $2")
            .bind(endpoint_id)
            .bind(old)
            .bind(new)
            .execute(pool)
            .await
            .map(|r| r.rows_affected() > 0))
    }
}
