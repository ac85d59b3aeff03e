//! Verification behaviour for both schemes, driven through the public API.

use super::*;
use crate::{fenix_v1_header, standard_webhooks_header, DEFAULT_TOLERANCE};

const NEW: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD: &str = "whsec_oldoldoldoldoldoldoldoldoldoldold";
const TS: i64 = 1_700_000_000;
const BODY: &[u8] = br#"{"id":"evt_1","type":"booking.confirmed","data":{}}"#;
// Computed independently with Python (see the fenix_v1 module's tests).
const NEW_HEX: &str = "a25e8e266c316e8b307e59f9c081a8862ae81633f9cfd56fadb640145dfba6a1";
const OLD_HEX: &str = "b125067f3609677eae056982488fbe2dc4a18df7bd7bfcb0ced14818c51b2895";

// The Standard Webhooks specification's test vector.
const SW_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const SW_MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const SW_TS: i64 = 1_614_265_330;
const SW_BODY: &[u8] = br#"{"test": 2432232314}"#;
const SW_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
// Key bytes 0..32 (padded base64); its signature over the spec message.
const SW_OTHER: &str = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

fn fenix<'a>(timestamp: &'a str, signature_header: &'a str, body: &'a [u8]) -> SignedRequest<'a> {
    SignedRequest { scheme: Scheme::FenixV1, timestamp, signature_header, msg_id: None, body }
}

fn standard<'a>(msg_id: Option<&'a str>, signature_header: &'a str) -> SignedRequest<'a> {
    SignedRequest { scheme: Scheme::StandardWebhooks, timestamp: "1614265330", signature_header, msg_id, body: SW_BODY }
}

fn check(req: SignedRequest<'_>, secrets: &[&str], now: i64) -> Result<Verified, VerifyError> {
    verify(&req, secrets, crate::DEFAULT_TOLERANCE, now)
}

fn matched(secret_index: usize, timestamp: i64) -> Result<Verified, VerifyError> {
    Ok(Verified { secret_index, timestamp })
}

#[test]
fn fenix_v1_known_answer_verifies() {
    let header = format!("v1={NEW_HEX}");
    assert_eq!(check(fenix("1700000000", &header, BODY), &[NEW], TS), matched(0, TS));
}

#[test]
fn during_rotation_each_secret_verifies_the_combined_header_on_its_own() {
    let header = fenix_v1_header(&[NEW, OLD], TS, BODY);
    assert_eq!(header, format!("v1={NEW_HEX},v1={OLD_HEX}"));
    let req = fenix("1700000000", &header, BODY);
    assert_eq!(check(req, &[NEW], TS), matched(0, TS));
    assert_eq!(check(req, &[OLD], TS), matched(0, TS));
}

#[test]
fn the_result_names_the_secret_that_matched() {
    let only_old = format!("v1={OLD_HEX}");
    let req = fenix("1700000000", &only_old, BODY);
    assert_eq!(check(req, &[NEW, OLD], TS), matched(1, TS));
    assert_eq!(check(req, &[OLD, NEW], TS), matched(0, TS));
}

#[test]
fn spaces_around_entries_are_tolerated() {
    let header = format!(" v1 = {OLD_HEX} ,  v1={NEW_HEX} ");
    assert_eq!(check(fenix(" 1700000000 ", &header, BODY), &[NEW], TS), matched(0, TS));
}

#[test]
fn a_tampered_body_does_not_verify() {
    let header = fenix_v1_header(&[NEW], TS, BODY);
    let tampered = br#"{"id":"evt_1","type":"booking.cancelled","data":{}}"#;
    assert_eq!(check(fenix("1700000000", &header, tampered), &[NEW], TS), Err(VerifyError::NoMatch));
}

#[test]
fn a_signature_replayed_with_a_new_timestamp_does_not_verify() {
    let header = fenix_v1_header(&[NEW], TS, BODY);
    assert_eq!(check(fenix("1700000060", &header, BODY), &[NEW], TS + 60), Err(VerifyError::NoMatch));
}

#[test]
fn the_wrong_secret_does_not_verify() {
    let header = fenix_v1_header(&[NEW], TS, BODY);
    assert_eq!(check(fenix("1700000000", &header, BODY), &[OLD], TS), Err(VerifyError::NoMatch));
}

#[test]
fn a_timestamp_exactly_at_the_tolerance_is_accepted() {
    let header = fenix_v1_header(&[NEW], TS, BODY);
    let req = fenix("1700000000", &header, BODY);
    assert_eq!(check(req, &[NEW], TS + 300), matched(0, TS));
    assert_eq!(check(req, &[NEW], TS - 300), matched(0, TS));
}

#[test]
fn a_timestamp_older_than_the_tolerance_is_rejected() {
    let header = fenix_v1_header(&[NEW], TS, BODY);
    assert_eq!(
        check(fenix("1700000000", &header, BODY), &[NEW], TS + 301),
        Err(VerifyError::TimestampOutOfTolerance { timestamp: TS, now: TS + 301, tolerance_secs: 300 })
    );
}

