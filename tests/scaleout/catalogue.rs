//! The event-type catalogue across instances: a schema added or changed
//! through one instance holds on another within its cache's few seconds,
//! for events that other instance ingests.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{eventually, Backend, Fenix, TestDb};

async fn send(fenix: &Fenix, app: &str, amount: Value) -> u16 {
    let body = json!({"type": "order.paid", "data": {"amount": amount}});
    fenix.call("POST", &format!("/v1/apps/{app}/events"), Some(body)).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_changed_through_one_instance_holds_on_another_within_seconds() {
    if !crate::support::db::postgres_available() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    // A budget no loaded CI machine runs out of: this test is about the
    // schema reaching instance B, not about the check's time.
    let budget = [("FENIX_SCHEMA_BUDGET", "5s"), ("FENIX_SCHEMA_REQUEST_BUDGET", "10s")];
    let a = Fenix::start(&db, &budget).await;
    let b = Fenix::start(&db, &budget).await;
    let app = a.create_app("acme").await;
    // B reads the (empty) catalogue first, so what follows is its cache refreshing.
    assert_eq!(send(&b, &app, json!("ten")).await, 202);

    let schema = json!({"type": "object", "properties": {"amount": {"type": "integer"}}});
    let (status, body) = a.call("POST", "/v1/event-types", Some(json!({"name": "order.paid", "schema": schema}))).await;
    assert_eq!(status, 201, "{body}");
    eventually("instance B refuses what the new schema refuses", Duration::from_secs(10), || async {
        send(&b, &app, json!("ten")).await == 422
    })
    .await;
    assert_eq!(send(&b, &app, json!(10)).await, 202);

    let text = json!({"type": "object", "properties": {"amount": {"type": "string"}}});
    let (status, _) = a.call("PATCH", "/v1/event-types/order.paid", Some(json!({"schema": text}))).await;
    assert_eq!(status, 200);
    eventually("instance B holds to the changed schema", Duration::from_secs(10), || async {
        send(&b, &app, json!(10)).await == 422
    })
    .await;
    assert_eq!(send(&b, &app, json!("ten")).await, 202);
}
