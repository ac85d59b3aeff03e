//! API tokens: admin tokens (every app, every route) and app tokens (one app,
//! `manage` or `read`), in the table `admin_tokens` (its name kept from when
//! every token was an admin token). Only a SHA-256 of each token is stored;
//! an expired token is kept (listed, revocable) but never authenticates.

use super::Store;
use crate::store::{Error, Result};
use crate::{
    access::{Access, Principal},
    ids::{AppId, TokenId},
    time::Millis,
};

/// A token to store: its hash, never the token.
#[derive(Debug, Clone)]
pub struct NewToken {
    pub id: TokenId,
    pub name: String,
    pub sha256: String,
    /// What the token reaches: [`Principal::Admin`] or one app.
    pub principal: Principal,
    /// None: never expires.
    pub expires_at: Option<Millis>,
    pub created_at: Millis,
}

/// A stored token, as listed (no secret: none is stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: TokenId,
    pub name: String,
    pub principal: Principal,
    pub expires_at: Option<Millis>,
    pub created_at: Millis,
}

/// What [`Store::delete_token_keeping_an_admin`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenDeletion {
    Deleted,
    NotFound,
    /// Refused: the token is the last admin token that still works.
    LastAdmin,
}

/// The row as read: `(id, name, app_id, access, expires_at, created_at)`.
type RawToken = (TokenId, String, Option<AppId>, String, Option<Millis>, Millis);

const COLUMNS: &str = "id, name, app_id, access, expires_at, created_at";

/// The stored text of a token's access (the column `access`).
fn access_text(p: &Principal) -> (&'static str, Option<&AppId>) {
    match p {
        Principal::Admin => ("admin", None),
        Principal::App { app_id, access } => (access.as_str(), Some(app_id)),
    }
}

/// Reads a row; an access the schema's CHECK would refuse is a decoding error.
fn decode((id, name, app_id, access, expires_at, created_at): RawToken) -> Result<TokenRow> {
    let principal = match (app_id, access.as_str()) {
        (None, "admin") => Principal::Admin,
        (Some(app_id), other) => match Access::parse(other) {
            Some(access) => Principal::App { app_id, access },
            None => return Err(Error::decode(format!("token {id}: access {other:?} with an app"))),
        },
        (None, other) => return Err(Error::decode(format!("token {id}: access {other:?} without an app"))),
    };
    Ok(TokenRow { id, name, principal, expires_at, created_at })
}

/// Counts the admin tokens, other than `$1`, that work at `$2`.
const OTHER_LIVE_ADMINS: &str = "SELECT COUNT(*) FROM admin_tokens \
     WHERE id <> $1 AND app_id IS NULL AND (expires_at IS NULL OR expires_at > $2)";
/// The token `$1` if it is an admin token that works at `$2`.
const IS_LIVE_ADMIN: &str = "SELECT COUNT(*) FROM admin_tokens \
     WHERE id = $1 AND app_id IS NULL AND (expires_at IS NULL OR expires_at > $2)";
const DELETE: &str = "DELETE FROM admin_tokens WHERE id = $1";

impl Store {
    /// Stores a token. A hash already stored is left as it is (the bootstrap
    /// token registered again at each start), so this never fails on it.
    pub async fn insert_token(&self, t: &NewToken) -> Result<()> {
        let (access, app_id) = access_text(&t.principal);
        let sql = "INSERT INTO admin_tokens (id, name, token_sha256, app_id, access, expires_at, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (token_sha256) DO NOTHING";
        let values = [
            (&t.id).into(),
            (&t.name).into(),
            (&t.sha256).into(),
            app_id.into(),
            access.into(),
            t.expires_at.into(),
            t.created_at.into(),
        ];
        self.writes().execute(sql, &values).await.map(|_| ())
    }

    /// Stores an admin token that never expires (the bootstrap token, `fenix token create`).
    pub async fn insert_admin_token(&self, id: &TokenId, name: &str, sha256: &str, now: Millis) -> Result<()> {
        self.insert_token(&NewToken {
            id: id.clone(),
            name: name.into(),
            sha256: sha256.into(),
            principal: Principal::Admin,
            expires_at: None,
            created_at: now,
        })
        .await
    }

