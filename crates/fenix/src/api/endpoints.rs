//! Endpoints: an app's destinations, their event-type filter, state, and
//! signing secrets. The URL goes through the destination policy on create and
//! update; the secret is answered only by create and rotate. The endpoint's
//! own policy (custom headers, retry rules) is checked by `endpoint_policy`;
//! sensitive header values are sealed there and never answered.

use std::collections::BTreeMap;

use axum::{extract::State, http::StatusCode, Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    auth::Actor,
    error::{ApiError, ErrorBody},
    extract::{
        non_null, optional_json, ApiJson, ApiPath, ApiQuery, AppPath, EndpointPath, ListScope, NoOptions, NoQuery,
        Page, PageQuery, RawBody,
    },
    lookup,
};
use crate::{
    endpoint_policy::{self, InvalidPolicy, StoredHeaders},
    event_types::EventTypeFilter,
    ids,
    lifecycle::{DeliveryStatus, EndpointState, OnDeadLetter, SigningAlgorithm},
    secrets::{EndpointKey, SigningSecret},
    send_budgets::{self, Action},
    state::SharedState,
    store::{
        endpoints::{EndpointPatch, EndpointRow, NewEndpoint},
        ownership::ChallengeRow,
    },
    time,
    worker::ownership,
};

/// The 429 of a call that would start an ownership challenge over its budget.
const CHALLENGE_LIMIT: &str = "`challenge_limit_reached`: the call would start an ownership challenge, and the \
    endpoint's or the app's challenges are spent for now (docs/security.md); nothing was changed";

/// How many older secrets may still sign after rotations.
pub const MAX_OLD_SECRETS: i64 = 5;
/// Longest overlap a rotation may ask for (30 days).
const MAX_OVERLAP_SECONDS: i64 = 30 * 86_400;

