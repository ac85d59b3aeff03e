//! The delivery log: deliveries with filters, each delivery's attempts, and
//! replay of one delivery.

use crate::api::code::{Code, Resource};
use axum::{extract::State, http::StatusCode, Json};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    events::parse_window,
    extract::{
        decode_cursor, optional_json, page_limit, ApiPath, ApiQuery, AppPath, DeliveryPath, ListScope, NoOptions,
        NoQuery, Page, RawBody,
    },
    lookup::{self, IdParam},
    status_filter::{self, StatusFilter},
};
use crate::{
    ids::{AttemptId, DeliveryId, EndpointId, EventId},
    lifecycle::DeliveryStatus,
    send_budgets::{self, Action},
    state::SharedState,
    store::{
        deliveries::{AttemptRecord, DeliveryFilter, DeliveryRow},
        replay::ReplayRefusal,
    },
    time,
};

/// A delivery as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Delivery)]
pub struct DeliveryOut {
    pub id: crate::ids::DeliveryId,
    pub app_id: crate::ids::AppId,
    pub event_id: crate::ids::EventId,
    /// The event's type.
    pub event_type: String,
    pub endpoint_id: crate::ids::EndpointId,
    pub status: DeliveryStatus,
    pub attempt_count: i64,
    pub next_attempt_at: Option<String>,
    pub last_attempt_at: Option<String>,
    /// The HTTP status the latest attempt was answered with; null before any attempt, or when none came.
    #[schema(example = 503)]
    pub last_status_code: Option<i64>,
    /// What failed the latest attempt (its `error_detail`, else its `error`); null once it succeeded or before any.
    #[schema(example = "the receiver answered 503")]
    pub last_error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Its lane on an ordered endpoint (`""` is the keyless lane); null for an unordered endpoint.
    pub ordering_key: Option<String>,
    /// Why a `pending` delivery of an ordered endpoint waits: the id of the delivery of its lane it
    /// waits for (the head of the lane, a dead letter that blocks it, or one being sent); else null.
    pub blocked_by: Option<String>,
    /// Why a `skipped` delivery was not sent, when known: `transformation_cancelled` (its endpoint's
    /// transformation set `cancel`), `cancelled` (its event was cancelled before it was sent),
    /// `payload_erased` (its event's payload was erased before it was sent); else null.
    #[schema(example = "transformation_cancelled")]
    pub skip_reason: Option<String>,
}

impl From<DeliveryRow> for DeliveryOut {
    fn from(r: DeliveryRow) -> Self {
        let open = r.status.is_open();
        DeliveryOut {
            id: r.id,
            app_id: r.app_id,
            event_id: r.event_id,
            event_type: r.event_type,
            endpoint_id: r.endpoint_id,
            status: r.status,
            attempt_count: r.attempt_count,
            // A delivery parked in its ordered lane has no time yet: `blocked_by` says what it waits for.
            next_attempt_at: r
                .next_attempt_at
                .filter(|at| open && *at < crate::store::queue::PARKED)
                .map(time::rfc3339_ms),
            last_attempt_at: r.last_attempt_at.map(time::rfc3339_ms),
            last_status_code: r.last_status_code,
            last_error: r.last_error,
            created_at: time::rfc3339_ms(r.created_at),
            updated_at: time::rfc3339_ms(r.updated_at),
            ordering_key: r.ordering_key,
            blocked_by: r.blocked_by,
            skip_reason: r.skip_reason,
        }
    }
}

/// An attempt as the API shows it; `id` is the `X-Fenix-Delivery-Id` that was sent.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Attempt)]
pub struct AttemptOut {
    pub id: crate::ids::AttemptId,
    pub delivery_id: crate::ids::DeliveryId,
    pub attempt_number: i64,
    pub started_at: String,
    pub duration_ms: i64,
    pub response_status: Option<i64>,
    pub response_excerpt: Option<String>,
    #[schema(schema_with = crate::api::schemas::error_class)]
    pub error: Option<String>,
    pub error_detail: Option<String>,
    /// Secret versions whose signatures the request carried, newest first.
    pub signed_with: Vec<i64>,
}

