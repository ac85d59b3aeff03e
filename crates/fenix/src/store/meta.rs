//! Admin tokens and small facts about the database (the master-key check value).

use super::{on_read, on_write, Store};
use crate::time::Millis;

impl Store {
    /// Stores a token's hash.
    pub async fn insert_admin_token(&self, id: &str, name: &str, sha256: &str, now: Millis) -> sqlx::Result<()> {
        on_write!(self, |pool| sqlx::query(
            "INSERT INTO admin_tokens (id, name, token_sha256, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (token_sha256) DO NOTHING"
        )
        .bind(id)
        .bind(name)
        .bind(sha256)
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))
    }

    /// True when a token with this hash exists.
    pub async fn admin_token_exists(&self, sha256: &str) -> sqlx::Result<bool> {
        on_read!(self, |pool| sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM admin_tokens WHERE token_sha256 = $1")
            .bind(sha256)
            .fetch_one(pool)
            .await
            .map(|n| n > 0))
    }

    /// Every admin token: (id, name, created_at) — never the token, which is not stored.
    pub async fn list_admin_tokens(&self) -> sqlx::Result<Vec<(String, String, Millis)>> {
        on_write!(self, |pool| sqlx::query_as::<_, (String, String, Millis)>(
            "SELECT id, name, created_at FROM admin_tokens ORDER BY id"
        )
        .fetch_all(pool)
        .await)
    }

    /// Deletes a token by id; answers whether it existed.
    pub async fn delete_admin_token(&self, id: &str) -> sqlx::Result<bool> {
        on_write!(self, |pool| sqlx::query("DELETE FROM admin_tokens WHERE id = $1")
            .bind(id)
            .execute(pool)
            .await
            .map(|r| r.rows_affected() > 0))
    }

    /// Number of admin tokens (zero on a fresh database).
    pub async fn count_admin_tokens(&self) -> sqlx::Result<i64> {
        on_write!(self, |pool| sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM admin_tokens").fetch_one(pool).await)
    }

    /// Reads a meta value.
    pub async fn get_meta(&self, key: &str) -> sqlx::Result<Option<Vec<u8>>> {
        on_write!(self, |pool| sqlx::query_scalar::<_, Vec<u8>>("SELECT value FROM meta WHERE key = $1")
            .bind(key)
            .fetch_optional(pool)
            .await)
    }

    /// Writes a meta value if none exists; returns the value now stored (another
    /// instance may have won the race).
    pub async fn put_meta_if_absent(&self, key: &str, value: &[u8]) -> sqlx::Result<Vec<u8>> {
        on_write!(self, |pool| {
            sqlx::query("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING")
                .bind(key)
                .bind(value)
                .execute(pool)
                .await?;
            sqlx::query_scalar::<_, Vec<u8>>("SELECT value FROM meta WHERE key = $1").bind(key).fetch_one(pool).await
        })
    }

    /// Overwrites a meta value.
    pub async fn set_meta(&self, key: &str, value: &[u8]) -> sqlx::Result<()> {
        on_write!(self, |pool| sqlx::query(
            "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        .bind(key)
        .bind(value)
        .execute(pool)
        .await
        .map(|_| ()))
    }
}
