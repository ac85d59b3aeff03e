//! Replay: re-queue `failed` or `skipped` deliveries with their ORIGINAL event
//! id and envelope and a fresh attempt budget. Earlier attempts stay in the
//! log; `succeeded` and still-`pending` deliveries are never replayed.
//! An endpoint replay (also `resume` with `replay_skipped`) spends the
//! budgets of `send_budgets` ([`Action::EndpointReplay`]).

use crate::api::code::Code;
use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    events::parse_window,
    extract::{optional_json, ApiPath, EndpointPath, NoQuery, RawBody},
    lookup,
};
use crate::{
    lifecycle::DeliveryStatus,
    send_budgets::{self, Action},
    state::SharedState,
    store::{endpoints::EndpointRow, replay::ReplayScope},
    time,
};

/// Rows re-queued per transaction, so a large replay never holds the database long.
const BATCH: i64 = 500;

/// Spends one endpoint replay of `endpoint`, or refuses it with `429`.
pub async fn spend_endpoint_replay(s: &SharedState, endpoint: &EndpointRow) -> Result<(), ApiError> {
    send_budgets::take(&s.store, Action::EndpointReplay, &endpoint.app_id, &endpoint.id, time::now_ms())
        .await?
        .map_err(ApiError::over_budget)
}

/// The 429 of an endpoint replay over its budget, for the document.
pub const REPLAY_LIMIT: &str = "`replay_limit_reached`: the endpoint's or the app's endpoint replays are spent for \
    now; nothing was re-queued";

/// Re-queues an endpoint's deliveries in `statuses` (created within the window) in bounded batches.
pub async fn requeue_endpoint(
    s: &SharedState,
    endpoint_id: &crate::ids::EndpointId,
    statuses: &[DeliveryStatus],
    since: Option<i64>,
    until: Option<i64>,
) -> Result<u64, ApiError> {
    let scope = ReplayScope { endpoint_id, statuses, since, until };
    let now = time::now_ms();
    // Counted by the rows changed: concurrent replays of one endpoint share
    // its deliveries out, never count one twice.
    let total = s.store.replay_endpoint(&scope, now, BATCH).await?;
    if total > 0 {
        s.wake.work_committed(crate::wake::Reach::AllInstances).await;
    }
    Ok(total)
}

#[derive(Debug, Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = EndpointReplayRequest)]
struct ReplayBody {
    statuses: Option<Vec<String>>,
    #[schema(format = DateTime)]
    since: Option<String>,
    #[schema(format = DateTime)]
    until: Option<String>,
}

/// The answer of an endpoint replay.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EndpointReplay {
    /// Deliveries re-queued with their original event id and envelope.
    pub replayed: u64,
    /// Matching deliveries not re-queued because retention purged their payload.
    pub skipped_payload_expired: i64,
}

/// Replay routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(replay_endpoint))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/replay", tag = "endpoints", operation_id = "replay_endpoint",
    summary = "Send an endpoint's failed or skipped deliveries again",
    security(("bearer" = ["app:manage"])),
    description = "Re-queues deliveries in `statuses` (default both `failed` and `skipped`) created between \
        `since` and `until` (RFC 3339), with their original event id and envelope. Endpoint replays are limited \
        per endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.",
    params(EndpointPath),
    request_body(content = Option<ReplayBody>, description = "Optional; an empty body means defaults"),
    responses(
        (status = 200, description = "How many deliveries were re-queued", body = EndpointReplay),
        (status = 400, description = "`invalid_path`, `invalid_time`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_statuses`", body = ErrorBody),
        (status = 429, description = REPLAY_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
async fn replay_endpoint(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<EndpointReplay>, ApiError> {
    let endpoint = lookup::endpoint(&s, &app, &ep).await?;
    let body: ReplayBody = optional_json(&body)?;
    // Every requested status must be replayable (an unknown or other one refuses them all).
    let statuses: Vec<DeliveryStatus> = match &body.statuses {
        None => DeliveryStatus::REPLAYABLE.to_vec(),
        Some(requested) => requested
            .iter()
            .map(|st| st.parse().ok().filter(|s: &DeliveryStatus| s.is_replayable()))
            .collect::<Option<_>>()
            .unwrap_or_default(),
    };
    if statuses.is_empty() {
        return Err(ApiError::new(Code::InvalidStatuses, "statuses may contain only \"failed\" and \"skipped\""));
    }
    let (since, until) = parse_window(body.since.as_deref(), body.until.as_deref())?;
    spend_endpoint_replay(&s, &endpoint).await?;
    let replayed = requeue_endpoint(&s, &endpoint.id, &statuses, since, until).await?;
    let expired = s
        .store
        .count_expired_replays(&ReplayScope { endpoint_id: &endpoint.id, statuses: &statuses, since, until })
        .await?;
    tracing::info!(endpoint_id = %endpoint.id, replayed, "endpoint replay");
    Ok(Json(EndpointReplay { replayed, skipped_payload_expired: expired }))
}
