//! Events: what ingestion writes and answers, and the event log. The writing
//! itself (an event and all its deliveries in one transaction, many events in
//! one batch) is the queue's [`Store::ingest_batch`].

use super::{apps::CURSOR_END, sql::Built, Store};
use crate::store::Result;
use crate::time::Millis;

/// An event as stored. `payload` is only loaded when asked for.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EventRow {
    pub id: crate::ids::EventId,
    pub app_id: crate::ids::AppId,
    pub event_type: String,
    pub idempotency_key: Option<String>,
    pub payload: Option<Vec<u8>>,
    pub payload_sha256: String,
    pub delivery_count: i64,
    pub created_at: Millis,
    /// JSON array of the event's channels (`labels`), `[]` for none.
    pub channels: String,
    /// JSON array of the event's tags, `[]` for none.
    pub tags: String,
    /// When its deliveries were due first, for an event sent with
    /// `deliver_at` or `delay` (`None`: at once, when it was accepted).
    pub deliver_at: Option<Millis>,
    /// When its payload was erased on request (`POST …/expunge`, migration
    /// 0024); `None`: never (a payload purged by retention has none either).
    pub expunged_at: Option<Millis>,
}

/// What ingestion writes.
#[derive(Debug)]
pub struct NewEvent {
    pub id: crate::ids::EventId,
    pub app_id: crate::ids::AppId,
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
    pub only_endpoint: Option<crate::ids::EndpointId>,
    /// The producer's ordering key (1-256 characters): on an ordered endpoint,
    /// order holds per key; `None` is the endpoint's one keyless lane.
    pub ordering_key: Option<String>,
    /// The event's channels (at most 10 validated names, no duplicates, in
    /// the producer's order): an endpoint that lists channels receives only
    /// events sharing at least one of them. Empty: no channel.
    pub channels: Vec<String>,
    /// The event's tags (at most 10 validated names, no duplicates): only
    /// for filtering the logs (and content filters); they do not route.
    pub tags: Vec<String>,
    /// A scheduled event: its deliveries are stored now and due then (after
    /// `created_at`, at most `FENIX_MAX_SCHEDULE_AHEAD` ahead: the API
    /// checks it). `None`: due at once.
    pub deliver_at: Option<Millis>,
    /// The W3C `traceparent` of the span that ingested it (`traces`), for
    /// its attempts' spans to be children of; `None` while tracing is off.
    pub trace_context: Option<String>,
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
    /// Only events carrying this channel (`event_labels`).
    pub channel: Option<String>,
    /// Only events carrying this tag.
    pub tag: Option<String>,
}

/// An event by its idempotency key (no payload).
pub(super) const EVENT_BY_KEY: &str =
    "SELECT id, app_id, event_type, idempotency_key, NULL AS payload, payload_sha256, delivery_count, \
     created_at, channels, tags, deliver_at, expunged_at FROM events WHERE app_id = $1 AND idempotency_key = $2";

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
            channels: crate::labels::to_json(&self.channels),
            tags: crate::labels::to_json(&self.tags),
            deliver_at: self.deliver_at,
            expunged_at: None,
        }
    }

    /// When its deliveries are first due: its `deliver_at`, else at once.
    pub fn due_at(&self) -> Millis {
        self.deliver_at.unwrap_or(self.created_at)
    }
}

/// The columns of an event in the log (the payload bytes stay in the database).
pub const EVENT_COLUMNS: &str =
    "id, app_id, event_type, idempotency_key, NULL AS payload, payload_sha256, delivery_count, created_at, \
     channels, tags, deliver_at, expunged_at";
const EVENT_COLUMNS_WITH_PAYLOAD: &str = "id, app_id, event_type, idempotency_key, payload, payload_sha256, \
     delivery_count, created_at, channels, tags, deliver_at, expunged_at";

impl Store {
    /// One event of one app.
    pub async fn get_event(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::EventId,
        include_payload: bool,
    ) -> Result<Option<EventRow>> {
        let cols = if include_payload { EVENT_COLUMNS_WITH_PAYLOAD } else { EVENT_COLUMNS };
        let sql = format!("SELECT {cols} FROM events WHERE id = $1 AND app_id = $2");
        self.reads().fetch_optional(&sql, &[id.into(), app_id.into()]).await
    }

    /// The `traceparent` an event's ingestion stored (`traces`), for a
    /// replay's span; `None` when it has none (or is gone).
    pub async fn event_trace_context(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::EventId,
    ) -> Result<Option<String>> {
        let sql = "SELECT trace_context FROM events WHERE id = $1 AND app_id = $2";
        let row: Option<(Option<String>,)> = self.reads().fetch_optional(sql, &[id.into(), app_id.into()]).await?;
        Ok(row.and_then(|(tp,)| tp))
    }

    /// The event log of an app, newest first.
    pub async fn list_events(&self, app_id: &crate::ids::AppId, f: &EventFilter) -> Result<Vec<EventRow>> {
        let cols = if f.include_payload { EVENT_COLUMNS_WITH_PAYLOAD } else { EVENT_COLUMNS };
        let q = log_query(cols, app_id.as_str(), f);
        self.reads().fetch_all(&q.sql, &q.values).await
    }

