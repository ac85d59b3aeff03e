//! Property tests (proptest) of signing and verification, for both schemes:
//! what a sender signs verifies for any body and any timestamp within the
//! tolerance; any change to the body, timestamp, message id or secret fails;
//! and verification never panics, whatever the headers hold.

use std::time::Duration;

use base64::Engine as _;
use fenix_signing::{
    fenix_v1_header, standard_webhooks_header, verify, Scheme, SignedRequest, VerifyError, DEFAULT_TOLERANCE,
};
use proptest::prelude::*;

/// A Standard Webhooks secret for `key`.
fn whsec(key: &[u8]) -> String {
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(key))
}

/// Signs with one secret under `scheme`; answers the signature header.
fn sign(scheme: Scheme, secret: &str, msg_id: &str, timestamp: i64, body: &[u8]) -> String {
    match scheme {
        Scheme::FenixV1 => fenix_v1_header(&[secret], timestamp, body),
        Scheme::StandardWebhooks => standard_webhooks_header(&[secret], msg_id, timestamp, body).unwrap(),
    }
}

fn check(
    scheme: Scheme,
    secret: &str,
    msg_id: &str,
    timestamp: &str,
    header: &str,
    body: &[u8],
    now: i64,
) -> Result<i64, VerifyError> {
    let req = SignedRequest { scheme, timestamp, signature_header: header, msg_id: Some(msg_id), body };
    verify(&req, &[secret], DEFAULT_TOLERANCE, now).map(|v| v.timestamp)
}

/// A scheme with a valid secret of that scheme, from random key bytes.
fn scheme_and_secret() -> impl Strategy<Value = (Scheme, String)> {
    prop_oneof![
        "whsec_[a-zA-Z0-9+/]{1,40}".prop_map(|s| (Scheme::FenixV1, s)),
        prop::collection::vec(any::<u8>(), 1..64).prop_map(|key| (Scheme::StandardWebhooks, whsec(&key))),
    ]
}

const TOLERANCE: i64 = DEFAULT_TOLERANCE.as_secs() as i64;

proptest! {
    #[test]
    fn a_signature_verifies_for_any_body_and_any_timestamp_within_the_tolerance(
        (scheme, secret) in scheme_and_secret(),
        body in prop::collection::vec(any::<u8>(), 0..512),
        msg_id in "msg_[a-zA-Z0-9]{1,20}",
        timestamp in 0i64..=4_000_000_000,
        skew in -TOLERANCE..=TOLERANCE,
    ) {
        let header = sign(scheme, &secret, &msg_id, timestamp, &body);
        let now = timestamp + skew;
        prop_assert_eq!(check(scheme, &secret, &msg_id, &timestamp.to_string(), &header, &body, now), Ok(timestamp));
    }

    #[test]
    fn changing_the_body_the_timestamp_the_message_id_or_the_secret_fails(
        (scheme, secret) in scheme_and_secret(),
        body in prop::collection::vec(any::<u8>(), 0..256),
        other_body in prop::collection::vec(any::<u8>(), 0..256),
        msg_id in "msg_[a-zA-Z0-9]{1,20}",
        timestamp in TOLERANCE..=4_000_000_000,
        other_timestamp_delta in (-TOLERANCE..=TOLERANCE).prop_filter("a different timestamp", |d| *d != 0),
        other_key in prop::collection::vec(any::<u8>(), 1..64),
    ) {
        let header = sign(scheme, &secret, &msg_id, timestamp, &body);
        let ts = timestamp.to_string();
        let now = timestamp;
        let no_match = Err(VerifyError::NoMatch);
        if other_body != body {
            prop_assert_eq!(check(scheme, &secret, &msg_id, &ts, &header, &other_body, now), no_match.clone());
        }
        let other_ts = (timestamp + other_timestamp_delta).to_string();
        prop_assert_eq!(check(scheme, &secret, &msg_id, &other_ts, &header, &body, now), no_match.clone());
        let other_secret = match scheme {
            Scheme::FenixV1 => format!("{secret}x"),
            Scheme::StandardWebhooks => whsec(&other_key),
        };
        if other_secret != secret {
            prop_assert_eq!(check(scheme, &other_secret, &msg_id, &ts, &header, &body, now), no_match.clone());
        }
        if scheme == Scheme::StandardWebhooks {
            let other_id = format!("{msg_id}x");
            prop_assert_eq!(check(scheme, &secret, &other_id, &ts, &header, &body, now), no_match);
        }
    }

    #[test]
    fn a_timestamp_outside_the_tolerance_fails_even_when_correctly_signed(
        (scheme, secret) in scheme_and_secret(),
        timestamp in 0i64..=4_000_000_000,
        beyond in (TOLERANCE + 1)..=1_000_000,
        later in any::<bool>(),
    ) {
        let header = sign(scheme, &secret, "msg_1", timestamp, b"{}");
        let now = if later { timestamp + beyond } else { timestamp - beyond };
        let result = check(scheme, &secret, "msg_1", &timestamp.to_string(), &header, b"{}", now);
        let out_of_tolerance = matches!(result, Err(VerifyError::TimestampOutOfTolerance { .. }));
        prop_assert!(out_of_tolerance, "{:?}", result);
    }

    #[test]
    fn verification_never_panics_whatever_the_headers_hold(
        fenix in any::<bool>(),
        timestamp in "\\PC{0,24}|[0-9]{1,30}|.{0,24}",
        header in "\\PC{0,120}|(v[0-9a-z]{0,2}[=,][0-9a-zA-Z+/=]{0,70}[ ,]?){0,4}|.{0,80}",
        msg_id in proptest::option::of(".{0,24}"),
        secrets in prop::collection::vec("\\PC{0,48}|whsec_[a-zA-Z0-9+/=]{0,48}", 0..3),
        body in prop::collection::vec(any::<u8>(), 0..64),
        tolerance in any::<u64>(),
        now in any::<i64>(),
    ) {
        let scheme = if fenix { Scheme::FenixV1 } else { Scheme::StandardWebhooks };
        let req = SignedRequest { scheme, timestamp: &timestamp, signature_header: &header, msg_id: msg_id.as_deref(), body: &body };
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let _ = verify(&req, &secrets, Duration::from_secs(tolerance), now);
    }
}
