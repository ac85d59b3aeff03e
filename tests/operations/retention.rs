//! Retention: payloads older than `FENIX_PAYLOAD_RETENTION` are purged (the
//! digest and metadata stay, replay is refused with `payload_expired`), and
//! `FENIX_LOG_RETENTION` removes old terminal deliveries with their attempts.

use serde_json::{json, Value};

use super::common::{ep_path, id_of, send_events, wait_for_delivery, wait_for_requests, PATIENCE};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

async fn a_purged_payload_keeps_its_digest_and_cannot_be_replayed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(
        &db,
        &[("FENIX_PAYLOAD_RETENTION", "1s"), ("FENIX_MAINTENANCE_INTERVAL", "200ms"), ("FENIX_RETRY_SCHEDULE", "50ms")],
    )
    .await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let ingested = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"guest": "Ada"}})).await;
    let event = id_of(&ingested);
    let failed = wait_for_delivery(&fenix, &app, &event, &ep, "failed").await;

    let path = format!("/v1/apps/{app}/events/{event}?include=payload");
    eventually("the payload is purged", PATIENCE, || async {
        fenix.call("GET", &path, None).await.1["payload_purged"] == true
    })
    .await;
    let (status, purged) = fenix.call("GET", &path, None).await;
    assert_eq!(status, 200, "{purged}");
    assert!(purged.get("data").is_none(), "purged data is still answered: {purged}");
    assert_eq!(purged["payload_sha256"], ingested["payload_sha256"], "the digest stays");
    assert_eq!(purged["type"], "booking.confirmed");
    assert_eq!(purged["deliveries"], 1);

    let sent = receiver.count();
    receiver.set_behaviour(|_| Plan::ok());
    let (status, refused) =
        fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{}/replay", id_of(&failed)), None).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "payload_expired");
    let (status, out) = fenix.call("POST", &ep_path(&app, &ep, "/replay"), None).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["replayed"], 0, "{out}");
    assert_eq!(out["skipped_payload_expired"], 1, "{out}");
    assert_eq!(receiver.count(), sent, "nothing was sent again");
}

async fn old_finished_deliveries_and_their_attempts_leave_the_log_while_waiting_ones_stay(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(
        &db,
        &[("FENIX_LOG_RETENTION", "1s"), ("FENIX_MAINTENANCE_INTERVAL", "200ms"), ("FENIX_RETRY_SCHEDULE", "1h")],
    )
    .await;
    let down = Receiver::http(|_| Plan::status(500)).await;
    let up = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let waiting_ep = id_of(&fenix.create_endpoint(&app, json!({"url": down.url, "event_types": ["slow.*"]})).await);
    let done_ep = id_of(&fenix.create_endpoint(&app, json!({"url": up.url, "event_types": ["fast.*"]})).await);

    let slow = send_events(&fenix, &app, "slow.thing", 1).await.remove(0);
    wait_for_requests(&down, 1).await;
    let waiting = wait_for_delivery(&fenix, &app, &slow, &waiting_ep, "pending").await;
    let fast = send_events(&fenix, &app, "fast.thing", 1).await.remove(0);
    let done = id_of(&wait_for_delivery(&fenix, &app, &fast, &done_ep, "succeeded").await);

    eventually("the finished delivery leaves the log", PATIENCE, || async {
        fenix.deliveries(&app, &format!("endpoint_id={done_ep}")).await.is_empty()
    })
    .await;
    let (status, gone) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{done}"), None).await;
    assert_eq!(status, 404, "{gone}");
    assert_eq!(gone["error"]["code"], "delivery_not_found");
    let (status, _) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{done}/attempts"), None).await;
    assert_eq!(status, 404, "the attempts went with their delivery");

    let kept: Vec<Value> = fenix.deliveries(&app, &format!("endpoint_id={waiting_ep}")).await;
    assert_eq!(kept.len(), 1, "a delivery still waiting for its retry is kept");
    assert_eq!(kept[0]["id"], waiting["id"]);
    assert_eq!(kept[0]["status"], "pending");
}

crate::on_both_backends!(
    a_purged_payload_keeps_its_digest_and_cannot_be_replayed,
    old_finished_deliveries_and_their_attempts_leave_the_log_while_waiting_ones_stay,
);
