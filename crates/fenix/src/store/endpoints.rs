//! Endpoints and their sealed signing secrets. An endpoint's spec is
//! written and read through `endpoint_spec` ([`EndpointSpec::stored`],
//! [`StoredSpec::decode`]).

use std::time::Duration;

use super::{
    apps::CURSOR_END,
    ownership::{start_challenge_in, NewChallenge},
    sql::Tx,
    Conflicts, Store,
};
use crate::store::{Error, Result};
use crate::{
    endpoint_policy::StoredHeaders,
    endpoint_spec::{self, EndpointSpec, StoredSpec},
    event_types::EventTypeFilter,
    lifecycle::{EndpointState, OnDeadLetter, SigningAlgorithm, SHOWN_ENDPOINT_STATE_SQL},
    time::Millis,
};

/// An endpoint as stored, its spec decoded ([`StoredSpec::decode`]): a
/// stored spec value the code does not understand fails the read with an
/// error naming the endpoint (a decode error: the store's internal error).
#[derive(Debug, Clone)]
pub struct EndpointRow {
    pub id: crate::ids::EndpointId,
    pub app_id: crate::ids::AppId,
    pub url: String,
    pub description: String,
    pub state: EndpointState,
    pub state_reason: Option<String>,
    pub state_changed_at: Option<Millis>,
    pub created_at: Millis,
    pub updated_at: Millis,
    /// How Fenix sends to it, as its owner chose.
    pub spec: EndpointSpec,
}

/// [`EndpointRow`] as its columns hold it.
#[derive(sqlx::FromRow)]
struct StoredEndpoint {
    id: crate::ids::EndpointId,
    app_id: crate::ids::AppId,
    url: String,
    description: String,
    state: EndpointState,
    state_reason: Option<String>,
    state_changed_at: Option<Millis>,
    created_at: Millis,
    updated_at: Millis,
    #[sqlx(flatten)]
    spec: StoredSpec,
}

impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for EndpointRow
where
    StoredEndpoint: sqlx::FromRow<'r, R>,
{
    fn from_row(row: &'r R) -> sqlx::Result<Self> {
        let r = StoredEndpoint::from_row(row)?;
        let spec = r.spec.decode(r.id.as_str()).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        Ok(EndpointRow {
            id: r.id,
            app_id: r.app_id,
            url: r.url,
            description: r.description,
            state: r.state,
            state_reason: r.state_reason,
            state_changed_at: r.state_changed_at,
            created_at: r.created_at,
            updated_at: r.updated_at,
            spec,
        })
    }
}

/// The columns of [`EndpointRow`]: its own, then [`SPEC_COLUMNS`].
const ENDPOINT_COLUMNS: &str = "id, app_id, url, description, state, state_reason, state_changed_at, created_at, \
     updated_at, signature_scheme, signing_algorithm, event_types, headers, retry_schedule, \
     final_status_codes, attempt_timeout_ms, ordered, on_dead_letter, rate_limit_per_sec, tls, auth, channels, transformation, filter";

/// Inserts an endpoint: one value for each of [`ENDPOINT_COLUMNS`].
static INSERT_ENDPOINT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT INTO endpoints ({ENDPOINT_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)"
    )
});

/// Writes `new`'s row and its first secret (version 1) in `tx`.
async fn insert_new_endpoint(tx: &mut Tx<'_>, new: &NewEndpoint) -> Result<()> {
    let r = &new.row;
    let spec = r.spec.stored();
    let values = [
        (&r.id).into(),
        (&r.app_id).into(),
        (&r.url).into(),
        (&r.description).into(),
        r.state.into(),
        (&r.state_reason).into(),
        r.state_changed_at.into(),
        r.created_at.into(),
        r.updated_at.into(),
        (&spec.signature_scheme).into(),
        (&spec.signing_algorithm).into(),
        (&spec.event_types).into(),
        (&spec.headers).into(),
        (&spec.retry_schedule).into(),
        (&spec.final_status_codes).into(),
        spec.attempt_timeout_ms.into(),
        spec.ordered.into(),
        (&spec.on_dead_letter).into(),
        spec.rate_limit_per_sec.into(),
        (&spec.tls).into(),
        (&spec.auth).into(),
        (&spec.channels).into(),
        (&spec.transformation).into(),
        (&spec.filter).into(),
    ];
    tx.execute(&INSERT_ENDPOINT, &values).await?;
    let sql = "INSERT INTO endpoint_secrets (endpoint_id, version, sealed, created_at, expires_at, public_key) \
         VALUES ($1, 1, $2, $3, NULL, $4)";
    let values = [(&r.id).into(), (&new.sealed_secret).into(), r.created_at.into(), (&new.public_key).into()];
    tx.execute(sql, &values).await?;
    Ok(())
}

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
     ordered = COALESCE($15, ordered), on_dead_letter = COALESCE($16, on_dead_letter), \
     tls = CASE WHEN $17 = 1 THEN $18 ELSE tls END, \
     auth = CASE WHEN $19 = 1 THEN $20 ELSE auth END, \
     channels = COALESCE($21, channels), \
     transformation = CASE WHEN $22 = 1 THEN $23 ELSE transformation END, \
     filter = CASE WHEN $24 = 1 THEN $25 ELSE filter END \
     WHERE id = $1 AND app_id = $2";

