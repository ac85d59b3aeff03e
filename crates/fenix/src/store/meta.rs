//! Small facts about the database (the master-key check of databases from
//! before `master_key_canaries`, read once to record their key). Tokens are in `tokens.rs`.

use super::Store;
use crate::store::Result;

impl Store {
    /// Reads a meta value.
    pub async fn get_meta(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.writes().scalar_optional("SELECT value FROM meta WHERE key = $1", &[key.into()]).await
    }

    /// Writes a meta value if none exists; returns the value now stored (another
    /// instance may have won the race).
    pub async fn put_meta_if_absent(&self, key: &str, value: &[u8]) -> Result<Vec<u8>> {
        let sql = "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING";
        self.writes().execute(sql, &[key.into(), value.into()]).await?;
        self.writes().scalar("SELECT value FROM meta WHERE key = $1", &[key.into()]).await
    }

    /// Overwrites a meta value.
    pub async fn set_meta(&self, key: &str, value: &[u8]) -> Result<()> {
        let sql =
            "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value";
        self.writes().execute(sql, &[key.into(), value.into()]).await.map(|_| ())
    }
}
