//! The two error types of this crate, and when each one appears.
//!
//! [`SigningError`] is about a *secret* that cannot be used: it is a
//! configuration problem on whichever side holds the secret, never something a
//! request can cause. [`VerifyError`] is about a *request* that must be
//! rejected (plus [`VerifyError::InvalidSecret`] / [`VerifyError::NoSecrets`],
//! which surface the receiver's own misconfiguration before any request is
//! judged). No message ever contains a secret or a request body.

use std::fmt;

/// A secret that cannot be turned into an HMAC key.
///
/// Only the Standard Webhooks scheme gives secrets a structure
/// (`whsec_` + standard base64); the fenix-v1 scheme uses the whole string as
/// the key, so for it only [`SigningError::Empty`] can occur (during
/// verification).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningError {
    /// The secret is empty (or, for Standard Webhooks, nothing follows
    /// `whsec_`). An empty key would let anyone forge signatures.
    Empty,
    /// A Standard Webhooks secret that does not start with `whsec_`.
    MissingPrefix,
    /// The part after `whsec_` is not standard-alphabet base64.
    InvalidBase64,
    /// An Ed25519 key (`whsk_`/`whpk_`) that is not 32 bytes, or a public
    /// key that is not a point of the curve.
    InvalidKey,
}

impl fmt::Display for SigningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SigningError::Empty => "signing secret is empty",
            SigningError::MissingPrefix => "signing secret does not start with \"whsec_\"",
            SigningError::InvalidBase64 => "signing secret is not \"whsec_\" followed by standard base64",
            SigningError::InvalidKey => "Ed25519 key is not 32 bytes of a valid key",
        })
    }
}

impl std::error::Error for SigningError {}

/// Why a request was not accepted as signed by one of the candidate secrets.
///
/// Every variant except [`VerifyError::NoSecrets`] and
/// [`VerifyError::InvalidSecret`] means "reject this request" (answer 400 or
/// 401); those two mean the receiver itself is misconfigured.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// No candidate secret was given, so nothing could ever verify.
    NoSecrets,
    /// The candidate secret at `index` is unusable for this scheme.
    InvalidSecret {
        /// Position of the bad secret in the slice passed to [`crate::verify`].
        index: usize,
        /// What is wrong with it.
        reason: SigningError,
    },
    /// A Standard Webhooks request without a `webhook-id`: the id is part of
    /// the signed message, so it cannot be checked without it.
    MissingMessageId,
    /// The timestamp header is absent or empty.
    MissingTimestamp,
    /// The timestamp header is not a plain number of unix seconds.
    InvalidTimestamp,
    /// The timestamp is further from `now` than the tolerance allows, in the
    /// past (a replay, or a very slow queue) or in the future (a skewed clock).
    TimestampOutOfTolerance {
        /// The request's timestamp, in unix seconds.
        timestamp: i64,
        /// The receiver's clock, in unix seconds.
        now: i64,
        /// The allowed distance, in seconds.
        tolerance_secs: u64,
    },
    /// The signature header holds no entries at all.
    NoSignatures,
    /// The signature header holds entries, but none with a version this crate
    /// knows (`v1` for HMAC and `v1a` for Ed25519 today). Carries the first version label seen,
    /// so an operator can tell that a newer sender needs a newer receiver.
    UnknownVersion(String),
    /// At least one `v1` signature was present, but none matched any secret:
    /// the body was altered, or the receiver holds the wrong secret.
    NoMatch,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::NoSecrets => f.write_str("no signing secret configured"),
            VerifyError::InvalidSecret { index, reason } => {
                write!(f, "signing secret #{index} is invalid: {reason}")
            }
            VerifyError::MissingMessageId => f.write_str("missing message id (webhook-id)"),
            VerifyError::MissingTimestamp => f.write_str("missing signature timestamp"),
            VerifyError::InvalidTimestamp => f.write_str("signature timestamp is not a number of unix seconds"),
            VerifyError::TimestampOutOfTolerance { timestamp, now, tolerance_secs } => {
                let skew = i128::from(*now) - i128::from(*timestamp);
                let (distance, direction) = if skew >= 0 { (skew, "in the past") } else { (-skew, "in the future") };
                write!(f, "signature timestamp is {distance} s {direction}; tolerance is {tolerance_secs} s")
            }
            VerifyError::NoSignatures => f.write_str("no signatures in the signature header"),
            VerifyError::UnknownVersion(version) => {
                write!(f, "no supported signature version (saw {version:?})")
            }
            VerifyError::NoMatch => f.write_str("no signature matches any signing secret"),
        }
    }
}

impl std::error::Error for VerifyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VerifyError::InvalidSecret { reason, .. } => Some(reason),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_tolerance_message_says_which_direction() {
        let past = VerifyError::TimestampOutOfTolerance { timestamp: 1_000, now: 1_400, tolerance_secs: 300 };
        assert_eq!(past.to_string(), "signature timestamp is 400 s in the past; tolerance is 300 s");
        let future = VerifyError::TimestampOutOfTolerance { timestamp: 1_400, now: 1_000, tolerance_secs: 300 };
        assert!(future.to_string().contains("400 s in the future"));
    }

    #[test]
    fn invalid_secret_exposes_its_reason_as_source() {
        let err = VerifyError::InvalidSecret { index: 1, reason: SigningError::MissingPrefix };
        let source = std::error::Error::source(&err).expect("a source");
        assert_eq!(source.to_string(), SigningError::MissingPrefix.to_string());
    }
}
