//! The shared signature vectors (`sdks/vectors.json`): fixed keys, ids,
//! timestamps and bodies, signed by this crate, so that every SDK's `Webhook`
//! is checked against what the Fenix sender really produces.
//!
//! Built here once and used twice: `examples/vectors.rs` prints the file, and
//! `tests/vectors.rs` checks that the committed file is what this builds and
//! that `verify` agrees with every vector. Only cases that any correct
//! receiver decides the same way are included (no whitespace tricks).

use std::collections::BTreeMap;

use fenix_signing::{signature_header_with, Ed25519SecretKey, Scheme, SignKey};
use serde::Serialize;

/// The receiver's clock in every vector (unix seconds).
pub const NOW: i64 = 1_795_986_262;
/// The freshness window, in seconds, the vectors assume.
pub const TOLERANCE_SECONDS: u64 = 300;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD_SECRET: &str = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM=";
const OTHER_SECRET: &str = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const KEY_ID: &str = "k_3f1c9a0b5d7e2f4a6c8e.v2";
const OLD_KEY_ID: &str = "k_3f1c9a0b5d7e2f4a6c8e.v1";
const EVENT_ID: &str = "evt_01JDQ4X5B6M7N8P9Q0R1S2T3V4";
const BODY: &str = r#"{"id":"evt_01JDQ4X5B6M7N8P9Q0R1S2T3V4","type":"booking.confirmed","created_at":"2026-11-29T21:04:19.123Z","data":{"booking_id":42}}"#;
/// Non-ASCII text: a receiver that re-encodes the body breaks here.
const UTF8_BODY: &str = r#"{"id":"evt_01JDQ4X5B6M7N8P9Q0R1S2T3V4","type":"guest.renamed","created_at":"2026-11-29T21:04:19.123Z","data":{"name":"Zoë Ångström ✓ 日本"}}"#;

/// The whole file.
#[derive(Debug, Serialize)]
pub struct VectorFile {
    /// The tolerance every vector's `valid` assumes.
    pub tolerance_seconds: u64,
    /// One request each.
    pub vectors: Vec<Vector>,
}

/// One request as a receiver sees it, and whether it must be accepted.
#[derive(Debug, Serialize)]
pub struct Vector {
    pub name: String,
    pub scheme: &'static str,
    pub algorithm: &'static str,
    /// What the receiver is configured with: a `whsec_` secret or a `whpk_` public key.
    pub key: String,
    /// The receiver's clock, unix seconds.
    pub now: i64,
    /// Lower-case header names.
    pub headers: BTreeMap<String, String>,
    /// The raw body, UTF-8.
    pub body: String,
    pub valid: bool,
    /// Why an invalid vector is refused: expired, future, tampered_body,
    /// wrong_key, missing_header or malformed_header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
}

/// The sender's keys of one algorithm: the current one and the one before a rotation.
struct Keys {
    algorithm: &'static str,
    new: Ed25519SecretKey,
    old: Ed25519SecretKey,
    other: Ed25519SecretKey,
}

impl Keys {
    fn ed25519() -> Keys {
        let seed = |byte| Ed25519SecretKey::from_seed([byte; 32]);
        Keys { algorithm: "ed25519", new: seed(7), old: seed(9), other: seed(11) }
    }

    fn hmac() -> Keys {
        // The Ed25519 keys are unused for HMAC; only `algorithm` differs.
        Keys { algorithm: "hmac-sha256", ..Keys::ed25519() }
    }

    fn is_hmac(&self) -> bool {
        self.algorithm == "hmac-sha256"
    }

