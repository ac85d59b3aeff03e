//! The event-type catalogue (`event_type_catalogue`): a name, a description,
//! an optional JSON Schema and example (both JSON text), a deprecated flag.
//! Global, not per app. Each change bumps `revision`, which the instances'
//! caches of compiled schemas compare (see the catalogue module).

use super::{apps::CURSOR_END, on_read, on_write, Store};
use crate::store::Result;
use crate::time::Millis;

/// A catalogued event type as stored.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct EventTypeRow {
    pub id: String,
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
        on_write!(self, |pool| sqlx::query(
            "INSERT INTO event_type_catalogue \
             (id, name, description, schema, example, deprecated, revision, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        )
        .bind(&row.id)
        .bind(&row.name)
        .bind(&row.description)
        .bind(&row.schema)
        .bind(&row.example)
        .bind(row.deprecated)
        .bind(row.revision)
        .bind(row.created_at)
        .bind(row.updated_at)
        .execute(pool)
        .await
        .map(|_| ()))
    }

    /// The type named `name` (exact).
    pub async fn find_event_type(&self, name: &str) -> Result<Option<EventTypeRow>> {
        let sql = format!("SELECT {COLUMNS} FROM event_type_catalogue WHERE name = $1");
        on_read!(self, |pool| sqlx::query_as::<_, EventTypeRow>(&sql).bind(name).fetch_optional(pool).await)
    }

    /// Types newest first, strictly before the id `cursor`.
    pub async fn list_event_types(&self, cursor: Option<&str>, limit: i64) -> Result<Vec<EventTypeRow>> {
        let sql = format!("SELECT {COLUMNS} FROM event_type_catalogue WHERE id < $1 ORDER BY id DESC LIMIT $2");
        on_read!(self, |pool| sqlx::query_as::<_, EventTypeRow>(&sql)
            .bind(cursor.unwrap_or(CURSOR_END))
            .bind(limit)
            .fetch_all(pool)
            .await)
    }

    /// Every type's name and revision: what a cache refresh reads first.
    pub async fn event_type_revisions(&self) -> Result<Vec<EventTypeRevision>> {
        on_read!(self, |pool| sqlx::query_as::<_, EventTypeRevision>("SELECT name, revision FROM event_type_catalogue")
            .fetch_all(pool)
            .await)
    }

    /// Every type in full: read by a cache refresh only when something changed.
    pub async fn all_event_types(&self) -> Result<Vec<EventTypeRow>> {
        let sql = format!("SELECT {COLUMNS} FROM event_type_catalogue");
        on_read!(self, |pool| sqlx::query_as::<_, EventTypeRow>(&sql).fetch_all(pool).await)
    }

    /// Saves a changed type, bumping its revision only if `row.revision` is
    /// still the stored one (two concurrent changes: the later one answers
    /// false rather than silently undoing the other). `row.revision` is the
    /// revision read; the stored one becomes `row.revision + 1`.
    pub async fn update_event_type(&self, row: &EventTypeRow) -> Result<bool> {
        on_write!(self, |pool| sqlx::query(
            "UPDATE event_type_catalogue SET description = $2, schema = $3, example = $4, deprecated = $5, \
             revision = revision + 1, updated_at = $6 WHERE id = $1 AND revision = $7"
        )
        .bind(&row.id)
        .bind(&row.description)
        .bind(&row.schema)
        .bind(&row.example)
        .bind(row.deprecated)
        .bind(row.updated_at)
        .bind(row.revision)
        .execute(pool)
        .await
        .map(|r| r.rows_affected() > 0))
    }

    /// Removes a type; false when there was none.
    pub async fn delete_event_type(&self, name: &str) -> Result<bool> {
        on_write!(self, |pool| sqlx::query("DELETE FROM event_type_catalogue WHERE name = $1")
            .bind(name)
            .execute(pool)
            .await
            .map(|r| r.rows_affected() > 0))
    }
}
