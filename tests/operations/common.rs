//! What the operations scenarios share: short readers of the delivery log and
//! of endpoints, waits on receivers, and time arithmetic on the API's RFC 3339
//! timestamps.

use std::time::Duration;

use serde_json::Value;

use crate::support::{eventually, Fenix, Received, Receiver};

/// Generous bound for anything the worker does on a short schedule.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// `/v1/apps/{app}/endpoints/{ep}` + `rest`.
pub fn ep_path(app: &str, ep: &str, rest: &str) -> String {
    format!("/v1/apps/{app}/endpoints/{ep}{rest}")
}

/// An endpoint's recorded state changes, newest first.
pub async fn state_changes(fenix: &Fenix, app: &str, ep: &str) -> Vec<Value> {
    let (status, body) = fenix.call("GET", &ep_path(app, ep, "/state-changes"), None).await;
    assert_eq!(status, 200, "state changes: {body}");
    body["data"].as_array().cloned().unwrap_or_default()
}

/// The delivery of one event to one endpoint.
pub async fn delivery(fenix: &Fenix, app: &str, event_id: &str, ep: &str) -> Value {
    let found = fenix.deliveries(app, &format!("event_id={event_id}&endpoint_id={ep}")).await;
    assert_eq!(found.len(), 1, "one delivery of {event_id} to {ep}: {found:?}");
    found.into_iter().next().unwrap()
}

/// Waits until the delivery of `event_id` to `ep` has `status`; returns it.
pub async fn wait_for_delivery(fenix: &Fenix, app: &str, event_id: &str, ep: &str, status: &str) -> Value {
    eventually(&format!("the delivery of {event_id} to {ep} is {status}"), PATIENCE, || async {
        delivery(fenix, app, event_id, ep).await["status"] == status
    })
    .await;
    delivery(fenix, app, event_id, ep).await
}

/// Waits until `n` deliveries of the endpoint have `status`.
pub async fn wait_for_count(fenix: &Fenix, app: &str, ep: &str, status: &str, n: usize) {
    eventually(&format!("{n} deliveries to {ep} are {status}"), PATIENCE, || async {
        fenix.deliveries(app, &format!("endpoint_id={ep}&status={status}")).await.len() == n
    })
    .await;
}

pub use crate::support::{attempts, endpoint, id_of, signed_v1_by as signed_by};

/// Sends `n` events of `event_type` with `{"n": i}` data; answers the ingest answers' ids in order.
pub async fn send_events(fenix: &Fenix, app: &str, event_type: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let out = fenix.send_event(app, serde_json::json!({"type": event_type, "data": {"n": i}})).await;
        ids.push(id_of(&out));
    }
    ids
}

/// Waits until the receiver got at least `n` requests; returns them all.
pub async fn wait_for_requests(receiver: &Receiver, n: usize) -> Vec<Received> {
    eventually(&format!("the receiver got {n} requests"), PATIENCE, || async { receiver.count() >= n }).await;
    receiver.received()
}

/// The requests that carried `event_id`.
pub fn requests_for<'a>(received: &'a [Received], event_id: &str) -> Vec<&'a Received> {
    received.iter().filter(|r| r.header("x-fenix-event-id") == event_id).collect()
}

/// Milliseconds since the epoch of an RFC 3339 timestamp from the API.
pub fn millis(v: &Value) -> i64 {
    let s = v.as_str().unwrap_or_else(|| panic!("not a timestamp: {v}"));
    let t = humantime::parse_rfc3339_weak(s).unwrap_or_else(|e| panic!("timestamp {s:?}: {e}"));
    t.duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_millis() as i64
}
