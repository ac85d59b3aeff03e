//! Verifying the webhooks Fenix sends, for receivers: [`Webhook`] wraps
//! `fenix-signing`, the code the Fenix sender signs with, so the two cannot
//! disagree.
//!
//! The scheme is read from the headers (`webhook-signature` means Standard
//! Webhooks, else fenix-v1), the key from its prefix (`whsec_` for HMAC,
//! `whpk_` for an Ed25519 public key). Signatures are compared in constant
//! time; the timestamp must be within 300 s of the receiver's clock.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fenix_signing::{
    verify_with, Ed25519PublicKey, Scheme, SignedRequest, SigningError, VerifyError, VerifyKey, DEFAULT_TOLERANCE,
};
use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The event a verified request carries: the body Fenix signed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookEvent {
    /// The event id (`evt_…`): de-duplicate on it, it is the same on every retry.
    pub id: String,
    /// The event type.
    #[serde(rename = "type")]
    pub type_: String,
    /// When Fenix accepted the event (RFC 3339, UTC, milliseconds).
    pub created_at: String,
    /// What the producer sent.
    pub data: Value,
}

/// A request that must be refused (answer `401`), or a key that cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum WebhookVerificationError {
    /// The secret or public key given to [`Webhook::new`] is not one.
    InvalidKey(SigningError),
    /// No signature matches, the timestamp is stale or in the future, or a header is missing.
    Signature(VerifyError),
    /// Signed, but the body is not a Fenix event.
    InvalidPayload(serde_json::Error),
}

impl fmt::Display for WebhookVerificationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebhookVerificationError::InvalidKey(error) => write!(f, "unusable webhook key: {error}"),
            WebhookVerificationError::Signature(error) => write!(f, "webhook refused: {error}"),
            WebhookVerificationError::InvalidPayload(error) => write!(f, "webhook body is not an event: {error}"),
        }
    }
}

impl std::error::Error for WebhookVerificationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WebhookVerificationError::InvalidKey(error) => Some(error),
            WebhookVerificationError::Signature(error) => Some(error),
            WebhookVerificationError::InvalidPayload(error) => Some(error),
        }
    }
}

/// One key a receiver holds, parsed once.
#[derive(Debug, Clone)]
enum Key {
    Hmac(String),
    Ed25519(Ed25519PublicKey),
}

/// Verifies requests with an endpoint's secret (`whsec_…`) or public key
/// (`whpk_…`); during a rotation, with each of several ([`Webhook::with_keys`]).
#[derive(Clone)]
pub struct Webhook {
    keys: Vec<Key>,
    tolerance: Duration,
}

impl fmt::Debug for Webhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhook").field("keys", &self.keys.len()).field("tolerance", &self.tolerance).finish()
    }
}

impl Webhook {
    /// A verifier for one endpoint's `whsec_…` secret or `whpk_…` public key.
    pub fn new(secret_or_public_key: &str) -> Result<Webhook, WebhookVerificationError> {
        Webhook::with_keys(&[secret_or_public_key])
    }

    /// A verifier that accepts a request signed by any of `keys` (the new and
    /// the old secret during a rotation; secrets and public keys may mix).
    pub fn with_keys(keys: &[&str]) -> Result<Webhook, WebhookVerificationError> {
        let keys = keys
            .iter()
            .map(|key| match key.strip_prefix("whpk_") {
                Some(_) => Ed25519PublicKey::parse(key).map(Key::Ed25519),
                None if key.is_empty() => Err(SigningError::Empty),
                None => Ok(Key::Hmac((*key).to_owned())),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(WebhookVerificationError::InvalidKey)?;
        if keys.is_empty() {
            return Err(WebhookVerificationError::InvalidKey(SigningError::Empty));
        }
        Ok(Webhook { keys, tolerance: DEFAULT_TOLERANCE })
    }

    /// Checks the signature of a request (`raw_body`: the bytes as received,
    /// before any JSON parsing) and answers its event.
    pub fn verify(&self, raw_body: &[u8], headers: &impl Headers) -> Result<WebhookEvent, WebhookVerificationError> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs() as i64);
        self.verify_at(raw_body, headers, now)
    }

    /// [`Webhook::verify`] with the receiver's clock given (`now`: unix seconds), for tests.
    pub fn verify_at(
        &self,
        raw_body: &[u8],
        headers: &impl Headers,
        now: i64,
    ) -> Result<WebhookEvent, WebhookVerificationError> {
        let scheme = match headers.header(Scheme::StandardWebhooks.signature_header()) {
            Some(_) => Scheme::StandardWebhooks,
            None => Scheme::FenixV1,
        };
        let request = SignedRequest {
            scheme,
            timestamp: headers.header(scheme.timestamp_header()).unwrap_or(""),
            signature_header: headers.header(scheme.signature_header()).unwrap_or(""),
            msg_id: scheme.msg_id_header().and_then(|name| headers.header(name)),
            body: raw_body,
        };
        let keys: Vec<VerifyKey<'_>> = self
            .keys
            .iter()
            .map(|key| match key {
                Key::Hmac(secret) => VerifyKey::Hmac(secret),
                Key::Ed25519(public) => VerifyKey::Ed25519(public),
            })
            .collect();
        verify_with(&request, &keys, self.tolerance, now).map_err(WebhookVerificationError::Signature)?;
        serde_json::from_slice(raw_body).map_err(WebhookVerificationError::InvalidPayload)
    }
}

/// Request headers, looked up by lower-case name: `http::HeaderMap` (axum,
/// hyper, reqwest), or a plain map of names to values.
pub trait Headers {
    /// The value of header `name` (given in lower case), if present.
    fn header(&self, name: &str) -> Option<&str>;
}

impl Headers for HeaderMap {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|value| value.to_str().ok())
    }
}

/// Finds `name` among `(name, value)` pairs, whatever their case.
fn find<'a>(mut pairs: impl Iterator<Item = (&'a String, &'a String)>, name: &str) -> Option<&'a str> {
    pairs.find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
}

impl Headers for HashMap<String, String> {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str).or_else(|| find(self.iter(), name))
    }
}

impl Headers for BTreeMap<String, String> {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str).or_else(|| find(self.iter(), name))
    }
}