impl From<AttemptRecord> for AttemptOut {
    fn from(r: AttemptRecord) -> Self {
        AttemptOut {
            signed_with: serde_json::from_str(&r.signed_with).unwrap_or_default(),
            id: r.id,
            delivery_id: r.delivery_id,
            attempt_number: r.attempt_number,
            started_at: time::rfc3339_ms(r.started_at),
            duration_ms: r.duration_ms,
            response_status: r.response_status,
            response_excerpt: r.response_excerpt,
            error: r.error,
            error_detail: r.error_detail,
        }
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
    #[param(value_type = Option<String>)]
    endpoint_id: Option<IdParam<EndpointId>>,
    #[param(value_type = Option<String>)]
    event_id: Option<IdParam<EventId>>,
    /// The event's type, exactly (`type` is the same filter).
    event_type: Option<String>,
    #[serde(rename = "type")]
    type_alias: Option<String>,
    /// A status as shown, or `failing` (pending with at least one failed attempt: still being retried).
    #[param(schema_with = status_filter::schema)]
    status: Option<String>,
    #[param(format = DateTime)]
    since: Option<String>,
    #[param(format = DateTime)]
    until: Option<String>,
    /// Only deliveries of events carrying this channel.
    #[param(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$"
    )]
    channel: Option<String>,
    /// Only deliveries of events carrying this tag.
    #[param(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$"
    )]
    tag: Option<String>,
}

