//! Bulk operations as tasks: a dry run counts exactly what the task then acts
//! on; a task killed halfway goes on after a restart and acts on each selected
//! delivery once; a cancelled task stops; a replay re-queues no faster than
//! the worker takes its deliveries; cancel tasks stop deliveries not sent
//! yet; an endpoint's recovery replays only its window's deliveries that did
//! not succeed; bad filters are refused naming the field; an operator's task
//! acts across apps, and only an admin may run one; an app's deletion is a
//! task that erases it in batches and cannot be cancelled.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{ep_path, id_of, wait_for_count};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// Sends `n` events of `event_type` in batches of 100; answers their ids.
async fn send_many(fenix: &Fenix, app: &str, event_type: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(100) {
        let events: Vec<Value> =
            (start..n.min(start + 100)).map(|i| json!({"type": event_type, "data": {"n": i}})).collect();
        let (status, out) =
            fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": events}))).await;
        assert!(status == 200 || status == 202, "batch: {status} {out}");
        for item in out["data"].as_array().or_else(|| out["events"].as_array()).expect("batch items") {
            ids.push(id_of(item));
        }
    }
    ids
}

/// Now, as the API writes times.
fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

async fn wait_for_state(fenix: &Fenix, app: &str, id: &str, state: &str, patience: Duration) -> Value {
    eventually(&format!("task {id} is {state}"), patience, || async { fenix.task(app, id).await["state"] == state })
        .await;
    fenix.task(app, id).await
}

async fn create(fenix: &Fenix, app: &str, body: Value) -> (u16, Value) {
    fenix.call("POST", &format!("/v1/apps/{app}/tasks"), Some(body)).await
}

/// An app whose endpoint (answering 500) dead-lettered `n` deliveries of
/// `booking.confirmed` and `m` of `booking.cancelled`.
async fn failed(fenix: &Fenix, receiver: &Receiver, n: usize, m: usize) -> (String, String) {
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    send_many(fenix, &app, "booking.confirmed", n).await;
    send_many(fenix, &app, "booking.cancelled", m).await;
    eventually("every delivery is dead-lettered", Duration::from_secs(60), || async {
        fenix.deliveries(&app, &format!("endpoint_id={ep}&status=failed")).await.len() == n + m
    })
    .await;
    (app, ep)
}

async fn a_dry_run_counts_exactly_what_the_task_then_replays(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let (app, ep) = failed(&fenix, &receiver, 7, 3).await;
    receiver.set_behaviour(|_| Plan::ok());
    let before = receiver.count();

    let filter = json!({"endpoint_id": ep, "event_types": ["booking.confirmed"], "last_status_class": "5xx"});
    let (status, dry) = create(&fenix, &app, json!({"kind": "replay", "dry_run": true, "filter": filter})).await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(dry, json!({"count": 7}));
    assert_eq!(receiver.count(), before, "a dry run sends nothing");

    let (status, created) = create(&fenix, &app, json!({"kind": "replay", "filter": filter})).await;
    assert_eq!(status, 202, "{created}");
    assert_eq!(created["selected"], 7);
    assert!(created["id"].as_str().unwrap().starts_with("tsk_"), "{created}");
    assert_eq!(created["created_by"], "admin");
    assert_eq!(created["filter"], filter);
    let done =
        wait_for_state(&fenix, &app, created["id"].as_str().unwrap(), "succeeded", Duration::from_secs(30)).await;
    assert_eq!((done["done"].as_i64(), done["failed"].as_i64()), (Some(7), Some(0)), "{done}");
    assert!(done["started_at"].is_string() && done["finished_at"].is_string(), "{done}");
    wait_for_count(&fenix, &app, &ep, "succeeded", 7).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count() - before, 7, "each selected delivery sent once more, nothing else");
    assert_eq!(fenix.deliveries(&app, &format!("endpoint_id={ep}&status=failed")).await.len(), 3);

    let (status, list) = fenix.call("GET", &format!("/v1/apps/{app}/tasks"), None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["data"][0]["id"], created["id"]);
}