/// An endpoint as the API shows it. `secret` only in create and rotate answers.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Endpoint)]
pub struct EndpointOut {
    pub id: String,
    pub app_id: String,
    pub url: String,
    pub description: String,
    pub event_types: Vec<String>,
    pub state: EndpointState,
    pub state_reason: Option<String>,
    pub state_changed_at: Option<String>,
    pub rate_limit_per_sec: Option<i64>,
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
        let (headers, sensitive_headers) = StoredHeaders::from_json(&r.headers).redacted();
        EndpointOut {
            headers,
            sensitive_headers,
            retry_schedule: r
                .retry_schedule
                .as_deref()
                .and_then(endpoint_policy::schedule_from_json)
                .map(|s| s.into_iter().map(endpoint_policy::show_duration).collect()),
            final_status_codes: endpoint_policy::final_codes_from_json(&r.final_status_codes),
            attempt_timeout: r
                .attempt_timeout_ms
                .and_then(|ms| u64::try_from(ms).ok())
                .map(|ms| endpoint_policy::show_duration(std::time::Duration::from_millis(ms))),
            event_types: EventTypeFilter::from_json(&r.event_types).patterns().to_vec(),
            id: r.id,
            app_id: r.app_id,
            url: r.url,
            description: r.description,
            state: r.state,
            state_reason: r.state_reason,
            state_changed_at: r.state_changed_at.map(time::rfc3339_ms),
            rate_limit_per_sec: r.rate_limit_per_sec,
            signature_scheme: r.signature_scheme,
            created_at: time::rfc3339_ms(r.created_at),
            updated_at: time::rfc3339_ms(r.updated_at),
            ordered: r.ordered,
            on_dead_letter: r.on_dead_letter,
            signing_algorithm: r.signing_algorithm,
            secret: None,
            public_key: None,
            verification: None,
        }
    }
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateEndpoint {
    #[schema(example = "https://hooks.example.com/fenix")]
    url: String,
    description: Option<String>,
    #[serde(default)]
    event_types: Vec<String>,
    #[schema(minimum = 1, maximum = 100000)]
    rate_limit_per_sec: Option<i64>,
    signature_scheme: Option<String>,
    /// `hmac` (default) or `ed25519`: Fenix makes an Ed25519 key pair, keeps
    /// the private key sealed and never shows it; receivers verify with the public key.
    #[serde(default)]
    signing_algorithm: SigningAlgorithm,
    /// Owner-supplied HMAC secret (migrating from another platform); `hmac` only.
    secret: Option<String>,
    /// Custom request headers sent with every attempt (at most 20, 8 KiB in all).
    #[schema(example = json!({"X-Tenant": "acme", "Authorization": "Bearer abc"}))]
    headers: Option<BTreeMap<String, String>>,
    /// Names in `headers` whose values are sealed and redacted like
    /// `Authorization` and `Cookie` (which always are).
    #[schema(example = json!(["X-Api-Key"]))]
    sensitive_headers: Option<Vec<String>>,
    /// Own waits between attempts (at most 20, each at most 30d); absent or
    /// null: `FENIX_RETRY_SCHEDULE`.
    #[schema(example = json!(["30s", "5m", "1h"]))]
    retry_schedule: Option<Vec<String>>,
    /// 4xx answers (not 408, 410 or 429) that fail a delivery at once.
    #[schema(example = json!([400, 401, 404]))]
    final_status_codes: Option<Vec<i64>>,
    /// Own attempt timeout, at most `FENIX_ATTEMPT_TIMEOUT`; absent or null: that one.
    #[schema(example = "5s")]
    attempt_timeout: Option<String>,
    /// Ordered delivery (default `false`): one delivery at a time per lane, in event order.
    #[serde(default)]
    ordered: bool,
    /// After a dead letter in an ordered lane (default `continue`).
    #[serde(default)]
    on_dead_letter: OnDeadLetter,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PatchEndpoint {
    /// Left out: unchanged; cannot be null.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = String, required = false, example = "https://hooks.example.com/fenix")]
    url: Option<String>,
    /// Left out: unchanged; cannot be null (`""` empties it).
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = String, required = false)]
    description: Option<String>,
    /// Left out: unchanged; cannot be null (`[]` is every type).
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Vec<String>, required = false)]
    event_types: Option<Vec<String>>,
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 100000)]
    rate_limit_per_sec: Option<Option<i64>>,
    /// Left out: unchanged; cannot be null (`{}` removes them all). Replaces
    /// the whole set; a sensitive header given as `"[redacted]"` keeps its stored value.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = BTreeMap<String, String>, required = false)]
    headers: Option<BTreeMap<String, String>>,
    /// Only together with `headers`; left out, the names sensitive so far stay sensitive.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Vec<String>, required = false)]
    sensitive_headers: Option<Vec<String>>,
    /// Left out: unchanged; null: back to `FENIX_RETRY_SCHEDULE`.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<Vec<String>>)]
    retry_schedule: Option<Option<Vec<String>>>,
    /// Left out: unchanged; cannot be null (`[]`: none).
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Vec<i64>, required = false)]
    final_status_codes: Option<Vec<i64>>,
    /// Left out: unchanged; null: back to `FENIX_ATTEMPT_TIMEOUT`.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<String>)]
    attempt_timeout: Option<Option<String>>,
    /// Left out: unchanged; cannot be null. Applies to deliveries created from then on.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = bool, required = false)]
    ordered: Option<bool>,
    /// Left out: unchanged; cannot be null.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = OnDeadLetter, required = false)]
    on_dead_letter: Option<OnDeadLetter>,
}

/// Distinguishes a field left out (`None`) from an explicit `null` (`Some(None)`).
mod double_option {
    use serde::{Deserialize, Deserializer};
    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

#[derive(Debug, Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct RotateSecret {
    overlap_seconds: Option<i64>,
    /// Owner-supplied HMAC secret; `hmac` only.
    secret: Option<String>,
    /// The new key's algorithm; left out: the endpoint's current one. A
    /// change takes effect at once; during the overlap both signatures are sent.
    signing_algorithm: Option<SigningAlgorithm>,
}