    /// The event log of an app, newest first, without payloads but with the
    /// stored length of each (`f.include_payload` is not looked at): a page
    /// is cut to its byte budget before any payload is loaded
    /// ([`Store::event_payloads`]).
    pub async fn list_event_sizes(&self, app_id: &crate::ids::AppId, f: &EventFilter) -> Result<Vec<SizedEvent>> {
        let cols = format!("{EVENT_COLUMNS}, {PAYLOAD_BYTES}");
        let q = log_query(&cols, app_id.as_str(), f);
        self.reads().fetch_all(&q.sql, &q.values).await
    }

    /// One event of one app with the stored length of its payload (not loaded).
    pub async fn get_event_size(
        &self,
        app_id: &crate::ids::AppId,
        id: &crate::ids::EventId,
    ) -> Result<Option<SizedEvent>> {
        let sql = format!("SELECT {EVENT_COLUMNS}, {PAYLOAD_BYTES} FROM events WHERE id = $1 AND app_id = $2");
        self.reads().fetch_optional(&sql, &[id.into(), app_id.into()]).await
    }

    /// `events` (of one app, newest first, as [`Store::list_event_sizes`]
    /// gave them) with their payloads loaded; an event purged or deleted
    /// meanwhile comes without one.
    pub async fn with_payloads(&self, app_id: &crate::ids::AppId, events: Vec<SizedEvent>) -> Result<Vec<EventRow>> {
        let ids: Vec<String> =
            events.iter().filter(|e| e.payload_bytes.is_some()).map(|e| e.event.id.to_string()).collect();
        let mut payloads: std::collections::HashMap<String, Option<Vec<u8>>> =
            self.event_payloads(app_id, &ids).await?.into_iter().collect();
        let with = |SizedEvent { mut event, .. }| {
            event.payload = payloads.remove(event.id.as_str()).flatten();
            event
        };
        Ok(events.into_iter().map(with).collect())
    }

    /// The payloads (envelopes) of events of one app: each id with its
    /// payload, `None` once purged; an id that is gone is left out.
    async fn event_payloads(
        &self,
        app_id: &crate::ids::AppId,
        ids: &[String],
    ) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut q = Built::new("SELECT id, payload FROM events WHERE app_id = ");
        q.bind(app_id).push(" AND id IN ").bind_list(ids);
        self.reads().fetch_all(&q.sql, &q.values).await
    }
}

/// The stored length of the payload in bytes (`length` of a blob or `bytea`
/// counts bytes on both backends, and reads the length without the value;
/// PostgreSQL answers an `int4`, made a `BIGINT` for one type on both).
const PAYLOAD_BYTES: &str = "CAST(length(payload) AS BIGINT) AS payload_bytes";

/// An event of the log without its payload, and the payload's stored length.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SizedEvent {
    #[sqlx(flatten)]
    pub event: EventRow,
    /// `None` once the payload was purged.
    pub payload_bytes: Option<i64>,
}

/// `SELECT cols` of an app's log under `f`, newest first: one statement for both backends.
fn log_query<'a>(cols: &str, app_id: &'a str, f: &'a EventFilter) -> Built<'a> {
    let mut q = Built::new(format!("SELECT {cols} FROM events WHERE app_id = "));
    q.bind(app_id);
    q.push(" AND id < ").bind(f.cursor.as_deref().unwrap_or(CURSOR_END));
    if let Some(t) = &f.event_type {
        q.push(" AND event_type = ").bind(t);
    }
    if let Some(s) = f.since {
        q.push(" AND created_at >= ").bind(s);
    }
    if let Some(u) = f.until {
        q.push(" AND created_at < ").bind(u);
    }
    for (kind, name) in label_filters(f.channel.as_deref(), f.tag.as_deref()) {
        q.push(" AND id IN (");
        labelled_events(&mut q, app_id, kind, name);
        // The same bound as the page's: the primary key's range starts at the cursor.
        q.push(" AND event_id < ").bind(f.cursor.as_deref().unwrap_or(CURSOR_END));
        q.push(")");
    }
    q.push(" ORDER BY id DESC LIMIT ").bind(f.limit);
    q
}

/// The label filters asked for: (kind, name) of a channel and of a tag.
pub(super) fn label_filters<'a>(
    channel: Option<&'a str>,
    tag: Option<&'a str>,
) -> impl Iterator<Item = (crate::labels::Kind, &'a str)> {
    use crate::labels::Kind;
    channel.map(|c| (Kind::Channel, c)).into_iter().chain(tag.map(|t| (Kind::Tag, t)))
}

/// `SELECT event_id FROM event_labels …`: the events of `app_id` carrying
/// the label, read on the table's primary key (`app_id, kind, name,
/// event_id`; the migration says why a table of its own). Both logs filter
/// through it: the event log's `id IN (…)`, the delivery log's `event_id IN (…)`.
pub(super) fn labelled_events<'a>(q: &mut Built<'a>, app_id: &'a str, kind: crate::labels::Kind, name: &'a str) {
    q.push("SELECT event_id FROM event_labels WHERE app_id = ").bind(app_id);
    q.push(" AND kind = ").bind(kind.as_str());
    q.push(" AND name = ").bind(name);
}
