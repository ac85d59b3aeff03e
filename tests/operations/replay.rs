//! Replay of dead-lettered deliveries: original event id and envelope bytes, a
//! fresh attempt budget, the earlier attempts kept, never twice queued, never a
//! succeeded or pending delivery, and the time window honoured.

use serde_json::json;

use super::common::{
    attempts, delivery, endpoint, ep_path, id_of, requests_for, send_events, wait_for_count, wait_for_delivery,
    wait_for_requests,
};
use crate::support::{post_with_retry_after, Backend, Fenix, Plan, Receiver, TestDb};

async fn failed_deliveries_replayed_after_the_receiver_is_fixed_arrive_with_the_same_bytes_and_a_longer_history(
    backend: Backend,
) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let receiver = Receiver::http(|_| Plan::status(500).with_body("down")).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let events = send_events(&fenix, &app, "booking.confirmed", 3).await;
    wait_for_count(&fenix, &app, &ep, "failed", 3).await;
    assert_eq!(receiver.count(), 6, "two attempts each before the dead letter");

    receiver.set_behaviour(|_| Plan::ok());
    let (status, out) = fenix.call("POST", &ep_path(&app, &ep, "/replay"), Some(json!({"statuses": ["failed"]}))).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["replayed"], 3);
    let (status, again) =
        fenix.call("POST", &ep_path(&app, &ep, "/replay"), Some(json!({"statuses": ["failed"]}))).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["replayed"], 0, "a second replay must not queue the same deliveries again");
    wait_for_count(&fenix, &app, &ep, "succeeded", 3).await;

    let received = receiver.received();
    assert_eq!(received.len(), 9, "each event exactly once more");
    for event in &events {
        let d = delivery(&fenix, &app, event, &ep).await;
        assert_eq!(d["attempt_count"], 3);
        let logged = attempts(&fenix, &app, &id_of(&d)).await;
        let numbers: Vec<_> = logged.iter().map(|a| a["attempt_number"].as_i64().unwrap()).collect();
        assert_eq!(numbers, [1, 2, 3], "earlier attempts first, the replayed one after: {logged:?}");
        assert!(logged[..2].iter().all(|a| a["response_status"] == 500 && a["error"] == "http_status"));
        assert_eq!(logged[2]["response_status"], 200);
        assert_eq!(logged[2]["error"], serde_json::Value::Null);

        let requests = requests_for(&received, event);
        assert_eq!(requests.len(), 3);
        for r in &requests {
            assert_eq!(r.body, requests[0].body, "every attempt of {event} carries the first attempt's bytes");
            assert_eq!(r.json()["id"], event.as_str());
        }
        let sent_ids: Vec<_> = requests.iter().map(|r| r.header("x-fenix-delivery-id").to_string()).collect();
        let logged_ids: Vec<_> = logged.iter().map(|a| a["id"].as_str().unwrap().to_string()).collect();
        assert_eq!(sent_ids, logged_ids, "each logged attempt is the request that was sent");
    }

    let (_, after) = fenix.call("POST", &ep_path(&app, &ep, "/replay"), None).await;
    assert_eq!(after["replayed"], 0, "succeeded deliveries are never replayed: {after}");
    let dlv = id_of(&delivery(&fenix, &app, &events[0], &ep).await);
    let (status, refused) = fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{dlv}/replay"), None).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "not_replayable");
    assert_eq!(receiver.count(), 9);
}

async fn one_failed_delivery_can_be_replayed_on_its_own(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let events = send_events(&fenix, &app, "booking.confirmed", 2).await;
    wait_for_count(&fenix, &app, &ep, "failed", 2).await;
    receiver.set_behaviour(|_| Plan::ok());

    let chosen = id_of(&delivery(&fenix, &app, &events[0], &ep).await);
    let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{chosen}/replay"), None).await;
    assert_eq!(status, 202, "{out}");
    assert_eq!(out["id"], chosen.as_str());
    assert_ne!(out["status"], "failed", "the answer shows the delivery re-queued: {out}");
    let done = wait_for_delivery(&fenix, &app, &events[0], &ep, "succeeded").await;
    assert_eq!(done["attempt_count"], 3);

    let received = receiver.received();
    assert_eq!(requests_for(&received, &events[0]).len(), 3);
    assert_eq!(requests_for(&received, &events[1]).len(), 2, "the other failed delivery was left alone");
    assert_eq!(delivery(&fenix, &app, &events[1], &ep).await["status"], "failed");
}

async fn a_delivery_still_waiting_for_its_retry_is_not_replayable(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1h")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let event = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
    wait_for_requests(&receiver, 1).await;
    let waiting = wait_for_delivery(&fenix, &app, &event, &ep, "pending").await;

    let (status, refused) =
        fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{}/replay", id_of(&waiting)), None).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "not_replayable");
    let (status, out) = fenix.call("POST", &ep_path(&app, &ep, "/replay"), None).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["replayed"], 0);
    assert_eq!(receiver.count(), 1);
}