/// Delivery log routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(read))
        .routes(routes!(attempts))
        .routes(routes!(replay))
        .routes(routes!(skip))
        .routes(routes!(read_attempt))
        .routes(routes!(transformed_request))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/deliveries", tag = "deliveries", operation_id = "list_deliveries",
    summary = "List an app's deliveries",
    security(("bearer" = ["app:read"])),
    description = "Newest first, `limit` (1-250, default 50) per page. Filter by `endpoint_id`, `event_id`, \
        `event_type` (or `type`), `status` (scheduled: waiting for its event's `deliver_at`, pending, in_flight, \
        succeeded, failed, skipped, or failing: pending with at least one failed attempt), creation time (`since`, `until`: RFC 3339), and the event's `channel` \
        and `tag`. Each delivery carries \
        its latest attempt's `last_status_code` and `last_error`.",
    params(AppPath, ListQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = Page<DeliveryOut>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_status`, `invalid_time`, `invalid_query`",
            body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<Page<DeliveryOut>>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = page_limit(q.limit)?;
    let status = q.status.as_deref().map(StatusFilter::parse).transpose()?;
    let (since, until) = parse_window(q.since.as_deref(), q.until.as_deref())?;
    let (since_ms, until_ms) = (since.map(|t| t.to_string()), until.map(|t| t.to_string()));
    let event_type = q.event_type.or(q.type_alias);
    let (channel, tag) = crate::api::events::label_filters(q.channel, q.tag)?;
    let mut filters = vec![
        q.endpoint_id.as_ref().map(IdParam::text),
        q.event_id.as_ref().map(IdParam::text),
        status.map(|s| s.as_str()),
        since_ms.as_deref(),
        until_ms.as_deref(),
        event_type.as_deref(),
    ];
    if channel.is_some() || tag.is_some() {
        // Only then, so the cursors of lists without them stay as they were.
        filters.extend([channel.as_deref(), tag.as_deref()]);
    }
    let list = list_scope(app.id.as_str(), &filters);
    let cursor = decode_cursor(&list, q.cursor.as_deref())?;
    // A filter that is no id of its kind matches nothing, as an unknown id does.
    let endpoint_id = q.endpoint_id.map(|p| p.known(Resource::Endpoint));
    let event_id = q.event_id.map(|p| p.known(Resource::Event));
    let (Ok(endpoint_id), Ok(event_id)) = (endpoint_id.transpose(), event_id.transpose()) else {
        return Ok(Json(Page::from_rows(
            Vec::new(),
            limit,
            &list,
            |r: &DeliveryRow| r.id.to_string(),
            DeliveryOut::from,
        )));
    };
    let filter = DeliveryFilter {
        endpoint_id,
        event_id,
        event_type,
        status: status.and_then(|s| match s {
            StatusFilter::Is(status) => Some(status),
            StatusFilter::Failing => None,
        }),
        failing: status == Some(StatusFilter::Failing),
        since,
        until,
        cursor,
        limit: limit + 1,
        channel,
        tag,
    };
    let rows = s.store.list_deliveries(&app.id, &filter).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.to_string(), DeliveryOut::from)))
}

/// The list an app's delivery log cursor belongs to: the app, then each
/// filter in a fixed order (`endpoint_id`, `event_id`, `status`, `since`,
/// `until` in ms, `event_type`, and only when either is given `channel`, `tag`).
fn list_scope(app_id: &str, filters: &[Option<&str>]) -> ListScope {
    let mut parts = vec![Some(app_id)];
    parts.extend_from_slice(filters);
    ListScope::new("dlv", &parts)
}

/// The `next_cursor` the unfiltered delivery log of `app_id` answers for a
/// page that ends with `last_id`: what a client holds after paging that deep.
/// The benchmark uses it to time a page deep in a large log without walking
/// there page by page.
pub fn unfiltered_cursor_after(app_id: &str, last_id: &str) -> String {
    list_scope(app_id, &[None; 6]).encode(last_id)
}

async fn find(s: &SharedState, app: &str, dlv: &IdParam<DeliveryId>) -> Result<DeliveryRow, ApiError> {
    let app = lookup::app(&s.store, app).await?;
    let Some(dlv) = dlv.id() else { return Err(ApiError::not_found(Resource::Delivery)) };
    s.store.get_delivery(&app.id, dlv).await?.ok_or_else(|| ApiError::not_found(Resource::Delivery))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/deliveries/{dlv}", tag = "deliveries", operation_id = "get_delivery",
    summary = "Read a delivery",
    security(("bearer" = ["app:read"])),
    params(DeliveryPath),
    responses(
        (status = 200, description = "The delivery", body = DeliveryOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `delivery_not_found`", body = ErrorBody),
    )
)]
async fn read(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(DeliveryPath { app, dlv }): ApiPath<DeliveryPath>,
) -> Result<Json<DeliveryOut>, ApiError> {
    Ok(Json(find(&s, &app, &dlv).await?.into()))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/deliveries/{dlv}/attempts", tag = "deliveries",
    operation_id = "list_delivery_attempts",
    summary = "List a delivery's attempts",
    security(("bearer" = ["app:read"])),
    params(DeliveryPath),
    responses(
        (status = 200, description = "Every attempt, in one page", body = Page<AttemptOut>),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `delivery_not_found`", body = ErrorBody),
    )
)]
async fn attempts(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(DeliveryPath { app, dlv }): ApiPath<DeliveryPath>,
) -> Result<Json<Page<AttemptOut>>, ApiError> {
    let d = find(&s, &app, &dlv).await?;
    let rows = s.store.list_attempts(&d.id).await?;
    Ok(Json(Page { data: rows.into_iter().map(AttemptOut::from).collect(), next_cursor: None }))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/deliveries/{dlv}/replay", tag = "deliveries", operation_id = "replay_delivery",
    summary = "Send a failed or skipped delivery again",
    security(("bearer" = ["app:manage"])),
    description = "Same event id and envelope, a fresh attempt budget; earlier attempts stay in the log. \
        Replays are limited per endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.",
    params(DeliveryPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 202, description = "Queued again", body = DeliveryOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `delivery_not_found`", body = ErrorBody),
        (status = 409, description = "`not_replayable` (not failed or skipped), `payload_expired` (purged by \
            retention)", body = ErrorBody),
        (status = 429, description = "`replay_limit_reached`: the endpoint's or the app's delivery replays are \
            spent for now; nothing was re-queued", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
async fn replay(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(DeliveryPath { app, dlv }): ApiPath<DeliveryPath>,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<DeliveryOut>), ApiError> {
    let d = find(&s, &app, &dlv).await?;
    let NoOptions {} = optional_json(&body)?;
    let now = time::now_ms();
    // Only a call that can re-queue spends (a 409 below sends nothing).
    if d.status.is_replayable() {
        send_budgets::take(&s.store, Action::DeliveryReplay, &d.app_id, &d.endpoint_id, now)
            .await?
            .map_err(ApiError::over_budget)?;
    }
    let span = replay_span(&s, &d).await?;
    let replayed = s.store.replay_delivery(&d.app_id, &d.id, now).await?;
    span.end_replay(replayed.is_ok());
    match replayed {
        Ok(()) => {
            s.wake.work_committed(crate::wake::Reach::AllInstances).await;
            Ok((StatusCode::ACCEPTED, Json(find(&s, &app, &dlv).await?.into())))
        }
        Err(ReplayRefusal::NotFound) => Err(ApiError::not_found(Resource::Delivery)),
        Err(ReplayRefusal::NotReplayable(status)) => Err(ApiError::new(
            Code::NotReplayable,
            format!("this delivery is {status}; only failed or skipped deliveries can be replayed"),
        )),
        Err(ReplayRefusal::PayloadExpired) => Err(ApiError::new(
            Code::PayloadExpired,
            "the event's payload was purged by retention (FENIX_PAYLOAD_RETENTION); it cannot be sent again",
        )),
    }
}

/// The span of a replay of `d`, in its event's trace (nothing, and no read,
/// with tracing off).
async fn replay_span(s: &SharedState, d: &DeliveryRow) -> Result<crate::traces::Span, ApiError> {
    let stored = match s.traces.is_on() {
        true => s.store.event_trace_context(&d.app_id, &d.event_id).await?,
        false => None,
    };
    Ok(s.traces.replay(stored.as_deref(), d.event_id.as_str(), d.id.as_str()))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/deliveries/{dlv}/skip", tag = "deliveries", operation_id = "skip_delivery",
    summary = "Give up on a dead letter",
    security(("bearer" = ["app:manage"])),
    description = "A `failed` delivery becomes `skipped` (it can still be replayed). On an ordered endpoint with \
        `on_dead_letter: block`, its lane goes on with the next delivery.",
    params(DeliveryPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "Skipped", body = DeliveryOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `delivery_not_found`", body = ErrorBody),
        (status = 409, description = "`not_skippable` (only a failed delivery can be skipped)", body = ErrorBody),
    )
)]
async fn skip(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(DeliveryPath { app, dlv }): ApiPath<DeliveryPath>,
    RawBody(body): RawBody,
) -> Result<Json<DeliveryOut>, ApiError> {
    let d = find(&s, &app, &dlv).await?;
    let NoOptions {} = optional_json(&body)?;
    match s.store.skip_dead_letter(&d.app_id, &d.id, time::now_ms()).await? {
        Some(Ok(())) => {
            // An ordered lane that waited on it may go on, on any instance.
            s.wake.work_committed(crate::wake::Reach::AllInstances).await;
            Ok(Json(find(&s, &app, &dlv).await?.into()))
        }
        Some(Err(status)) => Err(ApiError::new(
            Code::NotSkippable,
            format!("this delivery is {status}; only a failed delivery (a dead letter) can be skipped"),
        )),
        None => Err(ApiError::not_found(Resource::Delivery)),
    }
}

/// `{app}/attempts/{att}`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
struct AttemptPath {
    /// The app's id (`app_…`) or its uid.
    app: String,
    /// The attempt's id (`att_…`): the `X-Fenix-Delivery-Id` header the receiver got.
    #[param(value_type = String)]
    att: IdParam<AttemptId>,
}

/// An attempt with the delivery it belongs to.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = AttemptWithDelivery)]
pub struct AttemptWithDelivery {
    #[serde(flatten)]
    pub attempt: AttemptOut,
    pub delivery: DeliveryOut,
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/attempts/{att}", tag = "deliveries", operation_id = "get_attempt",
    summary = "Read an attempt and its delivery",
    description = "`att` is the `X-Fenix-Delivery-Id` a receiver logged (each attempt sends its own); the answer \
        is that attempt with its `delivery`, whose `event_id` is the `X-Fenix-Event-Id` it got.",
    params(AttemptPath),
    responses(
        (status = 200, description = "The attempt with its delivery", body = AttemptWithDelivery),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `attempt_not_found`", body = ErrorBody),
    ),
    security(("bearer" = ["app:read"]))
)]
async fn read_attempt(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AttemptPath { app, att }): ApiPath<AttemptPath>,
) -> Result<Json<AttemptWithDelivery>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let missing = || ApiError::new(Code::AttemptNotFound, "no such attempt");
    let Some(att) = att.id() else { return Err(missing()) };
    let attempt = s.store.get_attempt(&app.id, att).await?.ok_or_else(missing)?;
    // Deleted between the two reads (retention, or its endpoint deleted): gone all the same.
    let delivery = s.store.get_delivery(&app.id, &attempt.delivery_id).await?.ok_or_else(missing)?;
    Ok(Json(AttemptWithDelivery { attempt: attempt.into(), delivery: delivery.into() }))
}

/// The request a delivery's endpoint transformation made, as every attempt sends it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = TransformedRequest)]
pub struct TransformedRequestOut {
    /// `POST` or `PUT`.
    pub method: String,
    /// The endpoint's URL with the path and query the transformation chose.
    pub url: String,
    /// The custom headers it chose (Fenix's own, the signature and sensitive headers are added to them).
    pub headers: std::collections::BTreeMap<String, String>,
    /// The body every attempt sends (and signs).
    #[schema(value_type = Object)]
    pub payload: Box<serde_json::value::RawValue>,
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/deliveries/{dlv}/request", tag = "deliveries",
    operation_id = "get_transformed_request",
    summary = "Read the request a transformation made for a delivery",
    security(("bearer" = ["app:read"])),
    description = "For a delivery to an endpoint with a `transformation`: the request stored before its first \
        request was sent, which every attempt sends (signed anew). It carries the payload in its new shape, and \
        is purged with the event's payload (`FENIX_PAYLOAD_RETENTION`).",
    params(DeliveryPath),
    responses(
        (status = 200, description = "The stored request", body = TransformedRequestOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `delivery_not_found`, `not_transformed` (none stored: no \
            transformation, not sent yet, cancelled, or purged by retention)", body = ErrorBody),
    )
)]
async fn transformed_request(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(DeliveryPath { app, dlv }): ApiPath<DeliveryPath>,
) -> Result<Json<TransformedRequestOut>, ApiError> {
    let d = find(&s, &app, &dlv).await?;
    let none = || {
        ApiError::new(
            Code::NotTransformed,
            "no transformed request is stored for this delivery (its endpoint has no transformation, it was not \
             sent yet or was cancelled, or retention purged it)",
        )
    };
    let stored = s.store.transformed_request_of(&d.app_id, &d.id).await?.ok_or_else(none)?;
    let t = crate::transform::Transformed::from_stored(&stored.transformed_request, stored.transformed_body)
        .ok_or_else(none)?;
    let endpoint = s.store.get_endpoint(&d.app_id, &d.endpoint_id).await?.ok_or_else(none)?;
    let url = url::Url::parse(&endpoint.url).map(|u| t.url_on(&u).to_string()).unwrap_or_else(|_| t.target.clone());
    let payload =
        serde_json::value::RawValue::from_string(String::from_utf8(t.body).unwrap_or_default()).map_err(|_| none())?;
    Ok(Json(TransformedRequestOut { method: t.method.as_str().to_string(), url, headers: t.headers, payload }))
}
