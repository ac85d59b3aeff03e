//! Authentication and scopes of the admin API: every `/v1` call and
//! `/metrics` need a caller ([`Principal`]), and each route may be used only
//! by the callers its declared scope admits.
//!
//! - Who: [`principal_from_headers`], the one function that turns a request's
//!   headers into a caller (today `Authorization: Bearer <token>`, checked
//!   against the token hashes in the database through a short-lived cache).
//! - What: each route declares its scope in its `#[utoipa::path]` as
//!   `security(("bearer" = ["admin" | "app:read" | "app:manage"]))`; the
//!   middleware enforces what the OpenAPI document says ([`ScopeTable`], built
//!   once from [`super::document`], looked up by the matched route template
//!   and method), so the document and the server cannot disagree. A route
//!   without a declared scope is admin-only.
//! - Where: an app-scoped caller reaches only its app. A path naming another
//!   app (by id or uid) answers the very 404 an unknown app answers, so app
//!   ids do not leak; a missing scope answers 403 `forbidden`.
//! - What belongs to no app: a `GET` route declared `app:read` whose path
//!   names no `{app}` is readable by every authenticated caller (the
//!   event-type catalogue, `/v1/event-types`). Only reads may be declared so
//!   (`every_authenticated_operation_declares_its_scope_…` below holds every
//!   route to it); the one such list that does hold apps, `GET /v1/apps`,
//!   filters by the caller in its handler.
//!
//! The caller goes into the request's extensions, for handlers that filter
//! by it (`Extension<Principal>`, as `GET /v1/apps` does).

use crate::api::code::{Code, Resource};
use std::{
    collections::HashMap,
    sync::{Arc, LazyLock, RwLock},
    time::{Duration, Instant},
};

use axum::{
    extract::{MatchedPath, Request, State},
    http::{header::AUTHORIZATION, HeaderMap, Method},
    middleware::Next,
    response::Response,
    RequestExt,
};

use super::{error::ApiError, extract::PlainPathParams};
use crate::{
    access::{Principal, Scope},
    ids::AppId,
    secrets::hash_admin_token,
    settings::Settings,
    store::Store,
    time::{self, Millis},
};

/// How long a verified token is trusted without asking the database again:
/// a token revoked by another instance or the CLI, or whose app was deleted,
/// stops working within this time (at once when revoked through this
/// instance's API). Expiry is checked on every call, cached or not.
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(10);

/// The scope names of the document's `security(("bearer" = [...]))`.
pub const SCOPE_ADMIN: &str = "admin";
pub const SCOPE_APP_READ: &str = "app:read";
pub const SCOPE_APP_MANAGE: &str = "app:manage";

/// A token verified lately.
struct Verified {
    principal: Principal,
    expires_at: Option<Millis>,
    at: Instant,
}

/// What the middleware checks callers with: the store, the console cookie's
/// name, and the tokens it verified lately.
pub struct Auth {
    store: Store,
    /// The session cookie's one accepted name (`__Host-fenix_session` over HTTPS).
    cookie: &'static str,
    /// Hash of a verified token → what it is.
    verified: RwLock<HashMap<String, Verified>>,
}

impl Auth {
    /// A checker with an empty cache.
    pub fn new(store: Store, settings: &Settings) -> Arc<Auth> {
        let cookie = super::sessions::cookie_name(settings);
        Arc::new(Auth { store, cookie, verified: RwLock::new(HashMap::new()) })
    }

    /// The store callers are checked against (for the console-session path too).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Drops every cached token, so a token revoked through this instance stops at once.
    pub fn forget_tokens(&self) {
        self.verified.write().expect("token cache lock").clear();
    }

    /// The caller a bearer token stands for, through the cache.
    async fn principal_for_token(&self, token: &str) -> Result<Option<Principal>, ApiError> {
        let hash = hash_admin_token(token);
        let now = time::now_ms();
        if let Some(v) = self.verified.read().expect("token cache lock").get(&hash) {
            if v.at.elapsed() < TOKEN_CACHE_TTL && v.expires_at.is_none_or(|at| now < at) {
                return Ok(Some(v.principal.clone()));
            }
        }
        let Some(row) = self.store.find_live_token(&hash, now).await? else {
            self.verified.write().expect("token cache lock").remove(&hash);
            return Ok(None);
        };
        let mut cache = self.verified.write().expect("token cache lock");
        if cache.len() > 1024 {
            cache.clear();
        }
        let principal = row.principal.clone();
        cache.insert(hash, Verified { principal: row.principal, expires_at: row.expires_at, at: Instant::now() });
        Ok(Some(principal))
    }
}

