//! Endpoints: an app's destinations, their event-type filter, state, and
//! signing secrets. The URL goes through the destination policy on create and
//! update; the secret is answered only by create and rotate.

use axum::{extract::State, http::StatusCode, Json};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    extract::{
        non_null, optional_json, ApiJson, ApiPath, ApiQuery, AppPath, EndpointPath, ListScope, NoOptions, NoQuery,
        Page, PageQuery, RawBody,
    },
    lookup,
};
use crate::{
    event_types::EventTypeFilter,
    ids,
    lifecycle::{DeliveryStatus, EndpointState, OnDeadLetter},
    secrets::SigningSecret,
    state::SharedState,
    store::endpoints::{EndpointPatch, EndpointRow, NewEndpoint},
    time,
};

/// How many older secrets may still sign after rotations.
pub const MAX_OLD_SECRETS: i64 = 5;
/// Longest overlap a rotation may ask for (30 days).
const MAX_OVERLAP_SECONDS: i64 = 30 * 86_400;

/// An endpoint as the API shows it. `secret` only in create and rotate answers.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Endpoint)]
pub struct EndpointOut {
    pub id: String,
    pub app_id: String,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub state: EndpointState,
    pub state_reason: Option<String>,
    pub state_changed_at: Option<String>,
    pub rate_limit_per_sec: Option<i64>,
    pub signature_scheme: String,
    pub created_at: String,
    pub updated_at: String,
    /// Ordered delivery: one delivery at a time per lane (`ordering_key`), in event order.
    pub ordered: bool,
    /// After a dead letter in an ordered lane: `continue` past it, or `block` until it is replayed.
    pub on_dead_letter: OnDeadLetter,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl From<EndpointRow> for EndpointOut {
    fn from(r: EndpointRow) -> Self {
        EndpointOut {
            event_types: EventTypeFilter::from_json(&r.event_types).patterns().to_vec(),
            id: r.id,
            app_id: r.app_id,
            url: r.url,
            description: r.description,
            state: r.state,
            state_reason: r.state_reason,
            state_changed_at: r.state_changed_at.map(time::rfc3339_ms),
            rate_limit_per_sec: r.rate_limit_per_sec,
            signature_scheme: r.signature_scheme,
            created_at: time::rfc3339_ms(r.created_at),
            updated_at: time::rfc3339_ms(r.updated_at),
            ordered: r.ordered,
            on_dead_letter: r.on_dead_letter,
            secret: None,
        }
    }
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateEndpoint {
    #[schema(example = "https://hooks.example.com/fenix")]
    url: String,
    description: Option<String>,
    #[serde(default)]
    event_types: Vec<String>,
    #[schema(minimum = 1, maximum = 100000)]
    rate_limit_per_sec: Option<i64>,
    signature_scheme: Option<String>,
    /// Owner-supplied secret (migrating from another platform).
    secret: Option<String>,
    /// Ordered delivery (default `false`): one delivery at a time per lane, in event order.
    #[serde(default)]
    ordered: bool,
    /// After a dead letter in an ordered lane (default `continue`).
    #[serde(default)]
    on_dead_letter: OnDeadLetter,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PatchEndpoint {
    /// Left out: unchanged; cannot be null.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = String, required = false, example = "https://hooks.example.com/fenix")]
    url: Option<String>,
    /// Left out: unchanged; cannot be null (`""` empties it).
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = String, required = false)]
    description: Option<String>,
    /// Left out: unchanged; cannot be null (`[]` is every type).
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Vec<String>, required = false)]
    event_types: Option<Vec<String>>,
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 100000)]
    rate_limit_per_sec: Option<Option<i64>>,
    /// Left out: unchanged; cannot be null. Applies to deliveries created from then on.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = bool, required = false)]
    ordered: Option<bool>,
    /// Left out: unchanged; cannot be null.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = OnDeadLetter, required = false)]
    on_dead_letter: Option<OnDeadLetter>,
}

/// Distinguishes a field left out (`None`) from an explicit `null` (`Some(None)`).
mod double_option {
    use serde::{Deserialize, Deserializer};
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i64>>, D::Error> {
        Option::<i64>::deserialize(d).map(Some)
    }
}

#[derive(Debug, Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct RotateSecret {
    overlap_seconds: Option<i64>,
    secret: Option<String>,
}

/// The new secret. Fields in the order docs/api.md shows them, like every
/// answer: what identifies it first (`version`), times last.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Rotated {
    /// The new secret's version (the first secret is 1).
    version: i64,
    secret: String,
    /// Until when the previous secret(s) still sign.
    previous_expires_at: String,
}

/// An endpoint after `resume`, with how many skipped deliveries were re-queued.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ResumedEndpoint {
    #[serde(flatten)]
    pub endpoint: EndpointOut,
    /// Deliveries re-queued (0 unless `replay_skipped`).
    pub replayed: u64,
}

/// `/v1/apps/{app}/endpoints…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(read, update, remove))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(rotate))
}

