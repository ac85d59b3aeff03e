//! Issue 16: find what a receiver reported. A receiver logs
//! `X-Fenix-Delivery-Id` (an attempt id) and `X-Fenix-Event-Id`;
//! `GET /v1/apps/{app}/attempts/{att}` answers that attempt with its delivery,
//! and the delivery log filters by `event_id` and by `event_type`.

use std::time::Duration;

use serde_json::json;

use super::common::wait_for_status;
use crate::support::{id_of, Backend, Fenix, Plan, Receiver, TestDb};

const PATIENCE: Duration = Duration::from_secs(10);

async fn an_attempt_id_a_receiver_logged_finds_that_attempt_and_its_delivery(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms")]).await;
    // The first request fails, the retry succeeds: two attempt ids for one delivery.
    let receiver = Receiver::http(|n| if n == 0 { Plan::status(503).with_body("busy") } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let event = id_of(&fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await);
    let delivery = wait_for_status(&fenix, &app, &event, "succeeded", PATIENCE).await;

    let logged = receiver.received();
    assert_eq!(logged.len(), 2, "one failure, one success");
    for (n, r) in logged.iter().enumerate() {
        let att = r.header("x-fenix-delivery-id");
        let (status, found) = fenix.call("GET", &format!("/v1/apps/{app}/attempts/{att}"), None).await;
        assert_eq!(status, 200, "{found}");
        assert_eq!(found["id"], att, "{found}");
        assert_eq!(found["attempt_number"], n as i64 + 1);
        assert_eq!(found["response_status"], if n == 0 { 503 } else { 200 });
        let d = &found["delivery"];
        assert_eq!(d["id"], delivery["id"], "{found}");
        assert_eq!(d["event_id"], r.header("x-fenix-event-id"), "the delivery names the event the receiver got");
        assert_eq!(
            (d["endpoint_id"].as_str(), d["event_type"].as_str()),
            (Some(ep.as_str()), Some("booking.confirmed"))
        );
        assert_eq!(d["status"], "succeeded");
        // The app uid works as in every other path.
        let (status, _) = fenix.call("GET", &format!("/v1/apps/acme/attempts/{att}"), None).await;
        assert_eq!(status, 200);
    }

    // Another app's path, an unknown id: the same 404, nothing of the attempt shown.
    let other = fenix.create_app("globex").await;
    let att = logged[0].header("x-fenix-delivery-id");
    for path in
        [format!("/v1/apps/{other}/attempts/{att}"), format!("/v1/apps/{app}/attempts/att_01JZZZZZZZZZZZZZZZZZZZZZZZ")]
    {
        let (status, body) = fenix.call("GET", &path, None).await;
        assert_eq!((status, body["error"]["code"].as_str()), (404, Some("attempt_not_found")), "{path}: {body}");
    }
    let (status, body) = fenix.call("GET", &format!("/v1/apps/nope/attempts/{att}"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("app_not_found")), "{body}");
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/attempts/{att}?x=1"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_query")), "{body}");
}

async fn the_delivery_log_filters_by_event_type_and_event_id_with_cursors_bound_to_the_filters(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep_all = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let ep_orders = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url, "event_types": ["order.*"]})).await);
    let mut orders = Vec::new();
    for i in 0..5 {
        orders.push(id_of(&fenix.send_event(&app, json!({"type": "order.paid", "data": {"i": i}})).await));
        fenix.send_event(&app, json!({"type": "user.created", "data": {"i": i}})).await;
    }

    let paid = fenix.deliveries(&app, "event_type=order.paid").await;
    assert_eq!(paid.len(), 10, "5 events to two endpoints");
    assert!(paid.iter().all(|d| d["event_type"] == "order.paid"), "{paid:?}");
    assert_eq!(fenix.deliveries(&app, "type=user.created").await.len(), 5, "`type` is the same filter");
    assert!(fenix.deliveries(&app, "event_type=order").await.is_empty(), "exact, not a prefix");
    let one = fenix.deliveries(&app, &format!("event_id={}", orders[2])).await;
    let mut endpoints: Vec<&str> = one.iter().map(|d| d["endpoint_id"].as_str().unwrap()).collect();
    endpoints.sort();
    let mut want = vec![ep_all.as_str(), ep_orders.as_str()];
    want.sort();
    assert_eq!(endpoints, want, "{one:?}");
    let both = fenix.deliveries(&app, &format!("event_type=order.paid&endpoint_id={ep_orders}")).await;
    assert_eq!(both.len(), 5);

    // Pages of 3 add up to the whole filtered list; the cursor is bound to the filter.
    let base = format!("/v1/apps/{app}/deliveries?limit=3&event_type=order.paid");
    let (status, first) = fenix.call("GET", &base, None).await;
    assert_eq!(status, 200, "{first}");
    let cursor = first["next_cursor"].as_str().expect("more pages").to_string();
    let mut seen: Vec<String> = first["data"].as_array().unwrap().iter().map(id_of).collect();
    let mut next = Some(cursor.clone());
    while let Some(c) = next {
        let (status, page) = fenix.call("GET", &format!("{base}&cursor={c}"), None).await;
        assert_eq!(status, 200, "{page}");
        seen.extend(page["data"].as_array().unwrap().iter().map(id_of));
        next = page["next_cursor"].as_str().map(str::to_string);
    }
    let mut all: Vec<String> = paid.iter().map(id_of).collect();
    all.sort_by(|a, b| b.cmp(a));
    assert_eq!(seen, all, "newest first, no gaps or repeats");
    for other in ["event_type=user.created", "type=user.created", ""] {
        let path = format!("/v1/apps/{app}/deliveries?limit=3&{other}&cursor={cursor}");
        let (status, body) = fenix.call("GET", &path, None).await;
        assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_cursor")), "{path}: {body}");
    }
}

crate::on_both_backends!(
    an_attempt_id_a_receiver_logged_finds_that_attempt_and_its_delivery,
    the_delivery_log_filters_by_event_type_and_event_id_with_cursors_bound_to_the_filters,
);