    /// The signing keys, in header order, for `which` ("new", "old", "other").
    fn sign_key(&self, which: &str) -> SignKey<'_> {
        match (self.is_hmac(), which) {
            (true, "new") => SignKey::Hmac(SECRET),
            (true, "old") => SignKey::Hmac(OLD_SECRET),
            (true, _) => SignKey::Hmac(OTHER_SECRET),
            (false, "new") => SignKey::Ed25519 { key: &self.new, key_id: KEY_ID },
            (false, "old") => SignKey::Ed25519 { key: &self.old, key_id: OLD_KEY_ID },
            (false, _) => SignKey::Ed25519 { key: &self.other, key_id: "k_0000000000000000000.v1" },
        }
    }

    /// What a receiver holds for `which`.
    fn receiver_key(&self, which: &str) -> String {
        match (self.is_hmac(), which) {
            (true, "new") => SECRET.to_owned(),
            (true, "old") => OLD_SECRET.to_owned(),
            (true, _) => OTHER_SECRET.to_owned(),
            (false, "new") => self.new.public_key().to_whpk(),
            (false, "old") => self.old.public_key().to_whpk(),
            (false, _) => self.other.public_key().to_whpk(),
        }
    }
}

/// A request signed by `signers` at `timestamp` over `body`, as headers.
fn signed_headers(
    scheme: Scheme,
    keys: &Keys,
    signers: &[&str],
    timestamp: i64,
    body: &str,
) -> BTreeMap<String, String> {
    let sign_keys: Vec<SignKey<'_>> = signers.iter().map(|which| keys.sign_key(which)).collect();
    let signature = signature_header_with(scheme, &sign_keys, EVENT_ID, timestamp, body.as_bytes())
        .expect("the fixed secrets are valid");
    let mut headers = BTreeMap::new();
    headers.insert(scheme.timestamp_header().to_owned(), timestamp.to_string());
    headers.insert(scheme.signature_header().to_owned(), signature);
    match scheme.msg_id_header() {
        Some(name) => headers.insert(name.to_owned(), EVENT_ID.to_owned()),
        None => headers.insert("x-fenix-event-id".to_owned(), EVENT_ID.to_owned()),
    };
    headers
}

/// Builds vectors for one scheme and algorithm.
struct Builder<'k> {
    scheme: Scheme,
    keys: &'k Keys,
    out: Vec<Vector>,
}

