//! `POST …/endpoints/{ep}/test`: one event to one endpoint, whatever its
//! filter, through the normal intake (stored, signed, logged); the app's other
//! endpoints get nothing.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{deliveries_of, secret_of, wait_for_status};
use crate::support::{id_of, signed_v1_by, Backend, Fenix, Plan, Receiver, TestDb};

const PATIENCE: Duration = Duration::from_secs(10);

fn test_path(app: &str, ep: &str) -> String {
    format!("/v1/apps/{app}/endpoints/{ep}/test")
}

async fn a_test_event_reaches_only_its_endpoint_signed_whatever_its_filter(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let tested = Receiver::http(|_| Plan::ok()).await;
    let other = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    // Its filter does not want `fenix.test`; the other endpoint wants every type.
    let created = fenix.create_endpoint(&app, json!({"url": tested.url, "event_types": ["invoice.paid"]})).await;
    let ep = id_of(&created);
    let other_ep = id_of(&fenix.create_endpoint(&app, json!({"url": other.url})).await);

    let (status, sent) = fenix.call("POST", &test_path(&app, &ep), None).await;
    assert_eq!(status, 202, "{sent}");
    let (event_id, delivery_id) = (sent["event_id"].as_str().unwrap(), sent["delivery_id"].as_str().unwrap());
    assert!(event_id.starts_with("evt_") && delivery_id.starts_with("dlv_"), "{sent}");
    let done = wait_for_status(&fenix, &app, event_id, "succeeded", PATIENCE).await;
    assert_eq!((done["id"].as_str(), done["endpoint_id"].as_str()), (Some(delivery_id), Some(ep.as_str())));

    let got = tested.received();
    assert_eq!(got.len(), 1, "the tested endpoint got the test event once");
    assert!(signed_v1_by(&secret_of(&created), &got[0]), "the test event verifies with the endpoint's secret");
    assert_eq!(got[0].header("x-fenix-event-id"), event_id);
    let body = got[0].json();
    assert_eq!((&body["type"], &body["data"]), (&json!("fenix.test"), &json!({})), "{body}");

    // One delivery only: none was made for the other endpoint, so it can never be sent.
    let all = deliveries_of(&fenix, &app, event_id).await;
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(fenix.deliveries(&app, &format!("endpoint_id={other_ep}")).await.is_empty());
    assert_eq!(other.count(), 0, "another endpoint of the app got the test event");
    let (status, event) = fenix.call("GET", &format!("/v1/apps/{app}/events/{event_id}"), None).await;
    assert_eq!((status, &event["deliveries"], &event["type"]), (200, &json!(1), &json!("fenix.test")), "{event}");

    // A chosen type and data, sent byte for byte.
    let (status, sent) = fenix
        .call("POST", &test_path(&app, &ep), Some(json!({"event_type": "booking.confirmed", "data": {"n": 7}})))
        .await;
    assert_eq!(status, 202, "{sent}");
    let event_id = sent["event_id"].as_str().unwrap();
    wait_for_status(&fenix, &app, event_id, "succeeded", PATIENCE).await;
    let got = tested.received().into_iter().find(|r| r.header("x-fenix-event-id") == event_id).expect("received");
    assert_eq!(got.json()["type"], "booking.confirmed");
    assert_eq!(got.json()["data"], json!({"n": 7}));
    assert_eq!(other.count(), 0);
}

async fn a_test_event_to_a_paused_endpoint_is_recorded_as_skipped(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let (status, _) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/pause"), None).await;
    assert_eq!(status, 200);

    let (status, sent) = fenix.call("POST", &test_path(&app, &ep), Some(json!({}))).await;
    assert_eq!(status, 202, "{sent}");
    let skipped = wait_for_status(&fenix, &app, sent["event_id"].as_str().unwrap(), "skipped", PATIENCE).await;
    assert_eq!(skipped["id"], sent["delivery_id"]);
    assert_eq!(receiver.count(), 0, "a paused endpoint got the test event");
}

async fn a_test_event_request_is_checked_like_any_input(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);

    let cases = [
        (json!({"data": [1, 2]}), 422, "invalid_data"),
        (json!({"data": "text"}), 422, "invalid_data"),
        (json!({"data": null}), 422, "invalid_body"),
        (json!({"event_type": ".bad"}), 422, "invalid_event_type"),
        (json!({"event_type": 5}), 422, "invalid_body"),
        (json!({"type": "fenix.test"}), 400, "unknown_field"),
    ];
    for (body, status, code) in cases {
        let (got, out) = fenix.call("POST", &test_path(&app, &ep), Some(body.clone())).await;
        assert_eq!((got, out["error"]["code"].as_str()), (status, Some(code)), "{body} → {out}");
    }
    let (got, out) = fenix.call("POST", &test_path(&app, &ep), Some(json!({"event_type": ".bad"}))).await;
    assert!(out["error"]["message"].as_str().unwrap().starts_with("event_type"), "names the field: {got} {out}");
    let (got, out) = fenix.call("POST", &test_path(&app, "ep_01JZZZZZZZZZZZZZZZZZZZZZZZ"), None).await;
    assert_eq!((got, out["error"]["code"].as_str()), (404, Some("endpoint_not_found")), "{out}");
    let (got, out) = fenix.call("POST", &test_path("nope", &ep), None).await;
    assert_eq!((got, out["error"]["code"].as_str()), (404, Some("app_not_found")), "{out}");
    // Nothing was stored by a refused request.
    assert!(fenix.deliveries(&app, "").await.is_empty());
}

