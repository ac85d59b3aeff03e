//! Pause and resume: the endpoint's state, changed by whoever calls (the
//! record says who), answered 409 when the call changes nothing.

use crate::api::code::Code;
use axum::{extract::State, Extension, Json};
use serde::{Deserialize, Serialize};

use super::{read_back, EndpointOut};
use crate::{
    api::{
        auth::Actor,
        error::{ApiError, ErrorBody},
        extract::{optional_json, ApiPath, EndpointPath, NoOptions, NoQuery, RawBody},
        lookup, replay,
    },
    ids,
    lifecycle::{DeliveryStatus, EndpointState},
    state::SharedState,
    time,
};

#[derive(Debug, Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Resume {
    #[serde(default)]
    replay_skipped: bool,
}

/// An endpoint after `resume`, with how many skipped deliveries were re-queued.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ResumedEndpoint {
    #[serde(flatten)]
    pub endpoint: EndpointOut,
    /// Deliveries re-queued (0 unless `replay_skipped`).
    pub replayed: u64,
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/pause", tag = "endpoints", operation_id = "pause_endpoint",
    summary = "Pause an endpoint",
    security(("bearer" = ["app:manage"])),
    description = "While paused, new deliveries to it are `skipped`; `resume` can replay them. \
        An endpoint already paused answers `409 endpoint_already_paused` (nothing changed).",
    params(EndpointPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 409, description = "`endpoint_already_paused`: it was paused already (by this call's twin, say)",
            body = ErrorBody),
    )
)]
pub(super) async fn pause(
    State(s): State<SharedState>,
    Extension(actor): Extension<Actor>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let NoOptions {} = optional_json(&body)?;
    // The record says who paused it: an operator, an app token or the customer in the portal.
    let reason = format!("paused by {}", actor.as_str());
    let changed = s
        .store
        .set_endpoint_state(
            &row.id,
            EndpointState::Paused,
            &reason,
            &ids::StateChangeId::new().into_string(),
            time::now_ms(),
        )
        .await?;
    if !changed {
        return Err(ApiError::new(Code::EndpointAlreadyPaused, "the endpoint is paused already; nothing changed"));
    }
    Ok(Json(read_back(&s, &row.app_id, &row.id).await?))
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
        (status = 409, description = "`endpoint_already_active`: it was active already and nothing was asked to be \
            replayed (nothing changed)", body = ErrorBody),
        (status = 429, description = replay::REPLAY_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
pub(super) async fn resume(
    State(s): State<SharedState>,
    Extension(actor): Extension<Actor>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<ResumedEndpoint>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let body: Resume = optional_json(&body)?;
    if body.replay_skipped {
        replay::spend_endpoint_replay(&s, &row).await?;
    }
    let now = time::now_ms();
    let reason = format!("resumed by {}", actor.as_str());
    let changed = s
        .store
        .set_endpoint_state(&row.id, EndpointState::Active, &reason, &ids::StateChangeId::new().into_string(), now)
        .await?;
    if !changed && !body.replay_skipped {
        return Err(ApiError::new(Code::EndpointAlreadyActive, "the endpoint is active already; nothing changed"));
    }
    let replayed = if body.replay_skipped {
        replay::requeue_endpoint(&s, &row.id, &[DeliveryStatus::Skipped], None, None).await?
    } else {
        0
    };
    let endpoint = read_back(&s, &row.app_id, &row.id).await?;
    Ok(Json(ResumedEndpoint { endpoint, replayed }))
}