impl Builder<'_> {
    fn push(
        &mut self,
        case: &str,
        key: &str,
        headers: BTreeMap<String, String>,
        body: &str,
        error: Option<&'static str>,
    ) {
        let short = if self.keys.is_hmac() { "hmac" } else { "ed25519" };
        self.out.push(Vector {
            name: format!("{}/{short}/{case}", self.scheme.as_str()),
            scheme: self.scheme.as_str(),
            algorithm: self.keys.algorithm,
            key: self.keys.receiver_key(key),
            now: NOW,
            headers,
            body: body.to_owned(),
            valid: error.is_none(),
            error,
        });
    }

    fn headers(&self, signers: &[&str], timestamp: i64, body: &str) -> BTreeMap<String, String> {
        signed_headers(self.scheme, self.keys, signers, timestamp, body)
    }

    fn build(mut self) -> Vec<Vector> {
        let tolerance = TOLERANCE_SECONDS as i64;
        let fresh = self.headers(&["new"], NOW - 10, BODY);
        self.push("valid", "new", fresh.clone(), BODY, None);
        self.push("valid_utf8_body", "new", self.headers(&["new"], NOW, UTF8_BODY), UTF8_BODY, None);
        let rotation = self.headers(&["new", "old"], NOW - 5, BODY);
        self.push("rotation_verified_by_new_key", "new", rotation.clone(), BODY, None);
        self.push("rotation_verified_by_old_key", "old", rotation.clone(), BODY, None);
        self.push("rotation_wrong_key", "other", rotation, BODY, Some("wrong_key"));
        self.push("at_tolerance_in_the_past", "new", self.headers(&["new"], NOW - tolerance, BODY), BODY, None);
        self.push("at_tolerance_in_the_future", "new", self.headers(&["new"], NOW + tolerance, BODY), BODY, None);
        self.push("expired", "new", self.headers(&["new"], NOW - tolerance - 1, BODY), BODY, Some("expired"));
        self.push("future", "new", self.headers(&["new"], NOW + tolerance + 1, BODY), BODY, Some("future"));
        let tampered = BODY.replace("42", "43");
        self.push("tampered_body", "new", fresh.clone(), &tampered, Some("tampered_body"));
        self.push("wrong_key", "other", fresh.clone(), BODY, Some("wrong_key"));
        self.push_header_cases(&fresh);
        self.out
    }

    /// Missing and malformed headers, and entries of other versions.
    fn push_header_cases(&mut self, fresh: &BTreeMap<String, String>) {
        let (ts, sig) = (self.scheme.timestamp_header(), self.scheme.signature_header());
        let edited = |name: &str, value: Option<&str>| {
            let mut headers = fresh.clone();
            match value {
                Some(value) => headers.insert(name.to_owned(), value.to_owned()),
                None => headers.remove(name),
            };
            headers
        };
        self.push("missing_signature_header", "new", edited(sig, None), BODY, Some("missing_header"));
        self.push("missing_timestamp_header", "new", edited(ts, None), BODY, Some("missing_header"));
        if let Some(id) = self.scheme.msg_id_header() {
            self.push("missing_id_header", "new", edited(id, None), BODY, Some("missing_header"));
        }
        let stamp = format!("{}x", NOW - 10);
        self.push("malformed_timestamp", "new", edited(ts, Some(&stamp)), BODY, Some("malformed_header"));
        self.push("malformed_signature", "new", edited(sig, Some("garbage")), BODY, Some("malformed_header"));
        let (other_version, separator) = match self.scheme {
            Scheme::FenixV1 => ("v9=00ff", ","),
            Scheme::StandardWebhooks => ("v9,AAAA", " "),
        };
        let mixed = format!("{other_version}{separator}{}", fresh[sig]);
        self.push("unknown_version_entries_are_skipped", "new", edited(sig, Some(&mixed)), BODY, None);
    }
}

/// A request signed during a move between algorithms: one HMAC and one
/// Ed25519 signature in one header; a receiver of either kind accepts it.
fn algorithm_move(scheme: Scheme) -> Vec<Vector> {
    let ed = Keys::ed25519();
    let signers = [SignKey::Ed25519 { key: &ed.new, key_id: KEY_ID }, SignKey::Hmac(SECRET)];
    let signature = signature_header_with(scheme, &signers, EVENT_ID, NOW, BODY.as_bytes()).expect("valid secrets");
    let mut headers = signed_headers(scheme, &Keys::hmac(), &["new"], NOW, BODY);
    headers.insert(scheme.signature_header().to_owned(), signature);
    [(Keys::hmac(), SECRET.to_owned()), (Keys::ed25519(), ed.new.public_key().to_whpk())]
        .into_iter()
        .map(|(keys, key)| Vector {
            name: format!("{}/{}/algorithm_move_mixed_header", scheme.as_str(), keys.algorithm),
            scheme: scheme.as_str(),
            algorithm: keys.algorithm,
            key,
            now: NOW,
            headers: headers.clone(),
            body: BODY.to_owned(),
            valid: true,
            error: None,
        })
        .collect()
}

/// Every vector, in a fixed order.
pub fn vector_file() -> VectorFile {
    let mut vectors = Vec::new();
    for scheme in [Scheme::FenixV1, Scheme::StandardWebhooks] {
        for keys in [Keys::hmac(), Keys::ed25519()] {
            vectors.extend(Builder { scheme, keys: &keys, out: Vec::new() }.build());
        }
        vectors.extend(algorithm_move(scheme));
    }
    VectorFile { tolerance_seconds: TOLERANCE_SECONDS, vectors }
}

/// The file's text, exactly as committed (pretty JSON, final newline).
pub fn vectors_json() -> String {
    let mut text = serde_json::to_string_pretty(&vector_file()).expect("vectors serialise");
    text.push('\n');
    text
}