/// Who made a change, for the records that say so (an endpoint's state
/// changes): the [`Principal`] says what a caller may do, this how it came.
/// In the request's extensions beside the principal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Actor {
    /// An admin token, or an operator's console session.
    Operator,
    /// An app-scoped token (`fxk_…`).
    AppToken,
    /// A customer's portal session in the console.
    PortalCustomer,
}

impl Actor {
    /// The actor in words, as the records put it: "paused by {}".
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Operator => "an operator",
            Actor::AppToken => "an app token",
            Actor::PortalCustomer => "a portal customer",
        }
    }

    fn of(principal: &Principal, by_bearer: bool) -> Actor {
        match (principal, by_bearer) {
            (Principal::Admin, _) => Actor::Operator,
            (Principal::App { .. }, true) => Actor::AppToken,
            (Principal::App { .. }, false) => Actor::PortalCustomer,
        }
    }
}

/// The one place a request's headers become its caller: `Authorization:
/// Bearer <token>`, or else the console's session cookie (`fenix_session`, or
/// `__Host-fenix_session` over HTTPS, with `X-Fenix-CSRF` on state changes:
/// `method` is for that rule), or 401.
pub async fn principal_from_headers(auth: &Auth, headers: &HeaderMap, method: &Method) -> Result<Principal, ApiError> {
    if let Some(token) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer_token) {
        return auth.principal_for_token(token).await?.ok_or_else(ApiError::unauthorized);
    }
    if headers.contains_key(AUTHORIZATION) {
        return Err(ApiError::unauthorized());
    }
    super::sessions::principal_from_cookie(&auth.store, auth.cookie, headers, method)
        .await?
        .ok_or_else(ApiError::unauthorized)
}

/// Middleware of every authenticated route: who calls, whether the route's
/// scope admits them, and whether the app in the path is theirs.
pub async fn require_token(State(auth): State<Arc<Auth>>, mut req: Request, next: Next) -> Result<Response, ApiError> {
    let principal = principal_from_headers(&auth, req.headers(), req.method()).await?;
    if let Principal::App { app_id, .. } = &principal {
        let scope =
            req.extensions().get::<MatchedPath>().map_or(Scope::Admin, |p| scopes().of(req.method(), p.as_str()));
        if scope == Scope::Admin {
            return Err(forbidden("this call needs an admin token"));
        }
        // A malformed path is refused as it is for an admin (400 `invalid_path`), before
        // any lookup: whether the app exists cannot change that answer.
        let PlainPathParams(params) = req.extract_parts::<PlainPathParams>().await?;
        // The app in the path must be the caller's, else the answer is an unknown app's.
        if let Some((_, named)) = params.iter().find(|(name, _)| *name == "app") {
            if !names_app(&auth.store, named, app_id).await? {
                return Err(ApiError::not_found(Resource::App));
            }
        }
        if !principal.allows(scope) {
            return Err(forbidden("this token has read access only: the call needs app:manage"));
        }
    }
    let actor = Actor::of(&principal, req.headers().contains_key(AUTHORIZATION));
    req.extensions_mut().insert(principal);
    req.extensions_mut().insert(actor);
    Ok(next.run(req).await)
}

/// Whether the path's `{app}` (an id or a uid) is the app `app_id`. By id it
/// is a comparison; by uid, one indexed read. (The handler resolves the uid
/// again: only an admin moving this very uid to another app between the two
/// reads, a window of a request's length, could make them differ.)
async fn names_app(store: &Store, named: &str, app_id: &AppId) -> Result<bool, ApiError> {
    if app_id == named {
        return Ok(true);
    }
    // What no app can be named (PostgreSQL would refuse to compare a NUL).
    if named.chars().any(char::is_control) {
        return Ok(false);
    }
    Ok(store.find_app(named).await?.is_some_and(|app| app.id == *app_id))
}

fn forbidden(message: &str) -> ApiError {
    ApiError::new(Code::Forbidden, message)
}

/// The token of an `Authorization: Bearer <token>` value. The scheme name is
/// case-insensitive in HTTP (RFC 9110 §11.1), so `BEARER` and `bearer` count too.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The scope of every operation of the OpenAPI document: (method, route
/// template as axum matches it) → scope.
pub struct ScopeTable(HashMap<(Method, String), Scope>);

/// Built once, from the document the server serves.
pub fn scopes() -> &'static ScopeTable {
    static TABLE: LazyLock<ScopeTable> = LazyLock::new(|| ScopeTable::from_document(&super::document()));
    &TABLE
}

