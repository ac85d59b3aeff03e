//! The first complete path: ingest, sign, deliver, log — as a receiver sees it.

use std::time::Duration;

use serde_json::json;

use super::common::{
    attempts, node_accepts, python_accepts, secret_of, signing_crate_accepts, wait_for_status, Signed,
};
use crate::support::{eventually, signed_v1_by, Backend, Fenix, Plan, Receiver, TestDb};

async fn a_delivered_event_verifies_with_the_signing_crate(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let secret = ep["secret"].as_str().unwrap().to_string();
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    eventually("the receiver got the event", Duration::from_secs(10), || async { receiver.count() == 1 }).await;
    let got = &receiver.received()[0];
    assert_eq!(got.header("x-fenix-event-id"), evt["id"].as_str().unwrap());
    assert_eq!(got.header("idempotency-key"), evt["id"].as_str().unwrap());
    assert_eq!(got.json()["id"], evt["id"]);
    assert!(signed_v1_by(&secret, got), "signature verifies");
}

async fn every_request_verifies_in_python_and_node_written_from_the_contract(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    // The first request fails, so a retry (with a fresh timestamp and signature) is verified too.
    let receiver = Receiver::http(|n| if n == 0 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let secret = secret_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let payloads = [
        json!({"n": 1}),
        json!({"guest": "Zoë Ørsted", "note": "“quoted” \\ back\\slash \n newline", "emoji": "🦊"}),
        json!({"nested": {"list": [1, 2.5, null, true], "empty": {}}}),
    ];
    let mut ids = Vec::new();
    for data in &payloads {
        let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": data})).await;
        ids.push(evt["id"].as_str().unwrap().to_string());
    }
    for id in &ids {
        wait_for_status(&fenix, &app, id, "succeeded", Duration::from_secs(10)).await;
    }

    let received = receiver.received();
    assert_eq!(received.len(), payloads.len() + 1, "three events, one of them retried once");
    for r in &received {
        let signed = Signed::of(r);
        assert!(
            signing_crate_accepts(&secret, &signed),
            "the signing crate rejects {:?}",
            r.header("x-fenix-delivery-id")
        );
        assert!(python_accepts(&secret, &signed).await, "the Python verifier rejects a genuine request");
        assert!(node_accepts(&secret, &signed).await, "the Node verifier rejects a genuine request");
    }
    for (id, data) in ids.iter().zip(&payloads) {
        for r in received.iter().filter(|r| r.header("x-fenix-event-id") == id) {
            assert_eq!(r.json()["data"], *data, "the producer's data arrives unchanged");
        }
    }

    // The verifiers can say no: a tampered body, a wrong secret, a stale timestamp.
    let genuine = &received[1];
    let mut tampered_body = genuine.body.clone();
    let at = tampered_body.len() - 3;
    tampered_body[at] ^= 0x01;
    let tampered = Signed { body: &tampered_body, ..Signed::of(genuine) };
    assert!(!signing_crate_accepts(&secret, &tampered));
    assert!(!python_accepts(&secret, &tampered).await, "the Python verifier accepts a tampered body");
    assert!(!node_accepts(&secret, &tampered).await, "the Node verifier accepts a tampered body");
    let wrong_secret = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    assert!(!python_accepts(wrong_secret, &Signed::of(genuine)).await);
    assert!(!node_accepts(wrong_secret, &Signed::of(genuine)).await);
    let other_timestamp = (genuine.header("x-fenix-timestamp").parse::<i64>().unwrap() - 1).to_string();
    let moved = Signed { timestamp: &other_timestamp, ..Signed::of(genuine) };
    assert!(!python_accepts(&secret, &moved).await, "the signature must cover the timestamp");
    assert!(!node_accepts(&secret, &moved).await, "the signature must cover the timestamp");
}

async fn every_attempt_carries_the_wire_headers_and_the_same_body(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|n| if n < 2 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"room": 12}})).await;
    let event_id = evt["id"].as_str().unwrap();
    let delivery = wait_for_status(&fenix, &app, event_id, "succeeded", Duration::from_secs(10)).await;

    let received = receiver.received();
    assert_eq!(received.len(), 3);
    for r in &received {
        assert_eq!(r.method, "POST");
        assert_eq!(r.header("x-fenix-event-id"), event_id);
        assert_eq!(r.header("idempotency-key"), event_id);
        assert_eq!(r.json()["id"], event_id, "the body's id is the event id");
        assert_eq!(r.header("x-fenix-event-type"), "booking.confirmed");
        assert_eq!(r.json()["type"], "booking.confirmed");
        assert_eq!(r.header("content-type"), "application/json");
        assert!(r.header("user-agent").starts_with("Fenix-Webhooks/"), "user-agent {:?}", r.header("user-agent"));
        assert!(r.header("x-fenix-delivery-id").starts_with("att_"));
        assert!(r.header("x-fenix-signature").starts_with("v1="));
        assert!(r.header("x-fenix-timestamp").parse::<i64>().is_ok());
        assert_eq!(r.body, received[0].body, "the body is byte-for-byte the same on every attempt");
    }
    let sent_ids: Vec<&str> = received.iter().map(|r| r.header("x-fenix-delivery-id")).collect();
    let unique: std::collections::HashSet<_> = sent_ids.iter().collect();
    assert_eq!(unique.len(), 3, "a fresh X-Fenix-Delivery-Id per attempt: {sent_ids:?}");

    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    let logged_ids: Vec<&str> = logged.iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(logged_ids, sent_ids, "the log's attempt ids are the X-Fenix-Delivery-Id values sent, in order");
}

async fn a_new_event_is_sent_while_the_worker_is_idle(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let first = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    wait_for_status(&fenix, &app, first["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    // Nothing is due now: the worker waits. A new event must wake it.
    let second = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
    eventually("the second event arrives", Duration::from_secs(10), || async {
        receiver.received().iter().any(|r| r.header("x-fenix-event-id") == second["id"].as_str().unwrap())
    })
    .await;
}

crate::on_both_backends!(
    a_delivered_event_verifies_with_the_signing_crate,
    every_request_verifies_in_python_and_node_written_from_the_contract,
    every_attempt_carries_the_wire_headers_and_the_same_body,
    a_new_event_is_sent_while_the_worker_is_idle,
);
