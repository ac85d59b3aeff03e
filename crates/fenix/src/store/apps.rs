//! Apps (tenants).

use super::{Conflicts, Store};
use crate::store::Result;
use crate::time::Millis;

/// An app as stored.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AppRow {
    pub id: crate::ids::AppId,
    pub uid: Option<String>,
    pub name: String,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// Upper bound for "before this id" cursors: sorts after every id.
pub(crate) const CURSOR_END: &str = "~";

impl Store {
    /// Inserts an app; a taken `uid` is a unique violation.
    pub async fn insert_app(&self, app: &AppRow) -> Result<()> {
        let sql = "INSERT INTO apps (id, uid, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)";
        let values =
            [(&app.id).into(), (&app.uid).into(), (&app.name).into(), app.created_at.into(), app.updated_at.into()];
        self.writes().execute(sql, &values).await.map(|_| ())
    }

    /// Finds an app by its id or its `uid`.
    pub async fn find_app(&self, id_or_uid: &str) -> Result<Option<AppRow>> {
        let sql = "SELECT id, uid, name, created_at, updated_at FROM apps WHERE id = $1 AND deleted_at IS NULL \
             UNION ALL SELECT id, uid, name, created_at, updated_at FROM apps WHERE uid = $1 AND deleted_at IS NULL \
             LIMIT 1";
        self.reads().fetch_optional(sql, &[id_or_uid.into()]).await
    }

    /// Apps newest first, strictly before `cursor`.
    pub async fn list_apps(&self, cursor: Option<&str>, limit: i64) -> Result<Vec<AppRow>> {
        let sql = "SELECT id, uid, name, created_at, updated_at FROM apps WHERE id < $1 AND deleted_at IS NULL \
             ORDER BY id DESC LIMIT $2";
        self.reads().fetch_all(sql, &[cursor.unwrap_or(CURSOR_END).into(), limit.into()]).await
    }

    /// Saves a changed name/uid.
    pub async fn update_app(&self, app: &AppRow) -> Result<()> {
        let sql = "UPDATE apps SET uid = $2, name = $3, updated_at = $4 WHERE id = $1";
        let values = [(&app.id).into(), (&app.uid).into(), (&app.name).into(), app.updated_at.into()];
        self.writes().execute(sql, &values).await.map(|_| ())
    }

    /// Deletes an app with its endpoints, events and log. Its deliveries go
    /// in the same transaction, after the app's rows (see
    /// [`Store::delete_endpoint`]: on PostgreSQL they have no foreign key to
    /// their endpoint or event). The `DELETE` locks the app's row first, then
    /// (its cascade) the endpoints' and events': the store's lock order, which
    /// an ingestion follows too, so the two wait for each other, never in a
    /// cycle; a conflict that still happens runs the deletion again.
    pub async fn delete_app(&self, id: &crate::ids::AppId) -> Result<bool> {
        let mut conflicts = Conflicts::default();
        loop {
            match self.delete_app_once(id).await {
                Err(e) if conflicts.again(&e).await => {}
                done => return done,
            }
        }
    }

    async fn delete_app_once(&self, id: &crate::ids::AppId) -> Result<bool> {
        let mut tx = self.writes().begin_write().await?;
        let deleted = tx.execute("DELETE FROM apps WHERE id = $1", &[id.into()]).await? > 0;
        if deleted {
            tx.execute("DELETE FROM deliveries WHERE app_id = $1", &[id.into()]).await?;
            // No foreign key keeps them (migration 0020): they go with their events.
            tx.execute("DELETE FROM event_labels WHERE app_id = $1", &[id.into()]).await?;
        }
        tx.commit().await?;
        Ok(deleted)
    }
}
