//! Events: ingestion (envelope built once, fan-out in the same transaction as
//! the event, idempotent on the producer's key) and the event log.
//!
//! One event is sent here; a batch in `batch.rs`; the log is read in
//! `log.rs`; when a scheduled event comes due in `schedule.rs`; what is
//! still to be sent of an event is cancelled in `cancel.rs`; its payload
//! is erased on request in `expunge.rs`.

mod batch;
mod cancel;
mod expunge;
mod log;
mod schedule;

pub use log::{label_filters, parse_window};

use crate::api::code::Code;
use axum::{
    extract::{DefaultBodyLimit, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    duration::DurationIn,
    error::{ApiError, ErrorBody},
    extract::{plain_text, ApiJson, ApiPath, AppPath, NoQuery},
    lookup,
};
use crate::{
    catalogue::{unknown_type, Check, Snapshot},
    envelope::envelope_data,
    event_types::EventType,
    ids::{AppId, EventId},
    state::SharedState,
    store::events::{EventRow, NewEvent, SizedEvent},
    time,
};

/// Longest producer idempotency key accepted.
const MAX_KEY_LEN: usize = 256;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewEvent)]
pub(super) struct IngestBody {
    #[serde(rename = "type")]
    #[schema(
        example = "booking.confirmed",
        pattern = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$"
    )]
    pub(super) event_type: String,
    #[schema(value_type = Object, example = json!({"booking_id": "bk_123"}))]
    pub(super) data: Box<RawValue>,
    /// The producer's idempotency key (the `Idempotency-Key` header wins).
    #[schema(min_length = 1, max_length = 256)]
    pub(super) id: Option<String>,
    /// On an ordered endpoint, events with the same key are delivered one at a
    /// time in the order they were accepted; different keys go in parallel.
    /// Without a key, the event is in the endpoint's one keyless lane.
    /// Ignored by unordered endpoints.
    #[schema(min_length = 1, max_length = 256)]
    pub(super) ordering_key: Option<String>,
    /// Channels (at most 10 names, repeats kept once): an endpoint that lists
    /// channels receives the event only when it shares one of them; an
    /// endpoint without channels receives it whatever they are.
    #[serde(default)]
    #[schema(schema_with = crate::api::schemas::label_list, required = false)]
    pub(super) channels: Vec<String>,
    /// Tags (at most 10 names, repeats kept once): they do not route, the
    /// event log and the delivery log filter by them (`?tag=`).
    #[serde(default)]
    #[schema(schema_with = crate::api::schemas::label_list, required = false)]
    pub(super) tags: Vec<String>,
    /// Send it later, at this time (RFC 3339), at most `FENIX_MAX_SCHEDULE_AHEAD` (default 30d) ahead;
    /// a time already past means now. Its deliveries are stored at once and show `scheduled` until
    /// then. Not with `delay`.
    #[schema(format = DateTime, example = "2026-12-24T18:00:00Z")]
    pub(super) deliver_at: Option<String>,
    /// Send it later, this long after it is accepted (`90s`, `2h`, `7d`, or whole seconds), at most
    /// `FENIX_MAX_SCHEDULE_AHEAD`. Not with `deliver_at`.
    #[schema(value_type = Option<DurationIn>)]
    pub(super) delay: Option<DurationIn>,
}

/// An event as the API shows it; `data` only with `?include=payload`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Event)]
pub struct EventOut {
    pub id: crate::ids::EventId,
    pub app_id: crate::ids::AppId,
    #[serde(rename = "type")]
    pub event_type: String,
    pub idempotency_key: Option<String>,
    pub payload_sha256: String,
    pub deliveries: i64,
    pub created_at: String,
    /// The event's channels, as stored (`[]`: none).
    #[schema(schema_with = crate::api::schemas::label_list)]
    pub channels: Vec<String>,
    /// The event's tags, as stored (`[]`: none).
    #[schema(schema_with = crate::api::schemas::label_list)]
    pub tags: Vec<String>,
    /// When its deliveries were scheduled for (`deliver_at`, or `delay` after it was accepted); null:
    /// sent at once.
    #[schema(example = "2026-12-24T18:00:00.000Z")]
    pub deliver_at: Option<String>,
    /// The producer's `data` (with `?include=payload`); `null` once erased (`expunged_at`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub data: Option<Option<Box<RawValue>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload_purged: Option<bool>,
    /// When its payload was erased on request (`POST …/events/{evt}/expunge`); only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "2026-12-24T18:00:00.000Z")]
    pub expunged_at: Option<String>,
    /// Only in the answer to sending an event, and only when `deliveries` is
    /// `0` (no endpoint will receive it, so that a typo in `type` or a
    /// missing endpoint does not pass silently) or the type is deprecated in
    /// the event-type catalogue; both joined by `; `.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "no endpoint of this app subscribes to `booking.confirmed`; nothing will be delivered")]
    pub warning: Option<String>,
}

