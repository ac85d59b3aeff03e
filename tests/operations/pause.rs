//! Pause and resume during an incident: a paused endpoint gets no request, what
//! comes due meanwhile is `skipped`, and resume can re-queue it with the
//! original event ids.

use std::collections::HashMap;

use serde_json::json;

use super::common::{
    attempts, delivery, ep_path, id_of, requests_for, send_events, wait_for_count, wait_for_delivery,
    wait_for_requests, PATIENCE,
};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

async fn events_sent_while_paused_are_skipped_and_resume_with_replay_sends_each_once_with_its_original_id(
    backend: Backend,
) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);

    let (status, paused) = fenix.call("POST", &ep_path(&app, &ep, "/pause"), None).await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["state"], "paused");
    let events = send_events(&fenix, &app, "booking.confirmed", 5).await;
    wait_for_count(&fenix, &app, &ep, "skipped", 5).await;
    assert_eq!(receiver.count(), 0, "a paused endpoint got a request");

    let (status, resumed) =
        fenix.call("POST", &ep_path(&app, &ep, "/resume"), Some(json!({"replay_skipped": true}))).await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["state"], "active");
    assert_eq!(resumed["replayed"], 5, "the answer says how many were re-queued: {resumed}");
    wait_for_count(&fenix, &app, &ep, "succeeded", 5).await;

    let received = receiver.received();
    assert_eq!(received.len(), 5, "each skipped event arrives exactly once");
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in &received {
        let id = r.header("x-fenix-event-id").to_string();
        assert_eq!(r.json()["id"], id.as_str(), "body id equals the X-Fenix-Event-Id header");
        assert_eq!(r.header("idempotency-key"), id);
        *seen.entry(id).or_default() += 1;
    }
    for event in &events {
        assert_eq!(seen.get(event), Some(&1), "{event} (the id the ingest answered) arrived once: {seen:?}");
    }
}

async fn resume_without_replay_sends_new_events_and_leaves_the_skipped_ones_for_an_explicit_replay(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);

    fenix.call("POST", &ep_path(&app, &ep, "/pause"), None).await;
    let during = send_events(&fenix, &app, "booking.confirmed", 2).await;
    wait_for_count(&fenix, &app, &ep, "skipped", 2).await;

    let (status, resumed) = fenix.call("POST", &ep_path(&app, &ep, "/resume"), None).await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["state"], "active");
    assert_eq!(resumed["replayed"], 0);
    let after = send_events(&fenix, &app, "booking.confirmed", 1).await;
    wait_for_delivery(&fenix, &app, &after[0], &ep, "succeeded").await;
    assert_eq!(receiver.count(), 1, "only the event sent after the resume went out");
    for event in &during {
        assert_eq!(delivery(&fenix, &app, event, &ep).await["status"], "skipped");
    }

    let (status, out) =
        fenix.call("POST", &ep_path(&app, &ep, "/replay"), Some(json!({"statuses": ["skipped"]}))).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["replayed"], 2);
    wait_for_count(&fenix, &app, &ep, "succeeded", 3).await;
    let received = receiver.received();
    for event in &during {
        assert_eq!(requests_for(&received, event).len(), 1, "{event} arrived once after the replay");
    }
}

async fn a_retry_coming_due_while_paused_is_skipped_and_keeps_its_attempt_history_when_replayed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1s,1s")]).await;
    let receiver = Receiver::http(|n| if n == 0 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let event = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
    wait_for_requests(&receiver, 1).await;
    eventually("the first failed attempt is recorded", PATIENCE, || async {
        delivery(&fenix, &app, &event, &ep).await["attempt_count"] == 1
    })
    .await;

    let (status, _) = fenix.call("POST", &ep_path(&app, &ep, "/pause"), None).await;
    assert_eq!(status, 200);
    let skipped = wait_for_delivery(&fenix, &app, &event, &ep, "skipped").await;
    assert_eq!(skipped["attempt_count"], 1);
    assert_eq!(receiver.count(), 1, "the retry was sent to a paused endpoint");

    let (status, resumed) =
        fenix.call("POST", &ep_path(&app, &ep, "/resume"), Some(json!({"replay_skipped": true}))).await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["replayed"], 1);
    let done = wait_for_delivery(&fenix, &app, &event, &ep, "succeeded").await;
    let logged = attempts(&fenix, &app, &id_of(&done)).await;
    let numbers: Vec<_> = logged.iter().map(|a| a["attempt_number"].as_i64().unwrap()).collect();
    assert_eq!(numbers, [1, 2], "{logged:?}");
    assert_eq!(logged[0]["response_status"], 500);
    assert_eq!(logged[1]["response_status"], 200);
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body, received[1].body, "the replay sent the same envelope bytes");
}

/// A pause or resume that changes nothing says so: of eight pauses at once,
/// one answers 200 and the others `409 endpoint_already_paused`; a resume of
/// an active endpoint (nothing to replay asked) is `409 endpoint_already_active`.
async fn a_pause_or_resume_that_changes_nothing_answers_409(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": "http://127.0.0.1:9/hook"})).await);
    let pause = ep_path(&app, &ep, "/pause");
    let calls = (0..8).map(|_| fenix.call("POST", &pause, None));
    let answers = futures::future::join_all(calls).await;
    let ok = answers.iter().filter(|(status, _)| *status == 200).count();
    let refused: Vec<_> = answers.iter().filter(|(status, _)| *status != 200).collect();
    assert_eq!(ok, 1, "one pause changed the state: {answers:?}");
    for (status, body) in &refused {
        assert_eq!((*status, body["error"]["code"].as_str()), (409, Some("endpoint_already_paused")), "{body}");
    }
    let (status, body) = fenix.call("POST", &ep_path(&app, &ep, "/resume"), None).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = fenix.call("POST", &ep_path(&app, &ep, "/resume"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("endpoint_already_active")), "{body}");
    // Asked to replay what was skipped, a resume of an active endpoint still does (and counts it).
    let (status, body) =
        fenix.call("POST", &ep_path(&app, &ep, "/resume"), Some(json!({"replay_skipped": true}))).await;
    assert_eq!((status, body["replayed"].as_u64()), (200, Some(0)), "{body}");
}

crate::on_both_backends!(
    a_pause_or_resume_that_changes_nothing_answers_409,
    events_sent_while_paused_are_skipped_and_resume_with_replay_sends_each_once_with_its_original_id,
    resume_without_replay_sends_new_events_and_leaves_the_skipped_ones_for_an_explicit_replay,
    a_retry_coming_due_while_paused_is_skipped_and_keeps_its_attempt_history_when_replayed,
);
