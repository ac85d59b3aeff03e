//! Hostile receivers: whatever bytes a receiver answers, its attempts are
//! logged safely and every other tenant's deliveries go on. PostgreSQL refuses
//! NUL in text; one binary answer once stopped every outcome from being recorded.

use std::time::Duration;

use serde_json::json;

use super::common::{attempts, wait_for_status};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// A binary answer: NUL bytes and invalid UTF-8 around some text.
const BINARY: &[u8] = b"\0\x01ok\xff\xfe\0{\"a\":1}\xc3\0";
/// What the log shows of it: each NUL and each invalid sequence is U+FFFD.
const SHOWN: &str = "\u{FFFD}\u{1}ok\u{FFFD}\u{FFFD}\u{FFFD}{\"a\":1}\u{FFFD}\u{FFFD}";

async fn a_binary_answer_is_logged_safely_and_other_tenants_keep_receiving(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let binary_ok = Receiver::http(|_| Plan::status(200).with_bytes(BINARY)).await;
    let binary_error = Receiver::http(|_| Plan::status(500).with_bytes(BINARY)).await;
    let normal = Receiver::http(|_| Plan::ok()).await;
    let hostile = fenix.create_app("hostile").await;
    fenix.create_endpoint(&hostile, json!({"url": binary_ok.url, "event_types": ["ok.*"]})).await;
    fenix.create_endpoint(&hostile, json!({"url": binary_error.url, "event_types": ["error.*"]})).await;
    let other = fenix.create_app("other").await;
    fenix.create_endpoint(&other, json!({"url": normal.url})).await;

    let ok_evt = fenix.send_event(&hostile, json!({"type": "ok.sent", "data": {}})).await;
    let err_evt = fenix.send_event(&hostile, json!({"type": "error.sent", "data": {}})).await;
    eventually("both binary receivers were called", Duration::from_secs(10), || async {
        binary_ok.count() >= 1 && binary_error.count() >= 1
    })
    .await;
    // Sent after the binary answers arrived: recorded only if the engine still records.
    let mut later = Vec::new();
    for n in 0..5 {
        later.push(fenix.send_event(&other, json!({"type": "t.sent", "data": {"n": n}})).await);
    }

    let ok =
        wait_for_status(&fenix, &hostile, ok_evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    let ok_attempts = attempts(&fenix, &hostile, ok["id"].as_str().unwrap()).await;
    assert_eq!(ok_attempts.len(), 1, "{ok_attempts:?}");
    assert_eq!(ok_attempts[0]["response_status"], 200);
    assert_eq!(ok_attempts[0]["response_excerpt"], SHOWN);
    assert!(ok_attempts[0]["error"].is_null());

    let err_id = super::common::deliveries_of(&fenix, &hostile, err_evt["id"].as_str().unwrap()).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    eventually("the 500 with a binary body was retried and both attempts logged", Duration::from_secs(20), || async {
        attempts(&fenix, &hostile, &err_id).await.len() >= 2
    })
    .await;
    for a in attempts(&fenix, &hostile, &err_id).await {
        assert_eq!(a["response_status"], 500, "{a}");
        assert_eq!(a["error"], "http_status", "{a}");
        assert_eq!(a["response_excerpt"], SHOWN, "{a}");
    }

    for evt in &later {
        wait_for_status(&fenix, &other, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    }
    assert_eq!(normal.count(), later.len(), "each event of the other tenant delivered once");
}

async fn a_huge_binary_answer_is_cut_to_a_storable_excerpt(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    // 1 MiB of NUL and invalid UTF-8; only the first 4 KiB are read.
    let body: Vec<u8> = (0..1 << 20).map(|i| if i % 2 == 0 { 0 } else { 0xff }).collect();
    let receiver = Receiver::http(move |_| Plan::status(200).with_bytes(&body)).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "t.sent", "data": {}})).await;
    let d = wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    let excerpt = attempts(&fenix, &app, d["id"].as_str().unwrap()).await[0]["response_excerpt"]
        .as_str()
        .expect("an excerpt")
        .to_string();
    assert!(!excerpt.is_empty() && excerpt.len() <= 4096, "{} bytes", excerpt.len());
    assert!(excerpt.chars().all(|c| c == '\u{FFFD}'), "every byte shown as U+FFFD");
}

async fn readiness_answers_ready_without_a_token(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let resp = reqwest::get(format!("{}/readyz", fenix.base)).await.expect("readyz");
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.json::<serde_json::Value>().await.unwrap(), json!({"status": "ready"}));
    let metrics = fenix.request("GET", "/metrics").send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("\nfenix_worker_stalled 0\n"), "{metrics}");
    assert!(metrics.contains("\nfenix_worker_seconds_since_progress "), "{metrics}");
}

crate::on_both_backends!(
    a_binary_answer_is_logged_safely_and_other_tenants_keep_receiving,
    a_huge_binary_answer_is_cut_to_a_storable_excerpt,
    readiness_answers_ready_without_a_token,
);