/// The new secret. Fields in the order docs/api.md shows them, like every
/// answer: what identifies it first (`version`), times last.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Rotated {
    /// The new secret's version (the first secret is 1).
    version: i64,
    /// The new key's algorithm.
    signing_algorithm: SigningAlgorithm,
    /// The new HMAC secret (`hmac` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
    /// The new Ed25519 key's id (`ed25519` only), as its `v1a` signatures and the key document name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    key_id: Option<String>,
    /// The new Ed25519 public key, `whpk_…` (`ed25519` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    public_key: Option<String>,
    /// Until when the previous secret(s) still sign.
    previous_expires_at: String,
}

/// One live Ed25519 public key of an endpoint.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct PublicKeyOut {
    /// Written beside each fenix-v1 `v1a` signature, and the key's `kid` in the app's key document.
    #[schema(example = "ep_01JD0000000000000000000000.v2")]
    pub key_id: String,
    /// The key's version among the endpoint's secrets.
    pub version: i64,
    /// `whpk_` + base64 of the 32-byte key (the Standard Webhooks form).
    pub public_key: String,
    pub created_at: String,
    /// Until when it signs (`null`: until a rotation retires it).
    pub expires_at: Option<String>,
}

impl From<crate::store::endpoints::PublicKeyRow> for PublicKeyOut {
    fn from(r: crate::store::endpoints::PublicKeyRow) -> Self {
        PublicKeyOut {
            key_id: crate::secrets::key_id(&r.endpoint_id, r.version),
            version: r.version,
            public_key: r.public_key,
            created_at: time::rfc3339_ms(r.created_at),
            expires_at: r.expires_at.map(time::rfc3339_ms),
        }
    }
}

/// An endpoint's live public keys, newest first (empty for an HMAC endpoint).
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct PublicKeys {
    data: Vec<PublicKeyOut>,
}

/// An endpoint after `resume`, with how many skipped deliveries were re-queued.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ResumedEndpoint {
    #[serde(flatten)]
    pub endpoint: EndpointOut,
    /// Deliveries re-queued (0 unless `replay_skipped`).
    pub replayed: u64,
}

/// `/v1/apps/{app}/endpoints…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(read, update, remove))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(rotate))
        .routes(routes!(public_keys))
        .routes(routes!(verify))
}

/// An endpoint as a single-endpoint answer shows it: with its open ownership challenge.
async fn shown(s: &SharedState, row: EndpointRow) -> Result<EndpointOut, ApiError> {
    let challenge = s.store.get_challenge(&row.id).await?;
    let mut out = EndpointOut::from(row);
    out.verification = challenge.map(VerificationOut::from);
    Ok(out)
}

/// Runs the destination policy (URL shape, DNS, every address public).
async fn check_url(s: &SharedState, raw: &str) -> Result<String, ApiError> {
    match s.destinations.check_destination(raw).await {
        Ok(url) => Ok(url.to_string()),
        Err(e) => Err(ApiError::invalid(e.code(), e.to_string())),
    }
}

fn check_rate(rate: Option<i64>) -> Result<Option<i64>, ApiError> {
    match rate {
        Some(r) if !(1..=100_000).contains(&r) => {
            Err(ApiError::invalid("invalid_rate_limit", "rate_limit_per_sec must be between 1 and 100000, or null"))
        }
        other => Ok(other),
    }
}

fn check_description(d: &str) -> Result<String, ApiError> {
    if d.len() > 1024 {
        return Err(ApiError::invalid("invalid_description", "description must be at most 1024 bytes"));
    }
    // Line breaks and tabs are fine in a description; NUL is not storable text on PostgreSQL.
    if d.contains('\0') {
        return Err(ApiError::invalid("invalid_description", "description must not contain NUL characters"));
    }
    Ok(d.to_string())
}

fn invalid_secret(e: crate::secrets::InvalidSecret) -> ApiError {
    ApiError::invalid("invalid_secret", e.to_string())
}

