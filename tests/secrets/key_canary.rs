//! The master key is proven at start (issue 27, finding 4): a mistyped
//! current key is refused even beside the real one in
//! FENIX_PREVIOUS_MASTER_KEYS, naming the setting; `fenix rekey` reports
//! what no key given opens and finishes past it only when told to.

use std::time::Duration;

use serde_json::json;

use super::{
    common::{run_fenix, with_env, KEY_A, KEY_B},
    support::{db::postgres_available, fenix::base_env, Backend, Fenix, Plan, Receiver, TestDb},
};

const TIMEOUT: Duration = Duration::from_secs(30);
/// A key the database never knew: what a mistyped `FENIX_MASTER_KEY` is.
const MISTYPED: &str = "ZmVuaXgtdGVzdC1taXN0eXBlZC1tYXN0ZXIta2V5ISE=";

fn keys(db: &TestDb, current: Option<&str>, previous: Option<&str>) -> Vec<(String, String)> {
    with_env(with_env(base_env(db), "FENIX_MASTER_KEY", current), "FENIX_PREVIOUS_MASTER_KEYS", previous)
}

fn key_id(key: &str) -> String {
    ::fenix::secrets::MasterKey::from_base64(key).unwrap().id_hex()
}

async fn a_mistyped_current_key_beside_the_real_one_refuses_to_start_naming_the_setting(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    // The real instance still runs; the mistyped one never starts beside it.
    let mistyped = run_fenix(&keys(&db, Some(MISTYPED), Some(KEY_A)), &["serve"], TIMEOUT).await;
    assert!(!mistyped.status.success(), "a mistyped key must stop the start: {}", mistyped.stdout);
    assert!(!mistyped.stdout.contains("listening"), "it never listened: {}", mistyped.stdout);
    let err = &mistyped.stderr;
    assert!(err.contains("FENIX_MASTER_KEY is not a master key this database was sealed with"), "{err}");
    assert!(err.contains(&key_id(KEY_A)) && err.contains("which FENIX_PREVIOUS_MASTER_KEYS holds"), "{err}");
    assert!(err.contains("fenix rekey --prepare"), "it says how a real key change goes: {err}");
    assert!(!err.contains(MISTYPED) && !err.contains(KEY_A), "no key in the error: {err}");
    let alone = run_fenix(&keys(&db, Some(MISTYPED), None), &["serve"], TIMEOUT).await;
    assert!(!alone.status.success() && alone.stderr.contains("FENIX_MASTER_KEY"), "{}", alone.stderr);

    // Nor can it make itself the database's key without holding the real one.
    let prepare = run_fenix(&keys(&db, Some(MISTYPED), None), &["rekey", "--prepare"], TIMEOUT).await;
    assert!(!prepare.status.success(), "{}", prepare.stdout);
    assert!(prepare.stderr.contains("FENIX_PREVIOUS_MASTER_KEYS must hold"), "{}", prepare.stderr);

    // Nothing was sealed with it: the real key alone has nothing left to re-seal.
    assert!(fenix.terminate().await.success());
    let rekey = run_fenix(&keys(&db, Some(KEY_A), None), &["rekey"], TIMEOUT).await;
    assert!(rekey.status.success(), "{}\n{}", rekey.stdout, rekey.stderr);
    assert!(rekey.stdout.contains("re-encrypted 0 secret"), "{}", rekey.stdout);
    assert!(rekey.stdout.contains("nothing is left under another key"), "{}", rekey.stdout);
    Fenix::start(&db, &[]).await;
}

async fn rekey_reports_what_no_key_given_opens_and_finishes_past_it_only_when_told(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let readable = fenix.create_endpoint(&app, json!({"url": receiver.url})).await["id"].as_str().unwrap().to_string();
    let lost = fenix.create_endpoint(&app, json!({"url": receiver.url})).await["id"].as_str().unwrap().to_string();
    assert!(fenix.terminate().await.success());
    // What an instance with a mistyped key left behind before this check existed.
    let sealed = ::fenix::secrets::MasterKey::from_base64(MISTYPED).unwrap().seal(b"whsec_lost", &lost);
    overwrite_secret(&db, &lost, &sealed).await;

    let env = keys(&db, Some(KEY_B), Some(KEY_A));
    assert!(run_fenix(&env, &["rekey", "--prepare"], TIMEOUT).await.status.success());
    let stopped = run_fenix(&env, &["rekey"], TIMEOUT).await;
    assert!(!stopped.status.success(), "not finished without the option: {}", stopped.stdout);
    assert!(stopped.stdout.contains("re-encrypted 1 secret"), "the rest is re-sealed: {}", stopped.stdout);
    let err = &stopped.stderr;
    assert!(err.contains("1 secret(s)") && err.contains(&format!("{lost} (secret version 1")), "{err}");
    assert!(err.contains(&key_id(MISTYPED)), "it names the key id that sealed it: {err}");
    assert!(!err.contains(&readable), "{err}");
    assert!(err.contains("--skip-unreadable"), "it says how to finish: {err}");

    let finished = run_fenix(&env, &["rekey", "--skip-unreadable"], TIMEOUT).await;
    assert!(finished.status.success(), "{}\n{}", finished.stdout, finished.stderr);
    assert!(finished.stdout.contains("re-encrypted 0 secret"), "{}", finished.stdout);
    assert!(
        finished.stdout.contains(&format!("left 1 value(s) of endpoint(s) {lost} as they were")),
        "{}",
        finished.stdout
    );

    // The key change is done: the new key alone starts.
    Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B)]).await;
}

