//! An endpoint's TLS material in the API: the `tls` object of the create and
//! update bodies (checked by `endpoint_tls`, the key sealed at once), its
//! read form (each certificate's subject, expiry and SHA-256, never the key),
//! and the rotation of the client certificate with an overlap.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};

use crate::{
    api::{
        code::{Code, Resource},
        duration::DurationIn,
        error::{ApiError, ErrorBody},
        extract::{ApiJson, ApiPath, EndpointPath, NoQuery},
        lookup,
    },
    endpoint_tls::{self, CertInfo, EndpointTls, InvalidTls},
    secrets::MasterKey,
    state::SharedState,
    time::{self, Millis},
};

/// How long the previous client certificate is still presented by default (1 day).
const DEFAULT_OVERLAP_MS: Millis = 86_400_000;
/// The longest overlap a rotation may ask for (30 days).
const MAX_OVERLAP_MS: Millis = 30 * 86_400_000;

/// An endpoint's TLS material as a create or update gives it. Each part is
/// optional; `client_certificate` and `client_key` go together.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = EndpointTlsIn)]
pub(super) struct TlsIn {
    /// The client certificate chain (PEM, leaf first), presented in the TLS
    /// handshake (mTLS). At most 64 KiB.
    #[schema(example = "-----BEGIN CERTIFICATE-----\nMIIB…\n-----END CERTIFICATE-----\n")]
    client_certificate: Option<String>,
    /// Its private key (PEM: PKCS#8, RSA or EC). Write-only: sealed under
    /// the master key, never answered or logged.
    #[schema(example = "-----BEGIN PRIVATE KEY-----\nMIG…\n-----END PRIVATE KEY-----\n")]
    client_key: Option<String>,
    /// Extra trust anchors for the receiver's server certificate (PEM
    /// bundle), on top of the public roots; hostname verification stays on.
    #[schema(example = "-----BEGIN CERTIFICATE-----\nMIIB…\n-----END CERTIFICATE-----\n")]
    ca_certificates: Option<String>,
}

/// One certificate as reads show it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = TlsCertificate)]
pub struct CertificateOut {
    /// The subject's distinguished name.
    #[schema(example = "CN=fenix.example.com")]
    subject: String,
    /// When it stops being valid.
    #[schema(example = "2027-01-01T00:00:00.000Z")]
    not_after: String,
    /// Lowercase hex SHA-256 of the certificate (DER).
    sha256: String,
    /// Whether it expires within 14 days.
    expires_soon: bool,
}

/// The client certificate a rotation replaced, still presented when the new
/// one fails the handshake, until `expires_at`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = PreviousTlsCertificate)]
pub struct PreviousCertificateOut {
    #[serde(flatten)]
    certificate: CertificateOut,
    expires_at: String,
}

/// An endpoint's TLS material as reads show it (never the key).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = EndpointTls)]
pub struct TlsOut {
    /// The client certificate presented in the handshake (the chain's leaf).
    client_certificate: Option<CertificateOut>,
    /// The extra trust anchors for the receiver's server certificate.
    ca_certificates: Vec<CertificateOut>,
    /// During a rotation's overlap: the previous client certificate.
    previous_client_certificate: Option<PreviousCertificateOut>,
}

fn shown(c: &CertInfo, now: Millis) -> CertificateOut {
    CertificateOut {
        subject: c.subject.clone(),
        not_after: time::rfc3339_ms(c.not_after),
        sha256: c.sha256.clone(),
        expires_soon: c.not_after <= now.saturating_add(endpoint_tls::EXPIRING_WITHIN_MS),
    }
}

impl TlsOut {
    /// The read form of `tls` at `now`.
    pub fn of(tls: &EndpointTls, now: Millis) -> TlsOut {
        TlsOut {
            client_certificate: tls.client.as_ref().and_then(|c| c.leaf()).map(|c| shown(c, now)),
            ca_certificates: tls.ca.iter().flat_map(|ca| &ca.certificates).map(|c| shown(c, now)).collect(),
            previous_client_certificate: tls.previous.as_ref().filter(|p| p.expires_at > now).and_then(|p| {
                let leaf = p.identity.leaf()?;
                Some(PreviousCertificateOut {
                    certificate: shown(leaf, now),
                    expires_at: time::rfc3339_ms(p.expires_at),
                })
            }),
        }
    }
}

fn refused(e: InvalidTls) -> ApiError {
    ApiError::new(Code::from(&e), e.to_string())
}

