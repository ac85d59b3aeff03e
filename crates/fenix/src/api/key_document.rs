//! The app's public-key document, `GET /v1/apps/{app}/jwks.json`: the
//! Ed25519 public keys of the app's endpoints as a JSON Web Key Set (RFC 7517,
//! keys as RFC 8037 `OKP`/`Ed25519` JWKs), so receivers can fetch and cache
//! the keys that verify `v1a` signatures without holding any Fenix token.
//!
//! Public on purpose, so outside the token check, and so it tells a reader
//! nothing a receiver does not need: each key, its opaque id (the `kid`
//! signatures name, which hides the endpoint id: `secrets::key_id`) and when
//! it stops signing; no endpoint id, no creation time, no URL, no secret. An
//! app id that names no app (or an app's uid, which is not accepted here)
//! answers exactly what an app without Ed25519 keys answers, `{"keys": []}`
//! with the same headers, so the document cannot be used to learn which app
//! ids or uids exist.

use axum::{
    extract::State,
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
    Json,
};
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    extract::{ApiPath, NoQuery},
};
use crate::{secrets, state::SharedState, store::endpoints::PublicKeyRow, time};

/// How long receivers and caches may keep the document. A rotation signs with
/// its new key at once, so receivers fetch again on an unknown `kid` (see
/// docs/receiving.md); this only bounds how long a retired key is still trusted.
const MAX_AGE_SECONDS: u32 = 300;

/// `/v1/apps/{app}/jwks.json` (public: the caller mounts it outside the token check).
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(jwks))
}

/// `{app}` of the key document: the app's id only.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct AppIdPath {
    /// The app's id (`app_…`); a uid is not accepted here.
    app: String,
}

/// A JSON Web Key Set.
#[derive(Debug, Serialize, ToSchema)]
struct KeySet {
    keys: Vec<Jwk>,
}

/// One Ed25519 public key as a JWK (RFC 8037), with Fenix's own members for
/// its endpoint and validity.
#[derive(Debug, Serialize, ToSchema)]
struct Jwk {
    /// Always `OKP`.
    #[schema(example = "OKP")]
    kty: &'static str,
    /// Always `Ed25519`.
    #[schema(example = "Ed25519")]
    crv: &'static str,
    /// Always `EdDSA`.
    #[schema(example = "EdDSA")]
    alg: &'static str,
    /// Always `sig`.
    #[serde(rename = "use")]
    #[schema(example = "sig")]
    use_: &'static str,
    /// The key id fenix-v1 `v1a` signatures name: `k_<ref>.v<version>`, opaque;
    /// `<ref>` is the same for every key of one endpoint.
    #[schema(example = "k_3f1c9a0b5d7e2f4a6c8e.v2")]
    kid: String,
    /// The 32-byte public key, base64url without padding.
    x: String,
    /// The same key in the Standard Webhooks form, `whpk_<base64>`.
    public_key: String,
    /// When it stops signing (`null`: until a rotation retires it).
    expires_at: Option<String>,
}

impl From<PublicKeyRow> for Jwk {
    fn from(r: PublicKeyRow) -> Self {
        let x = fenix_signing::Ed25519PublicKey::parse(&r.public_key)
            .map(|k| URL_SAFE_NO_PAD.encode(k.to_bytes()))
            .unwrap_or_default();
        Jwk {
            kty: "OKP",
            crv: "Ed25519",
            alg: "EdDSA",
            use_: "sig",
            kid: secrets::key_id(r.endpoint_id.as_str(), r.version),
            x,
            public_key: r.public_key,
            expires_at: r.expires_at.map(time::rfc3339_ms),
        }
    }
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/jwks.json", tag = "endpoints", operation_id = "app_public_keys",
    summary = "The app's Ed25519 public keys (JWKS), for receivers",
    security(),
    description = "No token: receivers fetch it to verify `v1a` signatures. Every live Ed25519 key of the app's \
        endpoints (two for an endpoint in a rotation's overlap), as RFC 8037 JWKs with opaque key ids. \
        `Cache-Control: public, max-age=300`; fetch again when a signature names an unknown `kid`. The app by its \
        id only; an id that names no app answers `{\"keys\": []}`, as an app without Ed25519 keys does.",
    params(AppIdPath),
    responses(
        (status = 200, description = "The key set (`{\"keys\": []}` when no endpoint signs with Ed25519, or no \
            app has this id)", body = KeySet),
        (status = 400, description = "`invalid_path`, `invalid_query`", body = ErrorBody),
    )
)]
async fn jwks(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppIdPath { app }): ApiPath<AppIdPath>,
) -> Result<Response, ApiError> {
    // Keys are looked up by the app id itself: an unknown id (or a uid) simply
    // has none, and is answered as an app without keys is, in the same time.
    // Text that is no app id has none either.
    let rows = match super::lookup::app_id(&app) {
        Some(app) => s.store.app_public_keys(&app, time::now_ms()).await?,
        None => Vec::new(),
    };
    let mut resp = Json(KeySet { keys: rows.into_iter().map(Jwk::from).collect() }).into_response();
    let cache = HeaderValue::from_str(&format!("public, max-age={MAX_AGE_SECONDS}")).expect("ASCII");
    resp.headers_mut().insert(header::CACHE_CONTROL, cache);
    Ok(resp)
}