async fn overwrite_secret(db: &TestDb, endpoint_id: &str, sealed: &[u8]) {
    use sqlx::Connection;
    let sql = "UPDATE endpoint_secrets SET sealed = $1 WHERE endpoint_id = $2";
    let done = match db.backend {
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await.expect("connect");
            sqlx::query(sql).bind(sealed).bind(endpoint_id).execute(&mut conn).await.expect("update").rows_affected()
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            sqlx::query(sql).bind(sealed).bind(endpoint_id).execute(&mut conn).await.expect("update").rows_affected()
        }
    };
    assert_eq!(done, 1);
}

async fn a_database_from_before_the_canaries_records_its_key_and_refuses_a_mistyped_one(backend: Backend) {
    let db = TestDb::new(backend).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    assert!(fenix.terminate().await.success());
    // As an older Fenix left it: no canaries, its key check in `meta`.
    let check =
        ::fenix::secrets::MasterKey::from_base64(KEY_A).unwrap().seal(b"fenix master key check", "master_key_check");
    as_before_the_canaries(&db, &check).await;

    let mistyped = run_fenix(&keys(&db, Some(MISTYPED), Some(KEY_A)), &["serve"], TIMEOUT).await;
    assert!(!mistyped.status.success(), "{}", mistyped.stdout);
    assert!(
        mistyped.stderr.contains("FENIX_MASTER_KEY is not a master key this database was sealed with"),
        "{}",
        mistyped.stderr
    );
    Fenix::start(&db, &[]).await;
}

async fn as_before_the_canaries(db: &TestDb, check: &[u8]) {
    use sqlx::Connection;
    let (clear, insert) =
        ("DELETE FROM master_key_canaries", "INSERT INTO meta (key, value) VALUES ('master_key_check', $1)");
    match db.backend {
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await.expect("connect");
            sqlx::query(clear).execute(&mut conn).await.expect("delete");
            sqlx::query(insert).bind(check).execute(&mut conn).await.expect("insert");
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            sqlx::query(clear).execute(&mut conn).await.expect("delete");
            sqlx::query(insert).bind(check).execute(&mut conn).await.expect("insert");
        }
    }
}

crate::on_both_backends!(
    a_mistyped_current_key_beside_the_real_one_refuses_to_start_naming_the_setting,
    a_database_from_before_the_canaries_records_its_key_and_refuses_a_mistyped_one,
    rekey_reports_what_no_key_given_opens_and_finishes_past_it_only_when_told,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_file_holding_another_key_is_refused_naming_the_file() {
    let db = TestDb::new(Backend::Sqlite).await;
    let key_path = db.path("fenix.db.key");
    let mut fenix = Fenix::spawn(keys(&db, None, None), db.path("fenix.log"), &["serve"]).await;
    assert!(fenix.terminate().await.success());
    let real = std::fs::read_to_string(&key_path).unwrap();
    std::fs::write(&key_path, format!("{MISTYPED}\n")).unwrap();

    let refused = run_fenix(&keys(&db, None, Some(real.trim())), &["serve"], TIMEOUT).await;
    assert!(!refused.status.success(), "{}", refused.stdout);
    let named = format!("the key file {} (FENIX_MASTER_KEY is unset) is not a master key", key_path.display());
    assert!(refused.stderr.contains(&named), "{}", refused.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_starting_at_once_on_a_new_postgres_database_all_start_and_agree_on_the_key() {
    if !postgres_available() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    let (_one, _two, _three) = tokio::join!(Fenix::start(&db, &[]), Fenix::start(&db, &[]), Fenix::start(&db, &[]));
    let other = run_fenix(&keys(&db, Some(KEY_B), None), &["serve"], TIMEOUT).await;
    assert!(!other.status.success() && other.stderr.contains("FENIX_MASTER_KEY"), "{}", other.stderr);
}