async fn a_task_killed_halfway_resumes_after_a_restart_and_replays_each_delivery_once(backend: Backend) {
    let db = TestDb::new(backend).await;
    let mut fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms"), ("FENIX_TASK_RATE", "20")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let (app, ep) = failed(&fenix, &receiver, 200, 0).await;
    receiver.set_behaviour(|_| Plan::ok());

    let (status, created) = create(&fenix, &app, json!({"kind": "replay", "filter": {"endpoint_id": ep}})).await;
    assert_eq!(status, 202, "{created}");
    assert_eq!(created["selected"], 200);
    assert_eq!(created["rate_per_s"], 20);
    let id = created["id"].as_str().unwrap().to_string();
    eventually("the task is partway", Duration::from_secs(30), || async {
        fenix.task(&app, &id).await["done"].as_i64().unwrap_or(0) >= 40
    })
    .await;
    fenix.kill9();
    fenix.restart().await;
    let halfway = fenix.task(&app, &id).await;
    assert!(halfway["done"].as_i64().unwrap() < 200, "killed before the end: {halfway}");

    let done = wait_for_state(&fenix, &app, &id, "succeeded", Duration::from_secs(60)).await;
    assert_eq!((done["done"].as_i64(), done["failed"].as_i64()), (Some(200), Some(0)), "{done}");
    wait_for_count(&fenix, &app, &ep, "succeeded", 200).await;
    for d in fenix.deliveries(&app, &format!("endpoint_id={ep}")).await {
        // Two attempts before the dead letter, exactly one after its one replay.
        assert_eq!(d["attempt_count"], 3, "replayed exactly once: {d}");
    }
}

async fn a_cancelled_task_stops(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms"), ("FENIX_TASK_RATE", "4")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let (app, _) = failed(&fenix, &receiver, 40, 0).await;
    receiver.set_behaviour(|_| Plan::ok());

    let (status, created) = create(&fenix, &app, json!({"kind": "replay"})).await;
    assert_eq!(status, 202, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let (status, cancelled) = fenix.call("POST", &format!("/v1/apps/{app}/tasks/{id}/cancel"), None).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["state"], "cancelled");
    let at_cancel = cancelled["done"].as_i64().unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = fenix.task(&app, &id).await;
    assert_eq!(later["state"], "cancelled");
    assert_eq!(later["done"].as_i64().unwrap(), at_cancel, "no batch after the cancel: {later}");
    assert!(at_cancel < 40);
    let (status, again) = fenix.call("POST", &format!("/v1/apps/{app}/tasks/{id}/cancel"), None).await;
    assert_eq!(status, 409, "{again}");
    assert_eq!(again["error"]["code"], "task_ended");
}

