//! Failure handling beyond the plain schedule: 410 Gone disables an endpoint,
//! `Retry-After` is honoured within a cap, endpoints failing for too long are
//! disabled automatically, and the operator hears about it through operator
//! webhooks (`FENIX_OPERATOR_WEBHOOK_URL`) signed like any other event.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{
    attempts, delivery, endpoint, ep_path, id_of, millis, requests_for, send_events, signed_by, state_changes,
    wait_for_count, wait_for_delivery, wait_for_requests, PATIENCE,
};
use crate::support::{eventually, wait_for_state, Backend, Fenix, Plan, Received, Receiver, TestDb};

/// The operator endpoint's secret (`FENIX_OPERATOR_WEBHOOK_SECRET`): whsec_ + base64 of bytes 1..=32.
const OPERATOR_SECRET: &str = "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";

/// Starts Fenix with operator webhooks going to a fresh receiver; answers both.
async fn with_operator(db: &TestDb, extra: &[(&str, &str)]) -> (Fenix, Receiver) {
    let operator = Receiver::http(|_| Plan::ok()).await;
    let mut env =
        vec![("FENIX_OPERATOR_WEBHOOK_URL", operator.url.as_str()), ("FENIX_OPERATOR_WEBHOOK_SECRET", OPERATOR_SECRET)];
    env.extend_from_slice(extra);
    (Fenix::start(db, &env).await, operator)
}

/// Every operator event of `event_type` received so far, as (request, data).
fn operator_events(receiver: &Receiver, event_type: &str) -> Vec<(Received, Value)> {
    receiver
        .received()
        .into_iter()
        .filter(|r| r.header("x-fenix-event-type") == event_type)
        .map(|r| {
            let data = r.json()["data"].clone();
            (r, data)
        })
        .collect()
}

/// Waits for an operator event of `event_type` whose data matches `pred`; returns the request.
async fn operator_event(receiver: &Receiver, event_type: &str, pred: impl Fn(&Value) -> bool) -> Received {
    let find = || operator_events(receiver, event_type).into_iter().find(|(_, d)| pred(d)).map(|(r, _)| r);
    eventually(&format!("an {event_type} operator event arrives"), PATIENCE, || async { find().is_some() }).await;
    find().unwrap()
}

/// Checks what every operator event shares: signed with the operator secret, type and id as the headers say.
fn assert_operator_event(r: &Received, event_type: &str) {
    assert!(signed_by(OPERATOR_SECRET, r), "the operator event verifies with the signing crate");
    let body = r.json();
    assert_eq!(body["type"], event_type);
    assert_eq!(body["id"], r.header("x-fenix-event-id"));
    assert_eq!(r.header("idempotency-key"), r.header("x-fenix-event-id"));
}

async fn a_receiver_answering_410_disables_its_endpoint_and_the_operator_hears_of_it(backend: Backend) {
    let db = TestDb::new(backend).await;
    let (fenix, operator) = with_operator(&db, &[]).await;
    let gone = Receiver::http(|_| Plan::status(410).with_body("this hook was removed")).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": gone.url})).await);

    let first = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
    let disabled = wait_for_state(&fenix, &app, &ep, "disabled", PATIENCE).await;
    let reason = disabled["state_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("410"), "the reason names the 410: {disabled}");
    let changes = state_changes(&fenix, &app, &ep).await;
    assert!(
        changes.iter().any(|c| c["state"] == "disabled" && c["reason"].as_str().unwrap_or_default().contains("410")),
        "the automatic change is recorded: {changes:?}"
    );
    let d = wait_for_delivery(&fenix, &app, &first, &ep, "failed").await;
    assert_eq!(d["attempt_count"], 1, "no retry after 410 Gone");

    let later = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {}})).await;
    assert_eq!(later["deliveries"], 1, "an event for a disabled endpoint still gets a delivery for it: {later}");
    wait_for_delivery(&fenix, &app, &id_of(&later), &ep, "skipped").await;
    assert_eq!(gone.count(), 1, "a disabled endpoint got another request");

    let note = operator_event(&operator, "endpoint.disabled", |d| d["endpoint_id"] == ep.as_str()).await;
    assert_operator_event(&note, "endpoint.disabled");
    let data = &note.json()["data"];
    assert_eq!(data["app_id"], app.as_str());
    assert!(data["reason"].as_str().unwrap_or_default().contains("410"), "{data}");
    assert_eq!(operator_events(&operator, "endpoint.disabled").len(), 1, "one disabling, one event");
}