/// PostgreSQL: a recorder that cannot write (here every attempt insert fails
/// with an "unavailable" error, raised by a trigger) makes `/readyz` answer 503
/// and `fenix_worker_stalled` 1 after `FENIX_WORKER_STALL_AFTER`; both recover
/// when the database takes writes again, and the held outcome is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_recorder_makes_the_instance_unready_until_it_writes_again() {
    if !crate::support::db::postgres_available() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    let fenix = Fenix::start(&db, &[("FENIX_WORKER_STALL_AFTER", "1s")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url).await.expect("connect");
    for sql in [
        "CREATE FUNCTION refuse_attempts() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'the test refuses writes' USING ERRCODE = '57P03'; END $$",
        "CREATE TRIGGER refuse_attempts BEFORE INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION refuse_attempts()",
    ] {
        sqlx::query(sql).execute(&mut conn).await.expect(sql);
    }
    let evt = fenix.send_event(&app, json!({"type": "t.sent", "data": {}})).await;
    let readyz = || async {
        let resp = reqwest::get(format!("{}/readyz", fenix.base)).await.expect("readyz");
        (resp.status().as_u16(), resp.json::<serde_json::Value>().await.unwrap())
    };
    eventually("/readyz reports the stalled worker", Duration::from_secs(20), || async {
        let (status, body) = readyz().await;
        status == 503 && body["error"]["code"] == "worker_stalled"
    })
    .await;
    let metrics = fenix.request("GET", "/metrics").send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("\nfenix_worker_stalled 1\n"), "{metrics}");

    sqlx::query("DROP TRIGGER refuse_attempts ON attempts").execute(&mut conn).await.expect("drop trigger");
    wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    eventually("/readyz is ready again", Duration::from_secs(10), || async { readyz().await.0 == 200 }).await;
    assert_eq!(receiver.count(), 1, "the held outcome was recorded, not sent again");
}

/// The attempt timeout covers the destination re-check before each attempt (a
/// fresh DNS resolution): a name server that never answers costs one attempt
/// timeout, recorded as a `timeout` that lasted that long, and the worker keeps
/// delivering to other endpoints meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_server_that_never_answers_costs_one_attempt_timeout() {
    let db = TestDb::new(Backend::Sqlite).await;
    let dns = crate::support::dns::TestDns::with_zone(&[
        ("slow.dest-test.com", &["127.0.0.1"]),
        ("fine.dest-test.com", &["127.0.0.1"]),
    ])
    .await;
    let server = dns.server();
    let fenix = Fenix::start(
        &db,
        &[("FENIX_DNS_SERVERS", &server), ("FENIX_ATTEMPT_TIMEOUT", "1s"), ("FENIX_WORKER_CONCURRENCY", "2")],
    )
    .await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let port = receiver.url.rsplit(':').next().unwrap().to_string();
    let app = fenix.create_app("acme").await;
    let slow_url = format!("http://slow.dest-test.com:{port}");
    fenix.create_endpoint(&app, json!({"url": slow_url, "event_types": ["slow.*"]})).await;
    fenix
        .create_endpoint(&app, json!({"url": format!("http://fine.dest-test.com:{port}"), "event_types": ["fine.*"]}))
        .await;
    // Registered while the name answered; from now on its name server is silent.
    dns.hang("slow.dest-test.com");

    let slow = fenix.send_event(&app, json!({"type": "slow.sent", "data": {}})).await;
    let slow_id = super::common::deliveries_of(&fenix, &app, slow["id"].as_str().unwrap()).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut fine = Vec::new();
    for n in 0..6 {
        fine.push(fenix.send_event(&app, json!({"type": "fine.sent", "data": {"n": n}})).await);
    }
    for evt in &fine {
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    }
    eventually("the slow destination's first attempt is logged", Duration::from_secs(30), || async {
        !attempts(&fenix, &app, &slow_id).await.is_empty()
    })
    .await;
    let first = attempts(&fenix, &app, &slow_id).await.remove(0);
    assert_eq!(first["error"], "timeout", "{first}");
    assert!(first["duration_ms"].as_i64().unwrap() >= 1000, "the whole wait is counted: {first}");
    assert!(first["response_status"].is_null());
    assert!(dns.queries_for("slow.dest-test.com") > 0, "the name was asked");
    assert_eq!(receiver.count(), fine.len(), "only the fine destination's requests arrived");
}

/// `FENIX_HOST_CONCURRENCY` bounds the requests in flight to one destination
/// host over all its endpoints (a tenant with many endpoints on one host cannot
/// flood it); the deliveries over the limit wait and all succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_to_one_host_stay_within_the_host_limit_over_all_its_endpoints() {
    const ENDPOINTS: usize = 6;
    const EVENTS: usize = 4;
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_HOST_CONCURRENCY", "2")]).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(100))).await;
    let app = fenix.create_app("acme").await;
    for k in 0..ENDPOINTS {
        fenix.create_endpoint(&app, json!({"url": format!("{}/{k}", receiver.url)})).await;
    }
    for n in 0..EVENTS {
        fenix.send_event(&app, json!({"type": "t.sent", "data": {"n": n}})).await;
    }
    eventually("every delivery succeeded", Duration::from_secs(60), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == ENDPOINTS * EVENTS
    })
    .await;
    assert_eq!(receiver.count(), ENDPOINTS * EVENTS, "each delivery sent once");
    assert!(receiver.max_concurrent() <= 2, "at most 2 requests at once, saw {}", receiver.max_concurrent());
    assert_eq!(receiver.max_concurrent(), 2, "the limit, not less, is used");
}
