//! The create and update bodies, and their checks: each field parsed into
//! its typed form, the endpoint's spec (`endpoint_spec`) among them, parsed
//! here once (the destination policy for the URL, `endpoint_policy` for
//! headers and retry rules, the catalogue in strict mode). The checks run in
//! a fixed order, so a body with several faults is always answered with the
//! same one.

use crate::api::code::Code;
use std::{collections::BTreeMap, time::Duration};

use serde::Deserialize;

use crate::{
    api::{error::ApiError, extract::non_null},
    endpoint_policy::{self, InvalidPolicy, StoredHeaders},
    endpoint_spec::EndpointSpec,
    event_types::EventTypeFilter,
    ids,
    lifecycle::{EndpointState, OnDeadLetter, SigningAlgorithm},
    secrets::{EndpointKey, SigningSecret},
    state::SharedState,
    store::endpoints::{EndpointPatch, EndpointRow, NewEndpoint},
    time,
};

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateEndpoint {
    #[schema(example = "https://hooks.example.com/fenix")]
    url: String,
    description: Option<String>,
    #[serde(default)]
    event_types: Vec<String>,
    #[schema(minimum = 1, maximum = 100000)]
    rate_limit_per_sec: Option<i64>,
    #[schema(schema_with = crate::api::schemas::signature_scheme, required = false)]
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
    /// A client certificate (mTLS) and extra CA certificates; the key is
    /// write-only.
    tls: Option<super::tls::TlsIn>,
    /// OAuth2 client credentials (client credentials grant): every request
    /// carries `Authorization: Bearer` with a token from `token_url`.
    #[schema(value_type = Option<crate::oauth::spec::AuthIn>)]
    auth: Option<serde_json::Value>,
    /// Channels (at most 10 names, each as `pattern`, repeats kept once): the
    /// endpoint receives only events sharing at least one; absent or `[]`:
    /// every event.
    #[serde(default)]
    #[schema(schema_with = crate::api::schemas::label_list, required = false)]
    channels: Vec<String>,
    /// JavaScript `function handler(webhook) { … return webhook; }` that
    /// reshapes each delivery's request before it is signed (docs/api.md,
    /// Transformations); at most 64 KiB, compiled when saved.
    #[schema(
        example = "function handler(webhook) { webhook.payload = {text: webhook.payload.type}; return webhook; }"
    )]
    transformation: Option<String>,
    /// A content filter in CEL over the event (`type`, `data`, `channels`,
    /// `tags`): only events it is true for are sent (docs/api.md, Content
    /// filters); at most 2,000 bytes, checked when saved. Absent, null or `""`: none.
    #[schema(example = "data.amount > 100 && data.currency == \"EUR\"")]
    filter: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PatchEndpoint {
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
    /// Left out: unchanged; null: none. Given, it replaces the whole TLS
    /// material (a certificate with its key, both or neither; the previous
    /// certificate of a rotation is dropped).
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<super::tls::TlsIn>)]
    tls: Option<Option<super::tls::TlsIn>>,
    /// Left out: unchanged; null: none. Given, it replaces the whole object;
    /// `client_secret` / `private_key` left out keep the stored one when the
    /// method needs the same kind and `token_url` and `client_id` are unchanged.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<crate::oauth::spec::AuthIn>)]
    auth: Option<Option<serde_json::Value>>,
    /// Left out: unchanged; cannot be null (`[]`: every event). Replaces the
    /// whole list; applies to events sent from then on.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = crate::api::schemas::label_list, required = false)]
    channels: Option<Vec<String>>,
    /// Left out: unchanged; null: none (the envelope is sent as it is).
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<String>)]
    transformation: Option<Option<String>>,
    /// Left out: unchanged; null or `""`: none. Applies to events sent from then on.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<String>)]
    filter: Option<Option<String>>,
}