/// The stored material a create or update gives endpoint `endpoint_id`
/// (`None`: none), checked at `now`, the key sealed under `master`.
pub(super) fn parse(
    given: &TlsIn,
    master: &MasterKey,
    endpoint_id: &str,
    now: Millis,
) -> Result<Option<EndpointTls>, ApiError> {
    let client = match (&given.client_certificate, &given.client_key) {
        (Some(chain), Some(key)) => {
            Some(endpoint_tls::parse_identity(chain, key, now).map_err(refused)?.seal(master, endpoint_id))
        }
        (Some(_), None) => {
            return Err(ApiError::new(Code::InvalidClientKey, "client_key is required with client_certificate"))
        }
        (None, Some(_)) => {
            return Err(ApiError::new(Code::InvalidClientCertificate, "client_certificate is required with client_key"))
        }
        (None, None) => None,
    };
    let ca = given.ca_certificates.as_deref().map(|pem| endpoint_tls::parse_ca_bundle(pem, now)).transpose();
    let ca = ca.map_err(refused)?;
    if client.is_none() && ca.is_none() {
        return Ok(None);
    }
    Ok(Some(EndpointTls { client, ca, previous: None }))
}

/// A new client certificate, the current one presented as a fallback during the overlap.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = RotateEndpointTls)]
pub(super) struct RotateTls {
    /// The new client certificate chain (PEM, leaf first).
    client_certificate: String,
    /// Its private key (PEM). Write-only.
    client_key: String,
    /// How long the previous client certificate is still presented when the
    /// new one fails the handshake (default 1d, at most 30d).
    #[schema(required = false)]
    expires_in: Option<DurationIn>,
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/tls/rotate", tag = "endpoints",
    operation_id = "rotate_endpoint_client_certificate",
    summary = "Rotate an endpoint's client certificate",
    security(("bearer" = ["app:manage"])),
    description = "The new certificate is presented at once. Until `previous_client_certificate.expires_at` \
        (`expires_in`, default 1d, at most 30d), an attempt whose TLS handshake fails with the new one is tried \
        again, within the same attempt and timeout, with the previous one. The key is never answered.",
    params(EndpointPath),
    request_body(content = RotateTls),
    responses(
        (status = 200, description = "The endpoint's TLS material after the rotation", body = TlsOut),
        (status = 400, description = "`invalid_path`, `malformed_json`, `unknown_field`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_client_certificate`, `invalid_client_key`, `invalid_expires_in`", body = ErrorBody),
    )
)]
pub(super) async fn rotate(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    ApiJson(body): ApiJson<RotateTls>,
) -> Result<Json<TlsOut>, ApiError> {
    let row = lookup::endpoint(&s, &app, &ep).await?;
    let overlap = match &body.expires_in {
        None => DEFAULT_OVERLAP_MS,
        Some(d) => {
            let d = d.parse("expires_in", Code::InvalidExpiresIn)?;
            let ms = Millis::try_from(d.as_millis()).unwrap_or(Millis::MAX);
            if ms > MAX_OVERLAP_MS {
                return Err(ApiError::new(Code::InvalidExpiresIn, "expires_in must be at most 30d"));
            }
            ms
        }
    };
    let now = time::now_ms();
    let next = endpoint_tls::parse_identity(&body.client_certificate, &body.client_key, now).map_err(refused)?;
    let next = next.seal(&s.keyring.current, row.id.as_str());
    let (mut row, mut tries) = (row, 0);
    loop {
        let old = row.spec.tls.clone().unwrap_or_default();
        let rotated = old.rotated(next.clone(), now.saturating_add(overlap));
        let old_json = row.spec.tls.as_ref().map(EndpointTls::to_json);
        let new_json = rotated.to_json();
        let done = s.store.replace_endpoint_tls(&row.id, old_json.as_deref(), Some(&new_json), Some(now));
        if done.await? {
            tracing::info!(endpoint_id = %row.id, overlap_ms = overlap, "endpoint client certificate rotated");
            return Ok(Json(TlsOut::of(&rotated, now)));
        }
        // Changed meanwhile (a PATCH, another rotation): rotate what is there now.
        tries += 1;
        row = match s.store.get_endpoint(&row.app_id, &row.id).await? {
            Some(r) if tries < 5 => r,
            Some(_) => {
                return Err(ApiError::new(Code::InternalError, "the endpoint's TLS material kept changing; try again"))
            }
            None => return Err(ApiError::not_found(Resource::Endpoint)),
        };
    }
}
