//! Batch ingestion (`POST /v1/apps/{app}/events/batch`) as a producer sees it:
//! all stored with their deliveries or none, each event with its own key, the
//! answer in the request's order, a bad event refusing the batch by its index.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::{io::AsyncWriteExt, net::TcpStream};

use crate::support::{event_count, eventually, signed_v1_by, Backend, Fenix, Plan, Receiver, TestDb};

async fn batch(fenix: &Fenix, app: &str, body: Value) -> (u16, Value) {
    fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(body)).await
}

async fn a_batch_is_stored_whole_and_delivered_signed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "event_types": ["order.*"]})).await;
    let secret = ep["secret"].as_str().unwrap().to_string();

    // An earlier single event holds the key "k-0".
    let first = fenix.send_event(&app, json!({"type": "order.created", "data": {"n": 0}, "id": "k-0"})).await;
    let events: Vec<Value> = (0..5)
        .map(|n| json!({"type": if n == 3 { "invoice.paid" } else { "order.created" }, "data": {"n": n}, "id": format!("k-{n}")}))
        .chain([json!({"type": "order.created", "data": {"n": 99}, "id": "k-1"})])
        .collect();
    let (status, body) = batch(&fenix, &app, json!({ "events": events })).await;
    assert_eq!(status, 202, "{body}");
    let items = body["data"].as_array().unwrap();
    assert_eq!(items.len(), 6, "one item per event, in order: {body}");
    assert_eq!(items[0]["id"], first["id"], "k-0 was sent before: the first event answers");
    assert_eq!(items[0]["created"], false);
    for (i, item) in items.iter().enumerate().take(5).skip(1) {
        assert_eq!(item["created"], true, "event {i}: {item}");
        assert_eq!(item["idempotency_key"], format!("k-{i}"));
    }
    assert_eq!((items[3]["type"].as_str(), items[3]["deliveries"].as_i64()), (Some("invoice.paid"), Some(0)));
    assert_eq!(items[5]["id"], items[1]["id"], "a key repeated within the batch answers its first event");
    assert_eq!(items[5]["created"], false);

    // Four new events, three of them for the endpoint; each arrives once, signed.
    assert_eq!(event_count(&fenix, &app).await, 5);
    eventually("the batch's three deliveries arrive", Duration::from_secs(10), || async { receiver.count() >= 4 })
        .await;
    let got = receiver.received();
    assert_eq!(got.len(), 4, "the earlier event and three from the batch");
    assert!(got.iter().all(|r| signed_v1_by(&secret, r)));
    let mut seen: Vec<i64> = got.iter().map(|r| r.json()["data"]["n"].as_i64().unwrap()).collect();
    seen.sort();
    assert_eq!(seen, [0, 1, 2, 4]);
}

async fn a_bad_event_refuses_the_whole_batch_by_its_index(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_MAX_BATCH_EVENTS", "3")]).await;
    let app = fenix.create_app("acme").await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let good = |n: u64| json!({"type": "order.created", "data": {"n": n}, "id": format!("g-{n}")});

    for (bad, code) in [
        (json!({"type": "order created", "data": {}}), "invalid_event_type"),
        (json!({"type": "order.created", "data": [1, 2]}), "invalid_data"),
        (json!({"type": "order.created", "data": {}, "id": ""}), "invalid_idempotency_key"),
    ] {
        let (status, body) = batch(&fenix, &app, json!({"events": [good(1), bad, good(2)]})).await;
        assert_eq!((status, body["error"]["code"].as_str()), (422, Some(code)), "{body}");
        assert!(body["error"]["message"].as_str().unwrap().starts_with("events[1]: "), "{body}");
    }
    let (status, body) = batch(&fenix, &app, json!({"events": []})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("empty_batch")), "{body}");
    let (status, body) = batch(&fenix, &app, json!({"events": [good(1), good(2), good(3), good(4)]})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("batch_too_large")), "{body}");
    let (status, body) = batch(&fenix, &app, json!({"events": [good(1)], "extra": 1})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("unknown_field")), "{body}");
    let (status, body) = batch(&fenix, "app_unknown", json!({"events": [good(1)]})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("app_not_found")), "{body}");

    assert_eq!(event_count(&fenix, &app).await, 0, "no refused batch stored anything");
    assert_eq!(fenix.deliveries(&app, "").await.len(), 0);
    // The keys of the refused batches were not taken: the same events go through now.
    let (status, body) = batch(&fenix, &app, json!({"events": [good(1), good(2)]})).await;
    assert_eq!(status, 202, "{body}");
    assert!(body["data"].as_array().unwrap().iter().all(|i| i["created"] == true), "{body}");
}

