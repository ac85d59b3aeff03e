#![doc = include_str!("../README.md")]
//!
//! ## How the crate is laid out
//!
//! One module per scheme ([`sign_v1`] and friends for fenix-v1,
//! [`standard_webhooks_header`] for Standard Webhooks), one for verification
//! ([`verify`]), one for errors. Signing and verifying share the same private
//! MAC functions, so the sender and its receivers cannot drift apart. The
//! crate has no clock, no randomness and no I/O: callers pass the time in,
//! which keeps every result reproducible in tests.

use std::fmt;
use std::time::Duration;

use hmac::{Hmac, Mac as _};
use sha2::Sha256;

mod ed25519;
mod error;
mod fenix_v1;
mod standard_webhooks;
mod verify;

pub use ed25519::{Ed25519PublicKey, Ed25519SecretKey};
pub use error::{SigningError, VerifyError};
pub use fenix_v1::{fenix_v1_header, sign_v1};
pub use standard_webhooks::{decode_standard_webhooks_secret, standard_webhooks_header};
pub use verify::{verify, verify_with, SignedRequest, Verified, VerifyKey};

/// The freshness window the wire contract asks receivers to apply to the
/// signed timestamp: wide enough for ordinary clock skew and queueing, narrow
/// enough that a captured request cannot be replayed much later.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(300);

/// Which signature format an endpoint uses.
///
/// fenix-v1 is the default and needs nothing but an HMAC function on the
/// receiver's side; Standard Webhooks exists so receivers that already use a
/// Standard Webhooks (or Svix) library can verify Fenix with it unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `X-Fenix-Timestamp` + `X-Fenix-Signature: v1=<hex>`.
    FenixV1,
    /// `webhook-id` + `webhook-timestamp` + `webhook-signature: v1,<base64>`.
    StandardWebhooks,
}

