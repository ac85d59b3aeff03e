//! Per-endpoint rate limits: `rate_limit_per_sec` spaces the requests out.

use std::time::Duration;

use serde_json::json;

use super::common::{id_of, send_events, wait_for_count, wait_for_requests};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

async fn an_endpoint_limited_to_5_per_second_receives_10_events_over_at_least_1_6_seconds(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let limited = Receiver::http(|_| Plan::ok()).await;
    let free = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let created = fenix.create_endpoint(&app, json!({"url": limited.url, "rate_limit_per_sec": 5})).await;
    assert_eq!(created["rate_limit_per_sec"], 5);
    let ep = id_of(&created);
    let free_ep = id_of(&fenix.create_endpoint(&app, json!({"url": free.url})).await);

    send_events(&fenix, &app, "booking.confirmed", 10).await;
    wait_for_count(&fenix, &app, &ep, "succeeded", 10).await;
    wait_for_count(&fenix, &app, &free_ep, "succeeded", 10).await;
    let received = wait_for_requests(&limited, 10).await;
    assert_eq!(received.len(), 10);
    let first = received.iter().map(|r| r.at).min().unwrap();
    let last = received.iter().map(|r| r.at).max().unwrap();
    let span = last - first;
    assert!(span >= Duration::from_millis(1600), "10 requests at 5/s took only {span:?}");
    assert_eq!(free.count(), 10, "the endpoint without a limit got every event too");
}

crate::on_both_backends!(an_endpoint_limited_to_5_per_second_receives_10_events_over_at_least_1_6_seconds);
