//! Fenix: outbound webhook delivery.
//!
//! The admin API stores apps, endpoints and events; ingestion writes each event
//! with its deliveries in one transaction; the [`worker`] claims due deliveries
//! under a lease, signs and sends them, and records every attempt. See
//! `docs/ARCHITECTURE.md` for the shape of the whole.

pub mod api;
pub mod apps;
pub mod deliveries;
pub mod endpoints;
pub mod error;
pub mod event_types;
pub mod events;
pub mod http_server;
pub mod ids;
pub mod ingest;
pub mod lifecycle;
pub mod maintenance;
pub mod metrics;
pub mod openapi;
pub mod operator;
pub mod receiver;
pub mod replay;
pub mod secrets;
pub mod settings;
pub mod startup;
pub mod stats;
pub mod store;
pub mod time;
pub mod wake;
pub mod worker;

use std::{sync::Arc, time::Duration};

use axum::{extract::DefaultBodyLimit, http::StatusCode, response::IntoResponse, routing::get, Json, Router};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::{
    api::{SharedState, MAX_BODY_BYTES},
    error::ApiError,
};

/// The whole HTTP surface: `/v1` behind the admin token, plus health.
pub fn router(state: SharedState) -> Router {
    let v1 = Router::new()
        .merge(apps::router())
        .merge(endpoints::router())
        .merge(events::router())
        .merge(deliveries::router())
        .merge(replay::router())
        .merge(stats::router())
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), api::require_token));
    Router::new()
        .merge(v1)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/openapi.json", get(openapi::openapi_json))
        .route(
            "/metrics",
            get(metrics).route_layer(axum::middleware::from_fn_with_state(state.clone(), api::require_token)),
        )
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this route does not accept that method",
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(close_after_refused_body))
        .with_state(state)
}

/// A body refused for its size may not have been read to its end: tell the
/// client the connection closes, so it does not send its next request into it.
async fn close_after_refused_body(mut resp: axum::response::Response) -> axum::response::Response {
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE {
        resp.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    }
    resp
}

/// Health, readiness and metrics only (worker-only instances).
fn ops_router(state: SharedState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route(
            "/metrics",
            get(metrics).route_layer(axum::middleware::from_fn_with_state(state.clone(), api::require_token)),
        )
        .fallback(|| async {
            ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route (worker-only instance)")
        })
        .with_state(state)
}

async fn healthz(axum::extract::State(s): axum::extract::State<SharedState>) -> impl IntoResponse {
    match s.store.ping().await {
        Ok(()) => (StatusCode::OK, Json(serde_json::json!({"status": "ok"}))),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(
                serde_json::json!({"status": "unavailable", "error": {"code": "database_unavailable", "message": "the database is unavailable"}}),
            ),
        ),
    }
}

/// Readiness: the database answers and this instance's worker (if it runs
/// one) is not stuck. `/healthz` says the process is alive; this says it does
/// its work: a recorder that cannot write, or deliveries due with nothing
/// claimed or recorded, for longer than `FENIX_WORKER_STALL_AFTER`, is a 503.
async fn readyz(axum::extract::State(s): axum::extract::State<SharedState>) -> impl IntoResponse {
    let unready = |code: &str, message: String| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"status": "unavailable", "error": {"code": code, "message": message}})),
        )
    };
    let now = time::now_ms();
    let due = match s.store.work_due(now).await {
        Ok(due) => due,
        Err(_) => return unready("database_unavailable", "the database is unavailable".into()),
    };
    match s.metrics.worker.stall(now, due) {
        Some(metrics::Stall::RecorderBlocked(ms)) => unready(
            "worker_stalled",
            format!("the worker has not been able to record delivery outcomes for {} s", ms / 1000),
        ),
        Some(metrics::Stall::NoProgress(ms)) => unready(
            "worker_stalled",
            format!("deliveries are due and the worker has claimed or recorded nothing for {} s", ms / 1000),
        ),
        None => (StatusCode::OK, Json(serde_json::json!({"status": "ready"}))),
    }
}

/// Prometheus text exposition (behind the admin token: it names apps).
async fn metrics(axum::extract::State(s): axum::extract::State<SharedState>) -> Result<impl IntoResponse, ApiError> {
    let queue = s.store.queue_figures(time::now_ms()).await?;
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], s.metrics.render(&queue)))
}

/// Runs the API on `listener` and the worker until `shutdown`; then stops
/// accepting requests, drains the worker and returns.
pub async fn serve(listener: TcpListener, state: SharedState, shutdown: CancellationToken) -> anyhow::Result<()> {
    let worker = if state.settings.run_worker {
        let client = startup::http_client(&state.settings, state.destinations.clone())?;
        let (worker, rx) = worker::Worker::new(state.clone(), client);
        tokio::spawn(maintenance::run(state.clone(), shutdown.clone()));
        tokio::spawn(state.wake.clone().listen_to_other_instances());
        Some(tokio::spawn(worker.run(rx, shutdown.clone())))
    } else {
        None
    };
    // A worker-only instance still answers /healthz, /readyz and /metrics, so it can be probed and scraped.
    let app = if state.settings.run_api { router(state.clone()) } else { ops_router(state.clone()) };
    // Our own accept loop, not `axum::serve`: header, body and idle timeouts and connection caps (`http_server`).
    let limits = http_server::Limits::from_settings(&state.settings);
    let api = tokio::spawn(http_server::serve(listener, app, limits, shutdown.clone()));
    shutdown.cancelled().await;
    if tokio::time::timeout(Duration::from_secs(10), api).await.is_err() {
        tracing::warn!("API requests still open after 10s; stopping anyway");
    }
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    state.store.close().await;
    Ok(())
}

/// Builds state from settings (connects, migrates, loads keys) — shared by `serve` and tests.
pub async fn build_state(settings: settings::Settings) -> anyhow::Result<SharedState> {
    startup::build_state(settings).await.map(Arc::new)
}
