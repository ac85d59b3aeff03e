//! Events: ingestion (envelope built once, fan-out in the same transaction as
//! the event, idempotent on the producer's key) and the event log.

use crate::api::code::{Code, Resource};
use axum::{
    body::Body,
    extract::{DefaultBodyLimit, FromRequest, Request, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    extract::{
        decode_cursor, page_limit, plain_text, ApiJson, ApiPath, ApiQuery, AppPath, EventPath, ListScope, NoQuery,
    },
    lookup,
    sized_page::{self, SizedPage},
};
use crate::{
    catalogue::{unknown_type, Check, Snapshot},
    envelope::envelope_data,
    event_types::EventType,
    ids::{AppId, EventId},
    state::SharedState,
    store::{
        events::{EventFilter, EventRow, NewEvent, SizedEvent},
        queue::Whole,
    },
    time,
    wake::Reach,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub data: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload_purged: Option<bool>,
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
        let data = r.payload.as_deref().and_then(envelope_data);
        EventOut {
            payload_purged: (include_payload && r.payload.is_none()).then_some(true),
            id: r.id,
            app_id: r.app_id,
            event_type: r.event_type,
            idempotency_key: r.idempotency_key,
            payload_sha256: r.payload_sha256,
            deliveries: r.delivery_count,
            created_at: time::rfc3339_ms(r.created_at),
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
    let batch = OpenApiRouter::new().routes(routes!(ingest_batch)).layer(DefaultBodyLimit::disable());
    OpenApiRouter::new().routes(routes!(list, ingest)).routes(routes!(read)).merge(batch)
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
    description = "Stores the event and one delivery per subscribed endpoint in one transaction. With an \
        idempotency key (the `Idempotency-Key` header, else the body's `id`), sending the same key again answers \
        the original event with 200 and `idempotent-replayed: true` and stores nothing.",
    params(
        AppPath,
        ("Idempotency-Key" = Option<String>, Header, description = "1-256 characters; wins over the body's `id`"),
    ),
    request_body = IngestBody,
    responses(
        (status = 202, description = "Stored; deliveries are queued", body = EventOut),
        (status = 200, description = "The key was seen before: the original event", body = EventOut,
            headers(("idempotent-replayed" = String, description = "`true`"))),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_event_type`, `invalid_data`, `invalid_idempotency_key`, \
            `invalid_ordering_key`, `fanout_limit_reached`, `schema_mismatch` (the event-type catalogue's schema; each mismatch in \
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
    let app = lookup::app_cached(&s, &app).await?;
    let key = idempotency_key(&headers, body.id.clone())?;
    let catalogue = s.catalogue.current(&s.store).await?;
    let deprecated = catalogue.get(&body.event_type).is_some_and(|t| t.deprecated);
    let made = (EventId::new(), time::now_ms());
    let new = checked_event(&s, &catalogue, made, app.id, body, key, "/data").await?;
    let ingested = s.ingestor.ingest(new).await.map_err(lookup::app_deleted_meanwhile)?;
    if ingested.fanout_refused {
        return Err(fanout_refused("this event", ingested.event.delivery_count, &s));
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
             (add an endpoint, or check the endpoints' event_types)",
            out.event_type
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
    let (id, created_at) = made;
    let max_fanout = s.settings.max_fanout_per_event;
    let mut new = crate::ingest::new_event_as(id, created_at, app_id, &event_type, &body.data, key, max_fanout);
    new.ordering_key = ordering_key;
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

/// Many events in one request.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = EventBatch)]
struct BatchBody {
    /// 1 to `FENIX_MAX_BATCH_EVENTS` (default 1000) events, each as in `send_event`; its `id` is its
    /// idempotency key.
    #[schema(min_items = 1)]
    events: Vec<IngestBody>,
}

/// What became of one event of a batch, in the request's order.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = EventBatchItem)]
struct BatchItem {
    /// The event's id: the new event's, or for a repeat the id of the event first stored with its key.
    id: EventId,
    #[serde(rename = "type")]
    event_type: String,
    idempotency_key: Option<String>,
    /// `true`: stored by this request; `false`: a repeat of an idempotency key seen before (in an
    /// earlier request, or earlier in this batch), nothing stored for it.
    created: bool,
    /// Deliveries of the event.
    deliveries: i64,
}

/// The answer to a batch.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = EventBatchResult)]
struct BatchOut {
    /// One item per event of the request, in its order.
    data: Vec<BatchItem>,
}

/// `ApiJson` under `FENIX_MAX_BATCH_BYTES` instead of the API's usual limit,
/// parsed (and then checked and written) in one of the state's few turns for
/// batches ([`crate::state::AppState::batches`]), held until the answer.
struct BatchJson<T>(T, #[allow(dead_code)] tokio::sync::OwnedSemaphorePermit);

impl<T: serde::de::DeserializeOwned> FromRequest<SharedState> for BatchJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, s: &SharedState) -> Result<Self, ApiError> {
        let limit = s.settings.max_batch_bytes;
        let too_large = || {
            ApiError::new(
                Code::PayloadTooLarge,
                format!(
                    "the batch is larger than {limit} bytes (FENIX_MAX_BATCH_BYTES); send fewer events per request"
                ),
            )
        };
        // The body first, outside the turns: a client that sends it slowly
        // keeps no other batch waiting.
        let (parts, body) = req.into_parts();
        let limited = Request::from_parts(parts.clone(), Body::new(http_body_util::Limited::new(body, limit)));
        let bytes = match axum::body::Bytes::from_request(limited, s).await {
            Ok(bytes) => bytes,
            Err(r) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => return Err(too_large()),
            Err(_) => return Err(ApiError::new(Code::UnreadableBody, "the request body could not be read")),
        };
        let turn = s.batches.clone().acquire_owned().await.expect("the batch semaphore is never closed");
        match ApiJson::<T>::from_request(Request::from_parts(parts, Body::from(bytes)), s).await {
            Ok(ApiJson(v)) => Ok(BatchJson(v, turn)),
            Err(e) if e.status == StatusCode::PAYLOAD_TOO_LARGE => Err(too_large()),
            Err(e) => Err(e),
        }
    }
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/events/batch", tag = "events", operation_id = "send_event_batch",
    security(("bearer" = ["app:manage"])),
    summary = "Send many events at once",
    description = "Stores every event of the batch with its deliveries in one transaction, or none of them. \
        Each event keeps its own idempotency key (its `id`): the answer lists, in the request's order, each \
        event's id and whether this request created it or it repeats a key seen before. A bad event refuses the \
        whole batch, its index in the error message (`events[3]: …`). At most `FENIX_MAX_BATCH_EVENTS` events \
        (default 1000) and `FENIX_MAX_BATCH_BYTES` of body (default 16 MiB).",
    params(AppPath),
    request_body = BatchBody,
    responses(
        (status = 202, description = "Stored (or every event was a repeat); deliveries are queued", body = BatchOut),
        (status = 400, description = "`invalid_path`, `malformed_json`, `unknown_field`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is larger than `FENIX_MAX_BATCH_BYTES`", body = ErrorBody),
        (status = 422, description = "`empty_batch`, `batch_too_large`, and for one event (its index in the \
            message) `invalid_event_type`, `invalid_data`, `invalid_idempotency_key`, `invalid_ordering_key`, \
            `fanout_limit_reached`, \
            `schema_mismatch` (with `error.details`, paths such as `/events/3/data/amount`), `unknown_event_type` \
            (strict mode), `duplicate_key`, `number_out_of_range`, `invalid_unicode`, `data_too_deep`, `unreadable_data`, \
            `schema_too_costly` (over `FENIX_SCHEMA_BUDGET`, or the batch's checks over `FENIX_SCHEMA_REQUEST_BUDGET`)",
            body = ErrorBody),
        (status = 503, description = "`overloaded`: every schema check slot stayed busy; retry", body = ErrorBody),
    )
)]
async fn ingest_batch(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    BatchJson(body, _turn): BatchJson<BatchBody>,
) -> Result<(StatusCode, Json<BatchOut>), ApiError> {
    let app = lookup::app_cached(&s, &app).await?;
    let max = s.settings.max_batch_events;
    match body.events.len() {
        0 => return Err(ApiError::new(Code::EmptyBatch, "events must hold at least one event")),
        n if n > max => {
            return Err(ApiError::new(
                Code::BatchTooLarge,
                format!("events holds {n} events, more than the {max} one batch may carry (FENIX_MAX_BATCH_EVENTS)"),
            ))
        }
        _ => {}
    }
    let at = |i: usize, e: ApiError| ApiError { message: format!("events[{i}]: {}", e.message), ..e };
    let catalogue = s.catalogue.current(&s.store).await?;
    let mut events = Vec::with_capacity(body.events.len());
    // The batch's events are made at one moment, their ids one block in request
    // order: they are inserted in that order, each index keyed by id appends.
    let created_at = time::now_ms();
    let ids = EventId::new_block(created_at, body.events.len());
    // Each event's own rules first, then every schema check of the batch in
    // one go off the runtime, within one request's budget; the first refusal
    // in the request's order is answered.
    let (mut checks, mut refused) = (Vec::new(), None);
    for ((i, ev), id) in body.events.into_iter().enumerate().zip(ids) {
        let prepared = checked_key(IDEMPOTENCY_KEY, Code::InvalidIdempotencyKey, ev.id.clone()).and_then(|key| {
            prepared_event(&s, &catalogue, (id, created_at), app.id.clone(), ev, key, &format!("/events/{i}/data"), i)
        });
        match prepared {
            Ok((event, check)) => {
                events.push(event);
                checks.extend(check);
            }
            Err(e) => {
                refused = Some(at(i, e));
                break;
            }
        }
    }
    s.schema_checks.run(app.id.as_str(), checks).await.map_err(|(i, r)| at(i, r.into()))?;
    if let Some(e) = refused {
        return Err(e);
    }
    let ingested = {
        let mut writer = s.store.hold_writer().await?;
        // A producer's batch is bulk work: the worker claims it (nothing leased fresh).
        let written = s.store.ingest_batch(&mut writer, &events, Whole::AllOrNothing, None).await;
        written.map_err(lookup::app_deleted_meanwhile)?.0
    };
    if let Some((i, refused)) = ingested.iter().enumerate().find(|(_, r)| r.fanout_refused) {
        return Err(at(i, fanout_refused("this event", refused.event.delivery_count, &s)));
    }
    let (mut made, mut deliveries) = (0, 0);
    for r in ingested.iter().filter(|r| r.created) {
        made += 1;
        deliveries += r.event.delivery_count;
        s.metrics.ingested(r.event.delivery_count);
    }
    if deliveries > 0 {
        s.wake.work_committed(Reach::ThisInstance).await;
    }
    tracing::debug!(app = %app.id, events = events.len(), created = made, deliveries, "batch ingested");
    let data = ingested
        .into_iter()
        .map(|r| BatchItem {
            id: r.event.id,
            event_type: r.event.event_type,
            idempotency_key: r.event.idempotency_key,
            created: r.created,
            deliveries: r.event.delivery_count,
        })
        .collect();
    Ok((StatusCode::ACCEPTED, Json(BatchOut { data })))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    /// Items per page, 1–250 (default 50).
    #[param(minimum = 1, maximum = 250)]
    limit: Option<i64>,
    /// `next_cursor` of the previous page of the same list, with the same filters.
    cursor: Option<String>,
    event_type: Option<String>,
    #[serde(rename = "type")]
    type_alias: Option<String>,
    #[param(format = DateTime)]
    since: Option<String>,
    #[param(format = DateTime)]
    until: Option<String>,
    /// `payload` adds each event's `data`.
    #[param(pattern = "^payload$")]
    include: Option<String>,
}

/// Parses `since`/`until` (RFC 3339).
pub fn parse_window(since: Option<&str>, until: Option<&str>) -> Result<(Option<i64>, Option<i64>), ApiError> {
    let parse = |name: &str, v: Option<&str>| -> Result<Option<i64>, ApiError> {
        v.map(|v| {
            time::parse_rfc3339(v).ok_or_else(|| {
                ApiError::new(
                    Code::InvalidTime,
                    format!(
                        "{name} must be an RFC 3339 time such as 2026-11-29T21:04:19Z or 2026-11-29T22:04:19+01:00"
                    ),
                )
            })
        })
        .transpose()
    };
    Ok((parse("since", since)?, parse("until", until)?))
}

fn include_payload(include: Option<&str>) -> Result<bool, ApiError> {
    match include {
        None | Some("") => Ok(false),
        Some("payload") => Ok(true),
        Some(_) => Err(ApiError::new(Code::InvalidInclude, "include accepts only \"payload\"")),
    }
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/events", tag = "events", operation_id = "list_events",
    summary = "List an app's events",
    security(("bearer" = ["app:read"])),
    description = "Newest first, `limit` (1-250, default 50) per page. Filter by `event_type` (or `type`) and \
        creation time (`since`, `until`: RFC 3339); `include=payload` adds each event's `data`. A page also \
        stops before `FENIX_MAX_PAGE_BYTES` (default 4 MiB) of items: then `cut_by_size` is `true` and \
        `next_cursor` continues after its last item; a page holds at least one item, however large. Answers \
        with payloads share the instance's `FENIX_ANSWER_BYTES`: when it stays full for 5 s, `503 overloaded` \
        with `Retry-After`.",
    params(AppPath, ListQuery),
    responses(
        (status = 200, description = "A page of events", body = SizedPage<EventOut>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_time`, `invalid_include`, `invalid_query`",
            body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 503, description = "`overloaded`: answers with payloads hold the instance's `FENIX_ANSWER_BYTES`; \
            retry after `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Response, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = page_limit(q.limit)?;
    let (since, until) = parse_window(q.since.as_deref(), q.until.as_deref())?;
    let include = include_payload(q.include.as_deref())?;
    let event_type = q.event_type.or(q.type_alias);
    let (since_ms, until_ms) = (since.map(|t| t.to_string()), until.map(|t| t.to_string()));
    let list = ListScope::new(
        "evt",
        &[Some(app.id.as_str()), event_type.as_deref(), since_ms.as_deref(), until_ms.as_deref()],
    );
    let cursor = decode_cursor(&list, q.cursor.as_deref())?;
    let filter = EventFilter { event_type, since, until, cursor, limit: limit + 1, include_payload: include };
    let mut rows = s.store.list_event_sizes(&app.id, &filter).await?;
    // The page's items are chosen by their stored sizes, and only theirs
    // are loaded, once the process has room for them.
    let sizes = rows.iter().map(|r| EventOut::most_bytes(r, include));
    let (count, bytes) = crate::answer_bytes::fitting(sizes, limit as usize, s.settings.max_page_bytes);
    let more = rows.len() > count;
    rows.truncate(count);
    let next_cursor = if more { rows.last().map(|r| list.encode(r.event.id.as_str())) } else { None };
    let cut_by_size = more && count < limit as usize;
    let (rows, share) = if include {
        let share = sized_page::take(&s, bytes).await?;
        (s.store.with_payloads(&app.id, rows).await?, share)
    } else {
        (rows.into_iter().map(|r| r.event).collect(), None)
    };
    Ok(sized_page::page_answer(rows, move |r| EventOut::from_row(r, include), next_cursor, cut_by_size, share))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct ReadQuery {
    /// `payload` adds the event's `data`.
    #[param(pattern = "^payload$")]
    include: Option<String>,
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/events/{evt}", tag = "events", operation_id = "get_event",
    summary = "Read an event",
    security(("bearer" = ["app:read"])),
    params(EventPath, ReadQuery),
    responses(
        (status = 200, description = "The event", body = EventOut),
        (status = 400, description = "`invalid_path`, `invalid_include`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `event_not_found`", body = ErrorBody),
        (status = 503, description = "`overloaded` (with `include=payload`): answers with payloads hold the \
            instance's `FENIX_ANSWER_BYTES`; retry after `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
async fn read(
    State(s): State<SharedState>,
    ApiPath(EventPath { app, evt }): ApiPath<EventPath>,
    ApiQuery(q): ApiQuery<ReadQuery>,
) -> Result<Response, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let include = include_payload(q.include.as_deref())?;
    let Some(evt) = lookup::id::<EventId>(&evt) else { return Err(ApiError::not_found(Resource::Event)) };
    if !include {
        let row = s.store.get_event(&app.id, &evt, false).await?.ok_or_else(|| ApiError::not_found(Resource::Event))?;
        return Ok(Json(EventOut::from_row(row, false)).into_response());
    }
    // The payload (as large as a batch allowed) is loaded once the process has room for it.
    let sized = s.store.get_event_size(&app.id, &evt).await?.ok_or_else(|| ApiError::not_found(Resource::Event))?;
    let share = sized_page::take(&s, EventOut::most_bytes(&sized, true)).await?;
    let row = s.store.with_payloads(&app.id, vec![sized]).await?.pop().expect("one event in, one out");
    Ok(sized_page::item_answer(&EventOut::from_row(row, true), share))
}
