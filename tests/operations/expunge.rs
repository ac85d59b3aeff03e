//! Erasure on request: `POST …/events/{evt}/expunge` removes one event's
//! payload from every answer and, on SQLite, from the database's files; its
//! deliveries still to be sent are not sent (`payload_erased`), none can be
//! replayed, and an app can erase only its own events.

use serde_json::{json, Value};

use super::common::{id_of, wait_for_delivery, wait_for_requests, PATIENCE};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// Reshapes the payload, so that a delivery stores a transformed request that carries the marker.
const RESHAPE: &str = r#"function handler(webhook) {
    webhook.payload = { shaped: webhook.payload.data.secret };
    return webhook;
}"#;

/// The raw bytes of the SQLite database and its write-ahead log.
fn sqlite_bytes(db: &TestDb) -> Vec<u8> {
    let mut bytes = std::fs::read(db.path("fenix.db")).expect("database file");
    bytes.extend(std::fs::read(db.path("fenix.db-wal")).unwrap_or_default());
    bytes
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// How many rows of the test's database `sql` (a `COUNT(*)`) counts.
async fn count(db: &TestDb, sql: &str) -> String {
    db.texts(&format!("SELECT CAST(({sql}) AS TEXT)"), &[]).await.remove(0)
}

async fn an_expunged_payload_is_gone_from_every_answer_and_from_the_database(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let plain = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let shaped = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url, "transformation": RESHAPE})).await);
    let marker = format!("ERASE-ME-{}", uuid_like());
    // Longer than a database page: the tail goes to overflow pages, which an erasure frees.
    let data = json!({"secret": marker, "notes": "x".repeat(6000), "again": marker});
    let sent = fenix.send_event(&app, json!({"type": "guest.checked_in", "data": data})).await;
    let event = id_of(&sent);
    wait_for_delivery(&fenix, &app, &event, &plain, "succeeded").await;
    let transformed = id_of(&wait_for_delivery(&fenix, &app, &event, &shaped, "succeeded").await);
    let request = format!("/v1/apps/{app}/deliveries/{transformed}/request");
    let (status, stored) = fenix.call("GET", &request, None).await;
    assert_eq!((status, stored["payload"]["shaped"].as_str()), (200, Some(marker.as_str())), "{stored}");
    if backend == Backend::Sqlite {
        assert!(holds(&sqlite_bytes(&db), &marker), "the marker is in the files before (the check can see it)");
    }

    let (status, erased) = fenix.call("POST", &format!("/v1/apps/{app}/events/{event}/expunge"), None).await;
    assert_eq!(status, 200, "{erased}");
    assert_eq!(erased["data"], Value::Null, "{erased}");
    assert!(erased.get("data").is_some(), "data is answered, as null: {erased}");
    assert!(erased["expunged_at"].is_string(), "{erased}");
    assert_eq!(erased["payload_sha256"], sent["payload_sha256"], "the digest stays");
    assert_eq!((erased["type"].as_str(), erased["deliveries"].as_i64()), (Some("guest.checked_in"), Some(2)));

    for path in [format!("/v1/apps/{app}/events/{event}"), format!("/v1/apps/{app}/events/{event}?include=payload")] {
        let (status, read) = fenix.call("GET", &path, None).await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(read, erased, "{path} answers as the erasure did");
    }
    let (_, page) = fenix.call("GET", &format!("/v1/apps/{app}/events?include=payload"), None).await;
    assert_eq!(page["data"][0]["data"], Value::Null, "{page}");
    assert_eq!(page["data"][0]["expunged_at"], erased["expunged_at"], "{page}");
    let (status, gone) = fenix.call("GET", &request, None).await;
    assert_eq!((status, gone["error"]["code"].as_str()), (404, Some("not_transformed")), "{gone}");
    let (_, log) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?event_id={event}"), None).await;
    assert_eq!(log["data"].as_array().unwrap().len(), 2, "the delivery log stays: {log}");
    assert!(!log.to_string().contains(&marker), "{log}");

    // Erasing again changes nothing.
    let (status, again) = fenix.call("POST", &format!("/v1/apps/{app}/events/{event}/expunge"), None).await;
    assert_eq!((status, &again), (200, &erased));

    assert_eq!(count(&db, "SELECT COUNT(*) FROM events WHERE payload IS NOT NULL").await, "0");
    let sql = "SELECT COUNT(*) FROM deliveries WHERE transformed_request IS NOT NULL OR transformed_body IS NOT NULL";
    assert_eq!(count(&db, sql).await, "0");
    if backend == Backend::Sqlite {
        assert!(!holds(&sqlite_bytes(&db), &marker), "the erased bytes are overwritten in the database and its log");
    }
}

/// A random-enough text for a marker no other test writes.
fn uuid_like() -> String {
    format!("{:x}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos())
}

async fn a_delivery_waiting_for_its_retry_is_not_sent_once_its_payload_is_erased(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1h")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let event = id_of(&fenix.send_event(&app, json!({"type": "guest.checked_in", "data": {"n": 1}})).await);
    wait_for_requests(&receiver, 1).await;
    let waiting = wait_for_delivery(&fenix, &app, &event, &ep, "pending").await;
    assert!(waiting["next_attempt_at"].is_string(), "{waiting}");
    receiver.set_behaviour(|_| Plan::ok());

    let (status, erased) = fenix.call("POST", &format!("/v1/apps/{app}/events/{event}/expunge"), None).await;
    assert_eq!(status, 200, "{erased}");
    let skipped = wait_for_delivery(&fenix, &app, &event, &ep, "skipped").await;
    assert_eq!(skipped["skip_reason"], "payload_erased", "{skipped}");
    assert_eq!(skipped["attempt_count"], 1, "no attempt was made after the erasure: {skipped}");
    assert_eq!(receiver.count(), 1, "nothing was sent after the erasure");
    let (status, refused) =
        fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{}/replay", id_of(&skipped)), None).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("payload_expired")), "{refused}");
    let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/replay"), None).await;
    assert_eq!((status, out["replayed"].as_i64()), (200, Some(0)), "{out}");
    assert_eq!(receiver.count(), 1, "a replay sends nothing either");
}

async fn an_app_cannot_expunge_another_apps_event(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let owner = fenix.create_app("owner").await;
    let other = fenix.create_app("other").await;
    let event = id_of(&fenix.send_event(&owner, json!({"type": "guest.checked_in", "data": {"kept": true}})).await);
    let (status, refused) = fenix.call("POST", &format!("/v1/apps/{other}/events/{event}/expunge"), None).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (404, Some("event_not_found")), "{refused}");
    let body = json!({"name": "other-manage", "app": other, "access": "manage"});
    let (status, token) = fenix.call("POST", "/v1/tokens", Some(body)).await;
    assert_eq!(status, 201, "{token}");
    let path = format!("/v1/apps/{owner}/events/{event}/expunge");
    let (status, refused) = fenix.call_as(token["token"].as_str(), "POST", &path, None).await;
    assert!(status == 403 || status == 404, "another app's token cannot reach it: {status} {refused}");
    eventually("the event is read", PATIENCE, || async {
        let (_, kept) = fenix.call("GET", &format!("/v1/apps/{owner}/events/{event}?include=payload"), None).await;
        kept["data"] == json!({"kept": true}) && kept.get("expunged_at").is_none()
    })
    .await;
}

crate::on_both_backends!(
    an_expunged_payload_is_gone_from_every_answer_and_from_the_database,
    a_delivery_waiting_for_its_retry_is_not_sent_once_its_payload_is_erased,
    an_app_cannot_expunge_another_apps_event,
);
