//! Endpoints: an app's destinations, their event-type filter, state, and
//! signing secrets. The URL goes through the destination policy on create and
//! update; the secret is answered only by create and rotate. The endpoint's
//! own policy (custom headers, retry rules) is checked by `endpoint_policy`;
//! sensitive header values are sealed there and never answered.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the router, the endpoint as answers show it (`Endpoint`, its `verification`), the challenge a call starts |
//! | `crud.rs` | list, create, read, update, delete |
//! | `input.rs` | the create and update bodies, checked into the stored row or patch; the key a create or rotation starts with |
//! | `state.rs` | pause and resume |
//! | `keys.rs` | signing keys: rotation and the live public keys |
//! | `tls.rs` | the `tls` object (client certificate, CA certificates): its body, its read form, the client certificate's rotation |
//! | `ownership.rs` | proof of ownership: `verify` |
//! | `auth.rs` | the `auth` object (OAuth2 client credentials): read, its token URL checked, sealed |

mod auth;
mod crud;
mod input;
mod keys;
mod ownership;
mod state;
mod tls;

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::ApiError;
use crate::{
    endpoint_policy,
    ids::{AppId, EndpointId},
    lifecycle::{EndpointState, OnDeadLetter, SigningAlgorithm},
    send_budgets::{self, Action},
    state::SharedState,
    store::{
        endpoints::EndpointRow,
        ownership::{ChallengeRow, NewChallenge},
    },
    time::{self, Millis},
    worker::ownership::new_challenge,
};

/// The 429 of a call that would start an ownership challenge over its budget.
const CHALLENGE_LIMIT: &str = "`challenge_limit_reached`: the call would start an ownership challenge, and the \
    endpoint's or the app's challenges are spent for now (docs/security.md); nothing was changed";

/// `/v1/apps/{app}/endpoints…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(crud::list, crud::create))
        .routes(routes!(crud::read, crud::update, crud::remove))
        .routes(routes!(state::pause))
        .routes(routes!(state::resume))
        .routes(routes!(keys::rotate))
        .routes(routes!(keys::public_keys))
        .routes(routes!(tls::rotate))
        .routes(routes!(ownership::verify))
}

/// An endpoint as the API shows it. `secret` only in create and rotate answers.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Endpoint)]
pub struct EndpointOut {
    pub id: crate::ids::EndpointId,
    pub app_id: crate::ids::AppId,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub state: EndpointState,
    pub state_reason: Option<String>,
    pub state_changed_at: Option<String>,
    pub rate_limit_per_sec: Option<i64>,
    #[schema(schema_with = crate::api::schemas::signature_scheme)]
    pub signature_scheme: String,
    /// Custom request headers sent with every attempt. The values of
    /// sensitive headers (`Authorization`, `Cookie`, and `sensitive_headers`)
    /// always read `"[redacted]"`.
    #[schema(example = json!({"X-Tenant": "acme", "Authorization": "[redacted]"}))]
    pub headers: BTreeMap<String, String>,
    /// Header names marked sensitive besides `Authorization` and `Cookie`,
    /// which always are.
    pub sensitive_headers: Vec<String>,
    /// The endpoint's own waits between attempts; `null`: `FENIX_RETRY_SCHEDULE`.
    #[schema(example = json!(["30s", "5m", "1h"]))]
    pub retry_schedule: Option<Vec<String>>,
    /// Answers that fail a delivery at once, without retry (`[]`: none).
    pub final_status_codes: Vec<u16>,
    /// The endpoint's own attempt timeout; `null`: `FENIX_ATTEMPT_TIMEOUT`.
    #[schema(example = "5s")]
    pub attempt_timeout: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Ordered delivery: one delivery at a time per lane (`ordering_key`), in event order.
    pub ordered: bool,
    /// After a dead letter in an ordered lane: `continue` past it, or `block` until it is replayed.
    pub on_dead_letter: OnDeadLetter,
    /// What the current key signs with: `hmac` (`v1` signatures) or
    /// `ed25519` (`v1a`); see `…/public-keys` for an Ed25519 endpoint's keys.
    pub signing_algorithm: SigningAlgorithm,
    /// The HMAC secret: in the create answer of an `hmac` endpoint only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The Ed25519 public key (`whpk_…`): in the create answer of an
    /// `ed25519` endpoint (and readable at any time at `…/public-keys`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key: Option<String>,
    /// The client certificate (mTLS) and extra CA certificates it uses;
    /// `null`: neither. Never the key.
    pub tls: Option<tls::TlsOut>,
    /// OAuth2 client credentials: each request carries a bearer token from
    /// `token_url`; `null`: none. Never the client secret or the private key.
    pub auth: Option<crate::oauth::spec::AuthOut>,
    /// The channels it receives: only events sharing at least one of them;
    /// `[]`: every event (its `event_types` still apply).
    #[schema(schema_with = crate::api::schemas::label_list)]
    pub channels: Vec<String>,
    /// The JavaScript that reshapes each delivery's request (docs/api.md,
    /// Transformations); `null`: none.
    pub transformation: Option<String>,
    /// The content filter (CEL) events must pass to be sent here
    /// (docs/api.md, Content filters); `null`: none.
    pub filter: Option<String>,
    /// The open ownership challenge of an endpoint that has not proved it
    /// controls its URL (`pending_verification`); left out once verified,
    /// and in lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationOut>,
}

