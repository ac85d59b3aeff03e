//! Receiver-side verification, one entry point for both schemes.
//!
//! The order of checks is chosen so that a receiver's own misconfiguration
//! (no secret, a malformed secret) is reported on the very first request, and
//! so that the cheap checks (timestamp) run before any HMAC is computed.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use subtle::ConstantTimeEq as _;

use crate::{fenix_v1, signed_message, standard_webhooks, Ed25519PublicKey, Scheme, SigningError, VerifyError};

/// The parts of an incoming request that signatures cover, borrowed straight
/// from whatever HTTP framework the receiver uses.
///
/// `Debug` shows the body's length only: payloads are operational data and
/// must not end up in logs.
#[derive(Clone, Copy)]
pub struct SignedRequest<'a> {
    /// Which format the sender used (a receiver knows this from its setup).
    pub scheme: Scheme,
    /// The timestamp header's value (`X-Fenix-Timestamp` or
    /// `webhook-timestamp`), unparsed.
    pub timestamp: &'a str,
    /// The signature header's value (`X-Fenix-Signature` or
    /// `webhook-signature`), unparsed.
    pub signature_header: &'a str,
    /// The `webhook-id` header; required for Standard Webhooks, where it is
    /// signed, and ignored for fenix-v1.
    pub msg_id: Option<&'a str>,
    /// The raw body bytes exactly as received: verify *before* parsing JSON,
    /// since re-serialising changes the bytes.
    pub body: &'a [u8],
}

impl fmt::Debug for SignedRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignedRequest")
            .field("scheme", &self.scheme)
            .field("timestamp", &self.timestamp)
            .field("signature_header", &self.signature_header)
            .field("msg_id", &self.msg_id)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A successful verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    /// Which of the candidate secrets matched (an index into the slice given
    /// to [`verify`]); lets a receiver notice when senders have stopped using
    /// an old secret, so it can be dropped.
    pub secret_index: usize,
    /// The signed timestamp, in unix seconds, already checked for freshness.
    pub timestamp: i64,
}

/// Checks that `req` was signed, recently, by one of `secrets` (HMAC).
///
/// Every candidate secret (in order) is tried against every `v1` signature in
/// the header, comparing in constant time; the first secret that matches any
/// signature wins. Entries with other versions (`v1a` included) are skipped,
/// so a sender that adds other signatures alongside `v1` keeps working.
///
/// The timestamp must lie within `tolerance` of `now_unix` in *both*
/// directions: too old is a possible replay, too new a skewed clock (which
/// would otherwise extend the replay window). `now_unix` is a parameter so
/// that callers and tests control the clock.
pub fn verify(
    req: &SignedRequest<'_>,
    secrets: &[&str],
    tolerance: Duration,
    now_unix: i64,
) -> Result<Verified, VerifyError> {
    let keys: Vec<VerifyKey<'_>> = secrets.iter().map(|secret| VerifyKey::Hmac(secret)).collect();
    verify_with(req, &keys, tolerance, now_unix)
}

