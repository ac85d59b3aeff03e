//! The policy is checked again on every delivery, not only at registration:
//! an endpoint registered under an allowance that is later withdrawn is
//! refused before any request.

use std::time::Duration;

use serde_json::json;

use super::common::{endpoints, verifies, wait_for_attempts};
use crate::support::{delivery_of, dns::TestDns, eventually, Fenix, Plan, Receiver, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ip_endpoint_is_blocked_once_its_range_is_no_longer_allowed() {
    let db = TestDb::new(crate::support::Backend::Sqlite).await;
    let dns = TestDns::start().await;
    let server = dns.server();
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(
        &db,
        &[
            ("FENIX_UNSAFE_ALLOW_HTTP", "true"),
            ("FENIX_UNSAFE_ALLOW_CIDRS", "127.0.0.0/8"),
            ("FENIX_DNS_SERVERS", &server),
        ],
    )
    .await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let secret = ep["secret"].as_str().unwrap().to_string();

    let first = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    eventually("the first event arrived", Duration::from_secs(10), || async { receiver.count() == 1 }).await;
    assert_eq!(receiver.received()[0].header("x-fenix-event-id"), first["id"].as_str().unwrap());
    assert!(verifies(&secret, &receiver.received()[0]));

    // The outcome is written after the receipt: wait for it, so the kill below
    // does not leave the first delivery leased (it would then be re-sent, correctly,
    // and be blocked like the second).
    let first_id = first["id"].as_str().unwrap().to_string();
    eventually("the first delivery is logged as succeeded", Duration::from_secs(10), || async {
        delivery_of(&fenix, &app, &first_id).await["status"] == "succeeded"
    })
    .await;

    // The operator withdraws the allowance: same database, `http` still allowed, no ranges.
    fenix.kill9();
    drop(fenix);
    let fenix = Fenix::start(
        &db,
        &[
            ("FENIX_UNSAFE_ALLOW_HTTP", "true"),
            ("FENIX_UNSAFE_ALLOW_CIDRS", ""),
            ("FENIX_DNS_SERVERS", &server),
            ("FENIX_RETRY_SCHEDULE", "1500ms,1500ms,1500ms,1500ms"),
        ],
    )
    .await;
    assert_eq!(endpoints(&fenix, &app).await.len(), 1, "the endpoint is still registered");

    let second = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
    let second = second["id"].as_str().unwrap();
    let (delivery, attempts) = wait_for_attempts(&fenix, &app, second, 1).await;
    assert_eq!(attempts[0]["error"], "destination_blocked", "{attempts:?}");
    assert!(attempts[0]["response_status"].is_null(), "{attempts:?}");
    assert_eq!(delivery["status"], "pending", "retried on the normal schedule: {delivery}");
    let (_, attempts) = wait_for_attempts(&fenix, &app, second, 2).await;
    assert!(attempts.iter().all(|a| a["error"] == "destination_blocked"), "{attempts:?}");
    assert_eq!(receiver.count(), 1, "no request reached the receiver");
    assert_eq!(delivery_of(&fenix, &app, first["id"].as_str().unwrap()).await["status"], "succeeded");
}
