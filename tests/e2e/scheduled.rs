//! Scheduled events (issue 33): an event sent with `delay` or `deliver_at`
//! is stored with its deliveries at once, shows `scheduled` until its time,
//! arrives no earlier, survives a kill -9 meanwhile, and can be cancelled
//! (then it never arrives, not even from a worker that had claimed it);
//! a schedule the rules refuse stores nothing.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::on_both_backends;
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// Milliseconds since the epoch of an RFC 3339 time the API answered.
fn ms(t: &Value) -> i64 {
    let text = t.as_str().unwrap_or_else(|| panic!("a time: {t}"));
    let parsed = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).expect("RFC 3339");
    (parsed.unix_timestamp_nanos() / 1_000_000) as i64
}

async fn an_event_sent_with_a_delay_shows_scheduled_and_arrives_no_earlier_than_its_time(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    let before = Instant::now();
    let evt = fenix.send_event(&app, json!({"type": "reminder.due", "data": {"n": 1}, "delay": "2s"})).await;
    let (created, deliver_at) = (ms(&evt["created_at"]), ms(&evt["deliver_at"]));
    assert_eq!(deliver_at - created, 2_000, "the answer says when: {evt}");

    // Stored at once, shown scheduled, due at its time; `?status=` finds it as such.
    let rows = fenix.deliveries(&app, "").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["status"], "scheduled", "{}", rows[0]);
    assert_eq!(ms(&rows[0]["next_attempt_at"]), deliver_at, "{}", rows[0]);
    assert_eq!(fenix.deliveries(&app, "status=scheduled").await.len(), 1);
    assert!(fenix.deliveries(&app, "status=pending").await.is_empty());
    let (_, read) = fenix.call("GET", &format!("/v1/apps/{app}/events/{}", evt["id"].as_str().unwrap()), None).await;
    assert_eq!(read["deliver_at"], evt["deliver_at"], "{read}");

    eventually("the scheduled event arrives", Duration::from_secs(20), || async { receiver.count() == 1 }).await;
    let got = &receiver.received()[0];
    assert!(got.at >= before + Duration::from_secs(2), "arrived {:?} after it was sent", got.at - before);
    assert_eq!(got.json()["id"], evt["id"]);
    eventually("the delivery succeeds", Duration::from_secs(10), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == 1
    })
    .await;
    let delivery_id = rows[0]["id"].as_str().unwrap();
    let attempts = crate::support::fenix::attempts(&fenix, &app, delivery_id).await;
    assert!(ms(&attempts[0]["started_at"]) >= deliver_at, "sent at its time or later: {attempts:?}");
    assert!(fenix.deliveries(&app, "status=scheduled").await.is_empty());

    // A time already past means now; each event of a batch may be scheduled.
    let now =
        fenix.send_event(&app, json!({"type": "reminder.due", "data": {}, "deliver_at": "2020-01-01T00:00:00Z"})).await;
    assert_eq!(now["deliver_at"], Value::Null, "{now}");
    let (status, batch) = fenix
        .call(
            "POST",
            &format!("/v1/apps/{app}/events/batch"),
            Some(json!({"events": [{"type": "a.b", "data": {}, "delay": "1h"}, {"type": "a.b", "data": {}}]})),
        )
        .await;
    assert_eq!(status, 202, "{batch}");
    assert!(batch["data"][0]["deliver_at"].is_string() && batch["data"][1]["deliver_at"].is_null(), "{batch}");
    let scheduled = fenix.deliveries(&app, "status=scheduled").await;
    assert_eq!(scheduled.len(), 1, "{scheduled:?}");
    assert_eq!(scheduled[0]["event_id"], batch["data"][0]["id"]);
    eventually("the unscheduled events arrive", Duration::from_secs(20), || async { receiver.count() == 3 }).await;
}

async fn a_scheduled_event_survives_a_kill_and_arrives_after_the_restart(backend: Backend) {
    let db = TestDb::new(backend).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    let before = Instant::now();
    let evt = fenix.send_event(&app, json!({"type": "reminder.due", "data": {}, "delay": "3s"})).await;
    fenix.kill9();
    assert_eq!(receiver.count(), 0);
    fenix.restart().await;
    let rows = fenix.deliveries(&app, "").await;
    if before.elapsed() < Duration::from_millis(2_500) {
        assert_eq!(rows[0]["status"], "scheduled", "still waiting after the restart: {}", rows[0]);
    }

    eventually("the scheduled event arrives after the restart", Duration::from_secs(30), || async {
        receiver.count() >= 1
    })
    .await;
    let got = &receiver.received()[0];
    assert!(got.at >= before + Duration::from_secs(3), "arrived {:?} after it was sent", got.at - before);
    assert_eq!(got.json()["id"], evt["id"]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 1, "sent once");
}

