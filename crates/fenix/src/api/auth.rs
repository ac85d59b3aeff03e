//! Authentication of the admin API: every `/v1` call and `/metrics` need
//! `Authorization: Bearer <token>`, checked against the token hashes in the
//! database with a short-lived cache of verified tokens, or a console session
//! cookie (`sessions.rs`).

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use axum::{
    extract::{Request, State},
    http::header::AUTHORIZATION,
    middleware::Next,
    response::Response,
};

use super::error::ApiError;
use crate::{access::Principal, secrets::hash_admin_token, store::Store};

/// How long a verified token is trusted without asking the database again.
const TOKEN_CACHE_TTL: Duration = Duration::from_secs(10);

/// What the middleware checks tokens with: the store and the tokens it verified lately.
pub struct Auth {
    store: Store,
    /// Hash of a verified token → when it was verified.
    verified: RwLock<HashMap<String, Instant>>,
}

impl Auth {
    /// A checker with an empty cache.
    pub fn new(store: Store) -> Arc<Auth> {
        Arc::new(Auth { store, verified: RwLock::new(HashMap::new()) })
    }

    async fn token_is_valid(&self, token: &str) -> Result<bool, ApiError> {
        let hash = hash_admin_token(token);
        if let Some(seen) = self.verified.read().expect("token cache lock").get(&hash) {
            if seen.elapsed() < TOKEN_CACHE_TTL {
                return Ok(true);
            }
        }
        let ok = self.store.admin_token_exists(&hash).await?;
        if ok {
            let mut cache = self.verified.write().expect("token cache lock");
            if cache.len() > 1024 {
                cache.clear();
            }
            cache.insert(hash, Instant::now());
        }
        Ok(ok)
    }
}

/// Middleware: the call needs `Authorization: Bearer <token>` of a stored
/// admin token or, without that header, an operator's console session cookie
/// (`fenix_session`, with `X-Fenix-CSRF` on state changes; see `sessions.rs`).
/// The caller's [`Principal`] is put into the request's extensions.
pub async fn require_token(State(auth): State<Arc<Auth>>, mut req: Request, next: Next) -> Result<Response, ApiError> {
    let principal = match req.headers().get(AUTHORIZATION) {
        Some(value) => {
            let token = value.to_str().ok().and_then(bearer_token).ok_or_else(ApiError::unauthorized)?;
            if !auth.token_is_valid(token).await? {
                return Err(ApiError::unauthorized());
            }
            Principal::Admin
        }
        None => super::sessions::principal_from_cookie(&auth.store, req.headers(), req.method())
            .await?
            .ok_or_else(ApiError::unauthorized)?,
    };
    // Interim, until scoped access (each route's declared scope, and the app in
    // the path) is enforced here: a portal session reaches no `/v1` route.
    if principal != Principal::Admin {
        return Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "forbidden",
            "a portal session cannot use this route",
        ));
    }
    req.extensions_mut().insert(principal);
    Ok(next.run(req).await)
}

/// The token of an `Authorization: Bearer <token>` value. The scheme name is
/// case-insensitive in HTTP (RFC 9110 §11.1), so `BEARER` and `bearer` count too.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
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
}
