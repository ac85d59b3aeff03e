//! An endpoint's `tls` column on its own: a rotation's and `fenix rekey`'s
//! compare-and-set (the endpoint's reads and writes of the whole spec are in
//! `endpoints.rs`), and the certificates every instance watches for expiry.

use super::Store;
use crate::store::Result;

impl Store {
    /// Every endpoint's stored TLS material (for `fenix rekey` and the
    /// expiry watch), by id.
    pub async fn all_endpoint_tls(&self) -> Result<Vec<(crate::ids::EndpointId, crate::ids::AppId, String)>> {
        let sql = "SELECT id, app_id, tls FROM endpoints WHERE tls IS NOT NULL ORDER BY id";
        self.writes().fetch_all(sql, &[]).await
    }

    /// Replaces endpoint `endpoint_id`'s stored TLS material if it is still
    /// `old` (`None`: none), so a change made meanwhile wins. Answers whether
    /// the row was changed. `touched`: its `updated_at` (a rekey leaves it).
    pub async fn replace_endpoint_tls(
        &self,
        endpoint_id: &crate::ids::EndpointId,
        old: Option<&str>,
        new: Option<&str>,
        touched: Option<crate::time::Millis>,
    ) -> Result<bool> {
        let sql = "UPDATE endpoints SET tls = $3, updated_at = COALESCE($4, updated_at) WHERE id = $1 AND tls IS NOT DISTINCT FROM $2";
        Ok(self.writes().execute(sql, &[endpoint_id.into(), old.into(), new.into(), touched.into()]).await? > 0)
    }
}