impl Scheme {
    /// The stable name used in configuration, the API and the database.
    pub fn as_str(&self) -> &'static str {
        match self {
            Scheme::FenixV1 => "fenix-v1",
            Scheme::StandardWebhooks => "standard-webhooks",
        }
    }

    /// The inverse of [`Scheme::as_str`]; exact, case-sensitive names only,
    /// so that a stored value always round-trips.
    pub fn parse(s: &str) -> Option<Scheme> {
        match s {
            "fenix-v1" => Some(Scheme::FenixV1),
            "standard-webhooks" => Some(Scheme::StandardWebhooks),
            _ => None,
        }
    }

    /// Name of the header carrying the signed unix timestamp. Lower-case,
    /// as HTTP/2 requires and `http::HeaderName::from_static` accepts.
    pub fn timestamp_header(&self) -> &'static str {
        match self {
            Scheme::FenixV1 => "x-fenix-timestamp",
            Scheme::StandardWebhooks => "webhook-timestamp",
        }
    }

    /// Name of the header carrying the signatures (lower-case).
    pub fn signature_header(&self) -> &'static str {
        match self {
            Scheme::FenixV1 => "x-fenix-signature",
            Scheme::StandardWebhooks => "webhook-signature",
        }
    }

    /// Name of the header carrying the signed message id, if the scheme signs
    /// one (lower-case). fenix-v1 does not: its event id travels in
    /// `X-Fenix-Event-Id` but is not part of the signature.
    pub fn msg_id_header(&self) -> Option<&'static str> {
        match self {
            Scheme::FenixV1 => None,
            Scheme::StandardWebhooks => Some("webhook-id"),
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Builds the signature header value for `scheme`, so a sender can hold the
/// scheme as data instead of matching on it.
///
/// `msg_id` is signed (and must be sent as `webhook-id`) for Standard
/// Webhooks only; fenix-v1 ignores it. Only Standard Webhooks secrets can be
/// invalid, hence the `Result`.
pub fn signature_header(
    scheme: Scheme,
    secrets: &[&str],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SigningError> {
    match scheme {
        Scheme::FenixV1 => Ok(fenix_v1_header(secrets, timestamp, body)),
        Scheme::StandardWebhooks => standard_webhooks_header(secrets, msg_id, timestamp, body),
    }
}

/// One key a sender signs with: an HMAC secret (`v1` signatures) or an
/// Ed25519 private key with the key id receivers look it up by (`v1a`).
///
/// An endpoint in the middle of a rotation may hold one of each, so a header
/// can mix both versions; receivers skip the versions they do not use.
#[derive(Debug, Clone, Copy)]
pub enum SignKey<'a> {
    /// A `whsec_` secret.
    Hmac(&'a str),
    /// An Ed25519 private key. `key_id` is written beside each fenix-v1
    /// signature (`v1a=<key_id>:<base64>`); Standard Webhooks has no place for it.
    Ed25519 {
        /// The private key.
        key: &'a Ed25519SecretKey,
        /// The key's id, as the public-key document lists it (no `,`, `:` or space).
        key_id: &'a str,
    },
}

/// Builds the signature header value for `scheme` from any mix of HMAC and
/// Ed25519 keys, one signature per key in the order given (newest first).
///
/// fenix-v1: `v1=<hex>` (HMAC) and `v1a=<key_id>:<base64>` (Ed25519),
/// comma-separated, both over `<timestamp>.<body>`. Standard Webhooks:
/// `v1,<base64>` and `v1a,<base64>`, space-separated, both over
/// `<msg_id>.<timestamp>.<body>`.
pub fn signature_header_with(
    scheme: Scheme,
    keys: &[SignKey<'_>],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SigningError> {
    let mut entries = Vec::with_capacity(keys.len());
    for key in keys {
        entries.push(match (scheme, key) {
            (Scheme::FenixV1, SignKey::Hmac(secret)) => fenix_v1_header(&[secret], timestamp, body),
            (Scheme::StandardWebhooks, SignKey::Hmac(secret)) => {
                standard_webhooks_header(&[secret], msg_id, timestamp, body)?
            }
            (Scheme::FenixV1, SignKey::Ed25519 { key, key_id }) => {
                format!("v1a={key_id}:{}", key.sign_base64(&signed_message(scheme, msg_id, timestamp, body)))
            }
            (Scheme::StandardWebhooks, SignKey::Ed25519 { key, .. }) => {
                format!("v1a,{}", key.sign_base64(&signed_message(scheme, msg_id, timestamp, body)))
            }
        });
    }
    Ok(entries.join(match scheme {
        Scheme::FenixV1 => ",",
        Scheme::StandardWebhooks => " ",
    }))
}

/// The bytes an Ed25519 signature covers: the same message the scheme's HMAC
/// covers, made contiguous (Ed25519 hashes its message twice, so it cannot
/// stream it).
fn signed_message(scheme: Scheme, msg_id: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let timestamp = timestamp.to_string();
    let mut message = Vec::with_capacity(msg_id.len() + timestamp.len() + body.len() + 2);
    if scheme == Scheme::StandardWebhooks {
        message.extend_from_slice(msg_id.as_bytes());
        message.push(b'.');
    }
    message.extend_from_slice(timestamp.as_bytes());
    message.push(b'.');
    message.extend_from_slice(body);
    message
}

/// HMAC-SHA256 over the concatenation of `parts`, without first copying them
/// (the body may be large) into one buffer.
fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts keys of any length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;

    fn test_key() -> Ed25519SecretKey {
        Ed25519SecretKey::from_seed([7; 32])
    }

    #[test]
    fn mixed_keys_sign_in_order_with_each_schemes_separator() {
        let (secret, key, body) = ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", test_key(), b"{}");
        let keys = [SignKey::Ed25519 { key: &key, key_id: "ep_1.v2" }, SignKey::Hmac(secret)];
        let fenix = signature_header_with(Scheme::FenixV1, &keys, "msg_1", 1, body).unwrap();
        let (first, second) = fenix.split_once(',').unwrap();
        assert!(first.starts_with("v1a=ep_1.v2:"), "{fenix}");
        assert_eq!(second, fenix_v1_header(&[secret], 1, body));
        let sw = signature_header_with(Scheme::StandardWebhooks, &keys, "msg_1", 1, body).unwrap();
        let (first, second) = sw.split_once(' ').unwrap();
        assert!(first.starts_with("v1a,"), "{sw}");
        assert_eq!(Ok(second.to_string()), standard_webhooks_header(&[secret], "msg_1", 1, body));
    }

    #[test]
    fn hmac_only_keys_give_the_same_header_as_before() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        for scheme in [Scheme::FenixV1, Scheme::StandardWebhooks] {
            assert_eq!(
                signature_header_with(scheme, &[SignKey::Hmac(secret)], "msg_1", 5, b"x"),
                signature_header(scheme, &[secret], "msg_1", 5, b"x")
            );
        }
    }

    #[test]
    fn ed25519_signatures_cover_the_schemes_message() {
        let key = test_key();
        let keys = [SignKey::Ed25519 { key: &key, key_id: "k" }];
        let sw = signature_header_with(Scheme::StandardWebhooks, &keys, "msg_1", 9, b"body").unwrap();
        let sig = standard_webhooks::BASE64.decode(sw.strip_prefix("v1a,").unwrap()).unwrap();
        assert!(key.public_key().verifies(b"msg_1.9.body", &sig));
        let fenix = signature_header_with(Scheme::FenixV1, &keys, "msg_1", 9, b"body").unwrap();
        let sig = standard_webhooks::BASE64.decode(fenix.strip_prefix("v1a=k:").unwrap()).unwrap();
        assert!(key.public_key().verifies(b"9.body", &sig));
    }

    #[test]
    fn scheme_names_round_trip() {
        for scheme in [Scheme::FenixV1, Scheme::StandardWebhooks] {
            assert_eq!(Scheme::parse(scheme.as_str()), Some(scheme));
            assert_eq!(scheme.to_string(), scheme.as_str());
        }
        assert_eq!(Scheme::FenixV1.as_str(), "fenix-v1");
        assert_eq!(Scheme::StandardWebhooks.as_str(), "standard-webhooks");
    }

    #[test]
    fn unknown_or_differently_cased_scheme_names_are_rejected() {
        for name in ["", "v1", "Fenix-V1", "standard_webhooks", " fenix-v1"] {
            assert_eq!(Scheme::parse(name), None, "{name:?}");
        }
    }

    #[test]
    fn header_names_are_lower_case() {
        for scheme in [Scheme::FenixV1, Scheme::StandardWebhooks] {
            let names =
                [scheme.timestamp_header(), scheme.signature_header()].into_iter().chain(scheme.msg_id_header());
            for name in names {
                assert_eq!(name, name.to_ascii_lowercase());
            }
        }
    }

    #[test]
    fn signature_header_dispatches_on_the_scheme() {
        let (secret, body) = ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", b"{}");
        assert_eq!(
            signature_header(Scheme::FenixV1, &[secret], "ignored", 1, body),
            Ok(fenix_v1_header(&[secret], 1, body))
        );
        assert_eq!(
            signature_header(Scheme::StandardWebhooks, &[secret], "msg_1", 1, body),
            standard_webhooks_header(&[secret], "msg_1", 1, body)
        );
    }
}
