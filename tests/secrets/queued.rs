//! A rotation without overlap retires the old secret at once, also for
//! deliveries already claimed and waiting behind their endpoint's running
//! attempt: an attempt signs with the secrets live when it is signed, not with
//! those loaded when its batch was claimed.

use std::time::Duration;

use fenix_signing::VerifyError;
use serde_json::json;

use super::{
    common::{request_for, rotate, send, signed_with, verify},
    support::{eventually, Backend, Fenix, Plan, Receiver, TestDb},
};

async fn queued_deliveries_sign_with_the_new_secret_only_after_a_rotation_without_overlap(backend: Backend) {
    let db = TestDb::new(backend).await;
    // One attempt at a time to the endpoint, each answered slowly: the other
    // deliveries wait, claimed, in the worker's queue for that endpoint.
    let fenix = Fenix::start(&db, &[("FENIX_ENDPOINT_CONCURRENCY", "1")]).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(1500))).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let (ep, old) = (ep["id"].as_str().unwrap().to_string(), ep["secret"].as_str().unwrap().to_string());
    let mut events = Vec::new();
    for n in 0..3 {
        events.push(send(&fenix, &app, n).await);
    }
    eventually("the first request is in flight", Duration::from_secs(10), || async { receiver.count() >= 1 }).await;

    let rotated = rotate(&fenix, &app, &ep, json!({"overlap_seconds": 0})).await;
    let new = rotated["secret"].as_str().unwrap().to_string();

    eventually("every event arrived", Duration::from_secs(30), || async { receiver.count() >= events.len() }).await;
    let received = receiver.received();
    let first = &received[0];
    assert!(verify(first, &[&old]).is_ok(), "the request in flight at the rotation was signed before it");
    for event in events.iter().filter(|e| first.header("x-fenix-event-id") != e.as_str()) {
        let request = request_for(&received, event);
        assert!(verify(request, &[&new]).is_ok(), "a queued delivery verifies with the new secret");
        assert_eq!(verify(request, &[&old]), Err(VerifyError::NoMatch), "and not with the retired one");
        assert_eq!(signed_with(&fenix, &app, event, &ep).await, json!([2]));
    }
}

crate::on_both_backends!(queued_deliveries_sign_with_the_new_secret_only_after_a_rotation_without_overlap);
