//! Failed attempts: retries on the configured schedule, the dead-letter state,
//! and how each kind of failure is logged (status, redirect, timeout, excerpt).

use std::time::Duration;

use serde_json::json;

use super::common::{attempts, wait_for_status};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

async fn a_receiver_failing_twice_gets_a_third_attempt(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|n| if n < 2 { Plan::status(500).with_body("down") } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery =
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    assert_eq!(delivery["attempt_count"], 3);
    assert_eq!(receiver.count(), 3);
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 3, "three attempts logged: {logged:?}");
    for (i, a) in logged.iter().enumerate() {
        assert_eq!(a["attempt_number"], i as i64 + 1);
        assert_eq!(a["delivery_id"], delivery["id"]);
    }
    for failed in &logged[..2] {
        assert_eq!(failed["error"], "http_status");
        assert_eq!(failed["response_status"], 500);
        assert_eq!(failed["response_excerpt"], "down");
    }
    assert_eq!(logged[2]["error"], serde_json::Value::Null);
    assert_eq!(logged[2]["response_status"], 200);
}

async fn an_always_failing_receiver_leaves_the_delivery_failed_after_the_last_attempt(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery = wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "failed", Duration::from_secs(10)).await;
    assert_eq!(delivery["attempt_count"], 2, "one wait in the schedule means two attempts in all");
    assert_eq!(delivery["next_attempt_at"], serde_json::Value::Null, "a failed delivery is not scheduled again");
    assert_eq!(receiver.count(), 2, "exactly two requests");
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 2);
    assert!(logged.iter().all(|a| a["error"] == "http_status" && a["response_status"] == 500), "{logged:?}");
}

async fn a_redirect_is_a_failed_attempt_and_is_not_followed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let elsewhere = Receiver::http(|_| Plan::ok()).await;
    let location = elsewhere.url.clone();
    let receiver = Receiver::http(move |_| Plan::status(302).with_header("location", &location)).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery = wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "failed", Duration::from_secs(10)).await;
    assert_eq!(receiver.count(), 2);
    assert_eq!(elsewhere.count(), 0, "the redirect target got a request");
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 2);
    for a in &logged {
        assert_eq!(a["error"], "redirect");
        assert_eq!(a["response_status"], 302);
    }
}

async fn a_slow_receiver_is_a_timeout(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_ATTEMPT_TIMEOUT", "500ms"), ("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_secs(5))).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery = wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "failed", Duration::from_secs(10)).await;
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 2);
    for a in &logged {
        assert_eq!(a["error"], "timeout", "{a}");
        assert_eq!(a["response_status"], serde_json::Value::Null);
    }
}

async fn the_response_excerpt_is_capped_at_4096_bytes(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let big = "x".repeat(1024 * 1024);
    let receiver = Receiver::http(move |_| Plan::status(200).with_body(big.clone())).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery =
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 1);
    let excerpt = logged[0]["response_excerpt"].as_str().expect("an excerpt is kept");
    assert_eq!(excerpt.len(), 4096, "the excerpt keeps the first 4096 bytes");
    assert!(excerpt.bytes().all(|b| b == b'x'));
}

async fn the_response_excerpt_is_capped_even_when_the_cut_falls_inside_a_character(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    // "€" is three bytes: 4096 is not a multiple of three, so the cut lands inside one.
    let big = "€".repeat(350_000);
    let receiver = Receiver::http(move |_| Plan::status(200).with_body(big.clone())).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery =
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    assert_eq!(delivery["attempt_count"], 1);
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 1);
    let excerpt = logged[0]["response_excerpt"].as_str().expect("an excerpt is kept");
    assert!(excerpt.len() <= 4096, "excerpt of {} bytes", excerpt.len());
    assert!(excerpt.starts_with("€€€"));
}

crate::on_both_backends!(
    a_receiver_failing_twice_gets_a_third_attempt,
    an_always_failing_receiver_leaves_the_delivery_failed_after_the_last_attempt,
    a_redirect_is_a_failed_attempt_and_is_not_followed,
    a_slow_receiver_is_a_timeout,
    the_response_excerpt_is_capped_at_4096_bytes,
    the_response_excerpt_is_capped_even_when_the_cut_falls_inside_a_character,
);