impl ScopeTable {
    /// Reads each operation's `security` requirement of the `bearer` scheme.
    /// An operation that declares no scope, or one this table does not know,
    /// is admin-only.
    pub fn from_document(doc: &serde_json::Value) -> ScopeTable {
        let mut table = HashMap::new();
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for (method, op) in item.as_object().into_iter().flatten() {
                let Ok(method) = Method::from_bytes(method.to_ascii_uppercase().as_bytes()) else { continue };
                table.insert((method, path.clone()), declared_scope(op));
            }
        }
        ScopeTable(table)
    }

    /// The scope of a route; HEAD is its GET.
    pub fn of(&self, method: &Method, template: &str) -> Scope {
        let method = if method == Method::HEAD { &Method::GET } else { method };
        self.0.get(&(method.clone(), template.to_string())).copied().unwrap_or(Scope::Admin)
    }
}

/// The scope an operation declares; admin when it declares none or several.
pub fn declared_scope(op: &serde_json::Value) -> Scope {
    let declared: Vec<&str> = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|req| req["bearer"].as_array())
        .flatten()
        .filter_map(|s| s.as_str())
        .collect();
    match declared.as_slice() {
        [SCOPE_APP_READ] => Scope::AppRead,
        [SCOPE_APP_MANAGE] => Scope::AppManage,
        _ => Scope::Admin,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        for value in ["Bearer fxa_1", "bearer fxa_1", "BEARER fxa_1", "bEaReR   fxa_1 "] {
            assert_eq!(bearer_token(value), Some("fxa_1"), "{value:?}");
        }
        for value in ["Basic fxa_1", "Bearer", "Bearer   ", "Bearerfxa_1", "fxa_1", ""] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }

    #[test]
    fn an_operation_without_a_known_single_scope_is_admin_only() {
        assert_eq!(declared_scope(&json!({"security": [{"bearer": ["app:read"]}]})), Scope::AppRead);
        assert_eq!(declared_scope(&json!({"security": [{"bearer": ["app:manage"]}]})), Scope::AppManage);
        assert_eq!(declared_scope(&json!({"security": [{"bearer": ["admin"]}]})), Scope::Admin);
        for op in [
            json!({}),
            json!({"security": [{"bearer": []}]}),
            json!({"security": [{"bearer": ["app:write"]}]}),
            json!({"security": [{"bearer": ["app:read", "app:manage"]}]}),
            json!({"security": [{"other": ["app:read"]}]}),
        ] {
            assert_eq!(declared_scope(&op), Scope::Admin, "{op}");
        }
    }

    #[test]
    fn the_table_follows_the_served_document() {
        let table = scopes();
        assert_eq!(table.of(&Method::GET, "/v1/apps"), Scope::AppRead);
        assert_eq!(table.of(&Method::HEAD, "/v1/apps/{app}"), Scope::AppRead);
        assert_eq!(table.of(&Method::POST, "/v1/apps"), Scope::Admin);
        assert_eq!(table.of(&Method::POST, "/v1/apps/{app}/events"), Scope::AppManage);
        assert_eq!(table.of(&Method::GET, "/metrics"), Scope::Admin);
        assert_eq!(table.of(&Method::GET, "/v1/event-types"), Scope::AppRead);
        assert_eq!(table.of(&Method::GET, "/v1/event-types/{name}"), Scope::AppRead);
        assert_eq!(table.of(&Method::POST, "/v1/event-types"), Scope::Admin);
        assert_eq!(table.of(&Method::PATCH, "/v1/event-types/{name}"), Scope::Admin);
        assert_eq!(table.of(&Method::GET, "/v1/no-such-route"), Scope::Admin);
    }

    /// Every authenticated operation declares exactly one known scope, and
    /// every app-scoped one names the app in its path, except reads of what
    /// belongs to no app (`GET` without `{app}`: the catalogue, and the app
    /// list, which its handler filters): a route added without a scope fails
    /// here instead of silently becoming admin-only, and an app-scoped change
    /// the middleware could not confine cannot be added.
    #[test]
    fn every_authenticated_operation_declares_its_scope_and_app_scoped_ones_name_their_app() {
        let doc = super::super::document();
        let mut checked = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if op["security"] == json!([]) {
                    continue;
                }
                let declared = &op["security"];
                let known = [SCOPE_ADMIN, SCOPE_APP_READ, SCOPE_APP_MANAGE].map(|s| json!([{ "bearer": [s] }]));
                assert!(known.contains(declared), "{method} {path} declares {declared}");
                match declared_scope(op) {
                    Scope::Admin => {}
                    Scope::AppRead if method == "get" && !path.contains("{app}") => {
                        assert!(
                            path == "/v1/apps" || path.starts_with("/v1/event-types"),
                            "{method} {path}: readable by every app token; add it here only if it holds no app's data"
                        );
                    }
                    _ => assert!(path.starts_with("/v1/apps/{app}"), "{method} {path} is app-scoped but names no app"),
                }
                checked += 1;
            }
        }
        assert!(checked >= 24, "only {checked} authenticated operations");
    }
}
