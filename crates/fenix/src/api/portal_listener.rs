//! The customer-facing listener (`FENIX_PORTAL_LISTEN`): the same router as
//! the main listener, behind a filter that lets through only what a
//! customer's browser needs: the portal's page and assets, its session calls
//! (exchange, session, logout), the `/v1` routes an app-scoped caller may
//! call, an app's public keys and the probes. Everything else (apps'
//! lifecycle, tokens, portal links, settings, metrics, the operator's login
//! and page, the document) answers `404` as if it did not exist there; so does
//! every `/v1` call made as an admin (an admin token, an operator's session),
//! which would otherwise list every app here. The admin API can then stay on
//! an internal network.
//!
//! The filter reads the route's template, not the raw path, and the scope of
//! `/v1` routes comes from the same table the token check uses
//! ([`super::auth::scopes`]), so a new app-scoped route is on the portal
//! listener by itself and a new admin route stays off it.

use std::sync::Arc;

use axum::{
    extract::{MatchedPath, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
    Router,
};

use super::{
    auth::{principal_from_headers, scopes, Auth},
    code::Code,
    ApiError,
};
use crate::{
    access::{Principal, Scope},
    state::SharedState,
};

/// The routes outside `/v1`'s scopes that the portal uses, and the probes.
const OUTSIDE_V1: &[&str] = &[
    "/console/portal",
    "/console/assets/{name}",
    "/console/api/portal/exchange",
    "/console/api/session",
    "/console/api/logout",
    "/v1/apps/{app}/jwks.json",
    "/healthz",
    "/readyz",
];

/// The router of the portal listener: [`super::router`] with the filter.
pub fn router(state: SharedState) -> Router {
    // Its own token cache: it only tells admins apart, and a revoked admin
    // token still cached here is refused all the same (the route's own check
    // then answers every other caller).
    let auth = Auth::new(state.store.clone(), &state.settings);
    super::router(state).layer(axum::middleware::from_fn_with_state(auth, portal_only))
}

/// Whether the portal listener serves `method` on the route `template`.
pub fn serves(method: &axum::http::Method, template: &str) -> bool {
    OUTSIDE_V1.contains(&template) || (template.starts_with("/v1/") && scopes().of(method, template) != Scope::Admin)
}

async fn portal_only(State(auth): State<Arc<Auth>>, req: Request, next: Next) -> Response {
    // No matched route: the router's own fallback answers 404 (or 405) already.
    let Some(template) = req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()) else {
        return next.run(req).await;
    };
    if !serves(req.method(), &template) {
        return no_such_route();
    }
    // The public keys need no caller; the portal's own calls are the session's.
    if !template.starts_with("/v1/") || template == "/v1/apps/{app}/jwks.json" {
        return next.run(req).await;
    }
    // A caller who cannot be told (no or a bad token) is answered by the route's own check.
    match principal_from_headers(&auth, req.headers(), req.method()).await {
        Ok(Principal::Admin) => no_such_route(),
        _ => next.run(req).await,
    }
}

fn no_such_route() -> Response {
    ApiError::new(Code::NotFound, "no such route").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    #[test]
    fn the_portal_listener_serves_app_routes_and_the_portal_only() {
        for (method, template) in [
            (Method::GET, "/console/portal"),
            (Method::POST, "/console/api/portal/exchange"),
            (Method::GET, "/v1/apps/{app}/endpoints"),
            // An app-scoped caller lists its own app only (an admin is refused apart).
            (Method::GET, "/v1/apps"),
            (Method::GET, "/v1/apps/{app}/jwks.json"),
            (Method::GET, "/healthz"),
        ] {
            assert!(serves(&method, template), "{method} {template} is for customers");
        }
        for (method, template) in [
            (Method::POST, "/v1/apps"),
            (Method::GET, "/v1/tokens"),
            (Method::POST, "/v1/apps/{app}/portal-sessions"),
            (Method::GET, "/v1/settings"),
            (Method::GET, "/metrics"),
            (Method::GET, "/openapi.json"),
            (Method::GET, "/console"),
            (Method::POST, "/console/api/login"),
        ] {
            assert!(!serves(&method, template), "{method} {template} stays off the portal listener");
        }
    }
}