/// The key a create or rotation starts to sign with: an owner-supplied HMAC
/// secret, or a fresh key of `algorithm`. An Ed25519 private key is only
/// ever made here, so it exists nowhere but sealed in the database.
fn new_key(algorithm: SigningAlgorithm, supplied: Option<&str>) -> Result<EndpointKey, ApiError> {
    match (algorithm, supplied) {
        (SigningAlgorithm::Hmac, Some(v)) => Ok(EndpointKey::Hmac(SigningSecret::parse(v).map_err(invalid_secret)?)),
        (SigningAlgorithm::Ed25519, Some(_)) => Err(ApiError::invalid(
            "invalid_secret",
            "secret can only be given with signing_algorithm \"hmac\": Fenix makes Ed25519 keys itself",
        )),
        (algorithm, None) => Ok(EndpointKey::generate(algorithm)),
    }
}

fn invalid_policy(e: InvalidPolicy) -> ApiError {
    ApiError::invalid(e.code, e.message)
}

/// The 422 codes of the endpoint's own policy, for the document.
macro_rules! policy_codes {
    () => {
        "`invalid_header_name`, `invalid_header_value`, `hop_by_hop_header`, `reserved_header`, \
         `duplicate_header`, `too_many_headers`, `headers_too_large`, `invalid_sensitive_headers`, \
         `invalid_retry_schedule`, `invalid_final_status_codes`, `invalid_attempt_timeout`"
    };
}

/// The retry policy fields of a create or patch, checked and in stored form.
fn retry_schedule_column(waits: &[String]) -> Result<String, ApiError> {
    endpoint_policy::parse_schedule(waits).map(|s| endpoint_policy::schedule_to_json(&s)).map_err(invalid_policy)
}

fn final_codes_column(codes: &[i64]) -> Result<String, ApiError> {
    let codes = endpoint_policy::parse_final_codes(codes).map_err(invalid_policy)?;
    Ok(serde_json::to_string(&codes).expect("numbers serialize"))
}

