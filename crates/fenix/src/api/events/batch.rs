//! `POST /v1/apps/{app}/events/batch`: many events in one request, stored
//! with their deliveries in one transaction or not at all.

use axum::{
    body::Body,
    extract::{FromRequest, Request, State},
    http::{HeaderMap, StatusCode},
    Json,
};
use serde::{Deserialize, Serialize};

use super::{checked_key, fanout_refused, prepared_event, IngestBody, IDEMPOTENCY_KEY};
use crate::{
    api::{
        code::Code,
        error::{ApiError, ErrorBody},
        extract::{ApiJson, ApiPath, AppPath, NoQuery},
        lookup,
    },
    catalogue::Check,
    ids::{AppId, EventId},
    state::SharedState,
    store::{events::NewEvent, queue::Whole, Ingested},
    time,
    wake::Reach,
};

/// Many events in one request.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = EventBatch)]
pub(super) struct BatchBody {
    /// 1 to `FENIX_MAX_BATCH_EVENTS` (default 1000) events, each as in `send_event`; its `id` is its
    /// idempotency key.
    #[schema(min_items = 1)]
    events: Vec<IngestBody>,
}

/// What became of one event of a batch, in the request's order.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = EventBatchItem)]
pub(super) struct BatchItem {
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
    /// When its deliveries are scheduled for (its `deliver_at` or `delay`); null: sent at once.
    deliver_at: Option<String>,
}

/// The answer to a batch.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = EventBatchResult)]
pub(super) struct BatchOut {
    /// One item per event of the request, in its order.
    data: Vec<BatchItem>,
}

/// `ApiJson` under `FENIX_MAX_BATCH_BYTES` instead of the API's usual limit,
/// parsed (and then checked and written) in one of the state's few turns for
/// batches ([`crate::state::AppState::batches`]), held until the answer.
pub(super) struct BatchJson<T>(T, #[allow(dead_code)] tokio::sync::OwnedSemaphorePermit);

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
    params(
        AppPath,
        ("traceparent" = Option<String>, Header, description = "W3C trace context: while tracing is on \
            (`OTEL_EXPORTER_OTLP_ENDPOINT`), every event of the batch is traced under the producer's; a malformed \
            one is ignored"),
    ),
    request_body = BatchBody,
    responses(
        (status = 202, description = "Stored (or every event was a repeat); deliveries are queued", body = BatchOut),
        (status = 400, description = "`invalid_path`, `malformed_json`, `unknown_field`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: the body is larger than `FENIX_MAX_BATCH_BYTES`", body = ErrorBody),
        (status = 422, description = "`empty_batch`, `batch_too_large`, and for one event (its index in the \
            message) `invalid_event_type`, `invalid_data`, `invalid_idempotency_key`, `invalid_ordering_key`, \
            `invalid_schedule` (both `deliver_at` and `delay`, either unreadable, or past `FENIX_MAX_SCHEDULE_AHEAD`), \
            `invalid_channels`, `invalid_tags` (the place named: `events[3].channels[1] …`), \
            `fanout_limit_reached`, \
            `schema_mismatch` (with `error.details`, paths such as `/events/3/data/amount`), `unknown_event_type` \
            (strict mode), `duplicate_key`, `number_out_of_range`, `invalid_unicode`, `data_too_deep`, `unreadable_data`, \
            `schema_too_costly` (over `FENIX_SCHEMA_BUDGET`, or the batch's checks over `FENIX_SCHEMA_REQUEST_BUDGET`)",
            body = ErrorBody),
        (status = 503, description = "`overloaded`: every schema check slot stayed busy; retry", body = ErrorBody),
    )
)]
pub(super) async fn ingest_batch(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    headers: HeaderMap,
    BatchJson(body, _turn): BatchJson<BatchBody>,
) -> Result<(StatusCode, Json<BatchOut>), ApiError> {
    let span = s.traces.ingestion(&headers, "/v1/apps/{app}/events/batch");
    let answer = ingest_events(&s, &app, body, &span).await;
    match &answer {
        Ok((status, _)) => span.end_ingestion(status.as_u16(), None),
        Err(e) => span.end_ingestion(e.status.as_u16(), Some(e.code.as_str())),
    }
    answer
}