async fn a_cancelled_scheduled_event_never_arrives(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    fenix.create_endpoint(&app, json!({"url": format!("{}/second", receiver.url)})).await;

    let evt = fenix.send_event(&app, json!({"type": "reminder.due", "data": {}, "delay": "2s"})).await;
    let cancel = format!("/v1/apps/{app}/events/{}/cancel", evt["id"].as_str().unwrap());
    let (status, out) = fenix.call("POST", &cancel, None).await;
    assert_eq!((status, out["cancelled"].clone()), (200, json!(2)), "{out}");
    let rows = fenix.deliveries(&app, "").await;
    for d in &rows {
        assert_eq!((d["status"].as_str(), d["skip_reason"].as_str()), (Some("skipped"), Some("cancelled")), "{d}");
    }

    // Nothing is left to cancel; an unknown event is not found.
    let (status, again) = fenix.call("POST", &cancel, None).await;
    assert_eq!((status, again["error"]["code"].as_str()), (409, Some("nothing_to_cancel")), "{again}");
    let unknown = format!("/v1/apps/{app}/events/evt_2ZZZZZZZZZZZZZZZZZZZZZZZZZ/cancel");
    let (status, _) = fenix.call("POST", &unknown, None).await;
    assert_eq!(status, 404);

    // Past its time, and then some: it never came.
    let sent_later = fenix.send_event(&app, json!({"type": "reminder.later", "data": {}, "delay": "3s"})).await;
    eventually("the event sent after it arrives", Duration::from_secs(20), || async { receiver.count() == 2 }).await;
    assert!(receiver.received().iter().all(|r| r.json()["id"] == sent_later["id"]), "only the later event arrived");
}

async fn a_cancelled_event_a_worker_already_holds_is_not_sent(backend: Backend) {
    let db = TestDb::new(backend).await;
    // One request at a time to the endpoint: the second event waits in the worker's hands, claimed.
    // (A receiver that takes 3 s: within the attempt's time limit.)
    let settings = [
        ("FENIX_ENDPOINT_CONCURRENCY", "1"),
        ("FENIX_ENDPOINT_CONCURRENCY_MIN", "1"),
        ("FENIX_ATTEMPT_TIMEOUT", "10s"),
        ("FENIX_LEASE_DURATION", "30s"),
    ];
    let fenix = Fenix::start(&db, &settings).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_secs(3))).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    let first = fenix.send_event(&app, json!({"type": "a.first", "data": {}})).await;
    eventually("the first request is on its way", Duration::from_secs(10), || async { receiver.count() == 1 }).await;
    let second = fenix.send_event(&app, json!({"type": "a.second", "data": {}})).await;
    eventually("the second is claimed", Duration::from_secs(10), || async {
        fenix.deliveries(&app, "status=in_flight").await.iter().any(|d| d["event_id"] == second["id"])
    })
    .await;
    let cancel = format!("/v1/apps/{app}/events/{}/cancel", second["id"].as_str().unwrap());
    let (status, out) = fenix.call("POST", &cancel, None).await;
    assert_eq!((status, out["cancelled"].clone()), (200, json!(1)), "{out}");

    eventually("the first one is answered", Duration::from_secs(20), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let got: Vec<Value> = receiver.received().iter().map(|r| r.json()["id"].clone()).collect();
    assert_eq!(got, [first["id"].clone()], "the cancelled event was not sent");
    let rows = fenix.deliveries(&app, "status=skipped").await;
    assert_eq!((rows.len(), rows[0]["skip_reason"].as_str()), (1, Some("cancelled")), "{rows:?}");
}

async fn a_schedule_the_rules_refuse_is_answered_422_and_stores_nothing(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_MAX_SCHEDULE_AHEAD", "1h")]).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": "http://127.0.0.1:9/hook"})).await;
    let refused = [
        (json!({"delay": "10s", "deliver_at": "2030-01-01T00:00:00Z"}), "not both"),
        (json!({"delay": "2h"}), "FENIX_MAX_SCHEDULE_AHEAD"),
        (json!({"deliver_at": "2999-01-01T00:00:00Z"}), "at most 1h ahead"),
        (json!({"delay": "soon"}), "delay must be a duration"),
        (json!({"delay": "0s"}), "more than zero"),
        (json!({"deliver_at": "next tuesday"}), "RFC 3339"),
        // Whole seconds far past year 9999: refused, where it once panicked the handler.
        (json!({"delay": 12_243_980_687_051_u64}), "9999-12-31T23:59:59.999Z is later"),
    ];
    for (schedule, says) in &refused {
        let mut body = json!({"type": "reminder.due", "data": {}});
        body.as_object_mut().unwrap().extend(schedule.as_object().unwrap().clone());
        let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/events"), Some(body.clone())).await;
        assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_schedule")), "{body}: {out}");
        let message = out["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{body}: {message}");
        let batch = json!({"events": [{"type": "a.b", "data": {}}, body]});
        let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(batch)).await;
        assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_schedule")), "{out}");
        assert!(out["error"]["message"].as_str().unwrap_or_default().starts_with("events[1]: "), "{out}");
    }
    let (_, events) = fenix.call("GET", &format!("/v1/apps/{app}/events"), None).await;
    assert_eq!(events["data"].as_array().map(Vec::len), Some(0), "nothing stored: {events}");
    assert!(fenix.deliveries(&app, "").await.is_empty());
}

on_both_backends!(
    an_event_sent_with_a_delay_shows_scheduled_and_arrives_no_earlier_than_its_time,
    a_scheduled_event_survives_a_kill_and_arrives_after_the_restart,
    a_cancelled_scheduled_event_never_arrives,
    a_cancelled_event_a_worker_already_holds_is_not_sent,
    a_schedule_the_rules_refuse_is_answered_422_and_stores_nothing,
);