async fn an_endpoint_replay_honours_its_time_window(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    // One after the other, each dead-lettered before the next is sent, so their creation times differ.
    let mut failed = Vec::new();
    for _ in 0..3 {
        let event = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
        failed.push(wait_for_delivery(&fenix, &app, &event, &ep, "failed").await);
    }
    let (a, b, c) = (&failed[0], &failed[1], &failed[2]);
    receiver.set_behaviour(|_| Plan::ok());
    let replay = |body: serde_json::Value| {
        let (fenix, path) = (&fenix, ep_path(&app, &ep, "/replay"));
        async move {
            let (status, out) = fenix.call("POST", &path, Some(body)).await;
            assert_eq!(status, 200, "{out}");
            out["replayed"].as_i64().expect("replayed count")
        }
    };

    assert_eq!(replay(json!({"statuses": ["failed"], "until": b["created_at"]})).await, 1, "until is exclusive");
    assert_eq!(replay(json!({"since": c["created_at"]})).await, 1, "since is inclusive");
    for d in [a, c] {
        wait_for_delivery(&fenix, &app, d["event_id"].as_str().unwrap(), &ep, "succeeded").await;
    }
    assert_eq!(delivery(&fenix, &app, b["event_id"].as_str().unwrap(), &ep).await["status"], "failed");
    assert_eq!(replay(json!({"since": b["created_at"], "until": c["created_at"]})).await, 1);
    wait_for_delivery(&fenix, &app, b["event_id"].as_str().unwrap(), &ep, "succeeded").await;
    assert_eq!(receiver.count(), 9);

    let (status, bad) =
        fenix.call("POST", &ep_path(&app, &ep, "/replay"), Some(json!({"statuses": ["succeeded"]}))).await;
    assert_eq!(status, 422, "{bad}");
    assert_eq!(bad["error"]["code"], "invalid_statuses");
    let (status, bad) = fenix.call("POST", &ep_path(&app, &ep, "/replay"), Some(json!({"since": "yesterday"}))).await;
    assert_eq!(status, 400, "{bad}");
    assert_eq!(bad["error"]["code"], "invalid_time");
}

fn assert_over_the_replay_limit((status, retry_after, body): &(u16, Option<u64>, serde_json::Value), most: u64) {
    assert_eq!((*status, &body["error"]["code"]), (429, &json!("replay_limit_reached")), "{body}");
    assert!(retry_after.is_some_and(|s| (1..=most).contains(&s)), "Retry-After {retry_after:?}");
}

/// Replays are limited per endpoint (and per app): delivery replays 60 at
/// once, then one a second; a whole endpoint's 5 at once (`resume` with `replay_skipped`
/// counting as one), then 429 with `Retry-After`. The endpoint is paused, so
/// replayed deliveries are skipped again and nothing is sent.
async fn replays_beyond_their_budget_answer_429_with_retry_after(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let (status, body) = fenix.call("POST", &ep_path(&app, &ep, "/pause"), None).await;
    assert_eq!(status, 200, "{body}");
    send_events(&fenix, &app, "booking.confirmed", 80).await;
    wait_for_count(&fenix, &app, &ep, "skipped", 80).await;

    let skipped = fenix.deliveries(&app, &format!("endpoint_id={ep}")).await;
    let started = std::time::Instant::now();
    let mut answers = Vec::new();
    for d in &skipped {
        let path = format!("/v1/apps/{app}/deliveries/{}/replay", id_of(d));
        answers.push(post_with_retry_after(&fenix, &path, json!({})).await);
    }
    // 60 at once, then one a second while the calls go on.
    let refills = started.elapsed().as_secs() as usize + 1;
    let accepted = answers.iter().filter(|a| a.0 == 202).count();
    assert!((60..=60 + refills).contains(&accepted), "{accepted} delivery replays accepted");
    assert!(answers[..60].iter().all(|a| a.0 == 202), "the endpoint's burst of delivery replays");
    answers.iter().filter(|a| a.0 != 202).for_each(|a| assert_over_the_replay_limit(a, 1));
    assert!(accepted < answers.len(), "80 replays within {refills} s: some over the limit");
    let replay = ep_path(&app, &ep, "/replay");
    for i in 0..5 {
        let (status, _, body) = post_with_retry_after(&fenix, &replay, json!({})).await;
        assert_eq!(status, 200, "endpoint replay {i}: {body}");
    }
    assert_over_the_replay_limit(&post_with_retry_after(&fenix, &replay, json!({})).await, 60);
    let resume = post_with_retry_after(&fenix, &ep_path(&app, &ep, "/resume"), json!({"replay_skipped": true})).await;
    assert_over_the_replay_limit(&resume, 60);
    assert_eq!(endpoint(&fenix, &app, &ep).await["state"], "paused", "a refused resume changes nothing");
    assert_eq!(receiver.count(), 0, "paused: every replayed delivery was skipped again");
    // Resuming without a replay sends nothing by itself and is not limited.
    let (status, body) = fenix.call("POST", &ep_path(&app, &ep, "/resume"), None).await;
    assert_eq!(status, 200, "{body}");
}

crate::on_both_backends!(
    replays_beyond_their_budget_answer_429_with_retry_after,
    failed_deliveries_replayed_after_the_receiver_is_fixed_arrive_with_the_same_bytes_and_a_longer_history,
    one_failed_delivery_can_be_replayed_on_its_own,
    a_delivery_still_waiting_for_its_retry_is_not_replayable,
    an_endpoint_replay_honours_its_time_window,
);
