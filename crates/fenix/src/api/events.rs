//! Events: ingestion (envelope built once, fan-out in the same transaction as
//! the event, idempotent on the producer's key) and the event log.

use axum::{
    extract::State,
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
        decode_cursor, page_limit, plain_text, ApiJson, ApiPath, ApiQuery, AppPath, EventPath, ListScope, NoQuery, Page,
    },
    lookup,
};
use crate::{
    envelope::envelope_data,
    event_types::EventType,
    state::SharedState,
    store::events::{EventFilter, EventRow},
    time,
};

/// Longest producer idempotency key accepted.
const MAX_KEY_LEN: usize = 256;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewEvent)]
struct IngestBody {
    #[serde(rename = "type")]
    #[schema(
        example = "booking.confirmed",
        pattern = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$"
    )]
    event_type: String,
    #[schema(value_type = Object, example = json!({"booking_id": "bk_123"}))]
    data: Box<RawValue>,
    /// The producer's idempotency key (the `Idempotency-Key` header wins).
    #[schema(min_length = 1, max_length = 256)]
    id: Option<String>,
}

/// An event as the API shows it; `data` only with `?include=payload`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Event)]
pub struct EventOut {
    pub id: String,
    pub app_id: String,
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
    /// `0`: says that no endpoint will receive it, so that a typo in `type` or
    /// a missing endpoint does not pass silently.
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
}

/// `/v1/apps/{app}/events…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(list, ingest)).routes(routes!(read))
}

fn idempotency_key(headers: &HeaderMap, body_id: Option<String>) -> Result<Option<String>, ApiError> {
    let key = match headers.get("idempotency-key") {
        Some(v) => Some(
            v.to_str()
                .map_err(|_| ApiError::bad_request("invalid_idempotency_key", "Idempotency-Key must be visible ASCII"))?
                .trim()
                .to_string(),
        ),
        None => body_id,
    };
    match key {
        // Characters, as documented: a body `id` may be any Unicode text.
        Some(k) if k.is_empty() || k.chars().count() > MAX_KEY_LEN => Err(ApiError::invalid(
            "invalid_idempotency_key",
            "the idempotency key (Idempotency-Key header or body id) must be 1-256 characters",
        )),
        Some(k) => {
            plain_text("the idempotency key (Idempotency-Key header or body id)", "invalid_idempotency_key", &k)?;
            Ok(Some(k))
        }
        None => Ok(None),
    }
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
            `fanout_limit_reached`",
            body = ErrorBody),
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
    let event_type = EventType::parse(&body.event_type)?;
    if !body.data.get().trim_start().starts_with('{') {
        return Err(ApiError::invalid("invalid_data", "data must be a JSON object"));
    }
    let key = idempotency_key(&headers, body.id)?;
    let new = crate::ingest::new_event(app.id, &event_type, &body.data, key, s.settings.max_fanout_per_event);
    let ingested = s.ingestor.ingest(new).await.map_err(|e| match &e {
        sqlx::Error::Database(d) if d.is_foreign_key_violation() => ApiError::not_found("app"),
        _ => ApiError::from(e),
    })?;
    if ingested.fanout_refused {
        return Err(ApiError::invalid(
            "fanout_limit_reached",
            format!(
                "this event matches {} endpoints, more than the {} one event may be sent to \
                 (FENIX_MAX_FANOUT_PER_EVENT); nothing was stored",
                ingested.event.delivery_count, s.settings.max_fanout_per_event
            ),
        ));
    }
    if ingested.created {
        s.metrics.ingested(ingested.event.delivery_count);
    }
    let mut out = EventOut::from_row(ingested.event, false);
    if out.deliveries == 0 {
        out.warning = Some(format!(
            "no endpoint of this app subscribes to `{}`; nothing will be delivered \
             (add an endpoint, or check the endpoints' event_types)",
            out.event_type
        ));
    }
    let out = Json(out);
    if ingested.created {
        Ok((StatusCode::ACCEPTED, out).into_response())
    } else {
        Ok((StatusCode::OK, [("idempotent-replayed", "true")], out).into_response())
    }
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
                ApiError::bad_request(
                    "invalid_time",
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
        Some(_) => Err(ApiError::bad_request("invalid_include", "include accepts only \"payload\"")),
    }
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/events", tag = "events", operation_id = "list_events",
    summary = "List an app's events",
    security(("bearer" = ["app:read"])),
    description = "Newest first, `limit` (1-250, default 50) per page. Filter by `event_type` (or `type`) and \
        creation time (`since`, `until`: RFC 3339); `include=payload` adds each event's `data`.",
    params(AppPath, ListQuery),
    responses(
        (status = 200, description = "A page of events", body = Page<EventOut>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_time`, `invalid_include`, `invalid_query`",
            body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<Page<EventOut>>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = page_limit(q.limit)?;
    let (since, until) = parse_window(q.since.as_deref(), q.until.as_deref())?;
    let include = include_payload(q.include.as_deref())?;
    let event_type = q.event_type.or(q.type_alias);
    let (since_ms, until_ms) = (since.map(|t| t.to_string()), until.map(|t| t.to_string()));
    let list = ListScope::new("evt", &[Some(&app.id), event_type.as_deref(), since_ms.as_deref(), until_ms.as_deref()]);
    let cursor = decode_cursor(&list, q.cursor.as_deref())?;
    let filter = EventFilter { event_type, since, until, cursor, limit: limit + 1, include_payload: include };
    let rows = s.store.list_events(&app.id, &filter).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.clone(), |r| EventOut::from_row(r, include))))
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
    )
)]
async fn read(
    State(s): State<SharedState>,
    ApiPath(EventPath { app, evt }): ApiPath<EventPath>,
    ApiQuery(q): ApiQuery<ReadQuery>,
) -> Result<Json<EventOut>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let include = include_payload(q.include.as_deref())?;
    let row = s.store.get_event(&app.id, &evt, include).await?.ok_or_else(|| ApiError::not_found("event"))?;
    Ok(Json(EventOut::from_row(row, include)))
}