/// Runs the destination policy (URL shape, DNS, every address public).
async fn check_url(s: &SharedState, raw: &str) -> Result<String, ApiError> {
    match s.destinations.check_destination(raw).await {
        Ok(url) => Ok(url.to_string()),
        Err(e) => Err(ApiError::invalid(e.code(), e.to_string())),
    }
}

fn check_rate(rate: Option<i64>) -> Result<Option<i64>, ApiError> {
    match rate {
        Some(r) if !(1..=100_000).contains(&r) => {
            Err(ApiError::invalid("invalid_rate_limit", "rate_limit_per_sec must be between 1 and 100000, or null"))
        }
        other => Ok(other),
    }
}

fn check_description(d: &str) -> Result<String, ApiError> {
    if d.len() > 1024 {
        return Err(ApiError::invalid("invalid_description", "description must be at most 1024 bytes"));
    }
    // Line breaks and tabs are fine in a description; NUL is not storable text on PostgreSQL.
    if d.contains('\0') {
        return Err(ApiError::invalid("invalid_description", "description must not contain NUL characters"));
    }
    Ok(d.to_string())
}

fn invalid_secret(e: crate::secrets::InvalidSecret) -> ApiError {
    ApiError::invalid("invalid_secret", e.to_string())
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints", tag = "endpoints", operation_id = "create_endpoint",
    summary = "Create an endpoint",
    security(("bearer" = ["app:manage"])),
    description = "The answer carries the signing `secret`; only this call and a rotation ever show it.",
    params(AppPath),
    request_body = CreateEndpoint,
    responses(
        (status = 201, description = "The endpoint, with its `secret`", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_event_types`, `invalid_signature_scheme`, `invalid_secret`, \
            `invalid_rate_limit`, `invalid_description`, `endpoint_limit_reached`, `url_*`, `destination_*`",
            body = ErrorBody),
    )
)]
async fn create(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<CreateEndpoint>,
) -> Result<(StatusCode, Json<EndpointOut>), ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let filter = EventTypeFilter::parse(&body.event_types)?;
    let scheme = match body.signature_scheme.as_deref() {
        None => fenix_signing::Scheme::FenixV1,
        Some(v) => fenix_signing::Scheme::parse(v).ok_or_else(|| {
            ApiError::invalid(
                "invalid_signature_scheme",
                "signature_scheme must be \"fenix-v1\" or \"standard-webhooks\"",
            )
        })?,
    };
    let secret = match &body.secret {
        Some(v) => SigningSecret::parse(v).map_err(invalid_secret)?,
        None => SigningSecret::generate(),
    };
    let url = check_url(&s, &body.url).await?;
    let now = time::now_ms();
    let row = EndpointRow {
        id: ids::new_id("ep"),
        app_id: app.id,
        url,
        description: check_description(body.description.as_deref().unwrap_or(""))?,
        event_types: filter.to_json(),
        state: EndpointState::Active,
        state_reason: None,
        state_changed_at: None,
        rate_limit_per_sec: check_rate(body.rate_limit_per_sec)?,
        signature_scheme: scheme.as_str().into(),
        created_at: now,
        updated_at: now,
        ordered: body.ordered,
        on_dead_letter: body.on_dead_letter,
    };
    let sealed_secret = s.keyring.current.seal(secret.expose().as_bytes(), &row.id);
    let max = s.settings.max_endpoints_per_app;
    if !s.store.insert_endpoint_within(&NewEndpoint { row: row.clone(), sealed_secret }, max as i64).await? {
        return Err(ApiError::invalid(
            "endpoint_limit_reached",
            format!("this app already has {max} endpoints, the most allowed (FENIX_MAX_ENDPOINTS_PER_APP); delete one first"),
        ));
    }
    tracing::info!(endpoint_id = %row.id, app_id = %row.app_id, "endpoint created");
    let mut out = EndpointOut::from(row);
    out.secret = Some(secret.expose().to_string());
    Ok((StatusCode::CREATED, Json(out)))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints", tag = "endpoints", operation_id = "list_endpoints",
    summary = "List an app's endpoints",
    security(("bearer" = ["app:read"])),
    params(AppPath, PageQuery),
    responses(
        (status = 200, description = "A page of endpoints", body = Page<EndpointOut>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<EndpointOut>>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = q.limit()?;
    let list = ListScope::new("ep", &[Some(&app.id)]);
    let rows = s.store.list_endpoints(&app.id, q.cursor(&list)?.as_deref(), limit + 1).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.clone(), EndpointOut::from)))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints/{ep}", tag = "endpoints", operation_id = "get_endpoint",
    summary = "Read an endpoint",
    security(("bearer" = ["app:read"])),
    params(EndpointPath),
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn read(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<Json<EndpointOut>, ApiError> {
    Ok(Json(lookup::endpoint(&s, &app, &ep).await?.into()))
}

#[utoipa::path(
    patch, path = "/v1/apps/{app}/endpoints/{ep}", tag = "endpoints", operation_id = "update_endpoint",
    summary = "Change an endpoint's URL, description, event types or rate limit",
    security(("bearer" = ["app:manage"])),
    description = "`rate_limit_per_sec: null` removes the limit; a field left out is unchanged.",
    params(EndpointPath),
    request_body = PatchEndpoint,
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_event_types`, `invalid_rate_limit`, `invalid_description`, `url_*`, \
            `destination_*`", body = ErrorBody),
    )
)]
async fn update(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    ApiJson(body): ApiJson<PatchEndpoint>,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let url = match &body.url {
        Some(u) => Some(check_url(&s, u).await?),
        None => None,
    };
    let patch = EndpointPatch {
        url,
        description: body.description.as_deref().map(check_description).transpose()?,
        event_types: body.event_types.as_deref().map(EventTypeFilter::parse).transpose()?.map(|f| f.to_json()),
        rate_limit_per_sec: body.rate_limit_per_sec.map(check_rate).transpose()?,
        ordered: body.ordered,
        on_dead_letter: body.on_dead_letter,
    };
    s.store.update_endpoint(&row.app_id, &row.id, &patch, time::now_ms()).await?;
    read(State(s), NoQuery, ApiPath(EndpointPath { app: row.app_id, ep: row.id })).await
}

