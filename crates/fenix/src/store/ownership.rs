//! Proof of endpoint ownership as stored: the `unverified` flag beside an
//! endpoint's state, and its open challenge (`endpoint_challenges`).
//!
//! A challenge is started in the same transaction that makes the endpoint
//! unverified (its creation, its URL change, `POST …/verify`), so no event is
//! ever sent to a URL nobody proved. Senders claim due challenges with a lease
//! (`lease_until`, `lease_token`) and write a result only while their token
//! still holds: several instances on one database send each attempt once,
//! and an attempt overtaken by a new challenge (a URL change) changes nothing.
//! Callers spend a challenge budget (`crate::send_budgets`) before they
//! start one; this file does not count them.

use crate::store::Result;
use std::collections::HashSet;

use super::{sql::Tx, Store};
use crate::{
    endpoint_spec::{EndpointSpec, SpecError, StoredSpec},
    lifecycle::EndpointState,
    time::Millis,
};

/// The state change logged when an endpoint starts waiting for its proof.
pub const PENDING_REASON: &str = "waiting for proof of ownership: a verification challenge was sent";
/// The state change logged when an endpoint answered its challenge.
pub const VERIFIED_REASON: &str = "ownership verified: the endpoint echoed its challenge";

/// A challenge to start, with the id of the state change it may log.
#[derive(Debug, Clone)]
pub struct NewChallenge {
    /// The random text the endpoint must echo.
    pub challenge: String,
    /// Id of the `endpoint_state_changes` row, if the endpoint's shown state changes.
    pub change_id: String,
}

/// An endpoint's open challenge as the API shows it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ChallengeRow {
    pub endpoint_id: crate::ids::EndpointId,
    pub attempts: i64,
    /// `None`: no attempt is coming; the challenge has expired.
    pub next_attempt_at: Option<Millis>,
    pub last_attempt_at: Option<Millis>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub last_error_detail: Option<String>,
    pub created_at: Millis,
}

/// A due challenge leased to one sender.
#[derive(Debug, Clone)]
pub struct ClaimedChallenge {
    pub endpoint_id: crate::ids::EndpointId,
    pub challenge: String,
    /// Attempts made before this one.
    pub attempts: i64,
    pub lease_token: i64,
    pub url: String,
    /// The endpoint's spec (its scheme, headers, timeout), decoded once
    /// here; an error when it cannot be read (that challenge alone fails).
    pub spec: Result<EndpointSpec, SpecError>,
}

/// [`ClaimedChallenge`] as [`CLAIMED`] reads it.
#[derive(sqlx::FromRow)]
struct StoredClaim {
    endpoint_id: crate::ids::EndpointId,
    challenge: String,
    attempts: i64,
    lease_token: i64,
    url: String,
    #[sqlx(flatten)]
    spec: StoredSpec,
}

impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for ClaimedChallenge
where
    StoredClaim: sqlx::FromRow<'r, R>,
{
    fn from_row(row: &'r R) -> sqlx::Result<Self> {
        let c = StoredClaim::from_row(row)?;
        let spec = c.spec.decode(c.endpoint_id.as_str());
        let StoredClaim { endpoint_id, challenge, attempts, lease_token, url, .. } = c;
        Ok(ClaimedChallenge { endpoint_id, challenge, attempts, lease_token, url, spec })
    }
}

/// How an attempt failed, as recorded.
#[derive(Debug, Clone)]
pub struct ChallengeFailure {
    pub status: Option<i64>,
    pub error: String,
    pub detail: String,
    /// The next attempt; `None` expires the challenge.
    pub next_attempt_at: Option<Millis>,
}

/// Creates or replaces an endpoint's challenge: due now, no attempt made, no lease.
pub(super) const UPSERT_CHALLENGE: &str = "INSERT INTO endpoint_challenges \
     (endpoint_id, challenge, attempts, next_attempt_at, lease_until, lease_token, last_attempt_at, last_status, \
     last_error, last_error_detail, created_at) VALUES ($1, $2, 0, $3, NULL, NULL, NULL, NULL, NULL, NULL, $3) \
     ON CONFLICT (endpoint_id) DO UPDATE SET challenge = excluded.challenge, attempts = 0, \
     next_attempt_at = excluded.next_attempt_at, lease_until = NULL, lease_token = NULL, last_attempt_at = NULL, \
     last_status = NULL, last_error = NULL, last_error_detail = NULL, created_at = excluded.created_at";

/// Makes an endpoint unverified; answers its stored state and whether it was
/// verified until now (PostgreSQL locks the row; SQLite's writer is alone).
pub(super) const MARK_UNVERIFIED: &str = "UPDATE endpoints SET unverified = TRUE, updated_at = $2, \
     state_reason = CASE WHEN state = 'active' AND NOT unverified THEN $3 ELSE state_reason END, \
     state_changed_at = CASE WHEN state = 'active' AND NOT unverified THEN $2 ELSE state_changed_at END \
     WHERE id = $1";