/// A new endpoint with its first secret, already sealed.
#[derive(Debug)]
pub struct NewEndpoint {
    pub row: EndpointRow,
    pub sealed_secret: Vec<u8>,
    /// `whpk_…` when the first key is Ed25519.
    pub public_key: Option<String>,
}

/// Changes to an endpoint; `None` leaves a field as it is. The spec's
/// fields are written in their stored form (`endpoint_spec`).
#[derive(Debug, Default)]
pub struct EndpointPatch {
    pub url: Option<String>,
    pub description: Option<String>,
    pub event_types: Option<EventTypeFilter>,
    pub rate_limit_per_sec: Option<Option<i64>>,
    pub headers: Option<StoredHeaders>,
    pub retry_schedule: Option<Option<Vec<Duration>>>,
    pub final_status_codes: Option<Vec<u16>>,
    pub attempt_timeout: Option<Option<Duration>>,
    pub ordered: Option<bool>,
    pub on_dead_letter: Option<OnDeadLetter>,
    /// `Some(None)`: no TLS material any more; `Some(Some(_))`: replaced whole.
    pub tls: Option<Option<crate::endpoint_tls::EndpointTls>>,
    /// OAuth2 client credentials; `Some(None)` removes them.
    pub auth: Option<Option<crate::oauth::spec::EndpointAuth>>,
    /// The channels, replaced whole (`[]`: every event).
    pub channels: Option<Vec<String>>,
    /// The transformation's script; `Some(None)` removes it.
    pub transformation: Option<Option<std::sync::Arc<str>>>,
    /// The content filter's checked text; `Some(None)` removes it.
    pub filter: Option<Option<String>>,
    /// With a new `url` when ownership must be proved: the endpoint becomes
    /// unverified with this challenge in the same transaction.
    pub challenge: Option<NewChallenge>,
}

/// One sealed secret version.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SecretRow {
    pub endpoint_id: crate::ids::EndpointId,
    pub version: i64,
    pub sealed: Vec<u8>,
    pub created_at: Millis,
    pub expires_at: Option<Millis>,
}

/// One live Ed25519 key version's public half: what receivers may read.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PublicKeyRow {
    pub endpoint_id: crate::ids::EndpointId,
    pub version: i64,
    /// `whpk_…`.
    pub public_key: String,
    pub created_at: Millis,
    /// `None` until a rotation retires it.
    pub expires_at: Option<Millis>,
}

impl Store {
    /// Inserts the endpoint and its secret version 1 in one transaction, with no limit.
    pub async fn insert_endpoint(&self, new: &NewEndpoint) -> Result<()> {
        self.insert_endpoint_within(new, i64::MAX).await.map(|_| ())
    }

    /// Inserts the endpoint and its secret version 1 in one transaction, unless
    /// its app already has `max_per_app` endpoints (then `Ok(false)`, nothing stored).
    /// Concurrent creates for one app are serialised, so they cannot overshoot
    /// the limit: on PostgreSQL by locking the app's row before counting, on
    /// SQLite by the write transaction (`BEGIN IMMEDIATE`, one writer).
    pub async fn insert_endpoint_within(&self, new: &NewEndpoint, max_per_app: i64) -> Result<bool> {
        self.insert_endpoint_challenged(new, max_per_app, None).await
    }

