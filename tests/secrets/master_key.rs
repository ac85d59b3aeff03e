//! The master key that seals secrets at rest: a wrong key is refused at start
//! (not at the first delivery), PostgreSQL requires one and says how to make
//! it, SQLite makes a private key file beside the database, and `fenix rekey`
//! moves every secret to a new key while deliveries go on.

use std::time::Duration;

use base64::{engine::general_purpose::STANDARD, Engine};
use serde_json::json;

use super::{
    common::{rotate, run_fenix, send, signatures, verify, with_env, KEY_A, KEY_B},
    snippets::wait_for,
    support::{db::postgres_available, fenix::base_env, Backend, Fenix, Plan, Receiver, TestDb},
};

const START_TIMEOUT: Duration = Duration::from_secs(30);

/// An app with a fenix-v1 endpoint rotated once (overlap running) and a
/// Standard Webhooks endpoint: three sealed secrets.
struct Endpoints {
    app: String,
    /// fenix-v1 secrets, newest first.
    v1_secrets: [String; 2],
    sw_secret: String,
}

async fn create_endpoints(fenix: &Fenix, receiver: &Receiver) -> Endpoints {
    let app = fenix.create_app("acme").await;
    let v1 = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let sw = fenix.create_endpoint(&app, json!({"url": receiver.url, "signature_scheme": "standard-webhooks"})).await;
    let v1_id = v1["id"].as_str().unwrap().to_string();
    let rotated = rotate(fenix, &app, &v1_id, json!({"overlap_seconds": 3600})).await;
    Endpoints {
        app,
        v1_secrets: [rotated["secret"].as_str().unwrap().into(), v1["secret"].as_str().unwrap().into()],
        sw_secret: sw["secret"].as_str().unwrap().into(),
    }
}

/// Sends one event and checks both endpoints' requests verify with the original secrets.
async fn deliveries_verify_with_the_original_secrets(fenix: &Fenix, receiver: &Receiver, eps: &Endpoints) {
    let before = receiver.count();
    let event = send(fenix, &eps.app, before as i64).await;
    let received = wait_for(receiver, before + 2).await;
    let requests: Vec<_> = received.iter().filter(|r| r.header("x-fenix-event-id") == event).collect();
    assert_eq!(requests.len(), 2, "one request per endpoint");
    for request in requests {
        if request.header("webhook-signature").is_empty() {
            assert_eq!(signatures(request).len(), 2, "the rotation's overlap survives");
            for secret in &eps.v1_secrets {
                verify(request, &[secret]).expect("fenix-v1 request verifies with each original secret");
            }
        } else {
            verify(request, &[&eps.sw_secret]).expect("standard-webhooks request verifies with the original secret");
        }
    }
}

async fn a_wrong_master_key_is_refused_at_start_with_a_clear_error(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    let eps = create_endpoints(&fenix, &receiver).await;
    assert!(fenix.terminate().await.success());

    let wrong = run_fenix(&with_env(base_env(&db), "FENIX_MASTER_KEY", Some(KEY_B)), &["serve"], START_TIMEOUT).await;
    assert!(!wrong.status.success(), "a wrong key must stop the start: {}", wrong.stderr);
    assert!(!wrong.stdout.contains("listening"), "it never listened: {}", wrong.stdout);
    assert!(wrong.stderr.contains("master key"), "the error names the master key: {}", wrong.stderr);

    for (why, key) in [("not base64", "this is not a key"), ("16 bytes", "AAECAwQFBgcICQoLDA0ODw==")] {
        let bad = run_fenix(&with_env(base_env(&db), "FENIX_MASTER_KEY", Some(key)), &["serve"], START_TIMEOUT).await;
        assert!(!bad.status.success(), "a master key that is {why} must stop the start");
        assert!(bad.stderr.contains("FENIX_MASTER_KEY"), "the error names the variable ({why}): {}", bad.stderr);
        assert!(!bad.stderr.contains(key), "the error does not repeat the key ({why}): {}", bad.stderr);
    }

    // The refused starts changed nothing: the right key starts and signs as before.
    let fenix = Fenix::start(&db, &[]).await;
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;
}