#[test]
fn a_timestamp_too_far_in_the_future_is_rejected() {
    let header = fenix_v1_header(&[NEW], TS, BODY);
    let result = check(fenix("1700000000", &header, BODY), &[NEW], TS - 301);
    assert!(matches!(result, Err(VerifyError::TimestampOutOfTolerance { .. })), "{result:?}");
}

#[test]
fn an_extreme_timestamp_is_out_of_tolerance_not_an_overflow() {
    let header = format!("v1={NEW_HEX}");
    let result = check(fenix("9223372036854775807", &header, BODY), &[NEW], i64::MIN);
    assert!(matches!(result, Err(VerifyError::TimestampOutOfTolerance { .. })), "{result:?}");
}

#[test]
fn missing_and_malformed_timestamps_are_rejected() {
    let header = format!("v1={NEW_HEX}");
    for (raw, expected) in [
        ("", VerifyError::MissingTimestamp),
        ("   ", VerifyError::MissingTimestamp),
        ("+1700000000", VerifyError::InvalidTimestamp),
        ("-1700000000", VerifyError::InvalidTimestamp),
        ("1.7e9", VerifyError::InvalidTimestamp),
        ("99999999999999999999", VerifyError::InvalidTimestamp),
    ] {
        assert_eq!(check(fenix(raw, &header, BODY), &[NEW], TS), Err(expected), "{raw:?}");
    }
}

#[test]
fn unknown_versions_are_skipped_when_a_v1_signature_is_present() {
    let header = format!("v2=deadbeef,v1={NEW_HEX}");
    assert_eq!(check(fenix("1700000000", &header, BODY), &[NEW], TS), matched(0, TS));
}

#[test]
fn only_unknown_versions_is_reported_as_such() {
    let header = format!("v2={NEW_HEX}, v3=00");
    assert_eq!(check(fenix("1700000000", &header, BODY), &[NEW], TS), Err(VerifyError::UnknownVersion("v2".into())));
}

#[test]
fn an_empty_signature_header_has_no_signatures() {
    for header in ["", "  ", " , ,"] {
        assert_eq!(check(fenix("1700000000", header, BODY), &[NEW], TS), Err(VerifyError::NoSignatures), "{header:?}");
    }
}

#[test]
fn a_v1_entry_that_is_not_hex_is_a_mismatch() {
    for header in ["v1=not-hex", "v1=", "v1"] {
        assert_eq!(check(fenix("1700000000", header, BODY), &[NEW], TS), Err(VerifyError::NoMatch), "{header:?}");
    }
}

#[test]
fn upper_case_hex_is_accepted() {
    let header = format!("v1={}", NEW_HEX.to_ascii_uppercase());
    assert_eq!(check(fenix("1700000000", &header, BODY), &[NEW], TS), matched(0, TS));
}

#[test]
fn misconfigured_secrets_are_reported_before_the_request_is_judged() {
    let req = fenix("", "", BODY);
    assert_eq!(check(req, &[], TS), Err(VerifyError::NoSecrets));
    assert_eq!(check(req, &[NEW, ""], TS), Err(VerifyError::InvalidSecret { index: 1, reason: SigningError::Empty }));
}

#[test]
fn standard_webhooks_specification_vector_verifies() {
    assert_eq!(check(standard(Some(SW_MSG_ID), SW_SIGNATURE), &[SW_SECRET], SW_TS), matched(0, SW_TS));
}

#[test]
fn standard_webhooks_rotation_header_verifies_with_either_secret() {
    let header = standard_webhooks_header(&[SW_OTHER, SW_SECRET], SW_MSG_ID, SW_TS, SW_BODY).unwrap();
    let req = standard(Some(SW_MSG_ID), &header);
    assert_eq!(check(req, &[SW_SECRET], SW_TS), matched(0, SW_TS));
    assert_eq!(check(req, &[SW_OTHER], SW_TS), matched(0, SW_TS));
    assert_eq!(check(req, &["whsec_AAAA", SW_SECRET], SW_TS), matched(1, SW_TS));
}

#[test]
fn standard_webhooks_signatures_without_padding_verify() {
    let unpadded = SW_SIGNATURE.trim_end_matches('=');
    assert_eq!(check(standard(Some(SW_MSG_ID), unpadded), &[SW_SECRET], SW_TS), matched(0, SW_TS));
}

#[test]
fn standard_webhooks_needs_the_message_id() {
    for msg_id in [None, Some(""), Some("  ")] {
        assert_eq!(check(standard(msg_id, SW_SIGNATURE), &[SW_SECRET], SW_TS), Err(VerifyError::MissingMessageId));
    }
}

#[test]
fn standard_webhooks_signs_the_message_id() {
    assert_eq!(check(standard(Some("msg_other"), SW_SIGNATURE), &[SW_SECRET], SW_TS), Err(VerifyError::NoMatch));
}

#[test]
fn standard_webhooks_unknown_versions_are_skipped_or_reported() {
    let mixed = format!("v2,AAAA {SW_SIGNATURE}");
    assert_eq!(check(standard(Some(SW_MSG_ID), &mixed), &[SW_SECRET], SW_TS), matched(0, SW_TS));
    assert_eq!(
        check(standard(Some(SW_MSG_ID), "v2,AAAA"), &[SW_SECRET], SW_TS),
        Err(VerifyError::UnknownVersion("v2".into()))
    );
}