async fn a_replay_waits_for_the_worker_to_take_what_it_re_queued(backend: Backend) {
    let db = TestDb::new(backend).await;
    let env = [
        ("FENIX_RETRY_SCHEDULE", "50ms"),
        ("FENIX_TASK_RATE", "1000"),
        ("FENIX_WORKER_CONCURRENCY", "2"),
        ("FENIX_CLAIM_BATCH", "2"),
    ];
    let fenix = Fenix::start(&db, &env).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let (app, ep) = failed(&fenix, &receiver, 200, 0).await;
    // The worker now takes two deliveries a second: at 1000/s, the task
    // would re-queue all 200 in a fifth of a second if it did not wait.
    receiver.set_behaviour(|_| Plan::ok().after(Duration::from_secs(1)));

    let (status, created) = create(&fenix, &app, json!({"kind": "replay"})).await;
    assert_eq!(status, 202, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    let done_now = || async { fenix.task(&app, &id).await["done"].as_i64().unwrap_or(0) };
    eventually("the first batch", Duration::from_secs(20), || async { done_now().await >= 1 }).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let slowed = fenix.task(&app, &id).await;
    // A batch (20) at once, then one a second at most while the worker is behind.
    assert!(slowed["done"].as_i64().unwrap() <= 100, "held back while the worker is behind: {slowed}");
    assert_eq!(slowed["state"], "running");
    let at = slowed["done"].as_i64().unwrap();
    eventually("the task goes on, slowly", Duration::from_secs(20), || async { done_now().await > at }).await;

    receiver.set_behaviour(|_| Plan::ok());
    let done = wait_for_state(&fenix, &app, &id, "succeeded", Duration::from_secs(60)).await;
    assert_eq!((done["done"].as_i64(), done["failed"].as_i64()), (Some(200), Some(0)), "{done}");
    wait_for_count(&fenix, &app, &ep, "succeeded", 200).await;
}

async fn a_cancel_task_makes_scheduled_and_pending_deliveries_skipped(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    for i in 0..4 {
        fenix.send_event(&app, json!({"type": "reminder.due", "delay": "1h", "data": {"n": i}})).await;
    }
    let (status, dry) =
        create(&fenix, &app, json!({"kind": "cancel", "dry_run": true, "filter": {"statuses": ["scheduled"]}})).await;
    assert_eq!(status, 200, "{dry}");
    assert_eq!(dry["count"], 4);
    for kind in ["cancel", "skip"] {
        let (status, created) = create(&fenix, &app, json!({"kind": kind, "filter": {"endpoint_id": ep}})).await;
        assert_eq!(status, 202, "{created}");
        let done =
            wait_for_state(&fenix, &app, created["id"].as_str().unwrap(), "succeeded", Duration::from_secs(30)).await;
        let expected = if kind == "cancel" { 4 } else { 0 };
        assert_eq!(done["done"], expected, "{done}");
    }
    let skipped = fenix.deliveries(&app, "status=skipped").await;
    assert_eq!(skipped.len(), 4);
    assert!(skipped.iter().all(|d| d["skip_reason"] == "cancelled"), "{skipped:?}");
    assert_eq!(receiver.count(), 0);
}

async fn recover_replays_only_the_windows_deliveries_that_did_not_succeed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    send_many(&fenix, &app, "booking.confirmed", 2).await;
    wait_for_count(&fenix, &app, &ep, "succeeded", 2).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let since = now();
    receiver.set_behaviour(|_| Plan::status(503));
    send_many(&fenix, &app, "booking.confirmed", 3).await;
    wait_for_count(&fenix, &app, &ep, "failed", 3).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let until = now();
    tokio::time::sleep(Duration::from_millis(20)).await;
    send_many(&fenix, &app, "booking.confirmed", 2).await;
    wait_for_count(&fenix, &app, &ep, "failed", 5).await;
    receiver.set_behaviour(|_| Plan::ok());

    let (status, created) =
        fenix.call("POST", &ep_path(&app, &ep, "/recover"), Some(json!({"since": since, "until": until}))).await;
    assert_eq!(status, 202, "{created}");
    assert_eq!(created["kind"], "replay");
    assert_eq!(created["selected"], 3, "only the window's failed deliveries: {created}");
    wait_for_state(&fenix, &app, created["id"].as_str().unwrap(), "succeeded", Duration::from_secs(30)).await;
    wait_for_count(&fenix, &app, &ep, "succeeded", 5).await;
    assert_eq!(fenix.deliveries(&app, "status=failed").await.len(), 2, "outside the window: left failed");

    let (status, bad) = fenix.call("POST", &ep_path(&app, &ep, "/recover"), Some(json!({}))).await;
    assert_eq!(status, 422, "{bad}");
    assert_eq!(bad["error"]["code"], "invalid_task_filter");
}

