//! Events: what ingestion writes and answers, and the event log. The writing
//! itself (an event and all its deliveries in one transaction, many events in
//! one batch) is the queue's [`Store::ingest_batch`].

use sqlx::QueryBuilder;

use super::{apps::CURSOR_END, on_read, Store};
use crate::time::Millis;

/// An event as stored. `payload` is only loaded when asked for.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EventRow {
    pub id: String,
    pub app_id: String,
    pub event_type: String,
    pub idempotency_key: Option<String>,
    pub payload: Option<Vec<u8>>,
    pub payload_sha256: String,
    pub delivery_count: i64,
    pub created_at: Millis,
}

/// What ingestion writes.
#[derive(Debug)]
pub struct NewEvent {
    pub id: String,
    pub app_id: String,
    pub event_type: String,
    pub idempotency_key: Option<String>,
    /// The envelope, exactly as receivers will get it.
    pub envelope: Vec<u8>,
    pub payload_sha256: String,
    pub created_at: Millis,
    /// Most deliveries this event may fan out to (`FENIX_MAX_FANOUT_PER_EVENT`);
    /// an event that matches more endpoints is refused whole, nothing stored.
    pub max_fanout: usize,
    /// A test event (`POST …/endpoints/{ep}/test`): the one endpoint of its app
    /// it goes to, whatever that endpoint's event-type filter; `None` for every
    /// other event (each endpoint of the app that wants its type).
    pub only_endpoint: Option<String>,
    /// The producer's ordering key (1-256 characters): on an ordered endpoint,
    /// order holds per key; `None` is the endpoint's one keyless lane.
    pub ordering_key: Option<String>,
}

/// Result of ingestion: the stored event, and whether this call created it
/// (false = an earlier event with the same idempotency key, or a refusal).
#[derive(Debug)]
pub struct Ingested {
    pub event: EventRow,
    pub created: bool,
    /// True when the event matched more endpoints than its `max_fanout`
    /// (`event.delivery_count` says how many) and was not stored.
    pub fanout_refused: bool,
}

impl Ingested {
    pub(super) fn created(event: EventRow) -> Ingested {
        Ingested { event, created: true, fanout_refused: false }
    }

    pub(super) fn existing(event: EventRow) -> Ingested {
        Ingested { event, created: false, fanout_refused: false }
    }

    pub(super) fn refused(ev: &NewEvent, matched: usize) -> Ingested {
        Ingested { event: ev.stored_row(matched as i64), created: false, fanout_refused: true }
    }
}

/// Filters of the event log.
#[derive(Debug, Default, Clone)]
pub struct EventFilter {
    pub event_type: Option<String>,
    pub since: Option<Millis>,
    pub until: Option<Millis>,
    pub cursor: Option<String>,
    pub limit: i64,
    pub include_payload: bool,
}

/// An event by its idempotency key (no payload).
pub(super) const EVENT_BY_KEY: &str =
    "SELECT id, app_id, event_type, idempotency_key, NULL AS payload, payload_sha256, delivery_count, \
     created_at FROM events WHERE app_id = $1 AND idempotency_key = $2";

impl NewEvent {
    /// The row this event becomes once stored with `delivery_count` deliveries (payload not loaded).
    pub(super) fn stored_row(&self, delivery_count: i64) -> EventRow {
        EventRow {
            id: self.id.clone(),
            app_id: self.app_id.clone(),
            event_type: self.event_type.clone(),
            idempotency_key: self.idempotency_key.clone(),
            payload: None,
            payload_sha256: self.payload_sha256.clone(),
            delivery_count,
            created_at: self.created_at,
        }
    }
}

/// The columns of an event in the log (the payload bytes stay in the database).
pub const EVENT_COLUMNS: &str =
    "id, app_id, event_type, idempotency_key, NULL AS payload, payload_sha256, delivery_count, created_at";
const EVENT_COLUMNS_WITH_PAYLOAD: &str =
    "id, app_id, event_type, idempotency_key, payload, payload_sha256, delivery_count, created_at";

impl Store {
    /// One event of one app.
    pub async fn get_event(&self, app_id: &str, id: &str, include_payload: bool) -> sqlx::Result<Option<EventRow>> {
        let cols = if include_payload { EVENT_COLUMNS_WITH_PAYLOAD } else { EVENT_COLUMNS };
        on_read!(self, |pool| sqlx::query_as::<_, EventRow>(&format!(
            "SELECT {cols} FROM events WHERE id = $1 AND app_id = $2"
        ))
        .bind(id)
        .bind(app_id)
        .fetch_optional(pool)
        .await)
    }

    /// The event log of an app, newest first.
    pub async fn list_events(&self, app_id: &str, f: &EventFilter) -> sqlx::Result<Vec<EventRow>> {
        let cols = if f.include_payload { EVENT_COLUMNS_WITH_PAYLOAD } else { EVENT_COLUMNS };
        on_read!(self, |pool| {
            let mut qb = QueryBuilder::new(format!("SELECT {cols} FROM events WHERE app_id = "));
            qb.push_bind(app_id);
            qb.push(" AND id < ").push_bind(f.cursor.clone().unwrap_or_else(|| CURSOR_END.into()));
            if let Some(t) = &f.event_type {
                qb.push(" AND event_type = ").push_bind(t.clone());
            }
            if let Some(s) = f.since {
                qb.push(" AND created_at >= ").push_bind(s);
            }
            if let Some(u) = f.until {
                qb.push(" AND created_at < ").push_bind(u);
            }
            qb.push(" ORDER BY id DESC LIMIT ").push_bind(f.limit);
            qb.build_query_as::<EventRow>().fetch_all(pool).await
        })
    }
}