#[test]
fn an_hmac_secret_never_matches_an_ed25519_signature() {
    assert_eq!(check(standard(Some(SW_MSG_ID), "v1a,AAAA"), &[SW_SECRET], SW_TS), Err(VerifyError::NoMatch));
}

fn ed_key(byte: u8) -> crate::Ed25519SecretKey {
    crate::Ed25519SecretKey::from_seed([byte; 32])
}

fn signed(scheme: Scheme, keys: &[crate::SignKey<'_>], msg_id: &str, body: &[u8]) -> String {
    crate::signature_header_with(scheme, keys, msg_id, TS, body).unwrap()
}

#[test]
fn ed25519_signatures_verify_with_the_public_key_in_both_schemes() {
    let key = ed_key(1);
    let public = key.public_key();
    let keys = [crate::SignKey::Ed25519 { key: &key, key_id: "ep_1.v1" }];
    let header = signed(Scheme::FenixV1, &keys, "", BODY);
    let req = fenix("1700000000", &header, BODY);
    assert_eq!(verify_with(&req, &[VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, TS), matched(0, TS));
    let header = signed(Scheme::StandardWebhooks, &keys, "msg_1", BODY);
    let req = SignedRequest {
        scheme: Scheme::StandardWebhooks,
        timestamp: "1700000000",
        signature_header: &header,
        msg_id: Some("msg_1"),
        body: BODY,
    };
    assert_eq!(verify_with(&req, &[VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, TS), matched(0, TS));
    let other_id = SignedRequest { msg_id: Some("msg_2"), ..req };
    assert_eq!(
        verify_with(&other_id, &[VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, TS),
        Err(VerifyError::NoMatch)
    );
}

#[test]
fn ed25519_rejects_another_key_an_altered_body_and_a_stale_timestamp() {
    let (key, other) = (ed_key(1), ed_key(2).public_key());
    let public = key.public_key();
    let header = signed(Scheme::FenixV1, &[crate::SignKey::Ed25519 { key: &key, key_id: "k" }], "", BODY);
    let fine = fenix("1700000000", &header, BODY);
    assert_eq!(verify_with(&fine, &[VerifyKey::Ed25519(&other)], DEFAULT_TOLERANCE, TS), Err(VerifyError::NoMatch));
    let altered = fenix("1700000000", &header, b"{}");
    assert_eq!(verify_with(&altered, &[VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, TS), Err(VerifyError::NoMatch));
    assert!(matches!(
        verify_with(&fine, &[VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, TS + 301),
        Err(VerifyError::TimestampOutOfTolerance { .. })
    ));
}

#[test]
fn during_a_rotation_from_hmac_to_ed25519_either_key_verifies() {
    let key = ed_key(3);
    let public = key.public_key();
    let keys = [crate::SignKey::Ed25519 { key: &key, key_id: "ep_1.v2" }, crate::SignKey::Hmac(NEW)];
    let header = signed(Scheme::FenixV1, &keys, "", BODY);
    let req = fenix("1700000000", &header, BODY);
    assert_eq!(verify(&req, &[NEW], DEFAULT_TOLERANCE, TS), matched(0, TS), "an HMAC-only receiver keeps working");
    assert_eq!(verify_with(&req, &[VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, TS), matched(0, TS));
    assert_eq!(
        verify_with(&req, &[VerifyKey::Hmac(OLD), VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, TS),
        matched(1, TS)
    );
}

/// The specification's example header (its keys are not published), parsed:
/// an Ed25519 key that did not make its `v1a` entry does not match it, and its
/// `v1` entry is still read beside it.
#[test]
fn the_specifications_mixed_example_header_parses() {
    let header = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==";
    let found = signatures(Scheme::StandardWebhooks, header).unwrap();
    assert_eq!((found.v1.len(), found.v1a.len()), (1, 1));
    assert_eq!((found.v1[0].len(), found.v1a[0].len()), (32, 64));
    let req = standard(Some(SW_MSG_ID), header);
    let public = ed_key(4).public_key();
    assert_eq!(verify_with(&req, &[VerifyKey::Ed25519(&public)], DEFAULT_TOLERANCE, SW_TS), Err(VerifyError::NoMatch));
}

#[test]
fn standard_webhooks_rejects_a_secret_that_is_not_base64() {
    assert_eq!(
        check(standard(Some(SW_MSG_ID), SW_SIGNATURE), &[SW_SECRET, "whsec_!!"], SW_TS),
        Err(VerifyError::InvalidSecret { index: 1, reason: SigningError::InvalidBase64 })
    );
}

#[test]
fn debug_output_never_shows_the_body() {
    let shown = format!("{:?}", fenix("1700000000", "v1=00", b"secret payload"));
    assert!(!shown.contains("secret payload"), "{shown}");
    assert!(shown.contains("body_len: 14"), "{shown}");
}
