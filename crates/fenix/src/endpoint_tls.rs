//! An endpoint's TLS material: an optional client identity (mTLS: a PEM
//! certificate chain and its private key), extra trust anchors for its
//! receiver's server certificate (a PEM bundle, on top of the public roots,
//! never instead of them), and, after a rotation, the previous identity until
//! its overlap ends.
//!
//! Parsed once at the edge ([`parse_identity`], [`parse_ca_bundle`]): PEM read
//! by `rustls-pki-types`, the pair checked by rustls (ring, the provider the
//! outbound clients use), each certificate's subject, expiry and SHA-256 read
//! by `x509-parser`. Stored in the endpoint's `tls` column as JSON
//! ([`EndpointTls::to_json`]): certificates in clear (they are public), the key
//! sealed under the master key bound to the endpoint and its use
//! ([`key_context`]). Errors name the field and never quote key material.

use base64::{engine::general_purpose::STANDARD, Engine};
use rustls_pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{
    secrets::{Keyring, MasterKey},
    time::Millis,
};

/// Largest PEM text each field takes (a chain, a key, a bundle).
pub const MAX_PEM_BYTES: usize = 64 * 1024;
/// Most certificates in a chain or a CA bundle.
pub const MAX_CERTIFICATES: usize = 32;
/// A client certificate expiring within this shows as expiring (14 days).
pub const EXPIRING_WITHIN_MS: Millis = 14 * 86_400_000;

/// What seals an endpoint's client key: bound to the endpoint and the use.
pub fn key_context(endpoint_id: &str) -> String {
    format!("{endpoint_id}/tls/client_key")
}

/// One certificate as reads show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertInfo {
    /// The subject's distinguished name (RFC 4514 order as x509-parser prints it).
    pub subject: String,
    /// When it stops being valid (ms since the epoch).
    pub not_after: Millis,
    /// Lowercase hex SHA-256 of its DER.
    pub sha256: String,
}

/// A client identity: the chain in clear, the key sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientIdentity {
    /// The PEM chain as given (leaf first).
    pub chain_pem: String,
    /// Base64 of the PEM key sealed under [`key_context`].
    pub sealed_key: String,
    /// Each certificate of the chain, leaf first.
    pub chain: Vec<CertInfo>,
}

/// The identity a rotation replaced, presented when the new one fails the
/// handshake until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviousIdentity {
    pub identity: ClientIdentity,
    pub expires_at: Millis,
}

/// Extra trust anchors for the receiver's server certificate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaBundle {
    pub pem: String,
    pub certificates: Vec<CertInfo>,
}

/// An endpoint's TLS material (the `tls` column; `NULL`: none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointTls {
    pub client: Option<ClientIdentity>,
    pub ca: Option<CaBundle>,
    pub previous: Option<PreviousIdentity>,
}

/// Why given TLS material is refused; the message names the field only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidTls {
    #[error("{0}")]
    Certificate(String),
    #[error("{0}")]
    Key(String),
    #[error("{0}")]
    Ca(String),
}

/// A client identity given in clear, checked: its key is still in clear
/// until [`CheckedIdentity::seal`].
pub struct CheckedIdentity {
    chain_pem: String,
    key_pem: String,
    chain: Vec<CertInfo>,
}

impl CheckedIdentity {
    /// The stored form: the key sealed for endpoint `endpoint_id`.
    pub fn seal(self, master: &MasterKey, endpoint_id: &str) -> ClientIdentity {
        let sealed = master.seal(self.key_pem.as_bytes(), &key_context(endpoint_id));
        ClientIdentity { chain_pem: self.chain_pem, sealed_key: STANDARD.encode(sealed), chain: self.chain }
    }
}

/// Checks a client certificate chain (`client_certificate`) and its key
/// (`client_key`) at `now`: PEM, at least one certificate, none expired, a
/// key rustls reads (PKCS#8, RSA, SEC1) that matches the leaf.
pub fn parse_identity(chain_pem: &str, key_pem: &str, now: Millis) -> Result<CheckedIdentity, InvalidTls> {
    let cert = |m: &str| InvalidTls::Certificate(format!("client_certificate {m}"));
    let (ders, chain) = certificates(chain_pem, now).map_err(|m| cert(&m))?;
    let key_err = |m: &str| InvalidTls::Key(format!("client_key {m}"));
    if key_pem.len() > MAX_PEM_BYTES {
        return Err(key_err(&format!("must be at most {MAX_PEM_BYTES} bytes")));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|_| key_err("must be a PEM private key (PKCS#8, RSA or EC)"))?;
    let provider = rustls::crypto::ring::default_provider();
    match rustls::sign::CertifiedKey::from_der(ders, key, &provider) {
        Ok(_) => {}
        Err(rustls::Error::InconsistentKeys(_)) => {
            return Err(key_err("does not match client_certificate (the first certificate of the chain)"))
        }
        Err(_) => return Err(key_err("is not a key Fenix can sign with (RSA, ECDSA P-256/P-384 or Ed25519)")),
    }
    Ok(CheckedIdentity { chain_pem: chain_pem.to_string(), key_pem: key_pem.to_string(), chain })
}

/// Checks a CA bundle (`ca_certificates`) at `now`: PEM, at least one
/// certificate, none expired.
pub fn parse_ca_bundle(pem: &str, now: Millis) -> Result<CaBundle, InvalidTls> {
    let (_, certificates) = certificates(pem, now).map_err(|m| InvalidTls::Ca(format!("ca_certificates {m}")))?;
    Ok(CaBundle { pem: pem.to_string(), certificates })
}