async fn rekey_moves_every_secret_to_a_new_master_key_while_deliveries_go_on(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_A)]).await;
    let eps = create_endpoints(&fenix, &receiver).await;
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;

    // The new key is recorded first (proven by the old one, re-sealing nothing) ...
    let env = with_env(base_env(&db), "FENIX_MASTER_KEY", Some(KEY_B));
    let env = with_env(env, "FENIX_PREVIOUS_MASTER_KEYS", Some(KEY_A));
    let prepare = run_fenix(&env, &["rekey", "--prepare"], START_TIMEOUT).await;
    assert!(prepare.status.success(), "rekey --prepare: {}\n{}", prepare.stdout, prepare.stderr);
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;

    // ... then instances learn it (the old key still opens what it sealed) ...
    fenix.kill9();
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B), ("FENIX_PREVIOUS_MASTER_KEYS", KEY_A)]).await;
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;

    // ... then `fenix rekey` re-seals every secret while they keep delivering.
    let rekey = run_fenix(&env, &["rekey"], START_TIMEOUT).await;
    assert!(rekey.status.success(), "rekey: {}\n{}", rekey.stdout, rekey.stderr);
    assert!(rekey.stdout.contains("re-encrypted 3 secret"), "three secrets were re-sealed: {}", rekey.stdout);
    assert!(rekey.stdout.contains("nothing is left under another key"), "it says what is left: {}", rekey.stdout);
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;
    let again = run_fenix(&env, &["rekey"], START_TIMEOUT).await;
    assert!(again.status.success() && again.stdout.contains("re-encrypted 0 secret"), "idempotent: {}", again.stdout);
    drop(fenix);

    // The new key alone now opens everything; the old one alone opens nothing.
    let mut fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B)]).await;
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;
    assert!(!fenix.logs().contains("cannot open endpoint secret"), "{}", fenix.logs());
    fenix.kill9();
    let old = run_fenix(&with_env(base_env(&db), "FENIX_MASTER_KEY", Some(KEY_A)), &["serve"], START_TIMEOUT).await;
    assert!(!old.status.success(), "the old key no longer matches the database");
    assert!(old.stderr.contains("master key"), "{}", old.stderr);
    let env = with_env(base_env(&db), "FENIX_PREVIOUS_MASTER_KEYS", Some(KEY_B));
    let back = run_fenix(&with_env(env, "FENIX_MASTER_KEY", Some(KEY_A)), &["serve"], START_TIMEOUT).await;
    assert!(!back.status.success(), "the old key with the new one as previous seals with the wrong key");
    assert!(back.stderr.contains("FENIX_MASTER_KEY is an older master key"), "{}", back.stderr);
}

crate::on_both_backends!(
    a_wrong_master_key_is_refused_at_start_with_a_clear_error,
    rekey_moves_every_secret_to_a_new_master_key_while_deliveries_go_on,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_without_a_master_key_refuses_to_start_and_says_how_to_make_one() {
    if !postgres_available() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    let refused = run_fenix(&with_env(base_env(&db), "FENIX_MASTER_KEY", None), &["serve"], START_TIMEOUT).await;
    assert!(!refused.status.success(), "PostgreSQL without a master key must not start");
    assert!(refused.stderr.contains("FENIX_MASTER_KEY"), "{}", refused.stderr);
    assert!(refused.stderr.contains("fenix keygen"), "the error says how to make a key: {}", refused.stderr);

    // Doing what it says works.
    let keygen = run_fenix(&[], &["keygen"], START_TIMEOUT).await;
    assert!(keygen.status.success());
    let key = keygen.stdout.trim().to_string();
    assert_eq!(STANDARD.decode(&key).expect("base64").len(), 32, "a 32-byte key: {key}");
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", &key)]).await;
    let eps = create_endpoints(&fenix, &receiver).await;
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_without_a_master_key_creates_a_private_key_file_beside_the_database_and_reuses_it() {
    let db = TestDb::new(Backend::Sqlite).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let key_path = db.path("fenix.db.key");
    assert!(!key_path.exists());
    let env = with_env(base_env(&db), "FENIX_MASTER_KEY", None);
    let mut fenix = Fenix::spawn(env, db.path("fenix.log"), &["serve"]).await;

    let key = std::fs::read_to_string(&key_path).expect("a key file beside the database");
    assert_eq!(STANDARD.decode(key.trim()).expect("base64").len(), 32);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "only the owner may read the key file");
    }
    let logs = fenix.logs();
    assert!(logs.contains(&key_path.display().to_string()), "the start says where the key is: {logs}");
    assert!(!logs.contains(key.trim()), "the key itself is never logged");

    let eps = create_endpoints(&fenix, &receiver).await;
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;

    // A restart reads the same file: the same secrets still open and sign.
    fenix.restart().await;
    assert_eq!(std::fs::read_to_string(&key_path).unwrap(), key, "the key file is left as it was");
    deliveries_verify_with_the_original_secrets(&fenix, &receiver, &eps).await;
    let path = key_path.display().to_string();
    assert_eq!(
        fenix.logs().matches(&path).count(),
        1,
        "the key file is announced once, when created: {}",
        fenix.logs()
    );
    assert!(!fenix.logs().contains(key.trim()), "the key itself is never logged");
}
