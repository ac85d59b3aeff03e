//! Fenix: outbound webhook delivery.
//!
//! The admin API stores apps, endpoints and events; ingestion writes each event
//! with its deliveries in one transaction; the [`worker`] claims due deliveries
//! under a lease, signs and sends them, and records every attempt. See
//! `docs/ARCHITECTURE.md` for the shape of the whole.

pub mod access;
pub mod alerts;
pub mod answer_bytes;
pub mod api;
pub mod catalogue;
pub mod egress;
pub mod endpoint_policy;
pub mod endpoint_spec;
pub mod endpoint_tls;
pub mod envelope;
pub mod error_class;
pub mod event_types;
pub mod filter;
pub mod http_server;
pub mod ids;
pub mod ingest;
pub mod keycheck;
pub mod labels;
pub mod lifecycle;
pub mod maintenance;
pub mod metrics;
pub mod oauth;
pub mod operator;
pub mod outbound;
pub mod receiver;
pub mod rekey;
pub mod retention;
pub mod secrets;
pub mod send_budgets;
pub mod settings;
pub mod startup;
pub mod state;
pub mod store;
pub mod time;
pub mod tls_expiry;
pub mod traces;
pub mod transform;
pub mod wake;
pub mod worker;

use std::{sync::Arc, time::Duration};

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::state::SharedState;

/// Runs the API on `listener` (and the customer-facing routes on `portal`,
/// `FENIX_PORTAL_LISTEN`) and the worker until `shutdown`; then stops
/// accepting requests, drains the worker and returns.
pub async fn serve(
    listener: TcpListener,
    portal: Option<TcpListener>,
    state: SharedState,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let worker = if state.settings.run_worker {
        let client = state.outbound.client().clone();
        // Proof of endpoint ownership: its challenges go through the same client.
        tokio::spawn(worker::ownership::run(state.clone(), client.clone(), shutdown.clone()));
        let (worker, rx) = worker::Worker::new(state.clone(), client);
        tokio::spawn(maintenance::run(state.clone(), shutdown.clone()));
        // Bulk operations (`/v1/apps/{app}/tasks`), at their bounded rate.
        tokio::spawn(worker::tasks::run(state.clone(), shutdown.clone()));
        tokio::spawn(state.wake.clone().listen_to_other_instances());
        Some(tokio::spawn(worker.run(rx, shutdown.clone())))
    } else {
        None
    };
    // A full disk is reported until a probe write succeeds (`/readyz`, metrics).
    tokio::spawn(store::disk_full::watch(state.store.clone(), shutdown.clone()));
    // A worker-only instance still answers /healthz, /readyz and /metrics, so it can be probed and scraped.
    let app = if state.settings.run_api { api::router(state.clone()) } else { api::ops_router(state.clone()) };
    // Our own accept loop, not `axum::serve`: header, body and idle timeouts and connection caps (`http_server`).
    let limits = http_server::Limits::from_settings(&state.settings);
    let api = tokio::spawn(http_server::serve(listener, app, limits, shutdown.clone()));
    let portal = portal.filter(|_| state.settings.run_api).map(|listener| {
        let app = api::portal_listener::router(state.clone());
        tokio::spawn(http_server::serve(listener, app, limits, shutdown.clone()))
    });
    shutdown.cancelled().await;
    if tokio::time::timeout(Duration::from_secs(10), api).await.is_err() {
        tracing::warn!("API requests still open after 10s; stopping anyway");
    }
    if let Some(portal) = portal {
        if tokio::time::timeout(Duration::from_secs(5), portal).await.is_err() {
            tracing::warn!("portal requests still open; stopping anyway");
        }
    }
    if let Some(worker) = worker {
        let _ = worker.await;
    }
    state.store.close().await;
    // Last: the spans of the drained deliveries go out (the exporter blocks).
    let traces = state.traces.clone();
    let _ = tokio::task::spawn_blocking(move || traces.shutdown()).await;
    Ok(())
}

/// Builds state from settings (connects, migrates, loads keys) — shared by `serve` and tests.
pub async fn build_state(settings: settings::Settings) -> anyhow::Result<SharedState> {
    startup::build_state(settings).await.map(Arc::new)
}
