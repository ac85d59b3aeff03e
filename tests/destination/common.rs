//! What the destination scenarios share: Fenix with the production policy,
//! registration calls, and readers of the delivery log.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{delivery_of, dns::TestDns, eventually, Fenix, TestDb};

/// A public IPv4 address (never contacted: names answering it are only registered).
pub const PUBLIC_V4: &str = "93.184.215.14";
/// A public IPv6 address (never contacted either).
pub const PUBLIC_V6: &str = "2606:2800:21f:cb07:6820:80da:af6b:3c96";

/// Fenix with the production destination policy (no `http`, no allowed ranges),
/// asking only `dns`.
pub async fn strict_fenix(db: &TestDb, dns: &TestDns) -> Fenix {
    let server = dns.server();
    Fenix::start(
        db,
        &[("FENIX_UNSAFE_ALLOW_HTTP", "false"), ("FENIX_UNSAFE_ALLOW_CIDRS", ""), ("FENIX_DNS_SERVERS", &server)],
    )
    .await
}

/// POSTs an endpoint with `url`; answers the status and body.
pub async fn register(fenix: &Fenix, app: &str, url: &str) -> (u16, Value) {
    fenix.call("POST", &format!("/v1/apps/{app}/endpoints"), Some(json!({ "url": url }))).await
}

/// PATCHes the endpoint's `url`; answers the status and body.
pub async fn change_url(fenix: &Fenix, app: &str, endpoint: &str, url: &str) -> (u16, Value) {
    fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{endpoint}"), Some(json!({ "url": url }))).await
}

/// The endpoints an app has.
pub async fn endpoints(fenix: &Fenix, app: &str) -> Vec<Value> {
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!(status, 200, "list endpoints: {body}");
    body["data"].as_array().cloned().unwrap_or_default()
}

pub use crate::support::{attempts, signed_v1_by as verifies};

/// Waits until the delivery of `event_id` has `n` attempts recorded and is no
/// longer in flight; answers the delivery and its attempts.
pub async fn wait_for_attempts(fenix: &Fenix, app: &str, event_id: &str, n: usize) -> (Value, Vec<Value>) {
    let last = std::sync::Mutex::new((Value::Null, vec![]));
    let last_ref = &last;
    eventually(&format!("{n} attempt(s) of {event_id} recorded"), Duration::from_secs(15), || async move {
        let d = delivery_of(fenix, app, event_id).await;
        let list = attempts(fenix, app, d["id"].as_str().expect("delivery id")).await;
        let settled = list.len() >= n && d["status"] != "in_flight";
        *last_ref.lock().unwrap() = (d, list);
        settled
    })
    .await;
    last.into_inner().unwrap()
}