async fn deliveries_exhausting_their_attempts_raise_signed_dead_letter_events_counting_each_once(backend: Backend) {
    let db = TestDb::new(backend).await;
    let (fenix, operator) =
        with_operator(&db, &[("FENIX_RETRY_SCHEDULE", "100ms"), ("FENIX_MAINTENANCE_INTERVAL", "200ms")]).await;
    let down = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": down.url})).await);

    let events = send_events(&fenix, &app, "booking.confirmed", 3).await;
    let mut dead = Vec::new();
    for event in &events {
        dead.push(id_of(&wait_for_delivery(&fenix, &app, event, &ep, "failed").await));
    }
    let reported = || {
        let mut ids: Vec<String> = operator_events(&operator, "delivery.dead_lettered")
            .iter()
            .filter(|(_, d)| d["endpoint_id"] == ep.as_str())
            .flat_map(|(_, d)| d["delivery_ids"].as_array().cloned().unwrap_or_default())
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect();
        ids.sort();
        ids
    };
    eventually("the operator heard of all three dead letters", PATIENCE, || async { reported().len() >= 3 }).await;
    dead.sort();
    assert_eq!(reported(), dead, "each dead-lettered delivery is reported exactly once");
    let notes = operator_events(&operator, "delivery.dead_lettered");
    let counted: i64 = notes.iter().map(|(_, d)| d["count"].as_i64().unwrap_or(0)).sum();
    assert_eq!(counted, 3, "the aggregated counts add up");
    for (r, d) in &notes {
        assert_operator_event(r, "delivery.dead_lettered");
        assert_eq!(d["app_id"], app.as_str());
    }
}

async fn an_endpoint_below_99_percent_success_over_the_hour_raises_one_success_rate_alert(backend: Backend) {
    let db = TestDb::new(backend).await;
    let (fenix, operator) =
        with_operator(&db, &[("FENIX_RETRY_SCHEDULE", "50ms"), ("FENIX_MAINTENANCE_INTERVAL", "200ms")]).await;
    // One failure among 21 attempts: 95 % success, with the 20 attempts the alert needs.
    let flaky = Receiver::http(|n| if n == 0 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": flaky.url})).await);
    send_events(&fenix, &app, "booking.confirmed", 20).await;
    wait_for_count(&fenix, &app, &ep, "succeeded", 20).await;

    let note = operator_event(&operator, "endpoint.success_rate_low", |d| d["endpoint_id"] == ep.as_str()).await;
    assert_operator_event(&note, "endpoint.success_rate_low");
    let data = &note.json()["data"];
    // The alert may fire as soon as 20 attempts are counted (19 successes), or after the 21st.
    let attempts = data["attempts"].as_i64().unwrap();
    assert!((20..=21).contains(&attempts), "{data}");
    assert_eq!(data["successes"].as_i64().unwrap(), attempts - 1, "{data}");
    assert!(data["success_rate"].as_f64().unwrap() < 0.99, "{data}");
    // A later maintenance pass (seen through the dead letter it reports) does not repeat the alert.
    let down = Receiver::http(|_| Plan::status(500)).await;
    let other = id_of(&fenix.create_endpoint(&app, json!({"url": down.url, "event_types": ["other.*"]})).await);
    send_events(&fenix, &app, "other.thing", 1).await;
    operator_event(&operator, "delivery.dead_lettered", |d| d["endpoint_id"] == other.as_str()).await;
    eventually("every operator event was delivered", PATIENCE, || async {
        let all = fenix.deliveries("fenix-operator", "").await;
        all.iter().all(|d| d["status"] == "succeeded")
    })
    .await;
    assert_eq!(operator_events(&operator, "endpoint.success_rate_low").len(), 1, "the alert is sent once an hour");
}

async fn a_429_with_retry_after_delays_the_next_attempt_as_asked(backend: Backend) {
    let db = TestDb::new(backend).await;
    // The schedule alone would retry after 1 s; the receiver asks for 2 s, within the cap of 4 × 1 s.
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1s")]).await;
    let receiver =
        Receiver::http(|n| if n == 0 { Plan::status(429).with_header("retry-after", "2") } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let event = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);

    wait_for_delivery(&fenix, &app, &event, &ep, "succeeded").await;
    let received = wait_for_requests(&receiver, 2).await;
    assert_eq!(received.len(), 2);
    let gap = received[1].at - received[0].at;
    assert!(gap >= Duration::from_millis(1900), "the retry came {gap:?} after a 429 asking for 2 s");
}

async fn a_long_retry_after_is_capped_at_four_times_the_scheduled_wait(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1s,1s")]).await;
    let receiver = Receiver::http(|_| Plan::status(503).with_header("retry-after", "3600")).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let event = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);

    wait_for_requests(&receiver, 1).await;
    eventually("the first attempt is recorded", PATIENCE, || async {
        delivery(&fenix, &app, &event, &ep).await["attempt_count"] == 1
    })
    .await;
    let d = delivery(&fenix, &app, &event, &ep).await;
    assert_eq!(d["status"], "pending", "{d}");
    let logged = attempts(&fenix, &app, &id_of(&d)).await;
    assert_eq!(logged[0]["response_status"], 503);
    let attempt_end = millis(&logged[0]["started_at"]) + logged[0]["duration_ms"].as_i64().unwrap();
    let next = millis(&d["next_attempt_at"]);
    assert!(next >= attempt_end + 4_000, "a Retry-After longer than the schedule is honoured up to the cap: {d}");
    // The cap is 4 × 1 s after the attempt; a second of slack covers the worker's own bookkeeping.
    assert!(next <= attempt_end + 5_000, "Retry-After: 3600 was not capped at 4 × the scheduled wait: {d} {logged:?}");
}