pub(super) const READ_VERIFICATION: &str = "SELECT state, unverified FROM endpoints WHERE id = $1";

pub(super) const LOG_STATE_CHANGE: &str =
    "INSERT INTO endpoint_state_changes (id, endpoint_id, state, reason, created_at) VALUES ($1, $2, $3, $4, $5)";

/// Makes endpoint `id` unverified with the challenge `c`, inside the write
/// transaction `tx`, logging `pending_verification` when its shown state
/// changes. False when the endpoint does not exist. Written once for both
/// backends: the statements are the same text on each.
pub(super) async fn start_challenge_in(
    tx: &mut Tx<'_>,
    id: &crate::ids::EndpointId,
    c: &NewChallenge,
    now: Millis,
) -> Result<bool> {
    let before: Option<(EndpointState, bool)> = tx.fetch_optional(READ_VERIFICATION, &[id.into()]).await?;
    let Some((state, unverified)) = before else { return Ok(false) };
    tx.execute(MARK_UNVERIFIED, &[id.into(), now.into(), PENDING_REASON.into()]).await?;
    tx.execute(UPSERT_CHALLENGE, &[id.into(), (&c.challenge).into(), now.into()]).await?;
    if state == EndpointState::Active && !unverified {
        let values = [
            (&c.change_id).into(),
            id.into(),
            EndpointState::PendingVerification.into(),
            PENDING_REASON.into(),
            now.into(),
        ];
        tx.execute(LOG_STATE_CHANGE, &values).await?;
    }
    Ok(true)
}

/// Leases up to `$4` due challenges of active endpoints. The lease conditions
/// are repeated in the outer `WHERE`: on PostgreSQL a second instance that
/// selected the same row re-checks them on the row the first one updated, and
/// claims nothing.
const CLAIM: &str = "UPDATE endpoint_challenges SET lease_until = $2, lease_token = $3 \
     WHERE endpoint_id IN (SELECT c.endpoint_id FROM endpoint_challenges c JOIN endpoints e ON e.id = c.endpoint_id \
         WHERE c.next_attempt_at <= $1 AND (c.lease_until IS NULL OR c.lease_until < $1) AND e.state = 'active' \
         ORDER BY c.next_attempt_at LIMIT $4) \
     AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until < $1) \
     RETURNING endpoint_id";

/// A claimed challenge with its endpoint's URL and spec (the spec's columns,
/// `endpoint_spec::SPEC_COLUMNS`, are the endpoint's: no challenge column has their names).
const CLAIMED: &str = "SELECT c.endpoint_id, c.challenge, c.attempts, c.lease_token, e.url, \
     signature_scheme, signing_algorithm, event_types, headers, retry_schedule, \
     final_status_codes, attempt_timeout_ms, ordered, on_dead_letter, rate_limit_per_sec, tls, auth, channels, transformation, filter \
     FROM endpoint_challenges c JOIN endpoints e ON e.id = c.endpoint_id \
     WHERE c.endpoint_id = $1 AND c.lease_token = $2";

impl Store {
    /// Makes the endpoint unverified with a new challenge, due now (a new
    /// one replaces an open or expired one). False when it does not exist.
    pub async fn start_challenge(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        c: &NewChallenge,
        now: Millis,
    ) -> Result<bool> {
        let mut tx = self.writes().begin_write().await?;
        if !start_challenge_in(&mut tx, endpoint_id, c, now).await? {
            return Ok(false);
        }
        tx.commit().await?;
        Ok(true)
    }

    /// The endpoint's open (or expired) challenge, if it has one.
    pub async fn get_challenge(&self, endpoint_id: &crate::ids::EndpointId) -> Result<Option<ChallengeRow>> {
        let sql = "SELECT endpoint_id, attempts, next_attempt_at, last_attempt_at, last_status, last_error, \
             last_error_detail, created_at FROM endpoint_challenges WHERE endpoint_id = $1";
        self.reads().fetch_optional(sql, &[endpoint_id.into()]).await
    }

    /// Leases up to `limit` due challenges (of endpoints stored `active`: a
    /// paused or disabled endpoint is sent nothing, its challenge waits) with
    /// `token` until `lease_until`.
    pub async fn claim_challenges(
        &self,
        now: Millis,
        lease_until: Millis,
        token: i64,
        limit: i64,
    ) -> Result<Vec<ClaimedChallenge>> {
        let mut tx = self.writes().begin_write().await?;
        let ids: Vec<String> =
            tx.scalar_all(CLAIM, &[now.into(), lease_until.into(), token.into(), limit.into()]).await?;
        let mut claimed = Vec::with_capacity(ids.len());
        for id in &ids {
            let row: Option<ClaimedChallenge> = tx.fetch_optional(CLAIMED, &[id.into(), token.into()]).await?;
            claimed.push(row.ok_or(crate::store::Error::NotFound)?);
        }
        tx.commit().await?;
        Ok(claimed)
    }

