//! The admin API over HTTP: `/v1` (apps, endpoints, events, deliveries,
//! tokens) behind a token and each route's scope, the probes, `/metrics` and `/openapi.json`.
//!
//! Each resource file registers its handlers with `utoipa_axum::routes!`,
//! which takes the route and its OpenAPI description from the handler's
//! `#[utoipa::path]`: [`router`] and [`document`] are built from the same
//! registration (`routes`), so the document cannot name a route the server
//! lacks, nor miss one it has.
//!
//! | file | holds |
//! |---|---|
//! | `auth.rs` | the caller of a request (`principal_from_headers`), its token cache, each route's scope enforced (`require_token`) |
//! | `extract.rs` | JSON, query and path extractors in our error shape, path parameters, pagination |
//! | `error.rs` | [`ApiError`] and the error body |
//! | `code.rs` | every error `code` ([`code::Code`]): its text and status, in one place; the domain errors turned into codes |
//! | `schemas.rs` | the document's `enum`s of closed sets whose type lives outside the API |
//! | `lookup.rs` | `{app}`, `{ep}` → rows, or 404 |
//! | `status_filter.rs` | the delivery log's `?status=`: a status as shown, or `failing` |
//! | `duration.rs` | a duration in a body (`expires_in`): `1h`, `30d` or whole seconds |
//! | `apps.rs`, `endpoints/`, `events.rs`, `deliveries.rs`, `replay.rs`, `stats.rs`, `tokens.rs` | one resource each |
//! | `portal_sessions.rs`, `settings.rs` | portal links (admin); the settings in force, secrets redacted |
//! | `portal_listener.rs` | the customer-facing listener (`FENIX_PORTAL_LISTEN`): the portal and app-scoped routes only |
//! | `sessions.rs` | console sessions: the `fenix_session` cookie (`__Host-` over HTTPS), CSRF, `/console/api/…` (not in the document) |
//! | `console.rs` | the web console's embedded pages and their security headers (not in the document) |
//! | `tasks.rs` | bulk operations as tasks (`/v1/apps/{app}/tasks`) and an endpoint's recovery after an outage |
//! | `test_events.rs` | a test event to one endpoint |
//! | `filters.rs` | a content filter evaluated on sample events (`filters/test`), nothing stored |
//! | `transformations.rs` | an endpoint transformation run on a given event (`transformations/test`), nothing stored |
//! | `catalogue.rs` | the event-type catalogue (`/v1/event-types`): admins write, every caller reads |
//! | `key_document.rs` | an app's Ed25519 public keys as a JWKS, public (no token) for receivers |
//! | `service.rs` | `/healthz`, `/readyz`, `/metrics`, `/openapi.json` |
//! | `openapi.rs` | the document's info, tags and security, common error answers, each error answer's `code` enum, links |
//!
//! Nothing outside this folder imports from it except `lib.rs` (which serves
//! the routers) and `http_server` (which answers its own errors as [`ApiError`]).

pub mod apps;
pub mod auth;
pub mod catalogue;
pub mod code;
pub mod console;
pub mod deliveries;
mod docs_examples;
pub mod duration;
pub mod endpoints;
pub mod error;
pub mod events;
pub mod extract;
pub mod filters;
pub mod key_document;
pub mod lookup;
pub mod openapi;
pub mod portal_listener;
pub mod portal_sessions;
pub mod replay;
pub mod schemas;
pub mod service;
pub mod sessions;
pub mod settings;
pub mod sized_page;
pub mod stats;
pub mod status_filter;
pub mod tasks;
pub mod test_events;
pub mod tokens;
pub mod transformations;

use crate::api::code::Code;
use std::convert::Infallible;

use axum::{
    extract::{DefaultBodyLimit, Request},
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::Route,
    Router,
};
use tower::{Layer, Service};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub use error::ApiError;
pub use extract::MAX_BODY_BYTES;

use crate::state::SharedState;

/// The whole HTTP surface of an instance that runs the API.
pub fn router(state: SharedState) -> Router {
    let checker = auth::Auth::new(state.store.clone(), &state.settings);
    let auth = axum::middleware::from_fn_with_state(checker.clone(), auth::require_token);
    let (router, _) = routes(auth).split_for_parts();
    // The token API reaches the checker's cache, so a revoked token stops at once here.
    let router = router.layer(axum::Extension(checker));
    router
        .merge(sessions::console_api())
        // The console's pages are not API: outside the OpenAPI document.
        .merge(console::router(&state.settings.console_frame_ancestors))
        .fallback(|| async { ApiError::new(Code::NotFound, "no such route") })
        .method_not_allowed_fallback(|| async {
            ApiError::new(Code::MethodNotAllowed, "this route does not accept that method")
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(close_after_refused_body))
        .with_state(state)
}

/// Health, readiness and metrics only (worker-only instances), so they can be probed and scraped.
pub fn ops_router(state: SharedState) -> Router {
    let auth = axum::middleware::from_fn_with_state(
        auth::Auth::new(state.store.clone(), &state.settings),
        auth::require_token,
    );
    let (router, _) = service::probes().merge(service::metrics().route_layer(auth)).split_for_parts();
    router
        .fallback(|| async { ApiError::new(Code::NotFound, "no such route (worker-only instance)") })
        .with_state(state)
}

/// The OpenAPI document as served at `/openapi.json`.
pub fn document() -> serde_json::Value {
    // The same registration as the server's, with the token check left out (it adds no route).
    openapi::finish(routes(tower::layer::util::Identity::new()).into_openapi())
}

/// Every route with its description; `auth` wraps those that need the admin token.
fn routes<L>(auth: L) -> OpenApiRouter<SharedState>
where
    L: Layer<Route> + Clone + Send + Sync + 'static,
    L::Service: Service<Request, Error = Infallible> + Clone + Send + Sync + 'static,
    <L::Service as Service<Request>>::Response: IntoResponse + 'static,
    <L::Service as Service<Request>>::Future: Send + 'static,
{
    let v1 = OpenApiRouter::new()
        .merge(apps::router())
        .merge(endpoints::router())
        .merge(events::router())
        .merge(deliveries::router())
        .merge(replay::router())
        .merge(tasks::router())
        .merge(stats::router())
        .merge(tokens::router())
        .merge(portal_sessions::router())
        .merge(settings::router())
        .merge(test_events::router())
        .merge(transformations::router())
        .merge(filters::router())
        .merge(catalogue::router())
        .route_layer(auth.clone());
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(v1)
        // Public: receivers fetch it without a token (it holds public keys only).
        .merge(key_document::router())
        .merge(service::probes())
        .merge(service::document())
        .merge(service::metrics().route_layer(auth))
}

/// A body refused for its size may not have been read to its end: tell the
/// client the connection closes, so it does not send its next request into it.
async fn close_after_refused_body(mut resp: Response) -> Response {
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE {
        resp.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
    }
    resp
}
