//! An app's tasks in the browser (issue 33): the operator counts a replay's
//! deliveries with a dry run, starts it, sees its progress bar reach the end
//! and the state `succeeded`, and cancels another task while it runs; a
//! filter the API refuses is explained next to its field; a customer's
//! read-only portal session sees the tasks and can change none.

use std::time::Duration;

use serde_json::json;

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, portal_link},
};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// Deliveries to the endpoint answering 500: the replay the operator watches.
const SERVER_ERRORS: usize = 4;
/// Deliveries to the endpoint answering 404: the replay the operator cancels.
const CLIENT_ERRORS: usize = 20;

/// Sends `n` events of `event_type`, one request each.
async fn send(fenix: &Fenix, app: &str, event_type: &str, n: usize) {
    for i in 0..n {
        fenix.send_event(app, json!({"type": event_type, "data": {"n": i}})).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_counts_starts_follows_and_cancels_tasks_from_the_delivery_log() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    // Two attempts per delivery, 50 ms apart; tasks act on 2 deliveries a
    // second, so the second task is still running when the operator cancels it.
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms"), ("FENIX_TASK_RATE", "2")]).await;
    let failing = Receiver::http(|_| Plan::status(500)).await;
    let refusing = Receiver::http(|_| Plan::status(404)).await;
    let (app, ep) = app_with_endpoint(
        &fenix,
        "acme",
        "Acme Travel",
        json!({"url": failing.url, "event_types": ["booking.confirmed"]}),
    )
    .await;
    let failing_ep = ep["id"].as_str().unwrap().to_string();
    fenix.create_endpoint(&app, json!({"url": refusing.url, "event_types": ["booking.cancelled"]})).await;
    send(&fenix, &app, "booking.confirmed", SERVER_ERRORS).await;
    send(&fenix, &app, "booking.cancelled", CLIENT_ERRORS).await;
    eventually("every delivery is dead-lettered", Duration::from_secs(30), || async {
        fenix.deliveries(&app, "status=failed").await.len() == SERVER_ERRORS + CLIENT_ERRORS
    })
    .await;
    assert_eq!(failing.count(), 2 * SERVER_ERRORS);
    let read_link = portal_link(&fenix, &app, json!({"access": "read"})).await;

    let mut script = Script::start(
        "tasks_flow",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", "Acme Travel"),
            ("FAILING_ENDPOINT", &failing_ep),
            ("READ_LINK", read_link["url"].as_str().unwrap()),
        ],
    )
    .await;
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "fix-receiver" => {
                assert_eq!(failing.count(), 2 * SERVER_ERRORS, "a dry run sends nothing");
                failing.set_behaviour(|_| Plan::ok());
                script.answer(json!({})).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();

    let refused = out.text("until_error");
    assert!(refused.contains("until") && refused.contains("after since"), "the refusal in words: {refused}");
    assert_eq!(out.fact("start_before_count"), &json!(true), "Start waits for a count");
    assert_eq!(out.fact("replay_count"), &json!(SERVER_ERRORS.to_string()));
    assert_eq!(out.text("replay_count_text"), "4 deliveries would be replayed.");

    // The replay: its bar filled up to the end, never going back.
    let replay = fenix.task(&app, &out.text("replay_task")).await;
    assert_eq!(replay["state"], "succeeded", "{replay}");
    assert_eq!((replay["selected"].as_i64(), replay["done"].as_i64()), (Some(4), Some(4)), "{replay}");
    assert_eq!(replay["filter"]["endpoint_id"], failing_ep.as_str(), "{replay}");
    assert_eq!(replay["filter"]["statuses"], json!(["failed"]), "{replay}");
    assert_eq!(replay["filter"]["last_status_class"], "5xx", "{replay}");
    let seen = out.fact("replay_progress").as_array().cloned().unwrap_or_default();
    let values: Vec<i64> = seen.iter().map(|s| s["value"].as_i64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "the bar never goes back: {seen:?}");
    let last = seen.last().expect("the bar was seen");
    assert_eq!((&last["value"], &last["max"], &last["state"]), (&json!(4), &json!(4), &json!("succeeded")), "{seen:?}");
    assert_eq!(out.text("replay_progress_text"), "4 of 4");
    assert_eq!(out.fact("polls_after_end"), &json!(0), "the list stops asking once no task is active");
    eventually("the replayed deliveries arrive", Duration::from_secs(10), || async {
        fenix.deliveries(&app, &format!("endpoint_id={failing_ep}&status=succeeded")).await.len() == SERVER_ERRORS
    })
    .await;
    assert_eq!(failing.count(), 3 * SERVER_ERRORS, "each replayed once");

    // The other task, cancelled while it ran: it stopped short.
    assert_eq!(out.fact("cancel_count"), &json!(CLIENT_ERRORS.to_string()));
    let cancelled = fenix.task(&app, &out.text("cancel_task")).await;
    assert_eq!(cancelled["state"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["selected"], CLIENT_ERRORS, "{cancelled}");
    assert!(cancelled["done"].as_i64().unwrap() < CLIENT_ERRORS as i64, "stopped before the end: {cancelled}");
    assert!(cancelled["finished_at"].is_string(), "{cancelled}");
    assert_eq!(out.fact("cancelled_state"), "cancelled");
    assert_eq!(out.fact("cancel_button_after"), &json!(0), "an ended task offers no Cancel");
    let shown: i64 = out.text("cancelled_value").parse().unwrap();
    assert!(shown < CLIENT_ERRORS as i64, "the bar stopped short: {shown}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let later = fenix.task(&app, &out.text("cancel_task")).await;
    assert_eq!(later["done"], cancelled["done"], "nothing more done after the cancel");
    let replayed = refusing.count() - 2 * CLIENT_ERRORS;
    assert!(replayed < 2 * CLIENT_ERRORS, "not every refused delivery went again: {replayed}");
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/tasks"), None).await;
    assert_eq!(list["data"].as_array().map(Vec::len), Some(2), "{list}");

    // The customer's read-only view: both tasks, newest first, nothing to act with.
    let (replay_id, cancel_id) = (out.text("replay_task"), out.text("cancel_task"));
    assert_eq!(out.fact("read_rows"), &json!([cancel_id, replay_id]));
    assert_eq!(out.fact("read_states"), &json!(["cancelled", "succeeded"]));
    assert_eq!(out.fact("read_forms"), &json!(0), "no form to start a task");
    assert_eq!(out.fact("read_cancel_buttons"), &json!(0));
}