    /// The endpoint echoed `challenge`: it is verified (logged `active`) and
    /// its challenge is gone, if the lease `token` still holds and the
    /// challenge is still the open one. Answers whether it did.
    pub async fn challenge_answered(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        challenge: &str,
        token: i64,
        change_id: &str,
        now: Millis,
    ) -> Result<bool> {
        let mut tx = self.writes().begin_write().await?;
        let sql = "DELETE FROM endpoint_challenges WHERE endpoint_id = $1 AND lease_token = $2 AND challenge = $3";
        if tx.execute(sql, &[endpoint_id.into(), token.into(), challenge.into()]).await? == 0 {
            return Ok(false);
        }
        let state: EndpointState =
            tx.scalar("SELECT state FROM endpoints WHERE id = $1", &[endpoint_id.into()]).await?;
        let sql = "UPDATE endpoints SET unverified = FALSE, updated_at = $2, \
             state_reason = CASE WHEN state = 'active' THEN $3 ELSE state_reason END, \
             state_changed_at = CASE WHEN state = 'active' THEN $2 ELSE state_changed_at END WHERE id = $1";
        tx.execute(sql, &[endpoint_id.into(), now.into(), VERIFIED_REASON.into()]).await?;
        if state == EndpointState::Active {
            let values = [
                change_id.into(),
                endpoint_id.into(),
                EndpointState::Active.into(),
                VERIFIED_REASON.into(),
                now.into(),
            ];
            tx.execute(LOG_STATE_CHANGE, &values).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Records a failed attempt and when the next one goes (none: expired),
    /// if the lease `token` still holds.
    pub async fn challenge_failed(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        token: i64,
        f: &ChallengeFailure,
        now: Millis,
    ) -> Result<bool> {
        let sql = "UPDATE endpoint_challenges SET attempts = attempts + 1, last_attempt_at = $3, last_status = $4, \
             last_error = $5, last_error_detail = $6, next_attempt_at = $7, lease_until = NULL, lease_token = NULL \
             WHERE endpoint_id = $1 AND lease_token = $2";
        let values = [
            endpoint_id.into(),
            token.into(),
            now.into(),
            f.status.into(),
            (&f.error).into(),
            (&f.detail).into(),
            f.next_attempt_at.into(),
        ];
        Ok(self.writes().execute(sql, &values).await? > 0)
    }

    /// Whether the app asks its endpoints for proof of ownership (false for an unknown app).
    pub async fn app_requires_verification(&self, app_id: &crate::ids::AppId) -> Result<bool> {
        Ok(self.apps_requiring_verification(app_id.as_str(), app_id.as_str()).await?.contains(app_id.as_str()))
    }

    /// The apps with ids from `low` to `high` (both included) that ask for
    /// proof of ownership: one read for a page of apps.
    pub async fn apps_requiring_verification(&self, low: &str, high: &str) -> Result<HashSet<String>> {
        let sql = "SELECT id FROM apps WHERE require_endpoint_verification AND id >= $1 AND id <= $2";
        let ids: Vec<String> = self.reads().scalar_all(sql, &[low.into(), high.into()]).await?;
        Ok(ids.into_iter().collect())
    }

    /// Sets the app's own opt-in; false when the app does not exist.
    pub async fn set_app_requires_verification(&self, app_id: &crate::ids::AppId, on: bool) -> Result<bool> {
        let sql = "UPDATE apps SET require_endpoint_verification = $2 WHERE id = $1";
        Ok(self.writes().execute(sql, &[app_id.into(), on.into()]).await? > 0)
    }

    /// When the next challenge attempt is due (leased ones included: their lease's end).
    pub async fn next_challenge_due(&self) -> Result<Option<Millis>> {
        let sql = "SELECT MIN(CASE WHEN lease_until IS NOT NULL AND lease_until > next_attempt_at THEN lease_until \
             ELSE next_attempt_at END) FROM endpoint_challenges WHERE next_attempt_at IS NOT NULL";
        self.reads().scalar(sql, &[]).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_worker_reads_the_shown_endpoint_state() {
        assert!(super::super::queue::TARGET_COLUMNS.contains(crate::lifecycle::SHOWN_ENDPOINT_STATE_SQL));
    }

    #[test]
    fn a_claimed_challenge_reads_its_endpoints_spec() {
        assert!(super::CLAIMED.contains(&format!("{} FROM", crate::endpoint_spec::SPEC_COLUMNS)));
    }

    #[test]
    fn the_api_reads_the_shown_endpoint_state() {
        let columns = super::super::endpoints::shown_columns();
        assert!(columns.contains(&format!("{} AS state,", crate::lifecycle::SHOWN_ENDPOINT_STATE_SQL)), "{columns}");
    }
}
