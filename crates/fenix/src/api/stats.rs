//! An endpoint's health as operators read it: attempts and success rate over a
//! window, the dead-letter count, and the history of its state changes.

use crate::api::code::Code;
use std::time::Duration;

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    extract::{ApiPath, ApiQuery, EndpointPath, NoQuery, Page},
    lookup,
};
use crate::{
    lifecycle::{DeliveryStatus, EndpointState},
    settings::parse_duration,
    state::SharedState,
    time,
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct StatsQuery {
    /// e.g. `1h`, `24h` (default), `7d`.
    #[param(example = "24h", pattern = "^[0-9]+(ms|s|m|h|d)$")]
    window: Option<String>,
}

/// An endpoint's health over a window. Fields in the order docs/api.md shows
/// them, like every answer: the endpoint and its state, the window, then counts.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EndpointStats {
    pub endpoint_id: crate::ids::EndpointId,
    pub state: EndpointState,
    pub state_reason: Option<String>,
    pub window_seconds: u64,
    /// Start of the window (RFC 3339).
    pub since: String,
    pub attempts: i64,
    pub successes: i64,
    pub failures: i64,
    /// successes / attempts; null without attempts.
    pub success_rate: Option<f64>,
    /// Deliveries that failed for good (`failed`).
    pub dead_letter: i64,
    /// Deliveries skipped while the endpoint was paused or disabled.
    pub skipped: i64,
    /// When the endpoint's client certificate (mTLS) expires; `null`: it has none.
    pub client_certificate_expires_at: Option<String>,
    /// Whether that certificate expires within 14 days (rotate it: `…/tls/rotate`).
    pub client_certificate_expires_soon: bool,
}

/// One change of an endpoint's state; fields in the order of every resource:
/// `id` first, `created_at` last.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StateChange {
    pub id: crate::ids::StateChangeId,
    pub state: EndpointState,
    pub reason: String,
    pub created_at: String,
}

/// Stats routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(stats)).routes(routes!(state_changes))
}

/// Longest stats window: a year (the log keeps 90 days by default).
const MAX_WINDOW: Duration = Duration::from_secs(366 * 86_400);

/// `window`, 1 s to 366 days; default 24 h. Anything else is the client's error,
/// answered before any arithmetic (a huge window once overflowed and panicked).
fn parse_window(raw: Option<&str>) -> Result<Duration, ApiError> {
    let bad = || ApiError::new(Code::InvalidWindow, "window must be a duration from 1s to 366d, such as 1h, 24h or 7d");
    let window = parse_duration(raw.unwrap_or("24h")).map_err(|_| bad())?;
    if window < Duration::from_secs(1) || window > MAX_WINDOW {
        return Err(bad());
    }
    Ok(window)
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints/{ep}/stats", tag = "endpoints", operation_id = "get_endpoint_stats",
    summary = "An endpoint's health over a window",
    security(("bearer" = ["app:read"])),
    params(EndpointPath, StatsQuery),
    responses(
        (status = 200, description = "Attempts, success rate and dead letters", body = EndpointStats),
        (status = 400, description = "`invalid_path`, `invalid_window`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn stats(
    State(s): State<SharedState>,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    ApiQuery(q): ApiQuery<StatsQuery>,
) -> Result<Json<EndpointStats>, ApiError> {
    let endpoint = lookup::endpoint(&s, &app, &ep).await?;
    let window = parse_window(q.window.as_deref())?;
    let since = time::sub(time::now_ms(), window);
    let st = s.store.endpoint_stats(&endpoint.id, since).await?;
    let dead_letter = s.store.count_endpoint_deliveries(&endpoint.id, DeliveryStatus::Failed).await?;
    let skipped = s.store.count_endpoint_deliveries(&endpoint.id, DeliveryStatus::Skipped).await?;
    let rate = (st.attempts > 0).then(|| st.successes as f64 / st.attempts as f64);
    let now = time::now_ms();
    let leaf = endpoint.spec.tls.as_ref().and_then(|t| t.client.as_ref()).and_then(|c| c.leaf());
    let expires_soon = endpoint.spec.tls.as_ref().is_some_and(|t| t.expiring(now).is_some());
    Ok(Json(EndpointStats {
        endpoint_id: endpoint.id,
        state: endpoint.state,
        state_reason: endpoint.state_reason,
        window_seconds: window.as_secs(),
        since: time::rfc3339_ms(since),
        attempts: st.attempts,
        successes: st.successes,
        failures: st.attempts - st.successes,
        success_rate: rate,
        dead_letter,
        skipped,
        client_certificate_expires_at: leaf.map(|l| time::rfc3339_ms(l.not_after)),
        client_certificate_expires_soon: expires_soon,
    }))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints/{ep}/state-changes", tag = "endpoints",
    operation_id = "list_endpoint_state_changes",
    summary = "An endpoint's latest state changes (at most 100, newest first)",
    security(("bearer" = ["app:read"])),
    params(EndpointPath),
    responses(
        (status = 200, description = "State changes, in one page",
            body = Page<StateChange>),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn state_changes(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<Json<Page<StateChange>>, ApiError> {
    let endpoint = lookup::endpoint(&s, &app, &ep).await?;
    let rows = s.store.list_state_changes(&endpoint.id, 100).await?;
    let data = rows
        .into_iter()
        .map(|r| StateChange { id: r.id, state: r.state, reason: r.reason, created_at: time::rfc3339_ms(r.created_at) })
        .collect();
    Ok(Json(Page { data, next_cursor: None }))
}
