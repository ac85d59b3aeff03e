//! Small facts about the database (the master-key check of databases from
//! before `master_key_canaries`, read once to record their key). Tokens are in `tokens.rs`.

use super::{on_write, Store};
use crate::store::Result;

impl Store {
    /// Reads a meta value.
    pub async fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>> {
        on_write!(self, |pool| sqlx::query_scalar::<_, Vec<u8>>("SELECT value FROM meta WHERE key = $1")
            .bind(key)
            .fetch_optional(pool)
            .await)
    }

    /// Writes a meta value if none exists; returns the value now stored (another
    /// instance may have won the race).
    pub async fn put_meta_if_absent(&self, key: &str, value: &[u8]) -> Result<Vec<u8>> {
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
    pub async fn set_meta(&self, key: &str, value: &[u8]) -> Result<()> {
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
