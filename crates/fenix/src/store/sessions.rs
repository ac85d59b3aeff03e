//! Console sessions: operators' sessions and portal links with the sessions
//! made from them (table `console_sessions`, migration 0006).
//!
//! Only SHA-256 digests of the link and session secrets reach the database.
//! The one rule that must hold across instances, "a link is exchanged once",
//! is a single `UPDATE … WHERE used_at IS NULL`: on PostgreSQL a second
//! exchange racing the first waits for its row lock, then re-reads the row,
//! finds `used_at` set and updates nothing; on SQLite the one writer takes
//! them in turn.

use super::Store;
use crate::store::Result;
use crate::{
    access::Access,
    ids::{AppId, ConsoleSessionId, PortalSessionId, TokenId},
    time::Millis,
};

/// How long rows stay after they expired (listed as expired), before they are purged.
const KEPT_AFTER_EXPIRY_MS: Millis = 30 * 86_400 * 1000;

/// A new portal link, as stored (its secret only as a digest).
#[derive(Debug, Clone)]
pub struct NewPortalLink {
    pub id: PortalSessionId,
    pub app_id: AppId,
    pub access: Access,
    pub link_sha256: String,
    pub expires_at: Millis,
    pub created_at: Millis,
    pub label: Option<String>,
}

/// A portal link (and the session made from it) as listed: no secret.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PortalLinkRow {
    pub id: PortalSessionId,
    pub app_id: AppId,
    pub access: String,
    pub expires_at: Millis,
    pub used_at: Option<Millis>,
    pub revoked_at: Option<Millis>,
    pub created_at: Millis,
    pub label: Option<String>,
}

/// A session found by its cookie, with what decides whether it still holds.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SessionRow {
    /// A [`ConsoleSessionId`] for an operator's session, the link's
    /// [`PortalSessionId`] for a portal session: which one is told by `kind`.
    pub id: String,
    /// `operator` or `portal`.
    pub kind: String,
    pub app_id: Option<AppId>,
    pub app_name: Option<String>,
    /// `admin`, `manage` or `read`.
    pub access: String,
    pub expires_at: Millis,
    pub revoked_at: Option<Millis>,
    /// For an operator session, the id of the admin token it logged in with,
    /// or `None` once that token was revoked.
    pub token_id: Option<TokenId>,
}

/// What an exchange of a link secret came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exchange {
    /// The link was unused and live: the session is made, and lives until `expires_at`.
    Made {
        expires_at: Millis,
    },
    NotFound,
    Used,
    Expired,
    Revoked,
}

impl Store {
    /// Stores a portal link (and purges rows long expired).
    pub async fn insert_portal_link(&self, link: &NewPortalLink) -> Result<()> {
        self.purge_expired_console_sessions(link.created_at).await?;
        let sql =
            "INSERT INTO console_sessions (id, kind, app_id, access, link_sha256, expires_at, created_at, label) \
             VALUES ($1, 'portal', $2, $3, $4, $5, $6, $7)";
        let values = [
            (&link.id).into(),
            (&link.app_id).into(),
            link.access.as_str().into(),
            (&link.link_sha256).into(),
            link.expires_at.into(),
            link.created_at.into(),
            (&link.label).into(),
        ];
        self.writes().execute(sql, &values).await.map(|_| ())
    }

    /// Stores an operator's session, bound to the admin token it logged in with.
    pub async fn insert_operator_session(
        &self,
        id: &ConsoleSessionId,
        session_sha256: &str,
        admin_token_sha256: &str,
        expires_at: Millis,
        now: Millis,
    ) -> Result<()> {
        self.purge_expired_console_sessions(now).await?;
        let sql = "INSERT INTO console_sessions \
             (id, kind, access, session_sha256, admin_token_sha256, expires_at, created_at) \
             VALUES ($1, 'operator', 'admin', $2, $3, $4, $5)";
        let values = [id.into(), session_sha256.into(), admin_token_sha256.into(), expires_at.into(), now.into()];
        self.writes().execute(sql, &values).await.map(|_| ())
    }

