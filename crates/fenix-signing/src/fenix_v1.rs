//! The `fenix-v1` scheme: Fenix's own, deliberately the simplest thing a
//! receiver in any language can check with its standard HMAC function.
//!
//! `X-Fenix-Signature: v1=<hex(HMAC-SHA256(secret, "<timestamp>.<body>"))>`,
//! where the key is the secret string's UTF-8 bytes *including* its `whsec_`
//! prefix (no decoding step for receivers to get wrong) and the hex is
//! lower-case. During a secret rotation the header carries one `v1=` entry per
//! live secret, comma-separated, newest first.

use crate::hmac_sha256;

/// Signs one request with one secret and returns the bare lower-case hex.
///
/// The signed message is the decimal timestamp, a `.`, then the raw body
/// bytes exactly as sent: binding the timestamp stops an old request from
/// being replayed with a fresh `X-Fenix-Timestamp`.
pub fn sign_v1(secret: &str, timestamp: i64, body: &[u8]) -> String {
    hex::encode(mac(secret.as_bytes(), timestamp, body))
}

/// Builds the whole `X-Fenix-Signature` value: `v1=<hex>` per secret, joined
/// by `,`, in the order given.
///
/// Pass the newest secret first; receivers that only look at the first entry
/// then keep working once the old secret is retired. An empty `secrets` slice
/// yields an empty string, which no receiver accepts: callers must always have
/// at least one live secret.
pub fn fenix_v1_header(secrets: &[&str], timestamp: i64, body: &[u8]) -> String {
    secrets.iter().map(|secret| format!("v1={}", sign_v1(secret, timestamp, body))).collect::<Vec<_>>().join(",")
}

/// The raw MAC (the key is the secret's bytes), for constant-time comparison
/// during verification.
pub(crate) fn mac(key: &[u8], timestamp: i64, body: &[u8]) -> [u8; 32] {
    hmac_sha256(key, &[timestamp.to_string().as_bytes(), b".", body])
}

/// Splits a header into `(version, value)` entries: comma-separated, each
/// `version=value`, with spaces around either part tolerated.
pub(crate) fn entries(header: &str) -> impl Iterator<Item = (&str, &str)> {
    header.split(',').map(str::trim).filter(|entry| !entry.is_empty()).map(|entry| match entry.split_once('=') {
        Some((version, value)) => (version.trim(), value.trim()),
        None => (entry, ""),
    })
}

/// Decodes a `v1` value; `None` (never matches) when it is not hex.
pub(crate) fn decode(value: &str) -> Option<Vec<u8>> {
    hex::decode(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const OLD_SECRET: &str = "whsec_oldoldoldoldoldoldoldoldoldoldold";
    const BODY: &[u8] = br#"{"id":"evt_1","type":"booking.confirmed","data":{}}"#;

    // Expected values computed independently with Python:
    // hmac.new(secret, b'1700000000.' + body, hashlib.sha256).hexdigest()
    const EXPECTED: &str = "a25e8e266c316e8b307e59f9c081a8862ae81633f9cfd56fadb640145dfba6a1";
    const EXPECTED_OLD: &str = "b125067f3609677eae056982488fbe2dc4a18df7bd7bfcb0ced14818c51b2895";

    #[test]
    fn sign_v1_matches_an_independently_computed_vector() {
        assert_eq!(sign_v1(SECRET, 1_700_000_000, BODY), EXPECTED);
        assert_eq!(sign_v1(OLD_SECRET, 1_700_000_000, BODY), EXPECTED_OLD);
    }

    #[test]
    fn sign_v1_signs_an_empty_body() {
        assert_eq!(
            sign_v1("whsec_test", 1_700_000_000, b""),
            "5967f3c560522fa40cf2876ebc3c3a08551dd6959aaade3b413460591895bdcc"
        );
    }

    #[test]
    fn header_lists_one_entry_per_secret_newest_first() {
        let header = fenix_v1_header(&[SECRET, OLD_SECRET], 1_700_000_000, BODY);
        assert_eq!(header, format!("v1={EXPECTED},v1={EXPECTED_OLD}"));
    }

    #[test]
    fn header_for_a_single_secret_has_no_separator() {
        assert_eq!(fenix_v1_header(&[SECRET], 1_700_000_000, BODY), format!("v1={EXPECTED}"));
    }

    #[test]
    fn entries_tolerate_spaces_and_stray_commas() {
        let parsed: Vec<_> = entries(" v1 = ab , ,v2=cd,junk,").collect();
        assert_eq!(parsed, [("v1", "ab"), ("v2", "cd"), ("junk", "")]);
    }
}