/// The certificates of a PEM text, DER and as shown; the error completes
/// "<field> …".
fn certificates(pem: &str, now: Millis) -> Result<(Vec<CertificateDer<'static>>, Vec<CertInfo>), String> {
    if pem.len() > MAX_PEM_BYTES {
        return Err(format!("must be at most {MAX_PEM_BYTES} bytes"));
    }
    let ders: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|_| "must be PEM certificates (-----BEGIN CERTIFICATE-----)".to_string())?;
    if ders.is_empty() {
        return Err("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into());
    }
    if ders.len() > MAX_CERTIFICATES {
        return Err(format!("holds {} certificates; at most {MAX_CERTIFICATES} are allowed", ders.len()));
    }
    let mut infos = Vec::with_capacity(ders.len());
    for (i, der) in ders.iter().enumerate() {
        let info =
            cert_info(der).ok_or_else(|| format!("certificate {} is not a readable X.509 certificate", i + 1))?;
        if info.not_after <= now {
            return Err(format!(
                "certificate {} ({}) expired at {}",
                i + 1,
                info.subject,
                crate::time::rfc3339_ms(info.not_after)
            ));
        }
        infos.push(info);
    }
    Ok((ders, infos))
}

fn cert_info(der: &[u8]) -> Option<CertInfo> {
    let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
    let not_after = cert.validity().not_after.timestamp().checked_mul(1000)?;
    Some(CertInfo { subject: cert.subject().to_string(), not_after, sha256: hex::encode(Sha256::digest(der)) })
}

impl ClientIdentity {
    /// The leaf certificate (a checked chain has one).
    pub fn leaf(&self) -> Option<&CertInfo> {
        self.chain.first()
    }

    /// The PEM a `reqwest::Identity` reads: the key opened, then the chain.
    /// Fails (naming no value) when the key does not open.
    pub fn identity_pem(&self, keyring: &Keyring, endpoint_id: &str) -> anyhow::Result<Vec<u8>> {
        let blob = STANDARD.decode(&self.sealed_key)?;
        let mut pem = keyring.open(&blob, &key_context(endpoint_id))?;
        pem.push(b'\n');
        pem.extend_from_slice(self.chain_pem.as_bytes());
        Ok(pem)
    }

    /// The same identity with its key under the keyring's current key;
    /// `None` when it already is.
    pub fn resealed(&self, keyring: &Keyring, endpoint_id: &str) -> anyhow::Result<Option<ClientIdentity>> {
        let blob = STANDARD.decode(&self.sealed_key)?;
        if keyring.is_current(&blob) {
            return Ok(None);
        }
        let ctx = key_context(endpoint_id);
        let clear = keyring.open(&blob, &ctx)?;
        let sealed_key = STANDARD.encode(keyring.current.seal(&clear, &ctx));
        Ok(Some(ClientIdentity { sealed_key, ..self.clone() }))
    }

    /// The hex id of the master key its key was sealed with, if the blob names one.
    pub fn sealed_with(&self) -> Option<String> {
        let blob = STANDARD.decode(&self.sealed_key).ok()?;
        MasterKey::blob_key_id(&blob).map(hex::encode)
    }
}

impl EndpointTls {
    /// Reads the column; text that is not the stored shape is an error (it
    /// may hold a sealed key: never quote it).
    pub fn from_json(json: &str) -> Result<EndpointTls, serde_json::Error> {
        serde_json::from_str(json)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("strings serialize")
    }

    /// The previous identity while its overlap lasts at `now`.
    pub fn live_previous(&self, now: Millis) -> Option<&ClientIdentity> {
        self.previous.as_ref().filter(|p| p.expires_at > now).map(|p| &p.identity)
    }

    /// The material after a rotation at `now` to `next`: the current
    /// identity presented as a fallback until `previous_until`.
    pub fn rotated(&self, next: ClientIdentity, previous_until: Millis) -> EndpointTls {
        let previous = self.client.clone().map(|identity| PreviousIdentity { identity, expires_at: previous_until });
        EndpointTls { client: Some(next), ca: self.ca.clone(), previous }
    }

    /// The same material with every sealed key under the keyring's current
    /// key; `None` when nothing needed it.
    pub fn resealed(&self, keyring: &Keyring, endpoint_id: &str) -> anyhow::Result<Option<EndpointTls>> {
        let mut out = self.clone();
        let mut changed = false;
        if let Some(c) = &self.client {
            if let Some(r) = c.resealed(keyring, endpoint_id)? {
                out.client = Some(r);
                changed = true;
            }
        }
        if let Some(p) = &self.previous {
            if let Some(r) = p.identity.resealed(keyring, endpoint_id)? {
                out.previous = Some(PreviousIdentity { identity: r, expires_at: p.expires_at });
                changed = true;
            }
        }
        Ok(changed.then_some(out))
    }

    /// Whether the client certificate expires within [`EXPIRING_WITHIN_MS`] of `now`.
    pub fn expiring(&self, now: Millis) -> Option<&CertInfo> {
        let leaf = self.client.as_ref()?.leaf()?;
        (leaf.not_after <= now.saturating_add(EXPIRING_WITHIN_MS)).then_some(leaf)
    }

    /// A fingerprint of what a client is built from (identity and CAs):
    /// the cache key of `worker::clients`.
    pub fn fingerprint(identity: Option<&ClientIdentity>, ca: Option<&CaBundle>) -> [u8; 32] {
        let mut h = Sha256::new();
        for part in [
            identity.map_or("", |i| i.chain_pem.as_str()),
            identity.map_or("", |i| i.sealed_key.as_str()),
            ca.map_or("", |c| c.pem.as_str()),
        ] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        h.finalize().into()
    }
}

#[cfg(test)]
mod tests;
