//! Ordered delivery as a receiver meets it: an ordered endpoint's events
//! arrive one at a time in the order Fenix accepted them (retries hold the
//! lane), per `ordering_key` with different keys in parallel, and after a
//! dead letter the lane either goes on (`continue`) or waits for a replay
//! (`block`); the log says what a waiting delivery waits for (`blocked_by`).

use std::time::Duration;

use serde_json::{json, Value};

use super::common::wait_for_status;
use crate::support::{delivery_of, eventually, Backend, Fenix, Plan, Received, Receiver, TestDb};

/// Short waits between attempts, so that retries and dead letters come quickly.
const FAST_RETRIES: (&str, &str) = ("FENIX_RETRY_SCHEDULE", "100ms,100ms,100ms");

/// `(ordering_key, n)` of each request, in arrival order (retries included).
fn arrivals(received: &[Received]) -> Vec<(String, i64)> {
    received
        .iter()
        .map(|r| {
            let v = r.json();
            (v["data"]["key"].as_str().unwrap_or("").to_string(), v["data"]["n"].as_i64().expect("n"))
        })
        .collect()
}

/// The arrival order with consecutive repeats (retries of one event) folded.
fn distinct_in_order(list: &[i64]) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::new();
    for n in list {
        if out.last() != Some(n) {
            out.push(*n);
        }
    }
    out
}

async fn ordered_endpoint(fenix: &Fenix, app: &str, url: &str, on_dead_letter: &str) -> Value {
    let ep = fenix.create_endpoint(app, json!({"url": url, "ordered": true, "on_dead_letter": on_dead_letter})).await;
    assert_eq!(ep["ordered"], true, "{ep}");
    assert_eq!(ep["on_dead_letter"], on_dead_letter, "{ep}");
    ep
}

async fn events_arrive_in_order_even_when_attempts_fail(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[FAST_RETRIES]).await;
    // The 2nd request fails, and the 5th and 6th: each a retry the lane waits for.
    let receiver = Receiver::http(|n| if [1, 4, 5].contains(&n) { Plan::status(503) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    ordered_endpoint(&fenix, &app, &receiver.url, "continue").await;
    for n in 0..6 {
        fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
    }
    // A batch keeps its request order, after the events accepted before it.
    let batch: Vec<Value> = (6..12).map(|n| json!({"type": "booking.confirmed", "data": {"n": n}})).collect();
    let (status, out) =
        fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": batch}))).await;
    assert_eq!(status, 202, "{out}");

    eventually("all 12 events delivered", Duration::from_secs(30), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == 12
    })
    .await;
    let got: Vec<i64> = arrivals(&receiver.received()).into_iter().map(|(_, n)| n).collect();
    assert_eq!(got.len(), 15, "12 events and 3 retries: {got:?}");
    assert_eq!(distinct_in_order(&got), (0..12).collect::<Vec<_>>(), "arrival order: {got:?}");
    assert_eq!(receiver.max_concurrent(), 1, "one request at a time on a lane");
    let in_flight_or_waiting = fenix.deliveries(&app, "").await;
    assert!(in_flight_or_waiting.iter().all(|d| d["ordering_key"] == "" && d["blocked_by"].is_null()));
}

async fn each_key_is_in_order_and_different_keys_go_in_parallel(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[FAST_RETRIES]).await;
    // Slow answers: a lane's next event could only overtake while one is in the receiver's hands.
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(150))).await;
    let app = fenix.create_app("acme").await;
    ordered_endpoint(&fenix, &app, &receiver.url, "continue").await;
    let mut batch = Vec::new();
    for n in 0..4 {
        for key in ["a", "b"] {
            batch.push(json!({"type": "booking.confirmed", "ordering_key": key, "data": {"n": n, "key": key}}));
        }
    }
    let (status, out) =
        fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": batch}))).await;
    assert_eq!(status, 202, "{out}");

    eventually("all 8 events delivered", Duration::from_secs(30), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == 8
    })
    .await;
    let got = arrivals(&receiver.received());
    for key in ["a", "b"] {
        let of_key: Vec<i64> = got.iter().filter(|(k, _)| k == key).map(|(_, n)| *n).collect();
        assert_eq!(of_key, vec![0, 1, 2, 3], "key {key} in order: {got:?}");
    }
    assert_eq!(receiver.max_concurrent(), 2, "the two keys went side by side, one request each at a time");
    let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
    assert!(keys[..4].contains(&"a") && keys[..4].contains(&"b"), "interleaved: {got:?}");
}

