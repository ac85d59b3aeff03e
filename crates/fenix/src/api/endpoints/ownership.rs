//! `POST …/verify`: a new ownership challenge for an endpoint that has not
//! proved it controls its URL. The challenges themselves are sent by
//! `worker::ownership`; a create or a new URL starts one too
//! ([`challenge_if`](super::challenge_if)).

use crate::api::code::{Code, Resource};
use axum::{extract::State, http::StatusCode, Json};

use super::{budgeted_challenge, read_back, EndpointOut, CHALLENGE_LIMIT};
use crate::{
    api::{
        error::{ApiError, ErrorBody},
        extract::{optional_json, ApiPath, EndpointPath, NoOptions, NoQuery, RawBody},
        lookup,
    },
    state::SharedState,
    time,
};

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/verify", tag = "endpoints", operation_id = "verify_endpoint",
    summary = "Send an endpoint a new ownership challenge",
    security(("bearer" = ["app:manage"])),
    description = "Starts a new challenge now, replacing an open or expired one: the endpoint shows \
        `pending_verification` until it answers 2xx echoing it (see docs/receiving.md). A paused or disabled \
        endpoint is sent it once resumed. An endpoint that proved its URL already answers 409. Challenges are limited per \
        endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.",
    params(EndpointPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 202, description = "The endpoint, with its new challenge in `verification`", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 409, description = "`endpoint_verified`", body = ErrorBody),
        (status = 429, description = CHALLENGE_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
pub(super) async fn verify(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<EndpointOut>), ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let NoOptions {} = optional_json(&body)?;
    if s.store.get_challenge(&row.id).await?.is_none() {
        return Err(ApiError::new(
            Code::EndpointVerified,
            "this endpoint has no open challenge: it proved it controls its URL, or no proof was asked of it",
        ));
    }
    let now = time::now_ms();
    let challenge = budgeted_challenge(&s, &row.app_id, &row.id, now).await?;
    if !s.store.start_challenge(&row.id, &challenge, now).await? {
        return Err(ApiError::not_found(Resource::Endpoint));
    }
    let out = read_back(&s, &row.app_id, &row.id).await?;
    // Read first: the answer shows the new challenge before any attempt of it.
    s.wake.challenge_started();
    Ok((StatusCode::ACCEPTED, Json(out)))
}