#[utoipa::path(
    delete, path = "/v1/apps/{app}/endpoints/{ep}", tag = "endpoints", operation_id = "delete_endpoint",
    summary = "Delete an endpoint",
    security(("bearer" = ["app:manage"])),
    params(EndpointPath),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn remove(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<StatusCode, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    s.store.delete_endpoint(&row.app_id, &row.id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/pause", tag = "endpoints", operation_id = "pause_endpoint",
    summary = "Pause an endpoint",
    security(("bearer" = ["app:manage"])),
    description = "While paused, new deliveries to it are `skipped`; `resume` can replay them.",
    params(EndpointPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn pause(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let NoOptions {} = optional_json(&body)?;
    s.store
        .set_endpoint_state(
            &row.id,
            EndpointState::Paused,
            "paused by an operator",
            &ids::new_id("esc"),
            time::now_ms(),
        )
        .await?;
    read(State(s), NoQuery, ApiPath(EndpointPath { app: row.app_id, ep: row.id })).await
}

#[derive(Debug, Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Resume {
    #[serde(default)]
    replay_skipped: bool,
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/resume", tag = "endpoints", operation_id = "resume_endpoint",
    summary = "Resume a paused or disabled endpoint",
    security(("bearer" = ["app:manage"])),
    params(EndpointPath),
    request_body(content = Option<Resume>, description = "Optional; an empty body means defaults"),
    responses(
        (status = 200, description = "The endpoint and how many deliveries were replayed",
            body = ResumedEndpoint),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn resume(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<ResumedEndpoint>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let body: Resume = optional_json(&body)?;
    let now = time::now_ms();
    s.store
        .set_endpoint_state(&row.id, EndpointState::Active, "resumed by an operator", &ids::new_id("esc"), now)
        .await?;
    let replayed = if body.replay_skipped {
        super::replay::requeue_endpoint(&s, &row.id, &[DeliveryStatus::Skipped], None, None).await?
    } else {
        0
    };
    let Json(endpoint) = read(State(s), NoQuery, ApiPath(EndpointPath { app: row.app_id, ep: row.id })).await?;
    Ok(Json(ResumedEndpoint { endpoint, replayed }))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/secret/rotate", tag = "endpoints",
    operation_id = "rotate_endpoint_secret",
    summary = "Rotate an endpoint's signing secret",
    security(("bearer" = ["app:manage"])),
    description = "Requests are signed with both the new and the previous secret until `previous_expires_at` \
        (`overlap_seconds`, default 86400, at most 30 days).",
    params(EndpointPath),
    request_body(content = Option<RotateSecret>, description = "Optional; an empty body means defaults"),
    responses(
        (status = 200, description = "The new secret", body = Rotated),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_overlap`, `invalid_secret`", body = ErrorBody),
    )
)]
async fn rotate(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<Rotated>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let body: RotateSecret = optional_json(&body)?;
    let overlap = body.overlap_seconds.unwrap_or(86_400);
    if !(0..=MAX_OVERLAP_SECONDS).contains(&overlap) {
        return Err(ApiError::invalid("invalid_overlap", "overlap_seconds must be between 0 and 2592000 (30 days)"));
    }
    let secret = match &body.secret {
        Some(v) => SigningSecret::parse(v).map_err(invalid_secret)?,
        None => SigningSecret::generate(),
    };
    let now = time::now_ms();
    let expires = now.saturating_add(overlap * 1000);
    let sealed = s.keyring.current.seal(secret.expose().as_bytes(), &row.id);
    let version = s.store.rotate_secret(&row.id, |_| sealed.clone(), now, expires, MAX_OLD_SECRETS).await.map_err(
        |e| match e {
            // Deleted between the lookup above and the rotation.
            sqlx::Error::RowNotFound => ApiError::not_found("endpoint"),
            e => e.into(),
        },
    )?;
    tracing::info!(endpoint_id = %row.id, version, overlap_seconds = overlap, "endpoint secret rotated");
    Ok(Json(Rotated { version, secret: secret.expose().to_string(), previous_expires_at: time::rfc3339_ms(expires) }))
}
