//! Ingestion as a producer sees it: fan-out to the endpoints whose event-type
//! filter matches, and idempotent ingestion on the producer's key.

use std::{collections::BTreeSet, time::Duration};

use serde_json::{json, Value};

use super::common::{deliveries_of, wait_for_status};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// Event types a receiver got, sorted.
fn types_received(r: &Receiver) -> Vec<String> {
    let mut t: Vec<String> = r.received().iter().map(|r| r.header("x-fenix-event-type").to_string()).collect();
    t.sort();
    t
}

async fn fan_out_reaches_exactly_the_endpoints_whose_filter_matches(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let all_bookings = Receiver::http(|_| Plan::ok()).await;
    let confirmed_only = Receiver::http(|_| Plan::ok()).await;
    let invoices = Receiver::http(|_| Plan::ok()).await;
    let everything = Receiver::http(|_| Plan::ok()).await;
    for (r, types) in [
        (&all_bookings, json!(["booking.*"])),
        (&confirmed_only, json!(["booking.confirmed"])),
        (&invoices, json!(["invoice.paid"])),
        (&everything, json!([])),
    ] {
        fenix.create_endpoint(&app, json!({"url": r.url, "event_types": types})).await;
    }

    let mut events = Vec::new();
    for (t, expected_deliveries) in [("booking.confirmed", 3), ("booking.cancelled", 2), ("invoice.paid", 2)] {
        let evt = fenix.send_event(&app, json!({"type": t, "data": {"t": t}})).await;
        assert_eq!(evt["deliveries"], expected_deliveries, "deliveries of {t}");
        events.push(evt);
    }
    eventually("all seven deliveries succeed", Duration::from_secs(10), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == 7
    })
    .await;
    assert_eq!(fenix.deliveries(&app, "").await.len(), 7, "no other delivery exists");

    assert_eq!(types_received(&all_bookings), ["booking.cancelled", "booking.confirmed"]);
    assert_eq!(types_received(&confirmed_only), ["booking.confirmed"]);
    assert_eq!(types_received(&invoices), ["invoice.paid"]);
    assert_eq!(types_received(&everything), ["booking.cancelled", "booking.confirmed", "invoice.paid"]);
    for evt in &events {
        let id = evt["id"].as_str().unwrap();
        let receivers_with_it = [&all_bookings, &confirmed_only, &invoices, &everything]
            .iter()
            .filter(|r| r.received().iter().any(|got| got.header("x-fenix-event-id") == id))
            .count();
        assert_eq!(Value::from(receivers_with_it), evt["deliveries"]);
        let deliveries = deliveries_of(&fenix, &app, id).await;
        let endpoints: BTreeSet<String> = deliveries.iter().map(|d| d["endpoint_id"].to_string()).collect();
        assert_eq!(Value::from(deliveries.len()), evt["deliveries"], "one delivery per matching endpoint");
        assert_eq!(endpoints.len(), deliveries.len(), "one delivery per matching endpoint");
    }
}

/// Posts an event with an optional `Idempotency-Key`; answers status, the replay header, body.
async fn ingest(fenix: &Fenix, app: &str, key: Option<&str>, body: Value) -> (u16, Option<String>, Value) {
    let mut req = fenix.request("POST", &format!("/v1/apps/{app}/events")).json(&body);
    if let Some(k) = key {
        req = req.header("idempotency-key", k);
    }
    let resp = req.send().await.expect("ingest");
    let status = resp.status().as_u16();
    let replayed = resp.headers().get("idempotent-replayed").map(|v| v.to_str().unwrap().to_string());
    (status, replayed, resp.json().await.expect("JSON answer"))
}

async fn a_repeated_idempotency_key_creates_nothing_new(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let other_app = fenix.create_app("globex").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    fenix.create_endpoint(&other_app, json!({"url": receiver.url})).await;

    // The key in the Idempotency-Key header.
    let event = json!({"type": "booking.confirmed", "data": {"n": 1}});
    let (s1, r1, first) = ingest(&fenix, &app, Some("order-42"), event.clone()).await;
    let (s2, r2, again) = ingest(&fenix, &app, Some("order-42"), event.clone()).await;
    assert_eq!((s1, r1.as_deref()), (202, None));
    assert_eq!((s2, r2.as_deref()), (200, Some("true")));
    assert_eq!(again["id"], first["id"], "the original event is answered");
    assert_eq!(again["payload_sha256"], first["payload_sha256"]);

    // The key as the body's id.
    let keyed = json!({"type": "booking.confirmed", "data": {"n": 2}, "id": "order-43"});
    let (s3, r3, by_body) = ingest(&fenix, &app, None, keyed.clone()).await;
    let (s4, r4, by_body_again) = ingest(&fenix, &app, None, keyed.clone()).await;
    assert_eq!((s3, r3.as_deref()), (202, None));
    assert_eq!((s4, r4.as_deref()), (200, Some("true")));
    assert_eq!(by_body_again["id"], by_body["id"]);
    assert_ne!(by_body["id"], first["id"]);

    // Another app may use the same key for its own event.
    let (s5, r5, other) = ingest(&fenix, &other_app, Some("order-42"), event.clone()).await;
    assert_eq!((s5, r5.as_deref()), (202, None), "{other}");
    assert_ne!(other["id"], first["id"]);

    for (a, evt) in [(&app, &first), (&app, &by_body), (&other_app, &other)] {
        let id = evt["id"].as_str().unwrap();
        wait_for_status(&fenix, a, id, "succeeded", Duration::from_secs(10)).await;
        assert_eq!(deliveries_of(&fenix, a, id).await.len(), 1, "one delivery for {id}");
    }
    assert_eq!(fenix.deliveries(&app, "").await.len(), 2, "the repeats created no delivery");
    let (status, listed) = fenix.call("GET", &format!("/v1/apps/{app}/events"), None).await;
    assert_eq!(status, 200);
    assert_eq!(listed["data"].as_array().unwrap().len(), 2, "the repeats created no event: {listed}");

    let ids: Vec<String> = receiver.received().iter().map(|r| r.header("x-fenix-event-id").to_string()).collect();
    assert_eq!(ids.len(), 3, "one request per distinct event: {ids:?}");
    let distinct: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), 3);
}

async fn concurrent_requests_with_one_key_create_one_event(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    let event = json!({"type": "booking.confirmed", "data": {"n": 1}});
    let answers = futures::future::join_all((0..8).map(|_| ingest(&fenix, &app, Some("order-7"), event.clone()))).await;
    let created: Vec<_> = answers.iter().filter(|(s, _, _)| *s == 202).collect();
    assert_eq!(created.len(), 1, "exactly one request creates the event: {answers:?}");
    for (status, replayed, body) in &answers {
        assert!(*status == 202 || (*status == 200 && replayed.as_deref() == Some("true")), "{status} {body}");
        assert_eq!(body["id"], created[0].2["id"], "every answer names the one event");
    }
    let id = created[0].2["id"].as_str().unwrap();
    wait_for_status(&fenix, &app, id, "succeeded", Duration::from_secs(10)).await;
    assert_eq!(fenix.deliveries(&app, "").await.len(), 1);
    assert_eq!(receiver.count(), 1);
}

crate::on_both_backends!(
    fan_out_reaches_exactly_the_endpoints_whose_filter_matches,
    a_repeated_idempotency_key_creates_nothing_new,
    concurrent_requests_with_one_key_create_one_event,
);