/// [`ingest_batch`] under its span: every event of the batch stores the
/// span's `traceparent` (one producer request, one trace), and the write is
/// the span's fan-out.
async fn ingest_events(
    s: &SharedState,
    app: &str,
    body: BatchBody,
    span: &crate::traces::Ingestion,
) -> Result<(StatusCode, Json<BatchOut>), ApiError> {
    let app = lookup::app_cached(s, app).await?;
    span.app(app.id.as_str());
    check_count(body.events.len(), s.settings.max_batch_events)?;
    let (mut events, checks, refused) = prepare(s, &app.id, body.events).await?;
    s.schema_checks.run(app.id.as_str(), checks).await.map_err(|(i, r)| at(i, r.into()))?;
    if let Some(e) = refused {
        return Err(e);
    }
    if let Some(traceparent) = span.traceparent() {
        events.iter_mut().for_each(|e| e.trace_context = Some(traceparent.clone()));
    }
    let fan_out = span.fan_out(&s.traces);
    let ingested = {
        let mut writer = s.store.hold_writer().await?;
        // A producer's batch is bulk work: the worker claims it (nothing leased fresh).
        let written = s.store.ingest_batch(&mut writer, &events, Whole::AllOrNothing, None).await;
        written.map_err(lookup::app_deleted_meanwhile)?.0
    };
    if let Some((i, refused)) = ingested.iter().enumerate().find(|(_, r)| r.fanout_refused) {
        return Err(at(i, fanout_refused("this event", refused.event.delivery_count, s)));
    }
    let (made, deliveries) = count(s, &ingested);
    fan_out.end_fan_out(made as i64, deliveries);
    if deliveries > 0 {
        s.wake.work_committed(Reach::ThisInstance).await;
    }
    tracing::debug!(app = %app.id, events = events.len(), created = made, deliveries, "batch ingested");
    let data = ingested.into_iter().map(BatchItem::from).collect();
    Ok((StatusCode::ACCEPTED, Json(BatchOut { data })))
}

/// An error of the event at `i`, its index in the message.
fn at(i: usize, e: ApiError) -> ApiError {
    ApiError { message: format!("events[{i}]: {}", e.message), ..e }
}

/// 1 to `max` events (`FENIX_MAX_BATCH_EVENTS`).
fn check_count(n: usize, max: usize) -> Result<(), ApiError> {
    match n {
        0 => Err(ApiError::new(Code::EmptyBatch, "events must hold at least one event")),
        n if n > max => Err(ApiError::new(
            Code::BatchTooLarge,
            format!("events holds {n} events, more than the {max} one batch may carry (FENIX_MAX_BATCH_EVENTS)"),
        )),
        _ => Ok(()),
    }
}

/// Each event's own rules, in the request's order, up to the first refused:
/// the events to write, their schema checks (run together afterwards, off the
/// runtime, within one request's budget) and the refusal, if any. The
/// batch's events are made at one moment, their ids one block in request
/// order: they are inserted in that order, each index keyed by id appends.
async fn prepare(
    s: &SharedState,
    app_id: &AppId,
    items: Vec<IngestBody>,
) -> Result<(Vec<NewEvent>, Vec<Check>, Option<ApiError>), ApiError> {
    let catalogue = s.catalogue.current(&s.store).await?;
    let mut events = Vec::with_capacity(items.len());
    let created_at = time::now_ms();
    let ids = EventId::new_block(created_at, items.len());
    let mut checks = Vec::new();
    for ((i, ev), id) in items.into_iter().enumerate().zip(ids) {
        let prepared = checked_key(IDEMPOTENCY_KEY, Code::InvalidIdempotencyKey, ev.id.clone()).and_then(|key| {
            prepared_event(s, &catalogue, (id, created_at), app_id.clone(), ev, key, &format!("/events/{i}/data"), i)
        });
        match prepared {
            Ok((event, check)) => {
                events.push(event);
                checks.extend(check);
            }
            // A channel or a tag is named by its place: `events[3].channels[1] …`.
            Err(e) if matches!(e.code, Code::InvalidChannels | Code::InvalidTags) => {
                return Ok((events, checks, Some(ApiError { message: format!("events[{i}].{}", e.message), ..e })))
            }
            Err(e) => return Ok((events, checks, Some(at(i, e)))),
        }
    }
    Ok((events, checks, None))
}

/// Counts the events this request created and their deliveries (and meters them).
fn count(s: &SharedState, ingested: &[Ingested]) -> (usize, i64) {
    let (mut made, mut deliveries) = (0, 0);
    for r in ingested.iter().filter(|r| r.created) {
        made += 1;
        deliveries += r.event.delivery_count;
        s.metrics.ingested(r.event.delivery_count);
    }
    (made, deliveries)
}

impl From<Ingested> for BatchItem {
    fn from(r: Ingested) -> BatchItem {
        BatchItem {
            id: r.event.id,
            event_type: r.event.event_type,
            idempotency_key: r.event.idempotency_key,
            created: r.created,
            deliveries: r.event.delivery_count,
            deliver_at: r.event.deliver_at.map(time::rfc3339_ms),
        }
    }
}
