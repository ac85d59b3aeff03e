//! OAuth2 access tokens shared by every instance (`oauth_tokens`, one row per
//! endpoint), sealed, and the endpoints' `auth` column for `fenix rekey`.
//! The token cache (`crate::oauth::cache`) reads and writes them.

use super::{Result, Store};
use crate::{ids::EndpointId, time::Millis};

/// One endpoint's shared token, sealed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TokenRow {
    /// Random: names this token, so a `401` drops this one and not a newer.
    pub token_id: String,
    /// The token, sealed for the endpoint.
    pub access_token_sealed: Vec<u8>,
    /// Unix milliseconds; not used from then on.
    pub use_until: Millis,
}

/// A row as `fenix rekey` reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SealedTokenRow {
    pub endpoint_id: EndpointId,
    pub token_id: String,
    pub access_token_sealed: Vec<u8>,
}

impl Store {
    /// The token of endpoint `id` fetched with the option `fingerprint`
    /// names, while it may still be used at `now`.
    pub async fn oauth_token(&self, id: &EndpointId, fingerprint: &str, now: Millis) -> Result<Option<TokenRow>> {
        let sql = "SELECT token_id, access_token_sealed, use_until FROM oauth_tokens \
             WHERE endpoint_id = $1 AND fingerprint = $2 AND use_until > $3";
        self.reads().fetch_optional(sql, &[id.into(), fingerprint.into(), now.into()]).await
    }

    /// Stores a fresh token for endpoint `id` in place of any other (an
    /// endpoint deleted meanwhile stores nothing).
    pub async fn put_oauth_token(&self, id: &EndpointId, fingerprint: &str, row: &TokenRow, now: Millis) -> Result<()> {
        let sql = "INSERT INTO oauth_tokens (endpoint_id, fingerprint, token_id, access_token_sealed, use_until, fetched_at) \
             SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM endpoints WHERE id = $1) \
             ON CONFLICT (endpoint_id) DO UPDATE SET fingerprint = excluded.fingerprint, token_id = excluded.token_id, \
             access_token_sealed = excluded.access_token_sealed, use_until = excluded.use_until, \
             fetched_at = excluded.fetched_at";
        let values = [
            id.into(),
            fingerprint.into(),
            (&row.token_id).into(),
            (&row.access_token_sealed).into(),
            row.use_until.into(),
            now.into(),
        ];
        self.writes().execute(sql, &values).await.map(|_| ())
    }

    /// Drops token `token_id` of endpoint `id` (a receiver refused it); a
    /// newer one another instance stored meanwhile stays.
    pub async fn drop_oauth_token(&self, id: &EndpointId, token_id: &str) -> Result<()> {
        let sql = "DELETE FROM oauth_tokens WHERE endpoint_id = $1 AND token_id = $2";
        self.writes().execute(sql, &[id.into(), token_id.into()]).await.map(|_| ())
    }

    /// Every stored token, for `fenix rekey`.
    pub async fn all_oauth_tokens(&self) -> Result<Vec<SealedTokenRow>> {
        let sql = "SELECT endpoint_id, token_id, access_token_sealed FROM oauth_tokens ORDER BY endpoint_id";
        self.writes().fetch_all(sql, &[]).await
    }

    /// Every endpoint's `auth` column that is set, for `fenix rekey`.
    pub async fn all_endpoint_auth(&self) -> Result<Vec<(EndpointId, String)>> {
        let sql = "SELECT id, auth FROM endpoints WHERE auth IS NOT NULL ORDER BY id";
        self.writes().fetch_all(sql, &[]).await
    }

    /// Replaces endpoint `id`'s `auth` if it still reads `old` (a change
    /// through the API meanwhile wins); answers whether it did.
    pub async fn reseal_endpoint_auth(&self, id: &EndpointId, old: &str, new: &str) -> Result<bool> {
        let sql = "UPDATE endpoints SET auth = $3 WHERE id = $1 AND auth = $2";
        Ok(self.writes().execute(sql, &[id.into(), old.into(), new.into()]).await? > 0)
    }
}
