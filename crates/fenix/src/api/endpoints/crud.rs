//! List, create, read, update and delete: each handler parses its input
//! (`input.rs`), makes the one store call, and answers the endpoint as it is
//! stored; a create or a new URL that must be proved starts an ownership
//! challenge.

use crate::api::code::{Code, Resource};
use axum::{extract::State, http::StatusCode, Json};

use super::{
    challenge_if,
    input::{self, CreateEndpoint, PatchEndpoint},
    proof_required, read_back, shown, EndpointOut, CHALLENGE_LIMIT,
};
use crate::{
    api::{
        error::{ApiError, ErrorBody},
        extract::{ApiJson, ApiPath, ApiQuery, AppPath, EndpointPath, ListScope, NoQuery, Page, PageQuery},
        lookup,
    },
    state::SharedState,
    store::endpoints::EndpointPatch,
    time,
};

/// The 422 codes of the destination policy (`fenix-destination`), for the document.
macro_rules! destination_codes {
    () => {
        "`url_invalid`, `url_ambiguous`, `url_too_long`, `url_scheme_not_https`, `url_has_credentials`, \
         `url_has_query`, `url_has_fragment`, `url_port_not_allowed`, `url_host_is_ip`, `url_host_not_public`, \
         `destination_unresolvable`, `destination_not_public`"
    };
}

/// The 422 codes of the endpoint's own policy, for the document.
macro_rules! policy_codes {
    () => {
        "`invalid_header_name`, `invalid_header_value`, `hop_by_hop_header`, `reserved_header`, \
         `duplicate_header`, `too_many_headers`, `headers_too_large`, `invalid_sensitive_headers`, \
         `invalid_retry_schedule`, `invalid_final_status_codes`, `invalid_attempt_timeout`, `invalid_auth`, \
         `invalid_client_certificate`, `invalid_client_key`, `invalid_ca_certificates`, `invalid_transformation`, `invalid_filter`"
    };
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints", tag = "endpoints", operation_id = "create_endpoint",
    summary = "Create an endpoint",
    security(("bearer" = ["app:manage"])),
    description = "The answer carries the signing `secret` (`hmac`); only this call and a rotation ever show it. \
        An `ed25519` endpoint's answer carries its `public_key` instead; its private key is never shown.",
    params(AppPath),
    request_body = CreateEndpoint,
    responses(
        (status = 201, description = "The endpoint, with its `secret` (or `public_key`)", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 422, description = concat!("`invalid_event_types`, `unknown_event_type` (strict mode), `invalid_signature_scheme`, `invalid_secret`, \
            `invalid_rate_limit`, `invalid_description`, `endpoint_limit_reached`, ", destination_codes!(), ", ",
            policy_codes!()), body = ErrorBody),
        (status = 429, description = CHALLENGE_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
pub(super) async fn create(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<CreateEndpoint>,
) -> Result<(StatusCode, Json<EndpointOut>), ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let (new, key) = input::new_endpoint(&s, app.id, &body).await?;
    let row = &new.row;
    let max = s.settings.max_endpoints_per_app;
    let required = proof_required(&s, &row.app_id).await?;
    let challenge = challenge_if(&s, required, &row.app_id, &row.id, row.created_at).await?;
    // An app deleted since the lookup above (by another call) is the unknown app it now is.
    let inserted =
        s.store.insert_endpoint_challenged(&new, max as i64, challenge.as_ref()).await.map_err(|e| match e {
            crate::store::Error::NotFound => ApiError::not_found(Resource::App),
            e => ApiError::from(e),
        })?;
    if !inserted {
        return Err(ApiError::new(Code::EndpointLimitReached,
            format!("this app already has {max} endpoints, the most allowed (FENIX_MAX_ENDPOINTS_PER_APP); delete one first"),
        ));
    }
    tracing::info!(endpoint_id = %row.id, app_id = %row.app_id, "endpoint created");
    // As stored (a challenged endpoint shows `pending_verification`); deleted
    // meanwhile, as built.
    let stored = s.store.get_endpoint(&row.app_id, &row.id).await?.unwrap_or_else(|| row.clone());
    let mut out = shown(&s, stored).await?;
    if challenge.is_some() {
        s.wake.challenge_started();
    }
    out.secret = key.shown_secret().map(str::to_string);
    out.public_key = new.public_key;
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
pub(super) async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<EndpointOut>>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = q.limit()?;
    let list = ListScope::new("ep", &[Some(app.id.as_str())]);
    let rows = s.store.list_endpoints(&app.id, q.cursor(&list)?.as_deref(), limit + 1).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.to_string(), EndpointOut::from)))
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
pub(super) async fn read(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    Ok(Json(shown(&s, row).await?))
}

#[utoipa::path(
    patch, path = "/v1/apps/{app}/endpoints/{ep}", tag = "endpoints", operation_id = "update_endpoint",
    summary = "Change an endpoint's URL, description, event types, rate limit, headers or retry policy",
    security(("bearer" = ["app:manage"])),
    description = "`rate_limit_per_sec: null` removes the limit; `retry_schedule: null` and `attempt_timeout: null` \
        go back to the global settings; a field left out is unchanged. `headers` replaces the whole set.",
    params(EndpointPath),
    request_body = PatchEndpoint,
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = concat!("`invalid_event_types`, `unknown_event_type` (strict mode), `invalid_rate_limit`, `invalid_description`, \
            ", destination_codes!(), ", ", policy_codes!()), body = ErrorBody),
        (status = 429, description = CHALLENGE_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
pub(super) async fn update(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    ApiJson(body): ApiJson<PatchEndpoint>,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let patch = input::endpoint_patch(&s, &row, &body).await?;
    // A new URL must be proved again when proof is required, or when the
    // old one was not proved yet (its challenge was for the old URL).
    let new_url = patch.url.as_ref().is_some_and(|u| *u != row.url);
    let reprove =
        new_url && (proof_required(&s, &row.app_id).await? || s.store.get_challenge(&row.id).await?.is_some());
    let now = time::now_ms();
    let challenge = challenge_if(&s, reprove, &row.app_id, &row.id, now).await?;
    let patch = EndpointPatch { challenge, ..patch };
    s.store.update_endpoint(&row.app_id, &row.id, &patch, now).await?;
    let updated = read_back(&s, &row.app_id, &row.id).await;
    // Read first: the answer shows the new challenge before any attempt of it.
    if patch.challenge.is_some() {
        s.wake.challenge_started();
    }
    updated.map(Json)
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
pub(super) async fn remove(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<StatusCode, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    s.store.delete_endpoint(&row.app_id, &row.id).await?;
    Ok(StatusCode::NO_CONTENT)
}