/// A key a receiver trusts: an HMAC secret (checks `v1` signatures) or an
/// Ed25519 public key (checks `v1a` signatures), e.g. from the sender's
/// public-key document.
#[derive(Debug, Clone, Copy)]
pub enum VerifyKey<'a> {
    /// A `whsec_` secret shared with the sender.
    Hmac(&'a str),
    /// The sender's Ed25519 public key (`whpk_…`, parsed).
    Ed25519(&'a Ed25519PublicKey),
}

/// [`verify`] with any mix of HMAC secrets and Ed25519 public keys: each key
/// is tried (in order) against the signatures of its own version (`v1` for
/// HMAC, `v1a` for Ed25519); the first key that matches any wins, and
/// [`Verified::secret_index`] is its index in `keys`.
///
/// A fenix-v1 `v1a` entry carries a key id before its signature
/// (`v1a=<key_id>:<base64>`); it helps a receiver pick the key out of a
/// document, but verification does not trust it: every given key is tried.
pub fn verify_with(
    req: &SignedRequest<'_>,
    keys: &[VerifyKey<'_>],
    tolerance: Duration,
    now_unix: i64,
) -> Result<Verified, VerifyError> {
    let hmac_keys = hmac_keys(req.scheme, keys)?;
    let msg_id = match req.scheme {
        Scheme::FenixV1 => "",
        Scheme::StandardWebhooks => {
            req.msg_id.map(str::trim).filter(|id| !id.is_empty()).ok_or(VerifyError::MissingMessageId)?
        }
    };
    let timestamp = parse_timestamp(req.timestamp)?;
    check_tolerance(timestamp, now_unix, tolerance)?;
    let signatures = signatures(req.scheme, req.signature_header)?;
    let mut message = None;

    for (secret_index, key) in keys.iter().enumerate() {
        let matched = match (key, &hmac_keys[secret_index]) {
            (VerifyKey::Hmac(_), Some(hmac_key)) => {
                let expected = match req.scheme {
                    Scheme::FenixV1 => fenix_v1::mac(hmac_key, timestamp, req.body),
                    Scheme::StandardWebhooks => standard_webhooks::mac(hmac_key, msg_id, timestamp, req.body),
                };
                signatures.v1.iter().any(|signature| bool::from(signature.as_slice().ct_eq(&expected)))
            }
            (VerifyKey::Ed25519(public), _) => {
                let message = message.get_or_insert_with(|| signed_message(req.scheme, msg_id, timestamp, req.body));
                signatures.v1a.iter().any(|signature| public.verifies(message, signature))
            }
            (VerifyKey::Hmac(_), None) => false,
        };
        if matched {
            return Ok(Verified { secret_index, timestamp });
        }
    }
    Err(VerifyError::NoMatch)
}

/// Validates every HMAC secret up front and returns its key (`None` in the
/// places of Ed25519 keys): a fenix-v1 key is the secret's own bytes, a
/// Standard Webhooks key its base64 decoding.
fn hmac_keys<'s>(scheme: Scheme, keys: &[VerifyKey<'s>]) -> Result<Vec<Option<Cow<'s, [u8]>>>, VerifyError> {
    if keys.is_empty() {
        return Err(VerifyError::NoSecrets);
    }
    keys.iter()
        .enumerate()
        .map(|(index, key)| {
            let secret = match key {
                VerifyKey::Hmac(secret) => secret,
                VerifyKey::Ed25519(_) => return Ok(None),
            };
            let key = match scheme {
                Scheme::FenixV1 if secret.is_empty() => Err(SigningError::Empty),
                Scheme::FenixV1 => Ok(Cow::Borrowed(secret.as_bytes())),
                Scheme::StandardWebhooks => standard_webhooks::decode_standard_webhooks_secret(secret).map(Cow::Owned),
            };
            key.map(Some).map_err(|reason| VerifyError::InvalidSecret { index, reason })
        })
        .collect()
}

/// Accepts only plain decimal digits (surrounding whitespace aside): a sign
/// or other decoration would mean the sender did not write this value.
fn parse_timestamp(raw: &str) -> Result<i64, VerifyError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Err(VerifyError::MissingTimestamp);
    }
    if !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VerifyError::InvalidTimestamp);
    }
    raw.parse().map_err(|_| VerifyError::InvalidTimestamp)
}

/// Whole seconds only; the arithmetic is widened so extreme values cannot
/// overflow into a false "fresh".
fn check_tolerance(timestamp: i64, now: i64, tolerance: Duration) -> Result<(), VerifyError> {
    let skew = (i128::from(now) - i128::from(timestamp)).unsigned_abs();
    if skew > u128::from(tolerance.as_secs()) {
        return Err(VerifyError::TimestampOutOfTolerance { timestamp, now, tolerance_secs: tolerance.as_secs() });
    }
    Ok(())
}

/// The decoded signatures of a header, by version.
struct Signatures {
    /// HMAC signatures.
    v1: Vec<Vec<u8>>,
    /// Ed25519 signatures.
    v1a: Vec<Vec<u8>>,
}

/// The decoded `v1` and `v1a` signatures in the header. An entry of a known
/// version that does not decode is kept out of the lists but still counts as
/// "a known version was present", so the answer is [`VerifyError::NoMatch`],
/// not `UnknownVersion`.
fn signatures(scheme: Scheme, header: &str) -> Result<Signatures, VerifyError> {
    let entries: Vec<(&str, &str)> = match scheme {
        Scheme::FenixV1 => fenix_v1::entries(header).collect(),
        Scheme::StandardWebhooks => standard_webhooks::entries(header).collect(),
    };
    let Some(&(first_version, _)) = entries.first() else {
        return Err(VerifyError::NoSignatures);
    };
    let mut known = false;
    let mut found = Signatures { v1: Vec::new(), v1a: Vec::new() };
    for (version, value) in entries {
        match version {
            "v1" => found.v1.extend(match scheme {
                Scheme::FenixV1 => fenix_v1::decode(value),
                Scheme::StandardWebhooks => standard_webhooks::decode(value),
            }),
            "v1a" => {
                // fenix-v1 writes `<key_id>:<base64>`; base64 has no `:`.
                let value = match scheme {
                    Scheme::FenixV1 => value.rsplit_once(':').map_or(value, |(_, signature)| signature),
                    Scheme::StandardWebhooks => value,
                };
                found.v1a.extend(standard_webhooks::decode(value));
            }
            _ => continue,
        }
        known = true;
    }
    if !known {
        return Err(VerifyError::UnknownVersion(first_version.to_owned()));
    }
    Ok(found)
}

#[cfg(test)]
mod tests;
