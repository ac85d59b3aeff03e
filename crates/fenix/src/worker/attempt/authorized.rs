//! A request (a delivery attempt or an ownership challenge) to an endpoint
//! with OAuth2 client credentials (`crate::oauth`): sent with
//! `Authorization: Bearer <token>`, the token from the shared cache (fetched
//! through the common outbound client, the token URL checked again by the
//! destination policy). A `401` drops the token it refused; a fresh one is
//! fetched and the request sent once more, within the same attempt. When no
//! token can be had before the attempt's deadline, the attempt fails
//! `auth_token` without a request to the receiver.

use reqwest::header::AUTHORIZATION;

use super::{refused, AttemptResult, Request};
use crate::{
    error_class::ErrorClass,
    ids::EndpointId,
    oauth::{
        cache::{Bearer, Source},
        fetch::{Fetcher, TokenError},
        spec::EndpointAuth,
    },
    state::SharedState,
};

/// Sends `req`, with a bearer token when the endpoint has `auth`. The token
/// is waited for until `deadline` (the attempt's own).
pub(in crate::worker) async fn send(
    state: &SharedState,
    client: &reqwest::Client,
    endpoint_id: &EndpointId,
    auth: Option<&EndpointAuth>,
    deadline: tokio::time::Instant,
    req: Request,
) -> AttemptResult {
    let Some(auth) = auth else { return super::send(client, req).await };
    let bearer = match token(state, endpoint_id, auth, deadline).await {
        Ok(bearer) => bearer,
        Err(e) => return refused(ErrorClass::AuthToken, e.to_string()),
    };
    let retry = req.clone();
    let first = super::send(client, with_bearer(req, &bearer)).await;
    if first.facts.status != Some(401) {
        return first;
    }
    // Refused: maybe revoked before its expiry. Once more with a fresh one.
    state.oauth_tokens.refused(&state.store, endpoint_id, &bearer).await;
    match token(state, endpoint_id, auth, deadline).await {
        Ok(fresh) => super::send(client, with_bearer(retry, &fresh)).await,
        Err(e) => refused(ErrorClass::AuthToken, format!("the receiver answered 401 and {e}")),
    }
}

/// A token from the cache, or [`TokenError::TimedOut`] at `deadline`.
async fn token(
    state: &SharedState,
    endpoint_id: &EndpointId,
    auth: &EndpointAuth,
    deadline: tokio::time::Instant,
) -> Result<Bearer, TokenError> {
    let source = Source {
        store: &state.store,
        fetcher: Fetcher {
            client: state.outbound.client(),
            destinations: &state.destinations,
            keyring: &state.keyring,
        },
    };
    let wait = state.oauth_tokens.bearer(&source, endpoint_id, auth);
    tokio::time::timeout_at(deadline, wait).await.unwrap_or(Err(TokenError::TimedOut))
}

fn with_bearer(mut req: Request, bearer: &Bearer) -> Request {
    req.headers.insert(AUTHORIZATION, bearer.token.header_value());
    req
}