async fn a_waiting_delivery_shows_what_it_waits_for(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1h")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    ordered_endpoint(&fenix, &app, &receiver.url, "continue").await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let e = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
        ids.push(e["id"].as_str().unwrap().to_string());
    }
    eventually("the first event's first attempt is logged", Duration::from_secs(10), || async {
        delivery_of(&fenix, &app, &ids[0]).await["attempt_count"] == 1
    })
    .await;
    let head = delivery_of(&fenix, &app, &ids[0]).await;
    assert_eq!(head["status"], "pending", "a retry in an hour: {head}");
    assert!(head["blocked_by"].is_null(), "the head waits for nobody: {head}");
    for id in &ids[1..] {
        let d = delivery_of(&fenix, &app, id).await;
        assert_eq!(d["status"], "pending", "{d}");
        assert_eq!(d["attempt_count"], 0, "not attempted while the head retries: {d}");
        assert_eq!(d["blocked_by"], head["id"], "{d}");
        assert!(d["next_attempt_at"].is_null(), "parked behind the head, no time of its own: {d}");
        let (status, one) =
            fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{}", d["id"].as_str().unwrap()), None).await;
        assert_eq!(status, 200);
        assert_eq!(one["blocked_by"], head["id"], "GET one delivery: {one}");
    }
    assert_eq!(receiver.count(), 1, "only the head was sent");
}

async fn after_a_dead_letter_a_continue_lane_goes_on(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    // The first event's two attempts fail: it is dead-lettered.
    let receiver = Receiver::http(|n| if n < 2 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    ordered_endpoint(&fenix, &app, &receiver.url, "continue").await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let e = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
        ids.push(e["id"].as_str().unwrap().to_string());
    }
    wait_for_status(&fenix, &app, &ids[2], "succeeded", Duration::from_secs(20)).await;
    assert_eq!(delivery_of(&fenix, &app, &ids[0]).await["status"], "failed");
    assert_eq!(delivery_of(&fenix, &app, &ids[1]).await["status"], "succeeded");
    let got: Vec<i64> = arrivals(&receiver.received()).into_iter().map(|(_, n)| n).collect();
    assert_eq!(got, vec![0, 0, 1, 2]);
}

/// A `block` lane of three events whose first dead-letters (the receiver
/// fails twice): the running Fenix, its receiver, the app, the event ids and
/// the dead letter.
struct BlockedLane {
    _db: TestDb,
    fenix: Fenix,
    receiver: Receiver,
    app: String,
    ids: Vec<String>,
    dead: Value,
}

async fn blocked_lane(backend: Backend) -> BlockedLane {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let receiver = Receiver::http(|n| if n < 2 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    ordered_endpoint(&fenix, &app, &receiver.url, "block").await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let e = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
        ids.push(e["id"].as_str().unwrap().to_string());
    }
    let dead = wait_for_status(&fenix, &app, &ids[0], "failed", Duration::from_secs(20)).await;
    BlockedLane { _db: db, fenix, receiver, app, ids, dead }
}

async fn after_a_dead_letter_a_block_lane_waits_until_it_is_replayed(backend: Backend) {
    let BlockedLane { _db, fenix, receiver, app, ids, dead } = blocked_lane(backend).await;
    for id in &ids[1..] {
        let d = delivery_of(&fenix, &app, id).await;
        assert_eq!((d["status"].as_str(), d["attempt_count"].as_i64()), (Some("pending"), Some(0)), "{d}");
        assert_eq!(d["blocked_by"], dead["id"], "blocked by the dead letter: {d}");
    }
    assert_eq!(receiver.count(), 2, "nothing after the dead letter was sent");

    // The operator replays the dead letter: it goes first, then the rest in order.
    let (status, body) =
        fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{}/replay", dead["id"].as_str().unwrap()), None).await;
    assert!(status == 200 || status == 202, "replay: {status} {body}");
    wait_for_status(&fenix, &app, &ids[2], "succeeded", Duration::from_secs(20)).await;
    assert_eq!(delivery_of(&fenix, &app, &ids[0]).await["status"], "succeeded");
    let got: Vec<i64> = arrivals(&receiver.received()).into_iter().map(|(_, n)| n).collect();
    assert_eq!(got, vec![0, 0, 0, 1, 2]);
}