async fn bad_task_requests_are_refused_naming_the_field(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let cases = [
        (json!({"kind": "delete"}), 422, "invalid_task_kind", "kind"),
        (json!({"kind": "replay", "filter": {"since": "yesterday"}}), 422, "invalid_task_filter", "filter.since"),
        (
            json!({"kind": "replay", "filter": {"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}}),
            422,
            "invalid_task_filter",
            "filter.until",
        ),
        (json!({"kind": "replay", "filter": {"statuses": ["pending"]}}), 422, "invalid_statuses", "filter.statuses"),
        (json!({"kind": "cancel", "filter": {"statuses": ["failed"]}}), 422, "invalid_statuses", "filter.statuses"),
        (
            json!({"kind": "replay", "filter": {"last_status_class": "3xx"}}),
            422,
            "invalid_task_filter",
            "filter.last_status_class",
        ),
        (
            json!({"kind": "replay", "filter": {"endpoint_id": "nope"}}),
            422,
            "invalid_task_filter",
            "filter.endpoint_id",
        ),
        (
            json!({"kind": "replay", "filter": {"endpoint_id": "ep_01JF3Q8Z6V7W2X9Y4K5M0N1P2R"}}),
            404,
            "endpoint_not_found",
            "endpoint",
        ),
    ];
    for (body, status, code, named) in cases {
        let (got, out) = create(&fenix, &app, body.clone()).await;
        assert_eq!(got, status, "{body}: {out}");
        assert_eq!(out["error"]["code"], code, "{body}: {out}");
        assert!(out["error"]["message"].as_str().unwrap().contains(named), "{body}: {out}");
    }
    let (status, out) = fenix.call("GET", &format!("/v1/apps/{app}/tasks/tsk_01JF3Q8Z6V7W2X9Y4K5M0N1P2R"), None).await;
    assert_eq!(status, 404, "{out}");
    assert_eq!(out["error"]["code"], "task_not_found");
}

/// An app of its own whose endpoint (answering 500) dead-lettered `n` deliveries.
async fn failed_app(fenix: &Fenix, receiver: &Receiver, uid: &str, n: usize) -> String {
    let app = fenix.create_app(uid).await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    send_many(fenix, &app, "booking.confirmed", n).await;
    eventually("every delivery is dead-lettered", Duration::from_secs(60), || async {
        fenix.deliveries(&app, &format!("endpoint_id={ep}&status=failed")).await.len() == n
    })
    .await;
    app
}

async fn an_operators_task_replays_across_apps_and_only_an_admin_may_run_one(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let a = failed_app(&fenix, &receiver, "acme", 6).await;
    let b = failed_app(&fenix, &receiver, "globex", 4).await;
    let c = failed_app(&fenix, &receiver, "initech", 3).await;
    receiver.set_behaviour(|_| Plan::ok());
    let before = receiver.count();

    let (status, every) = fenix.call("POST", "/v1/tasks", Some(json!({"kind": "replay", "dry_run": true}))).await;
    assert_eq!((status, every), (200, json!({"count": 13})));
    let filter = json!({"app_ids": [a, "globex"]});
    let body = json!({"kind": "replay", "dry_run": true, "filter": filter});
    let (status, two) = fenix.call("POST", "/v1/tasks", Some(body)).await;
    assert_eq!((status, two), (200, json!({"count": 10})), "by id and by uid");

    let (status, created) = fenix.call("POST", "/v1/tasks", Some(json!({"kind": "replay", "filter": filter}))).await;
    assert_eq!(status, 202, "{created}");
    assert_eq!((created["app_id"].clone(), created["selected"].clone()), (Value::Null, json!(10)), "{created}");
    assert_eq!(created["filter"], filter, "the selection as given, for the record");
    let id = created["id"].as_str().unwrap().to_string();
    eventually("the operator's task succeeds", Duration::from_secs(30), || async {
        fenix.call("GET", &format!("/v1/tasks/{id}"), None).await.1["state"] == "succeeded"
    })
    .await;
    let (_, done) = fenix.call("GET", &format!("/v1/tasks/{id}"), None).await;
    assert_eq!((done["done"].as_i64(), done["failed"].as_i64()), (Some(10), Some(0)), "{done}");
    eventually("the two apps' deliveries are sent again", Duration::from_secs(30), || async {
        receiver.count() - before == 10
    })
    .await;
    assert_eq!(fenix.deliveries(&c, "status=failed").await.len(), 3, "the third app is left alone");
    let (status, listed) = fenix.call("GET", "/v1/tasks", None).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["data"][0]["id"], created["id"]);
    let (status, none) = fenix.call("GET", &format!("/v1/apps/{b}/tasks/{id}"), None).await;
    assert_eq!((status, none["error"]["code"].as_str()), (404, Some("task_not_found")), "not an app's task");
    let (status, ended) = fenix.call("POST", &format!("/v1/tasks/{id}/cancel"), None).await;
    assert_eq!((status, ended["error"]["code"].as_str()), (409, Some("task_ended")), "{ended}");

    let (status, unknown) =
        fenix.call("POST", "/v1/tasks", Some(json!({"kind": "replay", "filter": {"app_ids": ["nope"]}}))).await;
    assert_eq!((status, unknown["error"]["code"].as_str()), (404, Some("app_not_found")), "{unknown}");
    let (status, bad) =
        fenix.call("POST", "/v1/tasks", Some(json!({"kind": "replay", "filter": {"endpoint_id": "x"}}))).await;
    assert_eq!(bad["error"]["code"], "unknown_field", "an endpoint's task is its app's: {status} {bad}");

    let token = json!({"name": "acme-manage", "app": a, "access": "manage"});
    let (status, token) = fenix.call("POST", "/v1/tokens", Some(token)).await;
    assert_eq!(status, 201, "{token}");
    for (method, path) in
        [("POST", "/v1/tasks".to_string()), ("GET", "/v1/tasks".into()), ("GET", format!("/v1/tasks/{id}"))]
    {
        let body = (method == "POST").then(|| json!({"kind": "replay", "dry_run": true}));
        let (status, refused) = fenix.call_as(token["token"].as_str(), method, &path, body).await;
        assert_eq!(status, 403, "{method} {path} needs an admin: {refused}");
    }
}

/// A count of rows, read behind Fenix's back.
async fn rows(db: &TestDb, sql: &str, app: &str) -> i64 {
    db.texts(&format!("SELECT CAST(COUNT(*) AS TEXT) FROM {sql}"), &[app]).await[0].parse().expect("a count")
}

async fn deleting_an_app_erases_it_in_batches_by_a_task_that_cannot_be_cancelled(backend: Backend) {
    let db = TestDb::new(backend).await;
    // 10 rows a batch: the deletion takes many batches.
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms"), ("FENIX_TASK_RATE", "500")]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let a = failed_app(&fenix, &receiver, "acme", 120).await;
    let b = failed_app(&fenix, &receiver, "globex", 5).await;
    let token = json!({"name": "acme-manage", "app": a, "access": "manage"});
    let (status, token) = fenix.call("POST", "/v1/tokens", Some(token)).await;
    assert_eq!(status, 201, "{token}");
    let token = token["token"].as_str().expect("token").to_string();
    let attempts_of_b = rows(&db, "attempts t JOIN deliveries d ON d.id = t.delivery_id WHERE d.app_id = $1", &b).await;

    let (status, task) = fenix.call("DELETE", "/v1/apps/acme", None).await;
    assert_eq!(status, 202, "{task}");
    assert_eq!((task["kind"].as_str(), task["app_id"].clone()), (Some("delete_app"), Value::Null), "{task}");
    assert_eq!(task["selected"], json!(120 + 120 + 1), "its deliveries, events and endpoint: {task}");
    let id = task["id"].as_str().expect("task id").to_string();
    // At once: the app is not found by id or uid, its token is refused, a second deletion finds nothing.
    for path in [format!("/v1/apps/{a}"), "/v1/apps/acme".into(), format!("/v1/apps/{a}/deliveries")] {
        let (status, out) = fenix.call("GET", &path, None).await;
        assert_eq!((status, out["error"]["code"].as_str()), (404, Some("app_not_found")), "{path}: {out}");
    }
    assert_eq!(fenix.call_as(Some(&token), "GET", &format!("/v1/apps/{a}/endpoints"), None).await.0, 401);
    let (status, again) = fenix.call("DELETE", &format!("/v1/apps/{a}"), None).await;
    assert_eq!((status, again["error"]["code"].as_str()), (404, Some("app_not_found")), "{again}");
    let (status, refused) = fenix.call("POST", &format!("/v1/tasks/{id}/cancel"), None).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("task_not_cancellable")), "{refused}");
    let (status, kind) =
        fenix.call("POST", "/v1/tasks", Some(json!({"kind": "delete_app", "filter": {"app_ids": [b]}}))).await;
    assert_eq!((status, kind["error"]["code"].as_str()), (422, Some("invalid_task_kind")), "{kind}");

    eventually("the deletion succeeds", Duration::from_secs(60), || async {
        fenix.call("GET", &format!("/v1/tasks/{id}"), None).await.1["state"] == "succeeded"
    })
    .await;
    let (_, done) = fenix.call("GET", &format!("/v1/tasks/{id}"), None).await;
    assert_eq!(done["done"], json!(241), "every row it counted was erased: {done}");
    for table in ["deliveries WHERE app_id = $1", "events WHERE app_id = $1", "endpoints WHERE app_id = $1"] {
        assert_eq!(rows(&db, table, &a).await, 0, "{table}");
    }
    assert_eq!(rows(&db, "apps WHERE id = $1", &a).await, 0, "the app's row goes last");
    assert_eq!(rows(&db, "attempts WHERE delivery_id NOT IN (SELECT id FROM deliveries) AND $1 = $1", &a).await, 0);
    assert_eq!(fenix.deliveries(&b, "status=failed").await.len(), 5, "the other app is left alone");
    let attempts_after =
        rows(&db, "attempts t JOIN deliveries d ON d.id = t.delivery_id WHERE d.app_id = $1", &b).await;
    assert_eq!(attempts_after, attempts_of_b, "and its attempts");
}

crate::on_both_backends!(
    an_operators_task_replays_across_apps_and_only_an_admin_may_run_one,
    a_dry_run_counts_exactly_what_the_task_then_replays,
    a_task_killed_halfway_resumes_after_a_restart_and_replays_each_delivery_once,
    a_cancelled_task_stops,
    a_replay_waits_for_the_worker_to_take_what_it_re_queued,
    a_cancel_task_makes_scheduled_and_pending_deliveries_skipped,
    recover_replays_only_the_windows_deliveries_that_did_not_succeed,
    bad_task_requests_are_refused_naming_the_field,
    deleting_an_app_erases_it_in_batches_by_a_task_that_cannot_be_cancelled,
);
