//! The delivery log in the browser: a failed delivery replayed from its page,
//! an endpoint's failed deliveries replayed in bulk, pause and resume with
//! replay of what was skipped.

use std::sync::{
    atomic::{AtomicBool, Ordering},
    Arc,
};

use serde_json::json;

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, send_one, wait_for_delivery},
};
use crate::support::{attempts, signed_v1_by, Backend, Fenix, Plan, Receiver, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_delivery_is_replayed_from_its_page_and_succeeds_once_the_receiver_is_fixed() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    // Two attempts in all per delivery, 100 ms apart.
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let fixed = Arc::new(AtomicBool::new(false));
    let flag = fixed.clone();
    let receiver = Receiver::http(move |_| {
        if flag.load(Ordering::SeqCst) {
            Plan::ok()
        } else {
            Plan::status(503).with_body("down for maintenance")
        }
    })
    .await;
    let (app, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    let secret = ep["secret"].as_str().unwrap().to_string();
    let first = send_one(&fenix, &app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    let second = send_one(&fenix, &app, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
    wait_for_delivery(&fenix, &app, &first, "failed").await;
    wait_for_delivery(&fenix, &app, &second, "failed").await;
    assert_eq!(receiver.count(), 4);

    let mut script = Script::start(
        "replay_flow",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", "Acme Travel"),
            ("ENDPOINT_ID", &ep_id),
            ("FIRST_DELIVERY", &first),
            ("SECOND_DELIVERY", &second),
        ],
    )
    .await;
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "fix-receiver" => {
                // Nothing was replayed before the receiver was fixed.
                assert_eq!(receiver.count(), 4, "a request arrived before the replay");
                fixed.store(true, Ordering::SeqCst);
                script.answer(json!({})).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();

    assert_eq!(out.fact("failed_rows"), &json!(["failed", "failed"]), "the status filter shows the failed ones only");
    let row = out.text("failed_row_text");
    assert!(
        row.contains("booking.confirmed") && row.contains("503"),
        "a row shows the event type and the last error: {row}"
    );
    let before = out.fact("attempts_before").as_array().cloned().unwrap_or_default();
    assert_eq!(before.len(), 2, "both failed attempts are listed: {before:?}");
    assert!(before.iter().all(|a| a.as_str().unwrap_or("").contains("503")), "{before:?}");
    assert_eq!(out.fact("attempts_after").as_array().map(Vec::len), Some(3), "the replay's attempt is listed");

    let d1 = wait_for_delivery(&fenix, &app, &first, "succeeded").await;
    assert_eq!(d1["attempt_count"], 3);
    let logged = attempts(&fenix, &app, &first).await;
    assert_eq!(logged[2]["response_status"], 200, "{logged:?}");
    wait_for_delivery(&fenix, &app, &second, "succeeded").await;
    let got = receiver.received();
    assert_eq!(got.len(), 6, "two failed attempts each, then one replay each");
    assert!(got[4..].iter().all(|r| signed_v1_by(&secret, r)), "replays are signed");
    let replayed: Vec<_> = got[4..].iter().map(|r| r.json()["data"]["n"].clone()).collect();
    assert_eq!(replayed, vec![json!(1), json!(2)], "the single replay first, then the bulk one");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_skips_what_comes_due_and_resuming_with_replay_delivers_it() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (app, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();

    let mut script = Script::start(
        "pause_flow",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", "Acme Travel"),
            ("ENDPOINT_ID", &ep_id),
        ],
    )
    .await;
    let mut sent = Vec::new();
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "send-while-paused" => {
                let (_, now) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep_id}"), None).await;
                assert_eq!(now["state"], "paused", "the page paused the endpoint");
                for n in 0..2 {
                    let id = send_one(&fenix, &app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
                    wait_for_delivery(&fenix, &app, &id, "skipped").await;
                    sent.push(id);
                }
                assert_eq!(receiver.count(), 0, "a paused endpoint receives nothing");
                script.answer(json!({ "deliveries": sent })).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();
    assert_eq!(out.fact("paused_state"), "paused");
    assert_eq!(out.fact("resumed_state"), "active");

    let (_, now) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep_id}"), None).await;
    assert_eq!(now["state"], "active");
    for id in &sent {
        wait_for_delivery(&fenix, &app, id, "succeeded").await;
    }
    assert_eq!(receiver.count(), 2, "each skipped delivery arrives once after the resume");
}