async fn an_event_over_the_fanout_limit_refuses_the_whole_batch(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_MAX_FANOUT_PER_EVENT", "1")]).await;
    let app = fenix.create_app("acme").await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    fenix.create_endpoint(&app, json!({"url": receiver.url, "event_types": ["a.*"]})).await;
    fenix.create_endpoint(&app, json!({"url": receiver.url, "event_types": ["a.wide", "b.*"]})).await;
    let (status, body) = batch(
        &fenix,
        &app,
        json!({"events": [
            {"type": "a.narrow", "data": {}},
            {"type": "b.narrow", "data": {}},
            {"type": "a.wide", "data": {}},
        ]}),
    )
    .await;
    assert_eq!((status, body["error"]["code"].as_str()), (422, Some("fanout_limit_reached")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().starts_with("events[2]: "), "{body}");
    assert_eq!(event_count(&fenix, &app).await, 0, "the two fitting events were not stored either");
    assert_eq!(fenix.deliveries(&app, "").await.len(), 0);
}

async fn a_body_over_the_batch_limit_is_refused_with_413(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_MAX_BATCH_BYTES", "4096")]).await;
    let app = fenix.create_app("acme").await;
    let pad = "x".repeat(1000);
    let events: Vec<Value> = (0..5).map(|n| json!({"type": "t.x", "data": {"n": n, "pad": pad}})).collect();
    let (status, body) = batch(&fenix, &app, json!({ "events": events })).await;
    assert_eq!((status, body["error"]["code"].as_str()), (413, Some("payload_too_large")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("FENIX_MAX_BATCH_BYTES"), "{body}");
    // A batch above the single-event limit (256 KiB) but within the batch limit is fine.
    let fenix = Fenix::start(&db, &[]).await;
    let pad = "y".repeat(100_000);
    let events: Vec<Value> = (0..5).map(|n| json!({"type": "t.x", "data": {"n": n, "pad": pad}})).collect();
    let (status, body) = batch(&fenix, &app, json!({ "events": events })).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(event_count(&fenix, &app).await, 5);
}

async fn a_batch_s_events_and_deliveries_list_newest_first_in_reverse_request_order(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let events: Vec<Value> = (0..60).map(|n| json!({"type": "t.x", "data": {"n": n}})).collect();
    let (status, body) = batch(&fenix, &app, json!({ "events": events })).await;
    assert_eq!(status, 202, "{body}");
    let answered: Vec<String> =
        body["data"].as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().into()).collect();
    let newest_first: Vec<String> = answered.iter().rev().cloned().collect();

    let (status, page) = fenix.call("GET", &format!("/v1/apps/{app}/events?limit=250"), None).await;
    assert_eq!(status, 200, "{page}");
    let listed: Vec<String> =
        page["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().into()).collect();
    assert_eq!(listed, newest_first, "the events of one batch keep its order in the list");
    let (status, page) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?limit=250"), None).await;
    assert_eq!(status, 200, "{page}");
    let by_event: Vec<String> =
        page["data"].as_array().unwrap().iter().map(|d| d["event_id"].as_str().unwrap().into()).collect();
    assert_eq!(by_event, newest_first, "and so do their deliveries in the log");
}

/// Batches are parsed and written a few at a time, but only once their body
/// is in: producers whose bodies stall (more of them than there are turns)
/// keep no other batch waiting.
async fn batches_whose_bodies_stall_keep_no_other_batch_waiting(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_HTTP_BODY_TIMEOUT", "60s")]).await;
    let app = fenix.create_app("acme").await;
    let addr = fenix.base.trim_start_matches("http://").to_string();
    let mut stalled = Vec::new();
    for _ in 0..6 {
        let mut conn = TcpStream::connect(&addr).await.expect("connect");
        let head = format!(
            "POST /v1/apps/{app}/events/batch HTTP/1.1\r\nHost: fenix\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"events\":[",
            fenix.token
        );
        conn.write_all(head.as_bytes()).await.expect("send the head and the start of the body");
        stalled.push(conn);
    }
    let events: Vec<Value> = (0..3).map(|n| json!({"type": "t.x", "data": {"n": n}})).collect();
    let answered = tokio::time::timeout(Duration::from_secs(15), batch(&fenix, &app, json!({ "events": events })));
    let (status, body) = answered.await.expect("a complete batch is answered while six others stall");
    assert_eq!(status, 202, "{body}");
    assert_eq!(event_count(&fenix, &app).await, 3);
    drop(stalled);
}

crate::on_both_backends!(
    batches_whose_bodies_stall_keep_no_other_batch_waiting,
    a_batch_s_events_and_deliveries_list_newest_first_in_reverse_request_order,
    a_batch_is_stored_whole_and_delivered_signed,
    a_bad_event_refuses_the_whole_batch_by_its_index,
    an_event_over_the_fanout_limit_refuses_the_whole_batch,
    a_body_over_the_batch_limit_is_refused_with_413,
);
