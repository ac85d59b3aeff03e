//! The master keys a database was sealed with, each with its canary (see
//! `crate::keycheck`): which keys exist, and which one is newest.

use super::Store;
use crate::store::Result;

/// One master key the database knows: its id, a value sealed with it, and
/// its place in the order the keys became current.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct MasterKeyCanary {
    /// Hex of the key's 8-byte id.
    pub key_id: String,
    /// A known text sealed with the key.
    pub canary: Vec<u8>,
    /// The highest is the key every instance seals with.
    pub generation: i64,
    /// Unix milliseconds.
    pub created_at: i64,
}

impl Store {
    /// Every recorded master key, oldest first (the last is the newest).
    pub async fn master_key_canaries(&self) -> Result<Vec<MasterKeyCanary>> {
        let sql = "SELECT key_id, canary, generation, created_at FROM master_key_canaries ORDER BY generation";
        self.writes().fetch_all(sql, &[]).await
    }

    /// Records `key_id` as the newest master key, unless it is recorded
    /// already or another instance recorded a key at the same moment (the
    /// generation is unique): the caller reads the table again to learn which.
    pub async fn add_master_key_canary(&self, key_id: &str, canary: &[u8], now: i64) -> Result<()> {
        let sql = "INSERT INTO master_key_canaries (key_id, canary, generation, created_at) \
             VALUES ($1, $2, (SELECT COALESCE(MAX(generation), 0) + 1 FROM master_key_canaries), $3) \
             ON CONFLICT DO NOTHING";
        self.writes().execute(sql, &[key_id.into(), canary.into(), now.into()]).await.map(|_| ())
    }

    /// Makes an older recorded key the newest again (`fenix rekey` back to it).
    pub async fn renew_master_key_canary(&self, key_id: &str, now: i64) -> Result<()> {
        let sql = "UPDATE master_key_canaries \
             SET generation = (SELECT MAX(generation) + 1 FROM master_key_canaries), created_at = $2 \
             WHERE key_id = $1";
        self.writes().execute(sql, &[key_id.into(), now.into()]).await.map(|_| ())
    }
}
