//! Events and the transactional outbox: an event and all its deliveries are
//! written in one transaction.

use sqlx::QueryBuilder;

use super::{apps::CURSOR_END, is_unique_violation, on_read, on_write, BeginWrite, Store};
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

#[derive(sqlx::FromRow)]
struct FanoutTarget {
    id: String,
    event_types: String,
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
    /// Stores an event and one pending delivery per endpoint of the app that
    /// `wants(event_types_json)`, all in one transaction. Active and paused
    /// endpoints get deliveries (a paused one's are skipped when due, so they
    /// can be replayed); disabled endpoints get none.
    pub async fn ingest_event(
        &self,
        ev: &NewEvent,
        wants: impl Fn(&str) -> bool,
        new_delivery_id: impl Fn() -> String,
    ) -> sqlx::Result<Ingested> {
        if let Some(key) = &ev.idempotency_key {
            if let Some(event) = self.find_event_by_key(&ev.app_id, key).await? {
                return Ok(Ingested::existing(event));
            }
        }
        let is_pg = self.is_postgres();
        // An inner async block, so `?` ends the transaction attempt, not the function:
        // a unique violation on the idempotency key is handled below.
        // Ok(Err(n)): the event matched n endpoints, more than its limit; nothing stored.
        let result: sqlx::Result<Result<i64, usize>> = on_write!(self, |pool| {
            async {
            let mut tx = pool.begin_write().await?;
            let targets: Vec<FanoutTarget> = sqlx::query_as(
                "SELECT id, event_types FROM endpoints WHERE app_id = $1 AND state IN ('active', 'paused') ORDER BY id",
            )
            .bind(&ev.app_id)
            .fetch_all(&mut *tx)
            .await?;
            let endpoints: Vec<String> = targets.into_iter().filter(|t| wants(&t.event_types)).map(|t| t.id).collect();
            if endpoints.len() > ev.max_fanout {
                tx.rollback().await?;
                return Ok(Err(endpoints.len()));
            }
            let count = endpoints.len() as i64;
            sqlx::query(
                "INSERT INTO events (id, app_id, event_type, idempotency_key, payload, payload_sha256, delivery_count, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&ev.id)
            .bind(&ev.app_id)
            .bind(&ev.event_type)
            .bind(&ev.idempotency_key)
            .bind(&ev.envelope)
            .bind(&ev.payload_sha256)
            .bind(count)
            .bind(ev.created_at)
            .execute(&mut *tx)
            .await?;
            if count > 0 && is_pg {
                // Delivered at commit: a worker on any instance starts at once.
                sqlx::query("SELECT pg_notify($1, '')").bind(super::WAKE_CHANNEL).execute(&mut *tx).await?;
            }
            for chunk in endpoints.chunks(500) {
                let mut qb = QueryBuilder::new(
                    "INSERT INTO deliveries (id, app_id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at, updated_at) ",
                );
                qb.push_values(chunk, |mut b, ep| {
                    b.push_bind(new_delivery_id())
                        .push_bind(&ev.app_id)
                        .push_bind(&ev.id)
                        .push_bind(ep)
                        .push("'pending'")
                        .push("0")
                        .push_bind(ev.created_at)
                        .push_bind(ev.created_at)
                        .push_bind(ev.created_at);
                });
                qb.build().execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(Ok(count))
        }
        .await
        });
        match result {
            Ok(Ok(count)) => Ok(Ingested::created(ev.stored_row(count))),
            Ok(Err(matched)) => Ok(Ingested::refused(ev, matched)),
            // Two requests with the same key raced: the other one's event stands.
            Err(e) if is_unique_violation(&e) && ev.idempotency_key.is_some() => {
                let key = ev.idempotency_key.as_deref().unwrap_or_default();
                match self.find_event_by_key_on_writer(&ev.app_id, key).await? {
                    Some(event) => Ok(Ingested::existing(event)),
                    None => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn find_event_by_key(&self, app_id: &str, key: &str) -> sqlx::Result<Option<EventRow>> {
        on_read!(self, |pool| sqlx::query_as::<_, EventRow>(EVENT_BY_KEY)
            .bind(app_id)
            .bind(key)
            .fetch_optional(pool)
            .await)
    }

    async fn find_event_by_key_on_writer(&self, app_id: &str, key: &str) -> sqlx::Result<Option<EventRow>> {
        on_write!(self, |pool| sqlx::query_as::<_, EventRow>(EVENT_BY_KEY)
            .bind(app_id)
            .bind(key)
            .fetch_optional(pool)
            .await)
    }

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