fn attempt_timeout_column(s: &SharedState, raw: &str) -> Result<i64, ApiError> {
    let t = endpoint_policy::parse_attempt_timeout(raw, s.settings.attempt_timeout).map_err(invalid_policy)?;
    Ok(i64::try_from(t.as_millis()).unwrap_or(i64::MAX))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints", tag = "endpoints", operation_id = "create_endpoint",
    summary = "Create an endpoint",
    security(("bearer" = ["app:manage"])),
    description = "The answer carries the signing `secret` (`hmac`); only this call and a rotation ever show it. \
        An `ed25519` endpoint's answer carries its `public_key` instead; its private key is never shown.",
    params(AppPath),
    request_body = CreateEndpoint,
    responses(
        (status = 201, description = "The endpoint, with its `secret` (or `public_key`)", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 422, description = concat!("`invalid_event_types`, `unknown_event_type` (strict mode), `invalid_signature_scheme`, `invalid_secret`, \
            `invalid_rate_limit`, `invalid_description`, `endpoint_limit_reached`, `url_*`, `destination_*`, ",
            policy_codes!()), body = ErrorBody),
        (status = 429, description = CHALLENGE_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
async fn create(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<CreateEndpoint>,
) -> Result<(StatusCode, Json<EndpointOut>), ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let filter = EventTypeFilter::parse(&body.event_types)?;
    catalogued(&s, &filter).await?;
    let scheme = match body.signature_scheme.as_deref() {
        None => fenix_signing::Scheme::FenixV1,
        Some(v) => fenix_signing::Scheme::parse(v).ok_or_else(|| {
            ApiError::invalid(
                "invalid_signature_scheme",
                "signature_scheme must be \"fenix-v1\" or \"standard-webhooks\"",
            )
        })?,
    };
    let key = new_key(body.signing_algorithm, body.secret.as_deref())?;
    let id = ids::new_id("ep");
    let headers = match &body.headers {
        Some(given) => endpoint_policy::parse_headers(
            given,
            body.sensitive_headers.as_deref().unwrap_or_default(),
            &StoredHeaders::default(),
            &s.keyring.current,
            &id,
        )
        .map_err(invalid_policy)?,
        None if body.sensitive_headers.as_ref().is_some_and(|v| !v.is_empty()) => {
            return Err(ApiError::invalid("invalid_sensitive_headers", "sensitive_headers needs headers to name"));
        }
        None => StoredHeaders::default(),
    };
    let retry_schedule = body.retry_schedule.as_deref().map(retry_schedule_column).transpose()?;
    let final_status_codes = final_codes_column(body.final_status_codes.as_deref().unwrap_or_default())?;
    let attempt_timeout_ms = body.attempt_timeout.as_deref().map(|t| attempt_timeout_column(&s, t)).transpose()?;
    let url = check_url(&s, &body.url).await?;
    let now = time::now_ms();
    let row = EndpointRow {
        id,
        app_id: app.id,
        url,
        description: check_description(body.description.as_deref().unwrap_or(""))?,
        event_types: filter.to_json(),
        state: EndpointState::Active,
        state_reason: None,
        state_changed_at: None,
        rate_limit_per_sec: check_rate(body.rate_limit_per_sec)?,
        signature_scheme: scheme.as_str().into(),
        created_at: now,
        updated_at: now,
        headers: headers.to_json(),
        retry_schedule,
        final_status_codes,
        attempt_timeout_ms,
        ordered: body.ordered,
        on_dead_letter: body.on_dead_letter,
        signing_algorithm: key.algorithm(),
    };
    let new = NewEndpoint {
        row: row.clone(),
        sealed_secret: key.seal(&s.keyring.current, &row.id),
        public_key: key.public_key(),
    };
    let max = s.settings.max_endpoints_per_app;
    let required = s.settings.require_endpoint_verification || s.store.app_requires_verification(&row.app_id).await?;
    let challenge = required.then(ownership::new_challenge);
    if challenge.is_some() {
        send_budgets::take(&s.store, Action::Challenge, &row.app_id, &row.id, now)
            .await?
            .map_err(ApiError::over_budget)?;
    }
    // An app deleted since the lookup above (by another call) is the unknown app it now is.
    let inserted =
        s.store.insert_endpoint_challenged(&new, max as i64, challenge.as_ref()).await.map_err(|e| match e {
            sqlx::Error::RowNotFound => ApiError::not_found("app"),
            e => ApiError::from(e),
        })?;
    if !inserted {
        return Err(ApiError::invalid(
            "endpoint_limit_reached",
            format!("this app already has {max} endpoints, the most allowed (FENIX_MAX_ENDPOINTS_PER_APP); delete one first"),
        ));
    }
    tracing::info!(endpoint_id = %row.id, app_id = %row.app_id, "endpoint created");
    // As stored (a challenged endpoint shows `pending_verification`); deleted
    // meanwhile, as built.
    let stored = s.store.get_endpoint(&row.app_id, &row.id).await?.unwrap_or(row);
    let mut out = shown(&s, stored).await?;
    if challenge.is_some() {
        s.wake.challenge_started();
    }
    out.secret = key.shown_secret().map(str::to_string);
    out.public_key = new.public_key;
    Ok((StatusCode::CREATED, Json(out)))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints", tag = "endpoints", operation_id = "list_endpoints",
    summary = "List an app's endpoints",
    security(("bearer" = ["app:read"])),
    params(AppPath, PageQuery),
    responses(
        (status = 200, description = "A page of endpoints", body = Page<EndpointOut>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<EndpointOut>>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = q.limit()?;
    let list = ListScope::new("ep", &[Some(&app.id)]);
    let rows = s.store.list_endpoints(&app.id, q.cursor(&list)?.as_deref(), limit + 1).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.clone(), EndpointOut::from)))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints/{ep}", tag = "endpoints", operation_id = "get_endpoint",
    summary = "Read an endpoint",
    security(("bearer" = ["app:read"])),
    params(EndpointPath),
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn read(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    Ok(Json(shown(&s, row).await?))
}

#[utoipa::path(
    patch, path = "/v1/apps/{app}/endpoints/{ep}", tag = "endpoints", operation_id = "update_endpoint",
    summary = "Change an endpoint's URL, description, event types, rate limit, headers or retry policy",
    security(("bearer" = ["app:manage"])),
    description = "`rate_limit_per_sec: null` removes the limit; `retry_schedule: null` and `attempt_timeout: null` \
        go back to the global settings; a field left out is unchanged. `headers` replaces the whole set.",
    params(EndpointPath),
    request_body = PatchEndpoint,
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = concat!("`invalid_event_types`, `unknown_event_type` (strict mode), `invalid_rate_limit`, `invalid_description`, \
            `url_*`, `destination_*`, ", policy_codes!()), body = ErrorBody),
        (status = 429, description = CHALLENGE_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
async fn update(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    ApiJson(body): ApiJson<PatchEndpoint>,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let url = match &body.url {
        Some(u) => Some(check_url(&s, u).await?),
        None => None,
    };
    let previous = StoredHeaders::from_json(&row.headers);
    let headers = match (&body.headers, &body.sensitive_headers) {
        (Some(given), sensitive) => {
            // Left out: what was sensitive stays so, for the names still given.
            let sensitive = sensitive.clone().unwrap_or_else(|| {
                let kept = endpoint_policy::still_sensitive(&previous).into_iter();
                kept.filter(|n| given.keys().any(|g| g.eq_ignore_ascii_case(n))).collect()
            });
            Some(
                endpoint_policy::parse_headers(given, &sensitive, &previous, &s.keyring.current, &row.id)
                    .map_err(invalid_policy)?
                    .to_json(),
            )
        }
        (None, Some(_)) => {
            return Err(ApiError::invalid(
                "invalid_sensitive_headers",
                "sensitive_headers can only be changed together with headers",
            ))
        }
        (None, None) => None,
    };
    let event_types = body.event_types.as_deref().map(EventTypeFilter::parse).transpose()?;
    if let Some(filter) = &event_types {
        catalogued(&s, filter).await?;
    }
    let patch = EndpointPatch {
        url,
        description: body.description.as_deref().map(check_description).transpose()?,
        event_types: event_types.map(|f| f.to_json()),
        rate_limit_per_sec: body.rate_limit_per_sec.map(check_rate).transpose()?,
        headers,
        retry_schedule: body
            .retry_schedule
            .as_ref()
            .map(|v| v.as_deref().map(retry_schedule_column).transpose())
            .transpose()?,
        final_status_codes: body.final_status_codes.as_deref().map(final_codes_column).transpose()?,
        attempt_timeout_ms: body
            .attempt_timeout
            .as_ref()
            .map(|v| v.as_deref().map(|t| attempt_timeout_column(&s, t)).transpose())
            .transpose()?,
        ordered: body.ordered,
        on_dead_letter: body.on_dead_letter,
        challenge: None,
    };
    // A new URL must be proved again when proof is required, or when the
    // old one was not proved yet (its challenge was for the old URL).
    let new_url = patch.url.as_ref().is_some_and(|u| *u != row.url);
    let reprove = new_url
        && (s.settings.require_endpoint_verification
            || s.store.app_requires_verification(&row.app_id).await?
            || s.store.get_challenge(&row.id).await?.is_some());
    let challenge = reprove.then(ownership::new_challenge);
    let now = time::now_ms();
    if challenge.is_some() {
        send_budgets::take(&s.store, Action::Challenge, &row.app_id, &row.id, now)
            .await?
            .map_err(ApiError::over_budget)?;
    }
    let patch = EndpointPatch { challenge, ..patch };
    s.store.update_endpoint(&row.app_id, &row.id, &patch, now).await?;
    let updated = read(State(s.clone()), NoQuery, ApiPath(EndpointPath { app: row.app_id, ep: row.id })).await;
    // Read first: the answer shows the new challenge before any attempt of it.
    if patch.challenge.is_some() {
        s.wake.challenge_started();
    }
    updated
}

#[utoipa::path(
    delete, path = "/v1/apps/{app}/endpoints/{ep}", tag = "endpoints", operation_id = "delete_endpoint",
    summary = "Delete an endpoint",
    security(("bearer" = ["app:manage"])),
    params(EndpointPath),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn remove(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<StatusCode, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    s.store.delete_endpoint(&row.app_id, &row.id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/pause", tag = "endpoints", operation_id = "pause_endpoint",
    summary = "Pause an endpoint",
    security(("bearer" = ["app:manage"])),
    description = "While paused, new deliveries to it are `skipped`; `resume` can replay them. \
        An endpoint already paused answers `409 endpoint_already_paused` (nothing changed).",
    params(EndpointPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "The endpoint", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 409, description = "`endpoint_already_paused`: it was paused already (by this call's twin, say)",
            body = ErrorBody),
    )
)]
async fn pause(
    State(s): State<SharedState>,
    Extension(actor): Extension<Actor>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<EndpointOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let NoOptions {} = optional_json(&body)?;
    // The record says who paused it: an operator, an app token or the customer in the portal.
    let reason = format!("paused by {}", actor.as_str());
    let changed = s
        .store
        .set_endpoint_state(&row.id, EndpointState::Paused, &reason, &ids::new_id("esc"), time::now_ms())
        .await?;
    if !changed {
        return Err(ApiError::conflict("endpoint_already_paused", "the endpoint is paused already; nothing changed"));
    }
    read(State(s), NoQuery, ApiPath(EndpointPath { app: row.app_id, ep: row.id })).await
}

#[derive(Debug, Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Resume {
    #[serde(default)]
    replay_skipped: bool,
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/resume", tag = "endpoints", operation_id = "resume_endpoint",
    summary = "Resume a paused or disabled endpoint",
    security(("bearer" = ["app:manage"])),
    params(EndpointPath),
    request_body(content = Option<Resume>, description = "Optional; an empty body means defaults"),
    responses(
        (status = 200, description = "The endpoint and how many deliveries were replayed",
            body = ResumedEndpoint),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 409, description = "`endpoint_already_active`: it was active already and nothing was asked to be \
            replayed (nothing changed)", body = ErrorBody),
        (status = 429, description = super::replay::REPLAY_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
async fn resume(
    State(s): State<SharedState>,
    Extension(actor): Extension<Actor>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<ResumedEndpoint>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let body: Resume = optional_json(&body)?;
    if body.replay_skipped {
        super::replay::spend_endpoint_replay(&s, &row).await?;
    }
    let now = time::now_ms();
    let reason = format!("resumed by {}", actor.as_str());
    let changed = s.store.set_endpoint_state(&row.id, EndpointState::Active, &reason, &ids::new_id("esc"), now).await?;
    if !changed && !body.replay_skipped {
        return Err(ApiError::conflict("endpoint_already_active", "the endpoint is active already; nothing changed"));
    }
    let replayed = if body.replay_skipped {
        super::replay::requeue_endpoint(&s, &row.id, &[DeliveryStatus::Skipped], None, None).await?
    } else {
        0
    };
    let Json(endpoint) = read(State(s), NoQuery, ApiPath(EndpointPath { app: row.app_id, ep: row.id })).await?;
    Ok(Json(ResumedEndpoint { endpoint, replayed }))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/secret/rotate", tag = "endpoints",
    operation_id = "rotate_endpoint_secret",
    summary = "Rotate an endpoint's signing secret",
    security(("bearer" = ["app:manage"])),
    description = "Requests are signed with both the new and the previous secret until `previous_expires_at` \
        (`overlap_seconds`, default 86400, at most 30 days). `signing_algorithm` may switch between `hmac` and \
        `ed25519`; an Ed25519 rotation answers the new `public_key` and `key_id`, never a private key.",
    params(EndpointPath),
    request_body(content = Option<RotateSecret>, description = "Optional; an empty body means defaults"),
    responses(
        (status = 200, description = "The new secret", body = Rotated),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_overlap`, `invalid_secret`, `invalid_body` (an unknown `signing_algorithm`)", body = ErrorBody),
    )
)]
async fn rotate(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<Rotated>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let body: RotateSecret = optional_json(&body)?;
    let overlap = body.overlap_seconds.unwrap_or(86_400);
    if !(0..=MAX_OVERLAP_SECONDS).contains(&overlap) {
        return Err(ApiError::invalid("invalid_overlap", "overlap_seconds must be between 0 and 2592000 (30 days)"));
    }
    let key = new_key(body.signing_algorithm.unwrap_or(row.signing_algorithm), body.secret.as_deref())?;
    let now = time::now_ms();
    let expires = now.saturating_add(overlap * 1000);
    let sealed = key.seal(&s.keyring.current, &row.id);
    let public_key = key.public_key();
    let version = s
        .store
        .rotate_key(
            &row.id,
            |_| sealed.clone(),
            (key.algorithm(), public_key.as_deref()),
            now,
            expires,
            MAX_OLD_SECRETS,
        )
        .await
        .map_err(|e| match e {
            // Deleted between the lookup above and the rotation.
            sqlx::Error::RowNotFound => ApiError::not_found("endpoint"),
            e => e.into(),
        })?;
    let algorithm = key.algorithm();
    tracing::info!(endpoint_id = %row.id, version, %algorithm, overlap_seconds = overlap, "endpoint secret rotated");
    Ok(Json(Rotated {
        version,
        signing_algorithm: algorithm,
        secret: key.shown_secret().map(str::to_string),
        key_id: public_key.is_some().then(|| crate::secrets::key_id(&row.id, version)),
        public_key,
        previous_expires_at: time::rfc3339_ms(expires),
    }))
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/endpoints/{ep}/public-keys", tag = "endpoints",
    operation_id = "list_endpoint_public_keys",
    summary = "Read an endpoint's Ed25519 public keys",
    security(("bearer" = ["app:read"])),
    description = "The public keys that sign now, newest first: one, or two during a rotation's overlap. Empty \
        for an `hmac` endpoint. Receivers can also fetch every key of the app, without a token, at \
        `/v1/apps/{app}/jwks.json`.",
    params(EndpointPath),
    responses(
        (status = 200, description = "The live public keys", body = PublicKeys),
        (status = 400, description = "`invalid_path`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
    )
)]
async fn public_keys(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<Json<PublicKeys>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let keys = s.store.endpoint_public_keys(&row.id, time::now_ms()).await?;
    Ok(Json(PublicKeys { data: keys.into_iter().map(PublicKeyOut::from).collect() }))
}

/// In strict mode (`FENIX_EVENT_TYPES_STRICT`), every pattern of an endpoint's
/// filter must name a catalogued type: 422 `unknown_event_type` otherwise.
async fn catalogued(s: &SharedState, filter: &EventTypeFilter) -> Result<(), ApiError> {
    match s.catalogue.unknown_in_filter(&s.store, s.settings.event_types_strict, filter).await? {
        Some(refusal) => Err(refusal.into()),
        None => Ok(()),
    }
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/verify", tag = "endpoints", operation_id = "verify_endpoint",
    summary = "Send an endpoint a new ownership challenge",
    security(("bearer" = ["app:manage"])),
    description = "Starts a new challenge now, replacing an open or expired one: the endpoint shows \
        `pending_verification` until it answers 2xx echoing it (see docs/receiving.md). A paused or disabled \
        endpoint is sent it once resumed. An endpoint that proved its URL already answers 409. Challenges are limited per \
        endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.",
    params(EndpointPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 202, description = "The endpoint, with its new challenge in `verification`", body = EndpointOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 409, description = "`endpoint_verified`", body = ErrorBody),
        (status = 429, description = CHALLENGE_LIMIT, body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    )
)]
async fn verify(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<EndpointOut>), ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let NoOptions {} = optional_json(&body)?;
    if s.store.get_challenge(&row.id).await?.is_none() {
        return Err(ApiError::conflict(
            "endpoint_verified",
            "this endpoint has no open challenge: it proved it controls its URL, or no proof was asked of it",
        ));
    }
    let now = time::now_ms();
    send_budgets::take(&s.store, Action::Challenge, &row.app_id, &row.id, now).await?.map_err(ApiError::over_budget)?;
    if !s.store.start_challenge(&row.id, &ownership::new_challenge(), now).await? {
        return Err(ApiError::not_found("endpoint"));
    }
    let Json(out) = read(State(s.clone()), NoQuery, ApiPath(EndpointPath { app: row.app_id, ep: row.id })).await?;
    // Read first: the answer shows the new challenge before any attempt of it.
    s.wake.challenge_started();
    Ok((StatusCode::ACCEPTED, Json(out)))
}

