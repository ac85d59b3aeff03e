//! What the console scenarios share: a Fenix and an app with a receiving
//! endpoint and a delivered event, made through the admin API.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::Fenix;

/// Waits (polling) until the delivery `id` of `app` has `status`; answers it.
pub async fn wait_for_delivery(fenix: &Fenix, app: &str, id: &str, status: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (code, body) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{id}"), None).await;
        assert_eq!(code, 200, "get delivery: {body}");
        if body["status"] == status {
            return body;
        }
        assert!(std::time::Instant::now() < deadline, "delivery {id} never became {status}: {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends an event and answers the id of its one delivery.
pub async fn send_one(fenix: &Fenix, app: &str, body: Value) -> String {
    let evt = fenix.send_event(app, body).await;
    assert_eq!(evt["deliveries"], 1, "one endpoint gets it: {evt}");
    let evt_id = evt["id"].as_str().unwrap();
    let found = fenix.deliveries(app, &format!("event_id={evt_id}")).await;
    assert_eq!(found.len(), 1, "{found:?}");
    found[0]["id"].as_str().unwrap().to_string()
}

/// Mints a portal link for `app` through the admin API; answers the whole answer.
pub async fn portal_link(fenix: &Fenix, app: &str, body: Value) -> Value {
    let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/portal-sessions"), Some(body)).await;
    assert_eq!(status, 201, "mint a portal link: {out}");
    out
}

/// An app called `name` (uid `uid`) with one endpoint at `url`; answers (app id, endpoint JSON with secret).
pub async fn app_with_endpoint(fenix: &Fenix, uid: &str, name: &str, endpoint: Value) -> (String, Value) {
    let (status, app) = fenix.call("POST", "/v1/apps", Some(json!({"name": name, "uid": uid}))).await;
    assert_eq!(status, 201, "create app: {app}");
    let app_id = app["id"].as_str().unwrap().to_string();
    let ep = fenix.create_endpoint(&app_id, endpoint).await;
    (app_id, ep)
}
