//! Apps' own retentions (migration 0024) and the purges that apply them:
//! each purge here is one bounded batch of one app, found on that app's
//! index (`events_by_app`, `deliveries_by_app_status`), as the purges over
//! every app in `maintenance.rs` are on the primary key.

use std::collections::HashMap;

use super::Store;
use crate::store::Result;
use crate::{ids, retention::AppRetention, time::Millis};

/// An app's own retentions; `None` follows the operator's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppRetentions {
    pub payload: Option<AppRetention>,
    pub log: Option<AppRetention>,
}

impl AppRetentions {
    fn of(payload_ms: Option<Millis>, log_ms: Option<Millis>) -> AppRetentions {
        AppRetentions {
            payload: payload_ms.and_then(AppRetention::from_millis),
            log: log_ms.and_then(AppRetention::from_millis),
        }
    }
}

impl Store {
    /// The app's own retentions (none for an unknown app).
    pub async fn app_retentions(&self, app_id: &ids::AppId) -> Result<AppRetentions> {
        let found = self.apps_retentions(app_id.as_str(), app_id.as_str()).await?;
        Ok(found.get(app_id.as_str()).copied().unwrap_or_default())
    }

    /// The own retentions of the apps with ids from `low` to `high` (both
    /// included) that have one: one read for a page of apps.
    pub async fn apps_retentions(&self, low: &str, high: &str) -> Result<HashMap<String, AppRetentions>> {
        let sql = "SELECT id, payload_retention_ms, log_retention_ms FROM apps WHERE id >= $1 AND id <= $2 \
             AND (payload_retention_ms IS NOT NULL OR log_retention_ms IS NOT NULL)";
        let rows: Vec<(String, Option<Millis>, Option<Millis>)> =
            self.reads().fetch_all(sql, &[low.into(), high.into()]).await?;
        Ok(rows.into_iter().map(|(id, p, l)| (id, AppRetentions::of(p, l))).collect())
    }

    /// Every app with a retention of its own, for the maintenance loop.
    pub async fn apps_with_own_retention(&self) -> Result<Vec<(ids::AppId, AppRetentions)>> {
        let sql = "SELECT id, payload_retention_ms, log_retention_ms FROM apps \
             WHERE payload_retention_ms IS NOT NULL OR log_retention_ms IS NOT NULL ORDER BY id";
        let rows: Vec<(ids::AppId, Option<Millis>, Option<Millis>)> = self.reads().fetch_all(sql, &[]).await?;
        Ok(rows.into_iter().map(|(id, p, l)| (id, AppRetentions::of(p, l))).collect())
    }

    /// Sets the app's own retentions (`None`: the operator's); false when the app does not exist.
    pub async fn set_app_retentions(&self, app_id: &ids::AppId, r: AppRetentions) -> Result<bool> {
        let sql = "UPDATE apps SET payload_retention_ms = $2, log_retention_ms = $3 WHERE id = $1";
        let values =
            [app_id.into(), r.payload.map(AppRetention::as_millis).into(), r.log.map(AppRetention::as_millis).into()];
        Ok(self.writes().execute(sql, &values).await? > 0)
    }

    /// [`Store::purge_payloads`] for one app: forgets the payload bytes of up
    /// to `batch` of its events created before `cutoff` whose deliveries
    /// have all ended (as there, a delivery still to be attempted keeps its payload).
    pub async fn purge_app_payloads(&self, app_id: &ids::AppId, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql = "UPDATE events SET payload = NULL WHERE id IN (SELECT id FROM events WHERE app_id = $1 \
             AND id < $2 AND payload IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = 'pending') \
             LIMIT $3)";
        let floor = ids::EventId::floor(cutoff);
        let values = [app_id.into(), (&floor).into(), batch.into()];
        self.writes().execute(sql, &values).await
    }

    /// [`Store::purge_transformed_requests`] for one app.
    pub async fn purge_app_transformed_requests(&self, app_id: &ids::AppId, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql = "UPDATE deliveries SET transformed_request = NULL, transformed_body = NULL WHERE id IN \
             (SELECT id FROM deliveries WHERE event_id IN (SELECT id FROM events WHERE app_id = $1 AND id < $2) \
             AND transformed_request IS NOT NULL AND status <> 'pending' LIMIT $3)";
        let floor = ids::EventId::floor(cutoff);
        let values = [app_id.into(), (&floor).into(), batch.into()];
        self.writes().execute(sql, &values).await
    }

    /// [`Store::purge_deliveries`] for one app: deletes up to `batch` of its
    /// finished deliveries created before `cutoff`, with their attempts.
    pub async fn purge_app_deliveries(&self, app_id: &ids::AppId, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql = "DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries WHERE app_id = $1 \
             AND status IN ('succeeded', 'failed', 'skipped') AND id < $2 LIMIT $3)";
        let floor = ids::DeliveryId::floor(cutoff);
        let values = [app_id.into(), (&floor).into(), batch.into()];
        self.writes().execute(sql, &values).await
    }

    /// [`Store::purge_attempts`] for one app: deletes up to `batch` attempts
    /// started before `cutoff` of its finished deliveries.
    pub async fn purge_app_attempts(&self, app_id: &ids::AppId, cutoff: Millis, batch: i64) -> Result<u64> {
        let sql = "DELETE FROM attempts WHERE id IN (SELECT a.id FROM deliveries d JOIN attempts a \
             ON a.delivery_id = d.id WHERE d.app_id = $1 AND d.status IN ('succeeded', 'failed', 'skipped') \
             AND d.id < $2 AND a.id < $3 LIMIT $4)";
        let (deliveries, attempts) = (ids::DeliveryId::floor(cutoff), ids::AttemptId::floor(cutoff));
        let values = [app_id.into(), (&deliveries).into(), (&attempts).into(), batch.into()];
        self.writes().execute(sql, &values).await
    }
}
