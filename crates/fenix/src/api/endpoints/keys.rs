//! An endpoint's signing keys: rotation (a new HMAC secret or Ed25519 key,
//! the previous ones signing on through the overlap) and the live Ed25519
//! public keys. The key a rotation starts with is made by
//! [`new_key`](super::input::new_key), as a create's is.

use crate::api::code::{Code, Resource};
use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};

use super::input::new_key;
use crate::{
    api::{
        error::{ApiError, ErrorBody},
        extract::{optional_json, ApiPath, EndpointPath, NoQuery, RawBody},
        lookup,
    },
    lifecycle::SigningAlgorithm,
    secrets,
    state::SharedState,
    store::endpoints::PublicKeyRow,
    time,
};

/// How many older secrets may still sign after rotations.
pub const MAX_OLD_SECRETS: i64 = 5;
/// Longest overlap a rotation may ask for (30 days).
const MAX_OVERLAP_SECONDS: i64 = 30 * 86_400;

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
pub(super) struct Rotated {
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

impl From<PublicKeyRow> for PublicKeyOut {
    fn from(r: PublicKeyRow) -> Self {
        PublicKeyOut {
            key_id: secrets::key_id(r.endpoint_id.as_str(), r.version),
            version: r.version,
            public_key: r.public_key,
            created_at: time::rfc3339_ms(r.created_at),
            expires_at: r.expires_at.map(time::rfc3339_ms),
        }
    }
}

/// An endpoint's live public keys, newest first (empty for an HMAC endpoint).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct PublicKeys {
    data: Vec<PublicKeyOut>,
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
pub(super) async fn rotate(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<Json<Rotated>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let body: RotateSecret = optional_json(&body)?;
    let overlap = body.overlap_seconds.unwrap_or(86_400);
    if !(0..=MAX_OVERLAP_SECONDS).contains(&overlap) {
        return Err(ApiError::new(Code::InvalidOverlap, "overlap_seconds must be between 0 and 2592000 (30 days)"));
    }
    let key = new_key(body.signing_algorithm.unwrap_or(row.spec.signing_algorithm), body.secret.as_deref())?;
    let now = time::now_ms();
    let expires = now.saturating_add(overlap * 1000);
    let sealed = key.seal(&s.keyring.current, row.id.as_str());
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
            crate::store::Error::NotFound => ApiError::not_found(Resource::Endpoint),
            e => e.into(),
        })?;
    let algorithm = key.algorithm();
    tracing::info!(endpoint_id = %row.id, version, %algorithm, overlap_seconds = overlap, "endpoint secret rotated");
    Ok(Json(Rotated {
        version,
        signing_algorithm: algorithm,
        secret: key.shown_secret().map(str::to_string),
        key_id: public_key.is_some().then(|| secrets::key_id(row.id.as_str(), version)),
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
pub(super) async fn public_keys(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
) -> Result<Json<PublicKeys>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let keys = s.store.endpoint_public_keys(&row.id, time::now_ms()).await?;
    Ok(Json(PublicKeys { data: keys.into_iter().map(PublicKeyOut::from).collect() }))
}