    /// Exchanges a link (by its secret's digest) for a session (by its
    /// secret's digest), once: of concurrent exchanges of one link exactly one
    /// answers [`Exchange::Made`] (with the session's expiry). Otherwise says
    /// why not (revoked first, then used, then expired).
    pub async fn exchange_portal_link(&self, link_sha256: &str, session_sha256: &str, now: Millis) -> Result<Exchange> {
        let sql = "UPDATE console_sessions SET used_at = $2, session_sha256 = $3 \
             WHERE link_sha256 = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2 \
             RETURNING expires_at";
        let made: Option<Millis> =
            self.writes().scalar_optional(sql, &[link_sha256.into(), now.into(), session_sha256.into()]).await?;
        if let Some(expires_at) = made {
            return Ok(Exchange::Made { expires_at });
        }
        let sql = "SELECT used_at, revoked_at, expires_at FROM console_sessions WHERE link_sha256 = $1";
        let row: Option<(Option<Millis>, Option<Millis>, Millis)> =
            self.writes().fetch_optional(sql, &[link_sha256.into()]).await?;
        Ok(match row {
            None => Exchange::NotFound,
            Some((_, Some(_), _)) => Exchange::Revoked,
            Some((Some(_), None, _)) => Exchange::Used,
            Some((None, None, _)) => Exchange::Expired,
        })
    }

    /// The app and access of a link that could be exchanged now (unused, not
    /// revoked, not expired), without exchanging it: so that a browser that
    /// holds another session is asked before the link replaces it.
    pub async fn find_exchangeable_portal_link(
        &self,
        link_sha256: &str,
        now: Millis,
    ) -> Result<Option<(AppId, String)>> {
        let sql = "SELECT app_id, access FROM console_sessions \
             WHERE link_sha256 = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2";
        self.reads().fetch_optional(sql, &[link_sha256.into(), now.into()]).await
    }

    /// The session whose secret has this digest, live or not. `token_id` is
    /// set only while the admin token an operator logged in with still works
    /// at `now` (not revoked, not expired, still an admin token).
    pub async fn find_console_session(&self, session_sha256: &str, now: Millis) -> Result<Option<SessionRow>> {
        let sql = "SELECT s.id, s.kind, s.app_id, a.name AS app_name, s.access, s.expires_at, s.revoked_at, \
                    t.id AS token_id \
             FROM console_sessions s \
             LEFT JOIN apps a ON a.id = s.app_id \
             LEFT JOIN admin_tokens t ON t.token_sha256 = s.admin_token_sha256 AND t.app_id IS NULL \
                 AND (t.expires_at IS NULL OR t.expires_at > $2) \
             WHERE s.session_sha256 = $1";
        self.reads().fetch_optional(sql, &[session_sha256.into(), now.into()]).await
    }

    /// Ends the session whose secret has this digest (logout).
    pub async fn end_console_session(&self, session_sha256: &str, now: Millis) -> Result<()> {
        let sql = "UPDATE console_sessions SET revoked_at = COALESCE(revoked_at, $2) WHERE session_sha256 = $1";
        self.writes().execute(sql, &[session_sha256.into(), now.into()]).await.map(|_| ())
    }

    /// An app's portal links, newest first, strictly before `cursor`.
    pub async fn list_portal_links(
        &self,
        app_id: &AppId,
        cursor: Option<&PortalSessionId>,
        limit: i64,
    ) -> Result<Vec<PortalLinkRow>> {
        let sql = "SELECT id, app_id, access, expires_at, used_at, revoked_at, created_at, label \
             FROM console_sessions WHERE app_id = $1 AND kind = 'portal' AND id < $2 \
             ORDER BY id DESC LIMIT $3";
        let values =
            [app_id.into(), cursor.map_or(super::apps::CURSOR_END, PortalSessionId::as_str).into(), limit.into()];
        self.reads().fetch_all(sql, &values).await
    }

    /// Revokes an app's portal link and the session made from it; answers
    /// whether the link exists (revoking twice is not an error).
    pub async fn revoke_portal_link(&self, app_id: &AppId, id: &PortalSessionId, now: Millis) -> Result<bool> {
        let sql = "UPDATE console_sessions SET revoked_at = COALESCE(revoked_at, $3) \
             WHERE id = $1 AND app_id = $2 AND kind = 'portal'";
        Ok(self.writes().execute(sql, &[id.into(), app_id.into(), now.into()]).await? > 0)
    }

    /// Deletes rows that expired long ago (kept a while so lists show them as expired).
    async fn purge_expired_console_sessions(&self, now: Millis) -> Result<()> {
        let sql = "DELETE FROM console_sessions WHERE expires_at < $1";
        self.writes().execute(sql, &[now.saturating_sub(KEPT_AFTER_EXPIRY_MS).into()]).await.map(|_| ())
    }
}
