//! The service routes: liveness and readiness probes (public), this API's
//! OpenAPI document (public) and the Prometheus metrics (admin token).

use crate::api::code::Code;
use axum::{extract::State, http::header, http::StatusCode, response::IntoResponse, Json};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorDetail};
use crate::{metrics::Stall, state::SharedState, store::disk_full, time};

/// `/healthz` and `/readyz`: every instance answers them, worker-only ones too.
pub fn probes() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(healthz)).routes(routes!(readyz))
}

/// `/openapi.json`.
pub fn document() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(openapi_json))
}

/// `/metrics` (the caller puts it behind the admin token: it names apps).
pub fn metrics() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(metrics_text))
}

// Fields in alphabetical order: the answer's bytes stay those of the `json!`
// map this once was (serde_json sorts a map's keys).
/// The answer of `/healthz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Present when unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
    /// `ok` or `unavailable`.
    #[schema(schema_with = super::schemas::health_status)]
    pub status: &'static str,
}

// Fields in alphabetical order, as in `Health`.
/// The answer of `/readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ready {
    /// Present when unavailable: `database_unavailable`, `storage_full` or `worker_stalled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorDetail>,
    /// `ready` or `unavailable`.
    #[schema(schema_with = super::schemas::ready_status)]
    pub status: &'static str,
}

#[utoipa::path(
    get, path = "/healthz", tag = "service", operation_id = "healthz",
    summary = "Liveness and database reachability",
    security(),
    responses(
        (status = 200, description = "The server answers and reaches its database", body = Health,
            example = json!({"status": "ok"})),
        (status = 503, description = "The database is unavailable (`database_unavailable`)", body = Health),
    )
)]
async fn healthz(State(s): State<SharedState>) -> (StatusCode, Json<Health>) {
    match s.store.ping().await {
        Ok(()) => (StatusCode::OK, Json(Health { error: None, status: "ok" })),
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Health {
                error: Some(ErrorDetail {
                    code: Code::DatabaseUnavailable,
                    message: "the database is unavailable".into(),
                    details: None,
                }),
                status: "unavailable",
            }),
        ),
    }
}

/// Readiness: the database answers and takes writes, and this instance's
/// worker (if it runs one) is not stuck. `/healthz` says the process is
/// alive; this says it does its work: a database that refuses writes for a
/// full disk (from the first refusal until a probe write succeeds,
/// `store::disk_full`), a recorder that cannot write, or deliveries due with
/// nothing claimed or recorded, for longer than `FENIX_WORKER_STALL_AFTER`, is a 503.
#[utoipa::path(
    get, path = "/readyz", tag = "service", operation_id = "readyz",
    summary = "Readiness: the database answers and takes writes, and the delivery worker makes progress",
    security(),
    responses(
        (status = 200, description = "Ready", body = Ready, example = json!({"status": "ready"})),
        (status = 503, description = "Not ready: `database_unavailable`; `storage_full` (the database refused a \
            write for a full disk, and no probe write has succeeded since; the message says for how long); or \
            `worker_stalled` (the recorder \
            cannot write, or deliveries are due and nothing was claimed or recorded, for longer than \
            `FENIX_WORKER_STALL_AFTER`); the message says which", body = Ready),
    )
)]
async fn readyz(State(s): State<SharedState>) -> (StatusCode, Json<Ready>) {
    let unready = |code: Code, message: String| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Ready { error: Some(ErrorDetail { code, message, details: None }), status: "unavailable" }),
        )
    };
    let now = time::now_ms();
    if let Some(since) = disk_full::since() {
        return unready(
            Code::StorageFull,
            format!(
                "the database's disk is full: writes have been refused for {} s; free space (a probe write is \
                 tried every second)",
                (now - since).max(0) / 1000
            ),
        );
    }
    let due = match s.store.work_due(now).await {
        Ok(due) => due,
        Err(_) => return unready(Code::DatabaseUnavailable, "the database is unavailable".into()),
    };
    match s.metrics.worker.stall(now, due) {
        Some(Stall::RecorderBlocked(ms)) => unready(
            Code::WorkerStalled,
            format!("the worker has not been able to record delivery outcomes for {} s", ms / 1000),
        ),
        Some(Stall::NoProgress(ms)) => unready(
            Code::WorkerStalled,
            format!("deliveries are due and the worker has claimed or recorded nothing for {} s", ms / 1000),
        ),
        None => (StatusCode::OK, Json(Ready { error: None, status: "ready" })),
    }
}

/// Prometheus text exposition (behind the admin token: it names apps).
#[utoipa::path(
    get, path = "/metrics", tag = "service", operation_id = "metrics",
    summary = "Prometheus metrics",
    security(("bearer" = ["admin"])),
    description = "Prometheus text exposition. Behind the admin token because it names apps.",
    responses((status = 200, description = "Metrics in Prometheus text format", body = String,
        content_type = "text/plain; version=0.0.4"))
)]
async fn metrics_text(State(s): State<SharedState>) -> Result<impl IntoResponse, ApiError> {
    let queue = s.store.queue_figures(time::now_ms()).await?;
    let mut text = s.metrics.render(&queue);
    s.schema_checks.render_metrics(&mut text);
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text))
}

/// Serves the document (built once; it only changes with the code).
#[utoipa::path(
    get, path = "/openapi.json", tag = "service", operation_id = "openapi",
    summary = "This OpenAPI document",
    security(),
    responses((status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json"))
)]
pub async fn openapi_json() -> impl IntoResponse {
    static DOCUMENT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| super::document().to_string());
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT.as_str())
}