/// Whether an ownership challenge is still being sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerificationStatus {
    /// Attempts are coming (`next_attempt_at`).
    Pending,
    /// Every attempt failed: `POST …/verify` starts a new challenge.
    Expired,
}

/// An endpoint's open ownership challenge: its attempts and why the last one failed.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct VerificationOut {
    pub status: VerificationStatus,
    /// Attempts made so far (failed ones: a success ends the challenge).
    pub attempts: i64,
    pub next_attempt_at: Option<String>,
    pub last_attempt_at: Option<String>,
    /// The HTTP status of the last answer, if there was one.
    pub last_status: Option<i64>,
    /// Why the last attempt failed: `challenge_mismatch`, `http_status`, `timeout`, `connect`,
    /// `destination_blocked`, … (the delivery log's classes).
    pub last_error: Option<String>,
    pub last_error_detail: Option<String>,
    /// When this challenge was started.
    pub started_at: String,
}

impl From<ChallengeRow> for VerificationOut {
    fn from(c: ChallengeRow) -> Self {
        VerificationOut {
            status: if c.next_attempt_at.is_some() { VerificationStatus::Pending } else { VerificationStatus::Expired },
            attempts: c.attempts,
            next_attempt_at: c.next_attempt_at.map(time::rfc3339_ms),
            last_attempt_at: c.last_attempt_at.map(time::rfc3339_ms),
            last_status: c.last_status,
            last_error: c.last_error,
            last_error_detail: c.last_error_detail,
            started_at: time::rfc3339_ms(c.created_at),
        }
    }
}

impl From<EndpointRow> for EndpointOut {
    fn from(r: EndpointRow) -> Self {
        let spec = r.spec;
        let (headers, sensitive_headers) = spec.headers.redacted();
        let shown = |waits: Vec<std::time::Duration>| waits.into_iter().map(endpoint_policy::show_duration).collect();
        EndpointOut {
            headers,
            sensitive_headers,
            retry_schedule: spec.retry_schedule.map(shown),
            final_status_codes: spec.final_status_codes,
            attempt_timeout: spec.attempt_timeout.map(endpoint_policy::show_duration),
            event_types: spec.event_types.patterns().to_vec(),
            id: r.id,
            app_id: r.app_id,
            url: r.url,
            description: r.description,
            state: r.state,
            state_reason: r.state_reason,
            state_changed_at: r.state_changed_at.map(time::rfc3339_ms),
            rate_limit_per_sec: spec.rate_limit_per_sec,
            signature_scheme: spec.signature_scheme.as_str().to_string(),
            created_at: time::rfc3339_ms(r.created_at),
            updated_at: time::rfc3339_ms(r.updated_at),
            ordered: spec.ordered,
            on_dead_letter: spec.on_dead_letter,
            signing_algorithm: spec.signing_algorithm,
            tls: spec.tls.as_ref().map(|t| tls::TlsOut::of(t, time::now_ms())),
            auth: spec.auth.as_ref().map(crate::oauth::spec::AuthOut::from),
            channels: spec.channels,
            transformation: spec.transformation.as_deref().map(str::to_string),
            filter: spec.filter,
            secret: None,
            public_key: None,
            verification: None,
        }
    }
}

/// An endpoint as a single-endpoint answer shows it: with its open ownership challenge.
async fn shown(s: &SharedState, row: EndpointRow) -> Result<EndpointOut, ApiError> {
    let challenge = s.store.get_challenge(&row.id).await?;
    let mut out = EndpointOut::from(row);
    out.verification = challenge.map(VerificationOut::from);
    Ok(out)
}

/// The endpoint `{app}/{ep}` as `GET` answers it (404 if gone): what a call
/// that changed it answers, read again after the change.
async fn read_back(s: &SharedState, app: &AppId, ep: &EndpointId) -> Result<EndpointOut, ApiError> {
    let row = s
        .store
        .get_endpoint(app, ep)
        .await?
        .ok_or_else(|| ApiError::not_found(crate::api::code::Resource::Endpoint))?;
    shown(s, row).await
}

/// Whether a new endpoint of app `app_id` (or a new URL) must prove it
/// controls its URL: `FENIX_REQUIRE_ENDPOINT_VERIFICATION`, or the app asks it.
async fn proof_required(s: &SharedState, app_id: &AppId) -> Result<bool, ApiError> {
    Ok(s.settings.require_endpoint_verification || s.store.app_requires_verification(app_id).await?)
}

/// A new ownership challenge for endpoint `ep_id`, the endpoint's and the
/// app's challenge budgets spent for it (429 once spent). The caller stores
/// it, then calls [`Wake::challenge_started`](crate::wake::Wake::challenge_started).
async fn budgeted_challenge(
    s: &SharedState,
    app_id: &AppId,
    ep_id: &EndpointId,
    now: Millis,
) -> Result<NewChallenge, ApiError> {
    send_budgets::take(&s.store, Action::Challenge, app_id, ep_id, now).await?.map_err(ApiError::over_budget)?;
    Ok(new_challenge())
}

/// [`budgeted_challenge`] when `needed`; `None` otherwise.
async fn challenge_if(
    s: &SharedState,
    needed: bool,
    app_id: &AppId,
    ep_id: &EndpointId,
    now: Millis,
) -> Result<Option<NewChallenge>, ApiError> {
    if !needed {
        return Ok(None);
    }
    budgeted_challenge(s, app_id, ep_id, now).await.map(Some)
}
