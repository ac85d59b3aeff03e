//! The [Standard Webhooks](https://www.standardwebhooks.com/) scheme, for
//! receivers that already use one of its libraries (or Svix's).
//!
//! Headers `webhook-id`, `webhook-timestamp`, `webhook-signature`; the key is
//! the base64 decoding of the secret after `whsec_`; the signed message is
//! `<msg_id>.<timestamp>.<body>`; each signature is `v1,<base64(mac)>`, and
//! several are separated by single spaces.

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;

use crate::{hmac_sha256, SigningError};

/// Standard alphabet, padding optional on input, always written on output:
/// secrets and signatures copied between systems often lose their `=`.
pub(crate) const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The prefix every secret carries, so that a secret is recognisable in a
/// config file (and in a leak scanner).
const PREFIX: &str = "whsec_";

/// Turns a `whsec_<base64>` secret into the HMAC key it stands for.
///
/// Public so that whoever issues secrets can check, when creating one, that
/// it will be usable with this scheme.
pub fn decode_standard_webhooks_secret(secret: &str) -> Result<Vec<u8>, SigningError> {
    let encoded = secret.strip_prefix(PREFIX).ok_or(SigningError::MissingPrefix)?;
    if encoded.is_empty() {
        return Err(SigningError::Empty);
    }
    BASE64.decode(encoded).map_err(|_| SigningError::InvalidBase64)
}

/// Builds the whole `webhook-signature` value: `v1,<base64>` per secret,
/// space-separated, in the order given (newest first).
///
/// Fails on the first secret that is not `whsec_` + base64, rather than
/// silently sending fewer signatures than the receiver expects. An empty
/// `secrets` slice yields an empty string, which no receiver accepts.
pub fn standard_webhooks_header(
    secrets: &[&str],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, SigningError> {
    let signatures = secrets
        .iter()
        .map(|secret| {
            let key = decode_standard_webhooks_secret(secret)?;
            Ok(format!("v1,{}", BASE64.encode(mac(&key, msg_id, timestamp, body))))
        })
        .collect::<Result<Vec<_>, SigningError>>()?;
    Ok(signatures.join(" "))
}

/// The raw MAC over `<msg_id>.<timestamp>.<body>` with an already decoded key.
pub(crate) fn mac(key: &[u8], msg_id: &str, timestamp: i64, body: &[u8]) -> [u8; 32] {
    hmac_sha256(key, &[msg_id.as_bytes(), b".", timestamp.to_string().as_bytes(), b".", body])
}

/// Splits a header into `(version, value)` entries: whitespace-separated,
/// each `version,value`.
pub(crate) fn entries(header: &str) -> impl Iterator<Item = (&str, &str)> {
    header.split_whitespace().map(|entry| entry.split_once(',').unwrap_or((entry, "")))
}

/// Decodes a `v1` value; `None` (never matches) when it is not base64.
pub(crate) fn decode(value: &str) -> Option<Vec<u8>> {
    BASE64.decode(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The test vector published with the Standard Webhooks specification.
    const SPEC_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const SPEC_MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const SPEC_TIMESTAMP: i64 = 1_614_265_330;
    const SPEC_BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SPEC_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    // Key bytes 0..32; signature computed independently with Python.
    const PADDED_SECRET: &str = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const SIGNATURE_FOR_PADDED: &str = "v1,O4Gjv1HqPqsMrjmczoggs/sWA8gZD0VyHG+fLh4+ktI=";

    #[test]
    fn header_matches_the_specification_test_vector() {
        let header = standard_webhooks_header(&[SPEC_SECRET], SPEC_MSG_ID, SPEC_TIMESTAMP, SPEC_BODY);
        assert_eq!(header.as_deref(), Ok(SPEC_SIGNATURE));
    }

    #[test]
    fn header_joins_several_signatures_with_spaces_in_order() {
        let header = standard_webhooks_header(&[SPEC_SECRET, PADDED_SECRET], SPEC_MSG_ID, SPEC_TIMESTAMP, SPEC_BODY);
        assert_eq!(header, Ok(format!("{SPEC_SIGNATURE} {SIGNATURE_FOR_PADDED}")));
    }

    #[test]
    fn secrets_are_accepted_with_or_without_padding() {
        let unpadded = PADDED_SECRET.trim_end_matches('=');
        assert_ne!(unpadded, PADDED_SECRET);
        assert_eq!(decode_standard_webhooks_secret(unpadded), decode_standard_webhooks_secret(PADDED_SECRET));
        assert_eq!(decode_standard_webhooks_secret(PADDED_SECRET), Ok((0u8..32).collect::<Vec<_>>()));
    }

    #[test]
    fn secrets_without_the_prefix_are_rejected() {
        assert_eq!(
            decode_standard_webhooks_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
            Err(SigningError::MissingPrefix)
        );
    }

    #[test]
    fn secrets_that_are_not_standard_base64_are_rejected() {
        for bad in ["whsec_not base64", "whsec_-_-_", "whsec_%%%%"] {
            assert_eq!(decode_standard_webhooks_secret(bad), Err(SigningError::InvalidBase64), "{bad}");
        }
    }

    #[test]
    fn a_bare_prefix_is_an_empty_secret() {
        assert_eq!(decode_standard_webhooks_secret("whsec_"), Err(SigningError::Empty));
    }

    #[test]
    fn header_fails_on_any_invalid_secret() {
        let header = standard_webhooks_header(&[SPEC_SECRET, "nope"], SPEC_MSG_ID, SPEC_TIMESTAMP, b"");
        assert_eq!(header, Err(SigningError::MissingPrefix));
    }

    #[test]
    fn entries_split_on_whitespace_then_on_the_first_comma() {
        let parsed: Vec<_> = entries("  v1,abc  v1a,def junk").collect();
        assert_eq!(parsed, [("v1", "abc"), ("v1a", "def"), ("junk", "")]);
    }
}
