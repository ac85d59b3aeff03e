//! The app's public-key document, `GET /v1/apps/{app}/jwks.json`: the
//! Ed25519 public keys of the app's endpoints as a JSON Web Key Set (RFC 7517,
//! keys as RFC 8037 `OKP`/`Ed25519` JWKs), so receivers can fetch and cache
//! the keys that verify `v1a` signatures without holding any Fenix token.
//!
//! Public on purpose, so outside the token check: it reveals only public
//! keys, their ids (endpoint id and version) and validity, never a secret, a
//! URL or anything else about the app. The app is addressed by its id alone
//! (unguessable), not by its producer-chosen uid, so the document cannot be
//! used to probe which uids exist.

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
    /// The key id fenix-v1 `v1a` signatures name (`<endpoint id>.v<version>`).
    #[schema(example = "ep_01JD0000000000000000000000.v2")]
    kid: String,
    /// The 32-byte public key, base64url without padding.
    x: String,
    /// The same key in the Standard Webhooks form, `whpk_<base64>`.
    public_key: String,
    /// The endpoint it signs for.
    endpoint_id: String,
    /// When it started to sign.
    created_at: String,
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
            kid: secrets::key_id(&r.endpoint_id, r.version),
            x,
            public_key: r.public_key,
            endpoint_id: r.endpoint_id,
            created_at: time::rfc3339_ms(r.created_at),
            expires_at: r.expires_at.map(time::rfc3339_ms),
        }
    }
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/jwks.json", tag = "endpoints", operation_id = "app_public_keys",
    summary = "The app's Ed25519 public keys (JWKS), for receivers",
    security(),
    description = "No token: receivers fetch it to verify `v1a` signatures. Every live Ed25519 key of the app's \
        endpoints (two for an endpoint in a rotation's overlap), as RFC 8037 JWKs. `Cache-Control: public, \
        max-age=300`; fetch again when a signature names an unknown `kid`. The app by its id only.",
    params(AppIdPath),
    responses(
        (status = 200, description = "The key set (`{\"keys\": []}` when no endpoint signs with Ed25519)",
            body = KeySet),
        (status = 400, description = "`invalid_path`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn jwks(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppIdPath { app }): ApiPath<AppIdPath>,
) -> Result<Response, ApiError> {
    let found = s.store.find_app(&app).await?.filter(|row| row.id == app);
    let Some(app) = found else {
        return Err(ApiError::not_found("app"));
    };
    let rows = s.store.app_public_keys(&app.id, time::now_ms()).await?;
    let mut resp = Json(KeySet { keys: rows.into_iter().map(Jwk::from).collect() }).into_response();
    let cache = HeaderValue::from_str(&format!("public, max-age={MAX_AGE_SECONDS}")).expect("ASCII");
    resp.headers_mut().insert(header::CACHE_CONTROL, cache);
    Ok(resp)
}