/// A catalogued type whose schema wants an integer `amount`.
async fn catalogue_order_paid(fenix: &Fenix) {
    let schema = json!({"type": "object", "required": ["amount"], "properties": {"amount": {"type": "integer"}}});
    let (status, body) =
        fenix.call("POST", "/v1/event-types", Some(json!({"name": "order.paid", "schema": schema}))).await;
    assert_eq!(status, 201, "{body}");
}

async fn a_test_event_is_checked_against_its_types_schema_like_an_ingested_one(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    catalogue_order_paid(&fenix).await;

    for data in [json!({"amount": "x"}), json!({}), json!({"amount": 1.5})] {
        let body = json!({"event_type": "order.paid", "data": data});
        let (status, out) = fenix.call("POST", &test_path(&app, &ep), Some(body)).await;
        assert_eq!((status, &out["error"]["code"]), (422, &json!("schema_mismatch")), "{data} → {out}");
        assert!(out["error"]["details"][0]["path"].as_str().is_some_and(|p| p.starts_with("/data")), "{out}");
    }
    assert!(fenix.deliveries(&app, "").await.is_empty(), "a refused test event stores nothing");

    let body = json!({"event_type": "order.paid", "data": {"amount": 5}});
    let (status, sent) = fenix.call("POST", &test_path(&app, &ep), Some(body)).await;
    assert_eq!(status, 202, "{sent}");
    wait_for_status(&fenix, &app, sent["event_id"].as_str().unwrap(), "succeeded", PATIENCE).await;
    assert_eq!(receiver.count(), 1, "only the event its schema accepts was sent");
}

async fn in_strict_mode_a_test_event_needs_a_catalogued_type_except_fenix_test(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_EVENT_TYPES_STRICT", "true")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);

    let body = json!({"event_type": "order.unknown", "data": {"amount": 5}});
    let (status, out) = fenix.call("POST", &test_path(&app, &ep), Some(body)).await;
    assert_eq!((status, &out["error"]["code"]), (422, &json!("unknown_event_type")), "{out}");
    assert!(fenix.deliveries(&app, "").await.is_empty(), "a refused test event stores nothing");

    // Fenix's own probe type needs no entry; once catalogued, its schema applies.
    let (status, sent) = fenix.call("POST", &test_path(&app, &ep), None).await;
    assert_eq!(status, 202, "{sent}");
    let schema = json!({"type": "object", "required": ["probe"]});
    let (status, body) =
        fenix.call("POST", "/v1/event-types", Some(json!({"name": "fenix.test", "schema": schema}))).await;
    assert_eq!(status, 201, "{body}");
    let (status, out) = fenix.call("POST", &test_path(&app, &ep), None).await;
    assert_eq!((status, &out["error"]["code"]), (422, &json!("schema_mismatch")), "{out}");
}

async fn test_events_beyond_their_budget_answer_429_with_retry_after(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let other = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);

    let started = std::time::Instant::now();
    let mut answers = Vec::new();
    for _ in 0..15 {
        let resp = fenix.request("POST", &test_path(&app, &ep)).send().await.unwrap();
        let retry_after: Option<u64> = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().parse().unwrap());
        answers.push((resp.status().as_u16(), retry_after, resp.json::<Value>().await.unwrap()));
    }
    // 10 at once, then one every 6 s while the calls go on.
    let refills = (started.elapsed().as_secs() / 6) as usize;
    let accepted = answers.iter().filter(|a| a.0 == 202).count();
    assert!((10..=10 + refills).contains(&accepted) && accepted < 15, "{accepted}: the endpoint's burst");
    for (status, retry_after, body) in answers.iter().filter(|a| a.0 != 202) {
        assert_eq!((*status, &body["error"]["code"]), (429, &json!("test_event_limit_reached")), "{body}");
        assert!(retry_after.is_some_and(|s| (1..=6).contains(&s)), "{retry_after:?}");
    }
    assert_eq!(fenix.deliveries(&app, "").await.len(), accepted, "a refused test event stores nothing");
    let (status, body) = fenix.call("POST", &test_path(&app, &other), None).await;
    assert_eq!(status, 202, "another endpoint has its own budget: {body}");
}

crate::on_both_backends!(
    a_test_event_is_checked_against_its_types_schema_like_an_ingested_one,
    in_strict_mode_a_test_event_needs_a_catalogued_type_except_fenix_test,
    test_events_beyond_their_budget_answer_429_with_retry_after,
    a_test_event_reaches_only_its_endpoint_signed_whatever_its_filter,
    a_test_event_to_a_paused_endpoint_is_recorded_as_skipped,
    a_test_event_request_is_checked_like_any_input,
);
