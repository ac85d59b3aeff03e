//! The customer-facing listener (`FENIX_PORTAL_LISTEN`): a portal link minted
//! on the main listener works on the portal listener, where the admin API is
//! not there at all (404, even with the admin token), while the main listener
//! keeps serving everything.

use reqwest::{header, Client};
use serde_json::{json, Value};

use crate::support::{free_port, Backend, Fenix, TestDb};

/// `method url` with the headers given; answers the status and the body as JSON (or text).
async fn send(method: &str, url: &str, headers: &[(&str, &str)], body: Option<Value>) -> (u16, Value, Option<String>) {
    let mut req = Client::new().request(method.parse().unwrap(), url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let cookie = resp.headers().get(header::SET_COOKIE).and_then(|v| v.to_str().ok()).map(str::to_string);
    let text = resp.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)), cookie)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portal_listener_serves_a_portal_link_and_no_admin_route() {
    let db = TestDb::new(Backend::Sqlite).await;
    let portal_at = format!("127.0.0.1:{}", free_port());
    let fenix = Fenix::start(&db, &[("FENIX_PORTAL_LISTEN", &portal_at)]).await;
    let portal = format!("http://{portal_at}");
    let app = fenix.create_app("acme").await;
    let bearer = format!("Bearer {}", fenix.token);
    let admin = [("authorization", bearer.as_str())];

    // The link is minted on the main listener and opened on the portal one.
    let (status, link, _) = send(
        "POST",
        &format!("{}/v1/apps/{app}/portal-sessions", fenix.base),
        &admin,
        Some(json!({"access": "manage"})),
    )
    .await;
    assert_eq!(status, 201, "{link}");
    let secret = link["url"].as_str().unwrap().split_once('#').unwrap().1.to_string();
    let (status, page, _) = send("GET", &format!("{portal}/console/portal"), &[], None).await;
    assert_eq!(status, 200, "the portal page is served: {page}");
    let (status, out, cookie) =
        send("POST", &format!("{portal}/console/api/portal/exchange"), &[], Some(json!({"link": secret}))).await;
    assert_eq!(status, 204, "the link is exchanged on the portal listener: {out}");
    let cookie = cookie.expect("a session cookie").split(';').next().unwrap().to_string();
    let (status, me, _) = send("GET", &format!("{portal}/console/api/session"), &[("cookie", &cookie)], None).await;
    assert_eq!((status, me["app_id"].as_str()), (200, Some(app.as_str())), "{me}");
    let (status, endpoints, _) =
        send("GET", &format!("{portal}/v1/apps/{app}/endpoints"), &[("cookie", &cookie)], None).await;
    assert_eq!(status, 200, "the session reads its app's endpoints there: {endpoints}");
    let (status, apps, _) = send("GET", &format!("{portal}/v1/apps"), &[("cookie", &cookie)], None).await;
    assert_eq!((status, apps["data"].as_array().map(Vec::len)), (200, Some(1)), "its own app only: {apps}");
    let (status, health, _) = send("GET", &format!("{portal}/healthz"), &[], None).await;
    assert_eq!(status, 200, "the portal listener can be probed: {health}");

    // The admin API is not on the portal listener, even with the admin token.
    for (method, path) in [
        ("GET", "/v1/apps".to_string()),
        ("POST", "/v1/apps".to_string()),
        ("GET", "/v1/tokens".to_string()),
        ("GET", "/v1/settings".to_string()),
        ("GET", format!("/v1/apps/{app}/endpoints")),
        ("POST", format!("/v1/apps/{app}/portal-sessions")),
        ("GET", "/metrics".to_string()),
        ("GET", "/openapi.json".to_string()),
        ("GET", "/console".to_string()),
        ("POST", "/console/api/login".to_string()),
    ] {
        let (status, out, _) = send(method, &format!("{portal}{path}"), &admin, Some(json!({}))).await;
        assert_eq!((status, out["error"]["code"].as_str()), (404, Some("not_found")), "{method} {path}: {out}");
    }

    // The main listener serves the admin API as before.
    let (status, apps, _) = send("GET", &format!("{}/v1/apps", fenix.base), &admin, None).await;
    assert_eq!(status, 200, "{apps}");
    assert_eq!(apps["data"][0]["id"].as_str(), Some(app.as_str()));
    let (status, settings, _) = send("GET", &format!("{}/v1/settings", fenix.base), &admin, None).await;
    let shown = settings["data"].as_array().unwrap().iter().find(|s| s["name"] == "FENIX_PORTAL_LISTEN").cloned();
    assert_eq!((status, shown.map(|s| s["value"].clone())), (200, Some(json!(portal_at))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_portal_listener_nothing_changes_and_the_setting_reads_null() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let (status, settings) = fenix.call("GET", "/v1/settings", None).await;
    let shown = settings["data"].as_array().unwrap().iter().find(|s| s["name"] == "FENIX_PORTAL_LISTEN").cloned();
    assert_eq!((status, shown.map(|s| s["value"].clone())), (200, Some(Value::Null)));
}