/// Distinguishes a field left out (`None`) from an explicit `null` (`Some(None)`).
mod double_option {
    use serde::{Deserialize, Deserializer};
    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

/// The endpoint a create asks for in app `app_id`, checked and ready to
/// insert (created now, active), and the key it starts to sign with.
pub(super) async fn new_endpoint(
    s: &SharedState,
    app_id: ids::AppId,
    body: &CreateEndpoint,
) -> Result<(NewEndpoint, EndpointKey), ApiError> {
    let filter = EventTypeFilter::parse(&body.event_types)?;
    catalogued(s, &filter).await?;
    let scheme = signature_scheme(body.signature_scheme.as_deref())?;
    let key = new_key(body.signing_algorithm, body.secret.as_deref())?;
    let id = ids::EndpointId::new();
    let headers = created_headers(s, id.as_str(), body)?;
    let retry_schedule = body.retry_schedule.as_deref().map(retry_schedule).transpose()?;
    let final_status_codes = final_codes(body.final_status_codes.as_deref().unwrap_or_default())?;
    let attempt_timeout = body.attempt_timeout.as_deref().map(|t| attempt_timeout(s, t)).transpose()?;
    let url = check_url(s, &body.url).await?;
    let description = check_description(body.description.as_deref().unwrap_or(""))?;
    let spec = EndpointSpec {
        signature_scheme: scheme,
        signing_algorithm: key.algorithm(),
        event_types: filter,
        headers,
        retry_schedule,
        final_status_codes,
        attempt_timeout,
        ordered: body.ordered,
        on_dead_letter: body.on_dead_letter,
        rate_limit_per_sec: check_rate(body.rate_limit_per_sec)?,
        tls: created_tls(s, id.as_str(), body.tls.as_ref())?,
        auth: super::auth::created(s, id.as_str(), body.auth.as_ref()).await?,
        channels: endpoint_channels(&body.channels)?,
        transformation: transformation(s, body.transformation.as_deref()).await?,
        filter: body.filter.as_deref().map(content_filter).transpose()?.flatten(),
    };
    one_authorization(&spec.headers, spec.auth.is_some())?;
    let now = time::now_ms();
    let row = EndpointRow {
        id,
        app_id,
        url,
        description,
        state: EndpointState::Active,
        state_reason: None,
        state_changed_at: None,
        created_at: now,
        updated_at: now,
        spec,
    };
    let new =
        NewEndpoint { sealed_secret: key.seal(&s.keyring.current, row.id.as_str()), public_key: key.public_key(), row };
    Ok((new, key))
}

/// The change a patch asks of endpoint `row`, checked; its `challenge` is
/// left for the caller to decide.
pub(super) async fn endpoint_patch(
    s: &SharedState,
    row: &EndpointRow,
    body: &PatchEndpoint,
) -> Result<EndpointPatch, ApiError> {
    let url = match &body.url {
        Some(u) => Some(check_url(s, u).await?),
        None => None,
    };
    let headers = patched_headers(s, row, body)?;
    let event_types = body.event_types.as_deref().map(EventTypeFilter::parse).transpose()?;
    if let Some(filter) = &event_types {
        catalogued(s, filter).await?;
    }
    let auth = super::auth::patched(s, row, body.auth.as_ref()).await?;
    let auth_after = auth.as_ref().map_or(row.spec.auth.is_some(), Option::is_some);
    one_authorization(headers.as_ref().unwrap_or(&row.spec.headers), auth_after)?;
    Ok(EndpointPatch {
        url,
        description: body.description.as_deref().map(check_description).transpose()?,
        event_types,
        rate_limit_per_sec: body.rate_limit_per_sec.map(check_rate).transpose()?,
        headers,
        retry_schedule: body
            .retry_schedule
            .as_ref()
            .map(|v| v.as_deref().map(retry_schedule).transpose())
            .transpose()?,
        final_status_codes: body.final_status_codes.as_deref().map(final_codes).transpose()?,
        attempt_timeout: body
            .attempt_timeout
            .as_ref()
            .map(|v| v.as_deref().map(|t| attempt_timeout(s, t)).transpose())
            .transpose()?,
        ordered: body.ordered,
        on_dead_letter: body.on_dead_letter,
        tls: body.tls.as_ref().map(|t| created_tls(s, row.id.as_str(), t.as_ref())).transpose()?,
        auth,
        channels: body.channels.as_deref().map(endpoint_channels).transpose()?,
        transformation: match &body.transformation {
            Some(t) => Some(transformation(s, t.as_deref()).await?),
            None => None,
        },
        filter: body
            .filter
            .as_ref()
            .map(|f| f.as_deref().map(content_filter).transpose().map(Option::flatten))
            .transpose()?,
        challenge: None,
    })
}

/// An endpoint's `transformation`, compiled (its top level run within the
/// limits, `handler` defined): `invalid_transformation` with the reason and line.
async fn transformation(s: &SharedState, script: Option<&str>) -> Result<Option<std::sync::Arc<str>>, ApiError> {
    let Some(script) = script else { return Ok(None) };
    s.transforms
        .compile(script, crate::transform::API_WAIT)
        .await
        .map_err(|f| ApiError::new(Code::InvalidTransformation, format!("transformation: {}", f.message(true))))?;
    Ok(Some(std::sync::Arc::from(script)))
}

/// An endpoint's content `filter` (`filter`), checked against its bounds:
/// `invalid_filter` with the line and column; blank is none.
fn content_filter(text: &str) -> Result<Option<String>, ApiError> {
    crate::filter::parse_field(text).map_err(|e| ApiError::invalid_filter("filter", e))
}

/// An endpoint's `channels` (`labels`): `invalid_channels` naming the place.
fn endpoint_channels(names: &[String]) -> Result<Vec<String>, ApiError> {
    crate::labels::parse("channels", names).map_err(|e| ApiError::new(Code::InvalidChannels, e.to_string()))
}

/// OAuth2's bearer token is the request's `Authorization` header: an
/// endpoint with `auth` may not also carry one of its own.
fn one_authorization(headers: &StoredHeaders, has_auth: bool) -> Result<(), ApiError> {
    if has_auth && headers.has("authorization") {
        return Err(ApiError::new(
            Code::InvalidAuth,
            "auth and a custom Authorization header exclude each other: the OAuth2 bearer token is the \
             request's Authorization header",
        ));
    }
    Ok(())
}

/// The TLS material given to endpoint `id`, checked, its key sealed.
fn created_tls(
    s: &SharedState,
    id: &str,
    given: Option<&super::tls::TlsIn>,
) -> Result<Option<crate::endpoint_tls::EndpointTls>, ApiError> {
    given.map_or(Ok(None), |t| super::tls::parse(t, &s.keyring.current, id, time::now_ms()))
}

/// A create's custom headers, sensitive values sealed for endpoint `id`.
fn created_headers(s: &SharedState, id: &str, body: &CreateEndpoint) -> Result<StoredHeaders, ApiError> {
    match &body.headers {
        Some(given) => endpoint_policy::parse_headers(
            given,
            body.sensitive_headers.as_deref().unwrap_or_default(),
            &StoredHeaders::default(),
            &s.keyring.current,
            id,
        )
        .map_err(invalid_policy),
        None if body.sensitive_headers.as_ref().is_some_and(|v| !v.is_empty()) => {
            Err(ApiError::new(Code::InvalidSensitiveHeaders, "sensitive_headers needs headers to name"))
        }
        None => Ok(StoredHeaders::default()),
    }
}

/// A patch's custom headers in stored form (`None`: unchanged). A sensitive
/// value given as `"[redacted]"` keeps the one `row` stores.
fn patched_headers(
    s: &SharedState,
    row: &EndpointRow,
    body: &PatchEndpoint,
) -> Result<Option<StoredHeaders>, ApiError> {
    let previous = &row.spec.headers;
    match (&body.headers, &body.sensitive_headers) {
        (Some(given), sensitive) => {
            // Left out: what was sensitive stays so, for the names still given.
            let sensitive = sensitive.clone().unwrap_or_else(|| {
                let kept = endpoint_policy::still_sensitive(previous).into_iter();
                kept.filter(|n| given.keys().any(|g| g.eq_ignore_ascii_case(n))).collect()
            });
            endpoint_policy::parse_headers(given, &sensitive, previous, &s.keyring.current, row.id.as_str())
                .map(Some)
                .map_err(invalid_policy)
        }
        (None, Some(_)) => Err(ApiError::new(
            Code::InvalidSensitiveHeaders,
            "sensitive_headers can only be changed together with headers",
        )),
        (None, None) => Ok(None),
    }
}

/// The key a create or rotation starts to sign with: an owner-supplied HMAC
/// secret, or a fresh key of `algorithm`. An Ed25519 private key is only
/// ever made here, so it exists nowhere but sealed in the database.
pub(super) fn new_key(algorithm: SigningAlgorithm, supplied: Option<&str>) -> Result<EndpointKey, ApiError> {
    match (algorithm, supplied) {
        (SigningAlgorithm::Hmac, Some(v)) => Ok(EndpointKey::Hmac(SigningSecret::parse(v).map_err(invalid_secret)?)),
        (SigningAlgorithm::Ed25519, Some(_)) => Err(ApiError::new(
            Code::InvalidSecret,
            "secret can only be given with signing_algorithm \"hmac\": Fenix makes Ed25519 keys itself",
        )),
        (algorithm, None) => Ok(EndpointKey::generate(algorithm)),
    }
}

fn invalid_secret(e: crate::secrets::InvalidSecret) -> ApiError {
    ApiError::new(Code::InvalidSecret, e.to_string())
}

/// The scheme a create asks for; left out, `fenix-v1`.
fn signature_scheme(given: Option<&str>) -> Result<fenix_signing::Scheme, ApiError> {
    match given {
        None => Ok(fenix_signing::Scheme::FenixV1),
        Some(v) => fenix_signing::Scheme::parse(v).ok_or_else(|| {
            ApiError::new(
                Code::InvalidSignatureScheme,
                "signature_scheme must be \"fenix-v1\" or \"standard-webhooks\"",
            )
        }),
    }
}

/// In strict mode (`FENIX_EVENT_TYPES_STRICT`), every pattern of an endpoint's
/// filter must name a catalogued type: 422 `unknown_event_type` otherwise.
async fn catalogued(s: &SharedState, filter: &EventTypeFilter) -> Result<(), ApiError> {
    match s.catalogue.unknown_in_filter(&s.store, s.settings.event_types_strict, filter).await? {
        Some(refusal) => Err(refusal.into()),
        None => Ok(()),
    }
}

/// Runs the destination policy (URL shape, DNS, every address public).
async fn check_url(s: &SharedState, raw: &str) -> Result<String, ApiError> {
    match s.destinations.check_destination(raw).await {
        Ok(url) => Ok(url.to_string()),
        Err(e) => Err(ApiError::new(Code::from(&e), e.to_string())),
    }
}

fn check_rate(rate: Option<i64>) -> Result<Option<i64>, ApiError> {
    match rate {
        Some(r) if !(1..=100_000).contains(&r) => {
            Err(ApiError::new(Code::InvalidRateLimit, "rate_limit_per_sec must be between 1 and 100000, or null"))
        }
        other => Ok(other),
    }
}

fn check_description(d: &str) -> Result<String, ApiError> {
    if d.len() > 1024 {
        return Err(ApiError::new(Code::InvalidDescription, "description must be at most 1024 bytes"));
    }
    // Line breaks and tabs are fine in a description; NUL is not storable text on PostgreSQL.
    if d.contains('\0') {
        return Err(ApiError::new(Code::InvalidDescription, "description must not contain NUL characters"));
    }
    Ok(d.to_string())
}

fn invalid_policy(e: InvalidPolicy) -> ApiError {
    ApiError::new(Code::parse(e.code).unwrap_or(Code::InvalidBody), e.message)
}

/// The retry policy fields of a create or patch, checked.
fn retry_schedule(waits: &[String]) -> Result<Vec<Duration>, ApiError> {
    endpoint_policy::parse_schedule(waits).map_err(invalid_policy)
}

fn final_codes(codes: &[i64]) -> Result<Vec<u16>, ApiError> {
    endpoint_policy::parse_final_codes(codes).map_err(invalid_policy)
}

fn attempt_timeout(s: &SharedState, raw: &str) -> Result<Duration, ApiError> {
    endpoint_policy::parse_attempt_timeout(raw, s.settings.attempt_timeout).map_err(invalid_policy)
}