async fn an_endpoint_failing_longer_than_the_limit_is_disabled_but_one_that_recovered_stays_active(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(
        &db,
        &[
            ("FENIX_DISABLE_AFTER_FAILING", "1s"),
            ("FENIX_MAINTENANCE_INTERVAL", "200ms"),
            // Retries far away: the scenario depends only on first attempts.
            ("FENIX_RETRY_SCHEDULE", "1h"),
        ],
    )
    .await;
    let recovering = Receiver::http(|n| if n == 0 { Plan::status(500) } else { Plan::ok() }).await;
    let failing = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let healthy_ep =
        id_of(&fenix.create_endpoint(&app, json!({"url": recovering.url, "event_types": ["first.*"]})).await);
    let failing_ep =
        id_of(&fenix.create_endpoint(&app, json!({"url": failing.url, "event_types": ["second.*"]})).await);

    // The recovering endpoint fails once, then succeeds with the next event; only afterwards does the other fail.
    let failed_once = send_events(&fenix, &app, "first.ping", 1).await.remove(0);
    eventually("the first attempt failed", PATIENCE, || async {
        delivery(&fenix, &app, &failed_once, &healthy_ep).await["attempt_count"] == 1
    })
    .await;
    let recovered = send_events(&fenix, &app, "first.ping", 1).await.remove(0);
    wait_for_delivery(&fenix, &app, &recovered, &healthy_ep, "succeeded").await;
    send_events(&fenix, &app, "second.ping", 1).await;

    let disabled = wait_for_state(&fenix, &app, &failing_ep, "disabled", PATIENCE).await;
    assert!(!disabled["state_reason"].as_str().unwrap_or_default().is_empty(), "a reason is given: {disabled}");
    let changes = state_changes(&fenix, &app, &failing_ep).await;
    assert_eq!(changes.first().map(|c| &c["state"]), Some(&json!("disabled")), "{changes:?}");
    assert_eq!(changes[0]["reason"], disabled["state_reason"]);
    // Its failure was older than the other's: had the success not counted, the same pass would have disabled it.
    let healthy = endpoint(&fenix, &app, &healthy_ep).await;
    assert_eq!(healthy["state"], "active", "{healthy}");
    assert!(state_changes(&fenix, &app, &healthy_ep).await.is_empty());
}

/// Issue 16: an event sent while an endpoint is disabled is kept for it as a
/// `skipped` delivery, so that resuming with replay brings it back.
async fn events_sent_while_an_endpoint_is_disabled_are_skipped_and_resume_with_replay_delivers_them(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::status(410)).await;
    let app = fenix.create_app("acme").await;
    let created = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let (ep, secret) = (id_of(&created), created["secret"].as_str().unwrap().to_string());

    let first = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
    wait_for_state(&fenix, &app, &ep, "disabled", PATIENCE).await;
    wait_for_delivery(&fenix, &app, &first, &ep, "failed").await;

    // While disabled: every new event still gets a delivery for the endpoint, kept as `skipped`.
    let during = send_events(&fenix, &app, "booking.confirmed", 3).await;
    for event in &during {
        let d = wait_for_delivery(&fenix, &app, event, &ep, "skipped").await;
        assert_eq!(d["attempt_count"], 0, "a skipped delivery made no request: {d}");
    }
    assert_eq!(receiver.count(), 1, "a disabled endpoint got a request");

    // The receiver is fixed; resume with replay sends each of them once, signed.
    receiver.set_behaviour(|_| Plan::ok());
    let (status, resumed) =
        fenix.call("POST", &ep_path(&app, &ep, "/resume"), Some(json!({"replay_skipped": true}))).await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["state"], "active");
    assert_eq!(resumed["replayed"], 3, "the three skipped deliveries are re-queued: {resumed}");
    for event in &during {
        wait_for_delivery(&fenix, &app, event, &ep, "succeeded").await;
    }
    let received = wait_for_requests(&receiver, 4).await;
    for event in &during {
        let got = requests_for(&received, event);
        assert_eq!(got.len(), 1, "{event} arrived once after the replay");
        assert!(signed_by(&secret, got[0]), "the replayed request verifies with the endpoint's secret");
        assert_eq!(got[0].json()["id"], event.as_str());
    }
    // The 410'd event stays a dead letter: replay_skipped does not touch it.
    assert_eq!(delivery(&fenix, &app, &first, &ep).await["status"], "failed");
}

crate::on_both_backends!(
    events_sent_while_an_endpoint_is_disabled_are_skipped_and_resume_with_replay_delivers_them,
    a_receiver_answering_410_disables_its_endpoint_and_the_operator_hears_of_it,
    deliveries_exhausting_their_attempts_raise_signed_dead_letter_events_counting_each_once,
    an_endpoint_below_99_percent_success_over_the_hour_raises_one_success_rate_alert,
    a_429_with_retry_after_delays_the_next_attempt_as_asked,
    a_long_retry_after_is_capped_at_four_times_the_scheduled_wait,
    an_endpoint_failing_longer_than_the_limit_is_disabled_but_one_that_recovered_stays_active,
);
