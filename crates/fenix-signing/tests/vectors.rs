//! The shared signature vectors (`sdks/vectors.json`) every SDK checks its
//! `Webhook` against: the committed file is exactly what this crate builds,
//! and `verify_with` accepts or refuses each vector as the file says, for the
//! reason it names.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use fenix_signing::{verify_with, Ed25519PublicKey, Scheme, SignedRequest, VerifyError, VerifyKey};
use support::vectors::{vector_file, vectors_json, Vector};

fn committed_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdks/vectors.json")
}

#[test]
fn the_committed_vectors_are_what_the_crate_builds() {
    let committed = std::fs::read_to_string(committed_path()).expect("sdks/vectors.json exists");
    assert!(
        committed == vectors_json(),
        "sdks/vectors.json is stale: run `cargo run -p fenix-signing --example vectors > sdks/vectors.json`"
    );
}

/// The reason, in the file's words, for a refusal.
fn reason(error: &VerifyError, vector: &Vector) -> &'static str {
    match error {
        VerifyError::TimestampOutOfTolerance { timestamp, now, .. } if timestamp < now => "expired",
        VerifyError::TimestampOutOfTolerance { .. } => "future",
        VerifyError::MissingTimestamp | VerifyError::MissingMessageId | VerifyError::NoSignatures => "missing_header",
        VerifyError::InvalidTimestamp | VerifyError::UnknownVersion(_) => "malformed_header",
        // One error for both: a receiver cannot tell an altered body from a wrong key.
        VerifyError::NoMatch if vector.error == Some("tampered_body") => "tampered_body",
        VerifyError::NoMatch => "wrong_key",
        other => panic!("{}: a misconfigured receiver ({other})", vector.name),
    }
}

fn verify_vector(vector: &Vector, tolerance: Duration) -> Result<(), VerifyError> {
    let scheme = Scheme::parse(vector.scheme).expect("a known scheme");
    let header = |name: &str| vector.headers.get(name).map_or("", String::as_str);
    let request = SignedRequest {
        scheme,
        timestamp: header(scheme.timestamp_header()),
        signature_header: header(scheme.signature_header()),
        msg_id: scheme.msg_id_header().and_then(|name| vector.headers.get(name)).map(String::as_str),
        body: vector.body.as_bytes(),
    };
    let public;
    let key = if vector.key.starts_with("whpk_") {
        public = Ed25519PublicKey::parse(&vector.key).expect("a valid public key");
        VerifyKey::Ed25519(&public)
    } else {
        VerifyKey::Hmac(&vector.key)
    };
    verify_with(&request, &[key], tolerance, vector.now).map(|_| ())
}

#[test]
fn every_vector_verifies_or_is_refused_for_the_reason_it_names() {
    let file = vector_file();
    let tolerance = Duration::from_secs(file.tolerance_seconds);
    for vector in &file.vectors {
        match (verify_vector(vector, tolerance), vector.valid) {
            (Ok(()), true) => {}
            (Ok(()), false) => panic!("{} was accepted", vector.name),
            (Err(error), true) => panic!("{} was refused: {error}", vector.name),
            (Err(error), false) => assert_eq!(Some(reason(&error, vector)), vector.error, "{}", vector.name),
        }
    }
}

#[test]
fn the_vectors_cover_both_schemes_both_algorithms_and_every_reason() {
    let file = vector_file();
    let mut seen: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for vector in &file.vectors {
        seen.entry((vector.scheme, vector.algorithm)).or_default().push(vector.error.unwrap_or("valid"));
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
    let reasons = ["valid", "expired", "future", "tampered_body", "wrong_key", "missing_header", "malformed_header"];
    for (combination, found) in &seen {
        for reason in reasons {
            assert!(found.contains(&reason), "{combination:?} lacks {reason}");
        }
    }
    let names: Vec<&str> = file.vectors.iter().map(|v| v.name.as_str()).collect();
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "vector names are unique");
}
