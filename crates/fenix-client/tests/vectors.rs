//! `Webhook` decides every shared signature vector (`sdks/vectors.json`,
//! built by fenix-signing) as the file says.

use std::collections::BTreeMap;

use fenix_client::{Webhook, WebhookVerificationError};
use serde_json::Value;

#[test]
fn every_shared_vector_verifies_or_is_refused_as_it_says() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdks/vectors.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("sdks/vectors.json")).unwrap();
    assert_eq!(file["tolerance_seconds"], 300);
    let vectors = file["vectors"].as_array().expect("vectors");
    assert!(vectors.len() > 20, "{} vectors", vectors.len());
    for vector in vectors {
        let name = vector["name"].as_str().unwrap();
        let webhook = Webhook::new(vector["key"].as_str().unwrap()).expect("a usable key");
        let headers: BTreeMap<String, String> = serde_json::from_value(vector["headers"].clone()).unwrap();
        let body = vector["body"].as_str().unwrap().as_bytes();
        let result = webhook.verify_at(body, &headers, vector["now"].as_i64().unwrap());
        match (result, vector["valid"].as_bool().unwrap()) {
            (Ok(event), true) => assert_eq!(event.id, "evt_01JDQ4X5B6M7N8P9Q0R1S2T3V4", "{name}"),
            (Err(WebhookVerificationError::Signature(_)), false) => {}
            (Ok(_), false) => panic!("{name} was accepted"),
            (Err(error), _) => panic!("{name}: {error}"),
        }
    }
}

#[test]
fn headers_are_found_whatever_their_case() {
    let vector = r#"{"x-fenix-timestamp":"1","X-Fenix-Signature":"v1=00"}"#;
    let headers: std::collections::HashMap<String, String> = serde_json::from_str(vector).unwrap();
    let webhook = Webhook::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    // Both headers were found: refused because the signature does not match, not for a missing header.
    let error = webhook.verify_at(b"{}", &headers, 1).unwrap_err();
    assert!(error.to_string().contains("no signature matches"), "{error}");
}

#[test]
fn a_key_that_is_no_key_is_refused_at_once() {
    assert!(matches!(Webhook::new(""), Err(WebhookVerificationError::InvalidKey(_))));
    assert!(matches!(Webhook::new("whpk_AAAA"), Err(WebhookVerificationError::InvalidKey(_))));
}
