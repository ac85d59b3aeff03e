//! An endpoint's client certificate key (mTLS) is sealed under the master key
//! like signing secrets: `fenix rekey` re-seals it (and the previous key of a
//! rotation), and after it the new master key alone opens it, so a receiver
//! that requires the certificate still gets every delivery.

use std::time::Duration;

use base64::{engine::general_purpose::STANDARD, Engine};
use serde_json::{json, Value};

use super::{
    common::{run_fenix, send, with_env, KEY_A, KEY_B},
    snippets::wait_for,
    support::{certs::TestCa, fenix::base_env, Backend, Fenix, Plan, Receiver, TestDb},
};

/// The master key ids of the sealed keys in the endpoint's `tls` column (current, then previous).
async fn sealed_key_ids(db: &TestDb, endpoint_id: &str) -> Vec<Vec<u8>> {
    let column = db.texts("SELECT tls FROM endpoints WHERE id = $1", &[endpoint_id]).await.remove(0);
    assert!(!column.contains("PRIVATE KEY"), "a key in clear: {column}");
    let stored: Value = serde_json::from_str(&column).expect("JSON");
    [&stored["client"]["sealed_key"], &stored["previous"]["identity"]["sealed_key"]]
        .into_iter()
        .filter_map(|v| v.as_str())
        .map(|b64| STANDARD.decode(b64).expect("base64")[1..9].to_vec())
        .collect()
}

async fn delivered(fenix: &Fenix, receiver: &Receiver, app: &str) {
    let before = receiver.count();
    let event = send(fenix, app, before as i64).await;
    let got = wait_for(receiver, before + 1).await;
    assert!(got.iter().any(|r| r.header("x-fenix-event-id") == event));
}

async fn rekey_reseals_client_certificate_keys_and_they_still_serve(backend: Backend) {
    let db = TestDb::new(backend).await;
    let ca = TestCa::new("Rekey client CA");
    let (first, second) = (ca.client("first", 90), ca.client("second", 90));
    let receiver = Receiver::https_requiring_client_cert(db.dir.path(), &[], &ca.pem(), |_| Plan::ok()).await;
    let server_ca = std::fs::read_to_string(receiver.ca_pem_path.as_ref().unwrap()).unwrap();
    let mut fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_A)]).await;
    let app = fenix.create_app("acme").await;
    let tls = json!({"client_certificate": first.cert, "client_key": first.key, "ca_certificates": server_ca});
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "tls": tls})).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    let body = json!({"client_certificate": second.cert, "client_key": second.key, "expires_in": "1h"});
    let (status, _) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep_id}/tls/rotate"), Some(body)).await;
    assert_eq!(status, 200);
    let before = sealed_key_ids(&db, &ep_id).await;
    assert_eq!(before.len(), 2, "the new key and the previous one, both sealed");
    delivered(&fenix, &receiver, &app).await;

    let env = with_env(base_env(&db), "FENIX_MASTER_KEY", Some(KEY_B));
    let env = with_env(env, "FENIX_PREVIOUS_MASTER_KEYS", Some(KEY_A));
    let prepare = run_fenix(&env, &["rekey", "--prepare"], Duration::from_secs(30)).await;
    assert!(prepare.status.success(), "rekey --prepare: {}\n{}", prepare.stdout, prepare.stderr);
    fenix.kill9();
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B), ("FENIX_PREVIOUS_MASTER_KEYS", KEY_A)]).await;
    let rekey = run_fenix(&env, &["rekey"], Duration::from_secs(30)).await;
    assert!(rekey.status.success(), "rekey: {}\n{}", rekey.stdout, rekey.stderr);
    assert!(rekey.stdout.contains("client certificate keys of 1 endpoint"), "{}", rekey.stdout);
    let after = sealed_key_ids(&db, &ep_id).await;
    assert_eq!(after.len(), 2);
    assert!(after.iter().all(|id| !before.contains(id)), "every key re-sealed under the new master key");
    let again = run_fenix(&env, &["rekey"], Duration::from_secs(30)).await;
    assert!(!again.stdout.contains("client certificate keys"), "idempotent: {}", again.stdout);
    drop(fenix);

    // The new master key alone opens them now.
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B)]).await;
    delivered(&fenix, &receiver, &app).await;
    assert!(!fenix.logs().contains(&crate::support::certs::distinctive(&second.key)));
}

crate::on_both_backends!(rekey_reseals_client_certificate_keys_and_they_still_serve);