    /// The token with this hash, if it works at `now` (an expired one never does).
    pub async fn find_live_token(&self, sha256: &str, now: Millis) -> Result<Option<TokenRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM admin_tokens WHERE token_sha256 = $1 AND (expires_at IS NULL OR expires_at > $2)"
        );
        let row: Option<RawToken> = self.reads().fetch_optional(&sql, &[sha256.into(), now.into()]).await?;
        row.map(decode).transpose()
    }

    /// One token by id.
    pub async fn get_token(&self, id: &TokenId) -> Result<Option<TokenRow>> {
        let sql = format!("SELECT {COLUMNS} FROM admin_tokens WHERE id = $1");
        let row: Option<RawToken> = self.reads().fetch_optional(&sql, &[id.into()]).await?;
        row.map(decode).transpose()
    }

    /// Tokens newest first, strictly before `cursor` (expired ones included).
    pub async fn list_tokens(&self, cursor: Option<&TokenId>, limit: i64) -> Result<Vec<TokenRow>> {
        // The writer on SQLite, as the CLI's reads: a token just made is listed.
        let sql = format!("SELECT {COLUMNS} FROM admin_tokens WHERE id < $1 ORDER BY id DESC LIMIT $2");
        let values = [cursor.map_or(super::apps::CURSOR_END, TokenId::as_str).into(), limit.into()];
        let rows: Vec<RawToken> = self.writes().fetch_all(&sql, &values).await?;
        rows.into_iter().map(decode).collect()
    }

    /// Deletes a token by id, whatever it is (the CLI: whoever runs it can make another);
    /// answers whether it existed.
    pub async fn delete_token(&self, id: &TokenId) -> Result<bool> {
        Ok(self.writes().execute(DELETE, &[id.into()]).await? > 0)
    }

    /// Deletes a token by id unless it is the last admin token working at
    /// `now` (the API: an admin must not lock every admin out). Concurrent
    /// deletes of the last two admin tokens cannot both succeed: SQLite's
    /// write transaction is exclusive, and PostgreSQL's locks the table
    /// against other writers (readers, such as token checks, go on).
    pub async fn delete_token_keeping_an_admin(&self, id: &TokenId, now: Millis) -> Result<TokenDeletion> {
        let db = self.writes();
        let mut tx = db.begin_write().await?;
        if db.concurrent_writes() {
            // SQLite's write transaction is exclusive already.
            tx.execute("LOCK TABLE admin_tokens IN SHARE ROW EXCLUSIVE MODE", &[]).await?;
        }
        let is_admin: i64 = tx.scalar(IS_LIVE_ADMIN, &[id.into(), now.into()]).await?;
        let others: i64 = tx.scalar(OTHER_LIVE_ADMINS, &[id.into(), now.into()]).await?;
        if is_admin > 0 && others == 0 {
            return Ok(TokenDeletion::LastAdmin);
        }
        let gone = tx.execute(DELETE, &[id.into()]).await? > 0;
        tx.commit().await?;
        Ok(if gone { TokenDeletion::Deleted } else { TokenDeletion::NotFound })
    }

    /// Number of admin tokens, expired or not (zero on a fresh database, or
    /// once every admin token was revoked: start-up then makes one).
    pub async fn count_admin_tokens(&self) -> Result<i64> {
        self.writes().scalar("SELECT COUNT(*) FROM admin_tokens WHERE app_id IS NULL", &[]).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(app: Option<&AppId>, access: &str) -> RawToken {
        (TokenId::from_stored("tok_1".into()), "n".into(), app.cloned(), access.into(), None, 0)
    }

    fn app_1() -> AppId {
        AppId::from_stored("app_1".into())
    }

    #[test]
    fn rows_decode_to_the_principal_they_stand_for_or_fail() {
        assert_eq!(decode(raw(None, "admin")).unwrap().principal, Principal::Admin);
        assert_eq!(
            decode(raw(Some(&app_1()), "read")).unwrap().principal,
            Principal::App { app_id: app_1(), access: Access::Read }
        );
        assert_eq!(
            decode(raw(Some(&app_1()), "manage")).unwrap().principal,
            Principal::App { app_id: app_1(), access: Access::Manage }
        );
        let app = app_1();
        for (app, access) in [(None, "read"), (Some(&app), "admin"), (None, "root"), (Some(&app), "")] {
            assert!(decode(raw(app, access)).is_err(), "{app:?} {access}");
        }
        for p in [Principal::Admin, Principal::App { app_id: app_1(), access: Access::Read }] {
            let (access, app) = access_text(&p);
            assert_eq!(decode(raw(app, access)).unwrap().principal, p);
        }
    }
}
