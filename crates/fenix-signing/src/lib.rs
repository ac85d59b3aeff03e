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

mod error;
mod fenix_v1;
mod standard_webhooks;
mod verify;

pub use error::{SigningError, VerifyError};
pub use fenix_v1::{fenix_v1_header, sign_v1};
pub use standard_webhooks::{decode_standard_webhooks_secret, standard_webhooks_header};
pub use verify::{verify, SignedRequest, Verified};

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
    use super::*;

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
