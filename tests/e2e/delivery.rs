//! The first complete path: ingest, sign, deliver, log.

use serde_json::json;

use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};
use std::time::Duration;

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
    let req = fenix_signing::SignedRequest {
        scheme: fenix_signing::Scheme::FenixV1,
        timestamp: got.header("x-fenix-timestamp"),
        signature_header: got.header("x-fenix-signature"),
        msg_id: None,
        body: &got.body,
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    fenix_signing::verify(&req, &[&secret], fenix_signing::DEFAULT_TOLERANCE, now).expect("signature verifies");
}

crate::on_both_backends!(a_delivered_event_verifies_with_the_signing_crate);
