//! Credential header values are sealed under the master key like signing
//! secrets: `fenix rekey` re-seals them too, and after it the new key alone
//! opens them, so every attempt still carries them.

use std::time::Duration;

use base64::{engine::general_purpose::STANDARD, Engine};
use serde_json::{json, Value};

use super::{
    common::{run_fenix, send, with_env, KEY_A, KEY_B},
    snippets::wait_for,
    support::{fenix::base_env, Backend, Fenix, Plan, Receiver, TestDb},
};

const BEARER: &str = "Bearer rekey-7c1d-s3cret";
const API_KEY: &str = "rekey-api-key-s3cret";

/// The master key id of every sealed value in the endpoint's `headers` column.
async fn sealed_key_ids(db: &TestDb, endpoint_id: &str) -> Vec<Vec<u8>> {
    let column = db.texts("SELECT headers FROM endpoints WHERE id = $1", &[endpoint_id]).await.remove(0);
    assert!(!column.contains("s3cret"), "a credential in clear: {column}");
    let stored: Vec<Value> = serde_json::from_str(&column).expect("a JSON array");
    stored
        .iter()
        .filter_map(|h| h["sealed"].as_str())
        .map(|b64| STANDARD.decode(b64).expect("base64")[1..9].to_vec())
        .collect()
}

/// Sends one event; checks the receiver got the credential headers in clear.
async fn next_request_carries_the_credentials(fenix: &Fenix, receiver: &Receiver, app: &str) {
    let before = receiver.count();
    let event = send(fenix, app, before as i64).await;
    let got = wait_for(receiver, before + 1).await;
    let request = got.iter().find(|r| r.header("x-fenix-event-id") == event).expect("the event's request");
    assert_eq!(request.header("authorization"), BEARER);
    assert_eq!(request.header("x-api-key"), API_KEY);
    assert_eq!(request.header("x-plain"), "plain");
}

async fn rekey_reseals_credential_headers_and_they_are_still_sent(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_A)]).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix
        .create_endpoint(
            &app,
            json!({
                "url": receiver.url,
                "headers": {"Authorization": BEARER, "X-Api-Key": API_KEY, "X-Plain": "plain"},
                "sensitive_headers": ["X-Api-Key"],
            }),
        )
        .await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    let before = sealed_key_ids(&db, &ep_id).await;
    assert_eq!(before.len(), 2, "two sealed values");
    next_request_carries_the_credentials(&fenix, &receiver, &app).await;

    let env = with_env(base_env(&db), "FENIX_MASTER_KEY", Some(KEY_B));
    let env = with_env(env, "FENIX_PREVIOUS_MASTER_KEYS", Some(KEY_A));
    let prepare = run_fenix(&env, &["rekey", "--prepare"], Duration::from_secs(30)).await;
    assert!(prepare.status.success(), "rekey --prepare: {}\n{}", prepare.stdout, prepare.stderr);
    fenix.kill9();
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B), ("FENIX_PREVIOUS_MASTER_KEYS", KEY_A)]).await;
    next_request_carries_the_credentials(&fenix, &receiver, &app).await;
    let rekey = run_fenix(&env, &["rekey"], Duration::from_secs(30)).await;
    assert!(rekey.status.success(), "rekey: {}\n{}", rekey.stdout, rekey.stderr);
    assert!(rekey.stdout.contains("custom headers of 1 endpoint"), "{}", rekey.stdout);
    let after = sealed_key_ids(&db, &ep_id).await;
    assert_eq!(after.len(), 2);
    assert!(after.iter().all(|id| !before.contains(id)), "every value re-sealed under the new key");
    let again = run_fenix(&env, &["rekey"], Duration::from_secs(30)).await;
    assert!(again.stdout.contains("custom headers of 0 endpoint"), "idempotent: {}", again.stdout);
    next_request_carries_the_credentials(&fenix, &receiver, &app).await;
    drop(fenix);

    // The new key alone opens them now.
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B)]).await;
    next_request_carries_the_credentials(&fenix, &receiver, &app).await;
    assert!(!fenix.logs().contains("s3cret"), "a credential in the log");
}

crate::on_both_backends!(rekey_reseals_credential_headers_and_they_are_still_sent);