impl EventOut {
    fn from_row(r: EventRow, include_payload: bool) -> EventOut {
        // An erased payload answers `"data": null` everywhere, asked for or not.
        let data = match r.expunged_at {
            Some(_) => Some(None),
            None => r.payload.as_deref().and_then(envelope_data).map(Some),
        };
        EventOut {
            payload_purged: (include_payload && r.payload.is_none() && r.expunged_at.is_none()).then_some(true),
            expunged_at: r.expunged_at.map(time::rfc3339_ms),
            id: r.id,
            app_id: r.app_id,
            event_type: r.event_type,
            idempotency_key: r.idempotency_key,
            payload_sha256: r.payload_sha256,
            deliveries: r.delivery_count,
            created_at: time::rfc3339_ms(r.created_at),
            // Written by `labels::to_json` only: anything else reads as none.
            channels: crate::labels::from_json(&r.channels).unwrap_or_default(),
            tags: crate::labels::from_json(&r.tags).unwrap_or_default(),
            deliver_at: r.deliver_at.map(time::rfc3339_ms),
            data,
            warning: None,
        }
    }

    /// Most bytes `event` takes in a page (its item and the comma before it),
    /// known before its payload is loaded: its `data` is a part of the stored
    /// envelope, so never longer than it.
    fn most_bytes(event: &SizedEvent, include_payload: bool) -> usize {
        let without_data = serde_json::to_vec(&EventOut::from_row(event.event.clone(), include_payload))
            .expect("an event serializes")
            .len();
        let data = if include_payload { event.payload_bytes.unwrap_or(0) as usize + r#","data":"#.len() } else { 0 };
        1 + without_data + data
    }
}

/// `/v1/apps/{app}/events…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    // The batch route reads its body under its own, larger limit (`FENIX_MAX_BATCH_BYTES`).
    let batch = OpenApiRouter::new().routes(routes!(batch::ingest_batch)).layer(DefaultBodyLimit::disable());
    OpenApiRouter::new()
        .routes(routes!(log::list, ingest))
        .routes(routes!(log::read))
        .routes(routes!(cancel::cancel))
        .routes(routes!(expunge::expunge))
        .merge(batch)
}

/// The idempotency key: the `Idempotency-Key` header, else the body's `id`.
fn idempotency_key(headers: &HeaderMap, body_id: Option<String>) -> Result<Option<String>, ApiError> {
    let key = match headers.get("idempotency-key") {
        Some(v) => Some(
            v.to_str()
                .map_err(|_| {
                    ApiError::new(Code::InvalidIdempotencyKey, "Idempotency-Key must be visible ASCII")
                        .with_other_status()
                })?
                .trim()
                .to_string(),
        ),
        None => body_id,
    };
    checked_key(IDEMPOTENCY_KEY, Code::InvalidIdempotencyKey, key)
}

const IDEMPOTENCY_KEY: &str = "the idempotency key (Idempotency-Key header or body id)";

