//! The event-type catalogue (`event_type_catalogue`): a name, a description,
//! an optional JSON Schema and example (both JSON text), a deprecated flag.
//! Global, not per app. Each change bumps `revision`, which the instances'
//! caches of compiled schemas compare (see the catalogue module).

use super::{apps::CURSOR_END, Store};
use crate::store::Result;
use crate::{ids::EventTypeId, time::Millis};

/// A catalogued event type as stored.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct EventTypeRow {
    pub id: EventTypeId,
    pub name: String,
    pub description: String,
    /// JSON text of the schema.
    pub schema: Option<String>,
    /// JSON text of the example `data`.
    pub example: Option<String>,
    pub deprecated: bool,
    pub revision: i64,
    pub created_at: Millis,
    pub updated_at: Millis,
}

/// What an instance's cache compares: a changed revision (or a name gone or
/// new) means that type's schema is compiled again.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EventTypeRevision {
    pub name: String,
    pub revision: i64,
}

const COLUMNS: &str = "id, name, description, schema, example, deprecated, revision, created_at, updated_at";

impl Store {
    /// Adds a type; a taken name is a unique violation.
    pub async fn insert_event_type(&self, row: &EventTypeRow) -> Result<()> {
        let sql = "INSERT INTO event_type_catalogue \
             (id, name, description, schema, example, deprecated, revision, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
        let values = [
            (&row.id).into(),
            (&row.name).into(),
            (&row.description).into(),
            (&row.schema).into(),
            (&row.example).into(),
            row.deprecated.into(),
            row.revision.into(),
            row.created_at.into(),
            row.updated_at.into(),
        ];
        self.writes().execute(sql, &values).await.map(|_| ())
    }

    /// The type named `name` (exact).
    pub async fn find_event_type(&self, name: &str) -> Result<Option<EventTypeRow>> {
        let sql = format!("SELECT {COLUMNS} FROM event_type_catalogue WHERE name = $1");
        self.reads().fetch_optional(&sql, &[name.into()]).await
    }

    /// Types newest first, strictly before the id `cursor`.
    pub async fn list_event_types(&self, cursor: Option<&EventTypeId>, limit: i64) -> Result<Vec<EventTypeRow>> {
        let sql = format!("SELECT {COLUMNS} FROM event_type_catalogue WHERE id < $1 ORDER BY id DESC LIMIT $2");
        let cursor = cursor.map_or(CURSOR_END, EventTypeId::as_str);
        self.reads().fetch_all(&sql, &[cursor.into(), limit.into()]).await
    }

    /// Every type's name and revision: what a cache refresh reads first.
    pub async fn event_type_revisions(&self) -> Result<Vec<EventTypeRevision>> {
        self.reads().fetch_all("SELECT name, revision FROM event_type_catalogue", &[]).await
    }

    /// Every type in full: read by a cache refresh only when something changed.
    pub async fn all_event_types(&self) -> Result<Vec<EventTypeRow>> {
        let sql = format!("SELECT {COLUMNS} FROM event_type_catalogue");
        self.reads().fetch_all(&sql, &[]).await
    }

    /// Saves a changed type, bumping its revision only if `row.revision` is
    /// still the stored one (two concurrent changes: the later one answers
    /// false rather than silently undoing the other). `row.revision` is the
    /// revision read; the stored one becomes `row.revision + 1`.
    pub async fn update_event_type(&self, row: &EventTypeRow) -> Result<bool> {
        let sql = "UPDATE event_type_catalogue SET description = $2, schema = $3, example = $4, deprecated = $5, \
             revision = revision + 1, updated_at = $6 WHERE id = $1 AND revision = $7";
        let values = [
            (&row.id).into(),
            (&row.description).into(),
            (&row.schema).into(),
            (&row.example).into(),
            row.deprecated.into(),
            row.updated_at.into(),
            row.revision.into(),
        ];
        Ok(self.writes().execute(sql, &values).await? > 0)
    }

    /// Removes a type; false when there was none.
    pub async fn delete_event_type(&self, name: &str) -> Result<bool> {
        Ok(self.writes().execute("DELETE FROM event_type_catalogue WHERE name = $1", &[name.into()]).await? > 0)
    }
}