    /// As [`Store::insert_endpoint_within`]; with a `challenge`, the endpoint
    /// is stored unverified with it (it is never sent an event before it answers).
    ///
    /// An app that is gone (deleted before, or while this waited for its
    /// row) is `Err(Error::NotFound)`, nothing stored: the app's row
    /// is locked first (the store's lock order), `FOR NO KEY UPDATE` on
    /// PostgreSQL, which creations of the app's endpoints wait on and its
    /// ingestion does not.
    pub async fn insert_endpoint_challenged(
        &self,
        new: &NewEndpoint,
        max_per_app: i64,
        challenge: Option<&NewChallenge>,
    ) -> Result<bool> {
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
    ) -> Result<bool> {
        let r = &new.row;
        let lock_app = if self.is_postgres() {
            "SELECT id FROM apps WHERE id = $1 FOR NO KEY UPDATE"
        } else {
            "SELECT id FROM apps WHERE id = $1"
        };
        let mut tx = self.writes().begin_write().await?;
        let app: Option<String> = tx.scalar_optional(lock_app, &[(&r.app_id).into()]).await?;
        if app.is_none() {
            tx.rollback().await?;
            return Err(Error::NotFound);
        }
        let count: i64 = tx.scalar("SELECT COUNT(*) FROM endpoints WHERE app_id = $1", &[(&r.app_id).into()]).await?;
        if count >= max_per_app {
            tx.rollback().await?;
            return Ok(false);
        }
        insert_new_endpoint(&mut tx, new).await?;
        if let Some(c) = challenge {
            start_challenge_in(&mut tx, &r.id, c, r.created_at).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// One endpoint of one app.
    pub async fn get_endpoint(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::EndpointId,
    ) -> Result<Option<EndpointRow>> {
        let sql = format!("SELECT {} FROM endpoints WHERE id = $1 AND app_id = $2", shown_columns());
        self.reads().fetch_optional(&sql, &[id.into(), app_id.into()]).await
    }

    /// An app's endpoints, newest first, strictly before `cursor`.
    pub async fn list_endpoints(
        &self,
        app_id: &crate::ids::AppId,
        cursor: Option<&str>,
        limit: i64,
    ) -> Result<Vec<EndpointRow>> {
        let sql = format!(
            "SELECT {} FROM endpoints WHERE app_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
            shown_columns()
        );
        self.reads().fetch_all(&sql, &[app_id.into(), cursor.unwrap_or(CURSOR_END).into(), limit.into()]).await
    }

    /// Applies a patch; returns false when the endpoint does not exist.
    pub async fn update_endpoint(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::EndpointId,
        p: &EndpointPatch,
        now: Millis,
    ) -> Result<bool> {
        // The spec's fields in their stored form (`endpoint_spec`), each
        // `None` when left as it is; a nullable one with its "set" flag.
        let event_types = p.event_types.as_ref().map(EventTypeFilter::to_json);
        let channels = p.channels.as_deref().map(crate::labels::to_json);
        let headers = p.headers.as_ref().map(StoredHeaders::to_json);
        let final_codes = p.final_status_codes.as_deref().map(endpoint_spec::final_codes_column);
        let flagged = |set: bool| i64::from(set);
        let (set_rate, rate) = (flagged(p.rate_limit_per_sec.is_some()), p.rate_limit_per_sec.flatten());
        let (set_schedule, schedule) = (
            flagged(p.retry_schedule.is_some()),
            p.retry_schedule.as_ref().and_then(|s| s.as_deref().map(endpoint_spec::schedule_column)),
        );
        let (set_tls, tls) = (flagged(p.tls.is_some()), p.tls.as_ref().and_then(|t| t.as_ref().map(|t| t.to_json())));
        let (set_auth, auth) =
            (flagged(p.auth.is_some()), p.auth.as_ref().and_then(|a| a.as_ref().map(|a| a.to_json())));
        let (set_timeout, timeout) =
            (flagged(p.attempt_timeout.is_some()), p.attempt_timeout.flatten().map(endpoint_spec::timeout_column));
        let values = [
            id.into(),
            app_id.into(),
            (&p.url).into(),
            (&p.description).into(),
            (&event_types).into(),
            set_rate.into(),
            rate.into(),
            now.into(),
            (&headers).into(),
            set_schedule.into(),
            (&schedule).into(),
            (&final_codes).into(),
            set_timeout.into(),
            timeout.into(),
            p.ordered.into(),
            p.on_dead_letter.map(OnDeadLetter::as_str).into(),
            set_tls.into(),
            (&tls).into(),
            set_auth.into(),
            (&auth).into(),
            (&channels).into(),
            flagged(p.transformation.is_some()).into(),
            p.transformation.as_ref().and_then(|t| t.as_deref()).into(),
            flagged(p.filter.is_some()).into(),
            p.filter.as_ref().and_then(|f| f.as_deref()).into(),
        ];
        let mut tx = self.writes().begin_write().await?;
        let changed = tx.execute(UPDATE_ENDPOINT, &values).await? > 0;
        if let (true, Some(_), Some(c)) = (changed, &p.url, &p.challenge) {
            start_challenge_in(&mut tx, id, c, now).await?;
        }
        tx.commit().await?;
        Ok(changed)
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
    pub async fn delete_endpoint(&self, app_id: &crate::ids::AppId, id: &crate::ids::EndpointId) -> Result<bool> {
        let mut conflicts = Conflicts::default();
        loop {
            match self.delete_endpoint_once(app_id, id).await {
                Err(e) if conflicts.again(&e).await => {}
                done => return done,
            }
        }
    }

    async fn delete_endpoint_once(&self, app_id: &crate::ids::AppId, id: &crate::ids::EndpointId) -> Result<bool> {
        let lock_app = if self.is_postgres() {
            "SELECT id FROM apps WHERE id = $1 FOR KEY SHARE"
        } else {
            "SELECT id FROM apps WHERE id = $1"
        };
        let mut tx = self.writes().begin_write().await?;
        let _: Option<String> = tx.scalar_optional(lock_app, &[app_id.into()]).await?;
        let sql = "DELETE FROM endpoints WHERE id = $1 AND app_id = $2";
        let deleted = tx.execute(sql, &[id.into(), app_id.into()]).await? > 0;
        if deleted {
            tx.execute("DELETE FROM deliveries WHERE endpoint_id = $1", &[id.into()]).await?;
        }
        tx.commit().await?;
        Ok(deleted)
    }

    /// Sets an endpoint's state and records why (paused by an operator, disabled after a 410, …).
    pub async fn set_endpoint_state(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        state: EndpointState,
        reason: &str,
        change_id: &str,
        now: Millis,
    ) -> Result<bool> {
        let mut tx = self.writes().begin_write().await?;
        let sql = "UPDATE endpoints SET state = $2, state_reason = $3, state_changed_at = $4, updated_at = $4, \
             failing_since = CASE WHEN $2 = 'active' THEN NULL ELSE failing_since END \
             WHERE id = $1 AND state <> $2";
        let changed = tx.execute(sql, &[endpoint_id.into(), state.into(), reason.into(), now.into()]).await? > 0;
        if changed {
            let values = [change_id.into(), endpoint_id.into(), state.into(), reason.into(), now.into()];
            tx.execute(super::ownership::LOG_STATE_CHANGE, &values).await?;
        }
        tx.commit().await?;
        Ok(changed)
    }

    /// Secrets that still sign at `now` (current first, then older by version, newest first).
    pub async fn live_secrets(&self, endpoint_id: &crate::ids::EndpointId, now: Millis) -> Result<Vec<SecretRow>> {
        let sql = "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets \
             WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2) ORDER BY version DESC";
        self.reads().fetch_all(sql, &[endpoint_id.into(), now.into()]).await
    }

    /// The public keys of an endpoint's live Ed25519 key versions, newest first.
    pub async fn endpoint_public_keys(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        now: Millis,
    ) -> Result<Vec<PublicKeyRow>> {
        let sql = "SELECT endpoint_id, version, public_key, created_at, expires_at FROM endpoint_secrets \
             WHERE endpoint_id = $1 AND public_key IS NOT NULL AND (expires_at IS NULL OR expires_at > $2) \
             ORDER BY version DESC";
        self.reads().fetch_all(sql, &[endpoint_id.into(), now.into()]).await
    }

    /// The public keys of every live Ed25519 key version of an app's
    /// endpoints, by endpoint, newest first (the app's public-key document).
    pub async fn app_public_keys(&self, app_id: &crate::ids::AppId, now: Millis) -> Result<Vec<PublicKeyRow>> {
        let sql = "SELECT s.endpoint_id, s.version, s.public_key, s.created_at, s.expires_at \
             FROM endpoint_secrets s JOIN endpoints e ON e.id = s.endpoint_id \
             WHERE e.app_id = $1 AND s.public_key IS NOT NULL AND (s.expires_at IS NULL OR s.expires_at > $2) \
             ORDER BY s.endpoint_id, s.version DESC";
        self.reads().fetch_all(sql, &[app_id.into(), now.into()]).await
    }

    /// Every stored secret (for `fenix rekey`).
    pub async fn all_secrets(&self) -> Result<Vec<SecretRow>> {
        let sql = "SELECT endpoint_id, version, sealed, created_at, expires_at FROM endpoint_secrets";
        self.writes().fetch_all(sql, &[]).await
    }

    /// Replaces one secret version's sealed bytes (re-encryption under a new master key).
    pub async fn reseal_secret(&self, endpoint_id: &crate::ids::EndpointId, version: i64, sealed: &[u8]) -> Result<()> {
        let sql = "UPDATE endpoint_secrets SET sealed = $3 WHERE endpoint_id = $1 AND version = $2";
        self.writes().execute(sql, &[endpoint_id.into(), version.into(), sealed.into()]).await.map(|_| ())
    }

    /// Makes `sealed` the current secret: the previous current one (and any other
    /// still-live one) expires at `old_expires_at` at the latest, retired secrets
    /// are deleted, and at most `max_old` older secrets stay live. Returns the new version,
    /// or `RowNotFound` when the endpoint does not exist (any more).
    pub async fn rotate_secret(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        sealed_for: impl Fn(i64) -> Vec<u8>,
        now: Millis,
        old_expires_at: Millis,
        max_old: i64,
    ) -> Result<i64> {
        self.rotate_key(endpoint_id, sealed_for, (SigningAlgorithm::Hmac, None), now, old_expires_at, max_old).await
    }

    /// [`Store::rotate_secret`] to a key of any algorithm: `algorithm` (with
    /// the public key of an Ed25519 one) becomes the endpoint's
    /// `signing_algorithm` in the same transaction.
    pub async fn rotate_key(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        sealed_for: impl Fn(i64) -> Vec<u8>,
        (algorithm, public_key): (SigningAlgorithm, Option<&str>),
        now: Millis,
        old_expires_at: Millis,
        max_old: i64,
    ) -> Result<i64> {
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
        let mut tx = self.writes().begin_write().await?;
        // An endpoint deleted meanwhile is `NotFound` (the API's 404), not a foreign-key error.
        let _: String = tx.scalar(lock, &[endpoint_id.into()]).await?;
        let sql = "SELECT COALESCE(MAX(version), 0) FROM endpoint_secrets WHERE endpoint_id = $1";
        let current: i64 = tx.scalar(sql, &[endpoint_id.into()]).await?;
        let sql = "UPDATE endpoint_secrets SET expires_at = $2 \
             WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > $2)";
        tx.execute(sql, &[endpoint_id.into(), old_expires_at.into()]).await?;
        let sql = "DELETE FROM endpoint_secrets WHERE endpoint_id = $1 AND expires_at <= $2";
        tx.execute(sql, &[endpoint_id.into(), now.into()]).await?;
        let sql =
            "DELETE FROM endpoint_secrets WHERE endpoint_id = $1 AND version <= $2 - $3 AND expires_at IS NOT NULL";
        tx.execute(sql, &[endpoint_id.into(), current.into(), max_old.into()]).await?;
        let version = current + 1;
        let sealed = sealed_for(version);
        let sql = "INSERT INTO endpoint_secrets (endpoint_id, version, sealed, created_at, expires_at, public_key) \
             VALUES ($1, $2, $3, $4, NULL, $5)";
        tx.execute(sql, &[endpoint_id.into(), version.into(), (&sealed).into(), now.into(), public_key.into()]).await?;
        let sql = "UPDATE endpoints SET signing_algorithm = $2 WHERE id = $1";
        tx.execute(sql, &[endpoint_id.into(), algorithm.into()]).await?;
        tx.commit().await?;
        Ok(version)
    }
}

impl Store {
    /// Every endpoint's stored custom headers, for those that have any (for `fenix rekey`).
    pub async fn all_endpoint_headers(&self) -> Result<Vec<(crate::ids::EndpointId, String)>> {
        let sql = "SELECT id, headers FROM endpoints WHERE headers <> '[]' ORDER BY id";
        self.writes().fetch_all(sql, &[]).await
    }

    /// Replaces an endpoint's stored headers if they are still `old` (a change
    /// made meanwhile through the API wins: its values are sealed under the
    /// current key already). Answers whether the row was changed.
    pub async fn reseal_endpoint_headers(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        old: &str,
        new: &str,
    ) -> Result<bool> {
        let sql = "UPDATE endpoints SET headers = $3 WHERE id = $1 AND headers = $2";
        Ok(self.writes().execute(sql, &[endpoint_id.into(), old.into(), new.into()]).await? > 0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_endpoints_columns_end_with_its_spec() {
        assert!(super::ENDPOINT_COLUMNS.ends_with(crate::endpoint_spec::SPEC_COLUMNS));
    }
}
