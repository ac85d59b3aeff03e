//! An endpoint's health as operators read it: attempts and success rate over a
//! window, the dead-letter count, and the history of its state changes.

use axum::{extract::State, routing::get, Json, Router};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::{
    api::{ApiPath, ApiQuery, SharedState},
    endpoints,
    error::ApiError,
    lifecycle::DeliveryStatus,
    settings::parse_duration,
    time,
};

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct StatsQuery {
    /// e.g. `1h`, `24h` (default), `7d`.
    #[param(example = "24h", pattern = "^[0-9]+(ms|s|m|h|d)$")]
    window: Option<String>,
}

/// Stats routes.
pub fn router() -> Router<SharedState> {
    Router::new()
        .route("/v1/apps/{app}/endpoints/{ep}/stats", get(stats))
        .route("/v1/apps/{app}/endpoints/{ep}/state-changes", get(state_changes))
}

/// Longest stats window: a year (the log keeps 90 days by default).
const MAX_WINDOW: Duration = Duration::from_secs(366 * 86_400);

/// `window`, 1 s to 366 days; default 24 h. Anything else is the client's error,
/// answered before any arithmetic (a huge window once overflowed and panicked).
fn parse_window(raw: Option<&str>) -> Result<Duration, ApiError> {
    let bad =
        || ApiError::bad_request("invalid_window", "window must be a duration from 1s to 366d, such as 1h, 24h or 7d");
    let window = parse_duration(raw.unwrap_or("24h")).map_err(|_| bad())?;
    if window < Duration::from_secs(1) || window > MAX_WINDOW {
        return Err(bad());
    }
    Ok(window)
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints/{ep}/stats", tag = "endpoints", operation_id = "get_endpoint_stats",
    summary = "An endpoint's health over a window",
    params(crate::openapi::EndpointPath, StatsQuery),
    responses(
        (status = 200, description = "Attempts, success rate and dead letters", body = crate::openapi::EndpointStats),
        (status = 400, description = "`invalid_path`, `invalid_window`, `invalid_query`", body = crate::openapi::ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = crate::openapi::ErrorBody),
    )
)]
async fn stats(
    State(s): State<SharedState>,
    ApiPath((app, ep)): ApiPath<(String, String)>,
    ApiQuery(q): ApiQuery<StatsQuery>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let endpoint = endpoints::find(&s, &app, &ep).await?;
    let window = parse_window(q.window.as_deref())?;
    let since = time::sub(time::now_ms(), window);
    let st = s.store.endpoint_stats(&endpoint.id, since).await?;
    let dead_letter = s.store.count_endpoint_deliveries(&endpoint.id, DeliveryStatus::Failed).await?;
    let skipped = s.store.count_endpoint_deliveries(&endpoint.id, DeliveryStatus::Skipped).await?;
    let rate = (st.attempts > 0).then(|| st.successes as f64 / st.attempts as f64);
    Ok(Json(json!({
        "endpoint_id": endpoint.id,
        "window_seconds": window.as_secs(),
        "since": time::rfc3339_ms(since),
        "attempts": st.attempts,
        "successes": st.successes,
        "failures": st.attempts - st.successes,
        "success_rate": rate,
        "dead_letter": dead_letter,
        "skipped": skipped,
        "state": endpoint.state,
        "state_reason": endpoint.state_reason,
    })))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints/{ep}/state-changes", tag = "endpoints",
    operation_id = "list_endpoint_state_changes",
    summary = "An endpoint's latest state changes (at most 100, newest first)",
    params(crate::openapi::EndpointPath),
    responses(
        (status = 200, description = "State changes, in one page",
            body = crate::openapi::Page<crate::openapi::StateChange>),
        (status = 400, description = "`invalid_path`", body = crate::openapi::ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = crate::openapi::ErrorBody),
    )
)]
async fn state_changes(
    State(s): State<SharedState>,
    ApiPath((app, ep)): ApiPath<(String, String)>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let endpoint = endpoints::find(&s, &app, &ep).await?;
    let rows = s.store.list_state_changes(&endpoint.id, 100).await?;
    let data: Vec<_> = rows
        .into_iter()
        .map(
            |r| json!({"id": r.id, "state": r.state, "reason": r.reason, "created_at": time::rfc3339_ms(r.created_at)}),
        )
        .collect();
    Ok(Json(json!({"data": data, "next_cursor": null})))
}