/// A producer's key (idempotency or ordering): 1-256 characters (characters,
/// as documented: a body `id` may be any Unicode text) of plain text.
fn checked_key(label: &str, code: Code, key: Option<String>) -> Result<Option<String>, ApiError> {
    let Some(k) = key else { return Ok(None) };
    if k.is_empty() || k.chars().count() > MAX_KEY_LEN {
        return Err(ApiError::new(code, format!("{label} must be 1-256 characters")));
    }
    plain_text(label, code, &k)?;
    Ok(Some(k))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/events", tag = "events", operation_id = "send_event",
    summary = "Send an event",
    security(("bearer" = ["app:manage"])),
    description = "Stores the event and one delivery per subscribed endpoint in one transaction. With \
        `deliver_at` or `delay`, the deliveries are stored now and sent at that time (they show `scheduled` \
        until then; `POST …/events/{evt}/cancel` cancels them). With an \
        idempotency key (the `Idempotency-Key` header, else the body's `id`), sending the same key again answers \
        the original event with 200 and `idempotent-replayed: true` and stores nothing.",
    params(
        AppPath,
        ("Idempotency-Key" = Option<String>, Header, description = "1-256 characters; wins over the body's `id`"),
        ("traceparent" = Option<String>, Header, description = "W3C trace context: while tracing is on \
            (`OTEL_EXPORTER_OTLP_ENDPOINT`), the event's trace continues the producer's; a malformed one is ignored"),
    ),
    request_body = IngestBody,
    responses(
        (status = 202, description = "Stored; deliveries are queued", body = EventOut),
        (status = 200, description = "The key was seen before: the original event", body = EventOut,
            headers(("idempotent-replayed" = String, description = "`true`"))),
        (status = 400, description = "`invalid_path`; `invalid_idempotency_key` when the `Idempotency-Key` header \
            is no visible ASCII", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_event_type`, `invalid_data`, `invalid_idempotency_key`, \
            `invalid_ordering_key`, `invalid_schedule` (both `deliver_at` and `delay`, either unreadable, or past \
            `FENIX_MAX_SCHEDULE_AHEAD`), `invalid_channels`, `invalid_tags` (the message names the place, e.g. \
            `channels[1]`), `fanout_limit_reached`, `schema_mismatch` (the event-type catalogue's schema; each mismatch in \
            `error.details`, its `path` a JSON Pointer into the body such as `/data/amount`), \
            `unknown_event_type` (only with `FENIX_EVENT_TYPES_STRICT`); when the type has a schema, data that \
            cannot be checked faithfully: `duplicate_key`, `number_out_of_range`, `invalid_unicode`, `data_too_deep`, `unreadable_data` \
            (the place in `error.details`); `schema_too_costly` (the check went over `FENIX_SCHEMA_BUDGET`)",
            body = ErrorBody),
        (status = 503, description = "`overloaded`: every schema check slot stayed busy; retry", body = ErrorBody),
    )
)]
async fn ingest(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<IngestBody>,
) -> Result<Response, ApiError> {
    let span = s.traces.ingestion(&headers, "/v1/apps/{app}/events");
    let answer = ingest_event(&s, &app, &headers, body, &span).await;
    end_ingestion(span, &answer);
    answer
}

/// Ends an ingestion's span with the status of its answer.
fn end_ingestion(span: crate::traces::Ingestion, answer: &Result<Response, ApiError>) {
    match answer {
        Ok(response) => span.end_ingestion(response.status().as_u16(), None),
        Err(e) => span.end_ingestion(e.status.as_u16(), Some(e.code.as_str())),
    }
}

/// [`ingest`] under its span: the event stores the span's `traceparent`,
/// and its write is the span's fan-out.
async fn ingest_event(
    s: &SharedState,
    app: &str,
    headers: &HeaderMap,
    body: IngestBody,
    span: &crate::traces::Ingestion,
) -> Result<Response, ApiError> {
    let app = lookup::app_cached(s, app).await?;
    span.app(app.id.as_str());
    let key = idempotency_key(headers, body.id.clone())?;
    let catalogue = s.catalogue.current(&s.store).await?;
    let deprecated = catalogue.get(&body.event_type).is_some_and(|t| t.deprecated);
    let made = (EventId::new(), time::now_ms());
    let mut new = checked_event(s, &catalogue, made, app.id, body, key, "/data").await?;
    span.event(new.id.as_str(), &new.event_type);
    new.trace_context = span.traceparent();
    let fan_out = span.fan_out(&s.traces);
    let ingested = s.ingestor.ingest(new).await.map_err(lookup::app_deleted_meanwhile);
    match &ingested {
        Ok(i) if i.created => fan_out.end_fan_out(1, i.event.delivery_count),
        _ => fan_out.end_fan_out(0, 0),
    }
    let ingested = ingested?;
    if !ingested.created {
        // An idempotent repeat: the event the key named first.
        span.event(ingested.event.id.as_str(), &ingested.event.event_type);
    }
    if ingested.fanout_refused {
        return Err(fanout_refused("this event", ingested.event.delivery_count, s));
    }
    if ingested.created {
        s.metrics.ingested(ingested.event.delivery_count);
    }
    let mut out = EventOut::from_row(ingested.event, false);
    let mut warnings = vec![];
    if deprecated {
        warnings.push(format!("event type `{}` is deprecated in the event-type catalogue", out.event_type));
    }
    if out.deliveries == 0 {
        warnings.push(format!(
            "no endpoint of this app subscribes to `{}`; nothing will be delivered \
             (add an endpoint, or check the endpoints' event_types{})",
            out.event_type,
            if out.channels.is_empty() { "" } else { " and channels" }
        ));
    }
    out.warning = (!warnings.is_empty()).then(|| warnings.join("; "));
    let out = Json(out);
    if ingested.created {
        Ok((StatusCode::ACCEPTED, out).into_response())
    } else {
        Ok((StatusCode::OK, [("idempotent-replayed", "true")], out).into_response())
    }
}

/// A producer's event checked and built: its type, an object as `data`
/// (matching its type's schema, if the catalogue has one; `data_path` is
/// where `data` sits in the request, for the errors' paths), and its key.
/// A type the catalogue lacks passes unless `FENIX_EVENT_TYPES_STRICT` is on.
/// `made`: the new event's id and creation time. Test events
/// (`test_events.rs`) go through it too.
pub(super) async fn checked_event(
    s: &SharedState,
    catalogue: &Snapshot,
    made: (EventId, time::Millis),
    app_id: AppId,
    body: IngestBody,
    key: Option<String>,
    data_path: &str,
) -> Result<NewEvent, ApiError> {
    let (new, check) = prepared_event(s, catalogue, made, app_id, body, key, data_path, 0)?;
    let app_id = new.app_id.clone();
    s.schema_checks
        .run(app_id.as_str(), check.into_iter().collect())
        .await
        .map_err(|(_, refused)| ApiError::from(refused))?;
    Ok(new)
}

/// [`checked_event`] but for its schema check, which it gives back to run
/// (with the batch's others) off the runtime: `None` for a type without a
/// schema, which costs nothing more. `index`: the event's place in its request.
#[allow(clippy::too_many_arguments)]
fn prepared_event(
    s: &SharedState,
    catalogue: &Snapshot,
    made: (EventId, time::Millis),
    app_id: AppId,
    body: IngestBody,
    key: Option<String>,
    data_path: &str,
    index: usize,
) -> Result<(NewEvent, Option<Check>), ApiError> {
    let event_type = EventType::parse(&body.event_type)?;
    if !body.data.get().trim_start().starts_with('{') {
        return Err(ApiError::new(Code::InvalidData, "data must be a JSON object"));
    }
    let compiled = match catalogue.shared(event_type.as_str()) {
        Some(known) => Some(known).filter(|k| k.has_schema()),
        None if s.settings.event_types_strict => return Err(unknown_type(event_type.as_str()).into()),
        None => None,
    };
    let ordering_key = checked_key("ordering_key", Code::InvalidOrderingKey, body.ordering_key)?;
    let channels = crate::labels::parse("channels", &body.channels)
        .map_err(|e| ApiError::new(Code::InvalidChannels, e.to_string()))?;
    let tags = crate::labels::parse("tags", &body.tags).map_err(|e| ApiError::new(Code::InvalidTags, e.to_string()))?;
    let (id, created_at) = made;
    let requested = schedule::Requested { deliver_at: body.deliver_at.as_deref(), delay: body.delay.as_ref() };
    let deliver_at = requested.due_at(created_at, s.settings.schedule_horizon())?;
    let max_fanout = s.settings.max_fanout_per_event;
    let mut new = crate::ingest::new_event_as(id, created_at, app_id, &event_type, &body.data, key, max_fanout);
    new.ordering_key = ordering_key;
    new.channels = channels;
    new.tags = tags;
    new.deliver_at = deliver_at;
    let check = compiled.map(|compiled| Check { index, compiled, data: body.data, base: data_path.to_string() });
    Ok((new, check))
}

fn fanout_refused(what: &str, matched: i64, s: &SharedState) -> ApiError {
    ApiError::new(
        Code::FanoutLimitReached,
        format!(
            "{what} matches {matched} endpoints, more than the {} one event may be sent to \
             (FENIX_MAX_FANOUT_PER_EVENT); nothing was stored",
            s.settings.max_fanout_per_event
        ),
    )
}
