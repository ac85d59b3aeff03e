//! What every admin handler shares: the application state, bearer-token
//! authentication, the JSON extractor that answers in our error shape, and
//! cursor pagination.

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use axum::{
    extract::{FromRequest, Request, State},
    http::header::AUTHORIZATION,
    middleware::Next,
    response::Response,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use crate::{error::ApiError, secrets::Keyring, settings::Settings, store::Store};

/// Largest request body accepted (events included).
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// Shared by every handler and the worker.
pub struct AppState {
    pub store: Store,
    pub settings: Settings,
    pub keyring: Keyring,
    pub destinations: fenix_destination::CheckingResolver,
    /// The URL policy, re-checked before every attempt.
    pub policy: fenix_destination::Policy,
    /// Group-commit queue of ingestion.
    pub ingestor: crate::ingest::Ingestor,
    /// Counters behind `/metrics`.
    pub metrics: crate::metrics::Metrics,
    /// What the operator webhook may have to report.
    pub alerts: crate::operator::OperatorAlerts,
    /// The internal operator app, when `FENIX_OPERATOR_WEBHOOK_URL` is set.
    pub operator_app_id: Option<String>,
    /// Woken after an ingestion commits, so fresh events are sent at once.
    pub wake: Arc<Notify>,
    tokens: RwLock<HashMap<String, Instant>>,
    /// Recently resolved apps (id or uid → app), for the ingestion hot path.
    pub(crate) app_cache: RwLock<HashMap<String, (crate::store::apps::AppRow, Instant)>>,
}

/// The state as handlers receive it.
pub type SharedState = Arc<AppState>;

/// How long a verified token is trusted without asking the database again.
const TOKEN_CACHE_TTL: Duration = Duration::from_secs(10);

impl AppState {
    /// Assembles the state.
    pub fn new(
        store: Store,
        settings: Settings,
        keyring: Keyring,
        policy: fenix_destination::Policy,
        destinations: fenix_destination::CheckingResolver,
        wake: Arc<Notify>,
    ) -> AppState {
        AppState {
            ingestor: crate::ingest::Ingestor::start(store.clone()),
            store,
            settings,
            keyring,
            policy,
            destinations,
            metrics: Default::default(),
            alerts: Default::default(),
            operator_app_id: None,
            wake,
            tokens: RwLock::new(HashMap::new()),
            app_cache: RwLock::new(HashMap::new()),
        }
    }

    async fn token_is_valid(&self, token: &str) -> Result<bool, ApiError> {
        let hash = hash_token(token);
        if let Some(seen) = self.tokens.read().expect("token cache lock").get(&hash) {
            if seen.elapsed() < TOKEN_CACHE_TTL {
                return Ok(true);
            }
        }
        let ok = self.store.admin_token_exists(&hash).await?;
        if ok {
            let mut cache = self.tokens.write().expect("token cache lock");
            if cache.len() > 1024 {
                cache.clear();
            }
            cache.insert(hash, Instant::now());
        }
        Ok(ok)
    }
}

/// SHA-256 of a token, hex: what the database keeps instead of the token.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new random admin token (`fxa_` + 32 bytes hex).
pub fn generate_token() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("fxa_{}", hex::encode(bytes))
}

/// Middleware: every `/v1` call needs `Authorization: Bearer <token>`.
pub async fn require_token(State(state): State<SharedState>, req: Request, next: Next) -> Result<Response, ApiError> {
    let token = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .ok_or_else(ApiError::unauthorized)?;
    if !state.token_is_valid(token).await? {
        return Err(ApiError::unauthorized());
    }
    Ok(next.run(req).await)
}

/// The token of an `Authorization: Bearer <token>` value. The scheme name is
/// case-insensitive in HTTP (RFC 9110 §11.1), so `BEARER` and `bearer` count too.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// `Json<T>` whose rejections use the API error shape.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(v) = axum::Json::<T>::from_request(req, state).await?;
        Ok(ApiJson(v))
    }
}

/// `Query<T>` whose rejections use the API error shape.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(v) = axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(ApiQuery(v))
    }
}

/// The raw request body (for optional JSON bodies), with the API error shape on rejection.
pub struct RawBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(b) => Ok(RawBody(b)),
            Err(r) if r.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => Err(crate::error::payload_too_large()),
            Err(_) => Err(ApiError::bad_request("unreadable_body", "the request body could not be read")),
        }
    }
}

/// `?limit=&cursor=` of every list.
#[derive(Debug, Deserialize)]
pub struct PageQuery {
    pub limit: Option<i64>,
    pub cursor: Option<String>,
}

impl PageQuery {
    /// The limit to use (default 50, at most 250).
    pub fn limit(&self) -> Result<i64, ApiError> {
        match self.limit {
            None => Ok(50),
            Some(n) if (1..=250).contains(&n) => Ok(n),
            Some(_) => Err(ApiError::bad_request("invalid_limit", "limit must be between 1 and 250")),
        }
    }
}

/// `{"data":[…],"next_cursor":…}`.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// Builds a page from `limit + 1` fetched rows: the extra row only says there is more.
    pub fn from_rows<R>(mut rows: Vec<R>, limit: i64, id: impl Fn(&R) -> String, map: impl Fn(R) -> T) -> Page<T> {
        let more = rows.len() as i64 > limit;
        rows.truncate(limit as usize);
        let next_cursor = if more { rows.last().map(&id) } else { None };
        Page { data: rows.into_iter().map(map).collect(), next_cursor }
    }
}

/// Parses an optional JSON body: empty means all defaults.
pub fn optional_json<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            ApiError::bad_request("malformed_json", "the body is not valid JSON")
        } else {
            ApiError::invalid("invalid_body", e.to_string())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

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