async fn a_block_lane_goes_on_when_the_operator_skips_its_dead_letter(backend: Backend) {
    let BlockedLane { _db, fenix, receiver, app, ids, dead } = blocked_lane(backend).await;
    let dead_id = dead["id"].as_str().unwrap();
    let skip = |id: &str| format!("/v1/apps/{app}/deliveries/{id}/skip");
    // Only a dead letter can be skipped.
    let waiting = delivery_of(&fenix, &app, &ids[1]).await;
    let (status, body) = fenix.call("POST", &skip(waiting["id"].as_str().unwrap()), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("not_skippable")), "{body}");
    let (status, body) = fenix.call("POST", &skip("dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("delivery_not_found")), "{body}");
    assert_eq!(receiver.count(), 2, "nothing after the dead letter was sent");

    // The operator gives up on it: the lane goes on, in order, without it.
    let (status, body) = fenix.call("POST", &skip(dead_id), None).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("skipped")), "{body}");
    wait_for_status(&fenix, &app, &ids[2], "succeeded", Duration::from_secs(20)).await;
    assert_eq!(delivery_of(&fenix, &app, &ids[1]).await["status"], "succeeded");
    assert_eq!(delivery_of(&fenix, &app, &ids[0]).await["status"], "skipped");
    let got: Vec<i64> = arrivals(&receiver.received()).into_iter().map(|(_, n)| n).collect();
    assert_eq!(got, vec![0, 0, 1, 2]);
    let (status, body) = fenix.call("POST", &skip(dead_id), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("not_skippable")), "skipped once: {body}");
}

async fn ordering_fields_are_checked_and_patched(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    assert_eq!((ep["ordered"].as_bool(), ep["on_dead_letter"].as_str()), (Some(false), Some("continue")));
    let path = format!("/v1/apps/{app}/endpoints/{}", ep["id"].as_str().unwrap());
    let (status, out) = fenix.call("PATCH", &path, Some(json!({"ordered": true, "on_dead_letter": "block"}))).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!((out["ordered"].as_bool(), out["on_dead_letter"].as_str()), (Some(true), Some("block")));
    let (_, read) = fenix.call("GET", &path, None).await;
    assert_eq!((read["ordered"].as_bool(), read["on_dead_letter"].as_str()), (Some(true), Some("block")));
    let (status, out) = fenix.call("PATCH", &path, Some(json!({"on_dead_letter": "stop"}))).await;
    assert!(status == 400 || status == 422, "{status} {out}");

    let events = format!("/v1/apps/{app}/events");
    let long = "k".repeat(257);
    for bad in [json!(""), json!(long), json!("a\u{0}b")] {
        let body = json!({"type": "booking.confirmed", "ordering_key": bad, "data": {}});
        let (status, out) = fenix.call("POST", &events, Some(body)).await;
        assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_ordering_key")), "{out}");
    }
    let body =
        json!({"events": [{"type": "booking.confirmed", "data": {}}, {"type": "a.b", "ordering_key": "", "data": {}}]});
    let (status, out) = fenix.call("POST", &format!("{events}/batch"), Some(body)).await;
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_ordering_key")), "{out}");
    assert!(out["error"]["message"].as_str().unwrap().starts_with("events[1]"), "{out}");
}

crate::on_both_backends!(
    events_arrive_in_order_even_when_attempts_fail,
    each_key_is_in_order_and_different_keys_go_in_parallel,
    a_waiting_delivery_shows_what_it_waits_for,
    after_a_dead_letter_a_continue_lane_goes_on,
    after_a_dead_letter_a_block_lane_waits_until_it_is_replayed,
    a_block_lane_goes_on_when_the_operator_skips_its_dead_letter,
    ordering_fields_are_checked_and_patched,
);
