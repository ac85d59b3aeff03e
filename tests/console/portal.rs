//! Portal links in the browser: two customers of different apps side by
//! side, each confined to its app whatever URL it types; a link works once;
//! sessions end when they expire or are revoked; an expired link is refused.

use serde_json::json;

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, portal_link, send_one, wait_for_delivery},
};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

/// How long the short links of this scenario live.
const SHORT_SECONDS: u64 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_portal_link_opens_one_app_once_and_its_session_ends() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (acme, acme_ep) =
        app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url, "description": "acme hooks"}))
            .await;
    let marker = "globexonlyword";
    let (globex, globex_ep) = app_with_endpoint(
        &fenix,
        "globex",
        &format!("Globex {marker}"),
        json!({"url": receiver.url, "description": format!("{marker} endpoint")}),
    )
    .await;
    let acme_dlv = send_one(&fenix, &acme, json!({"type": "booking.confirmed", "data": {"who": "acme"}})).await;
    let globex_dlv = send_one(&fenix, &globex, json!({"type": "booking.confirmed", "data": {"who": marker}})).await;
    wait_for_delivery(&fenix, &acme, &acme_dlv, "succeeded").await;
    wait_for_delivery(&fenix, &globex, &globex_dlv, "succeeded").await;
    let acme_link = portal_link(&fenix, &acme, json!({"access": "manage", "label": "acme support"})).await;
    let globex_link = portal_link(&fenix, &globex, json!({"access": "read"})).await;
    assert!(
        acme_link["url"].as_str().unwrap().starts_with(&format!("{}/console/portal#fxp_", fenix.base)),
        "{acme_link}"
    );

    let mut script = Script::start(
        "portal_flow",
        &[
            ("FENIX_URL", &fenix.base),
            ("ACME_LINK", acme_link["url"].as_str().unwrap()),
            ("GLOBEX_LINK", globex_link["url"].as_str().unwrap()),
            ("ACME_ENDPOINT", acme_ep["id"].as_str().unwrap()),
            ("ACME_DELIVERY", &acme_dlv),
            ("GLOBEX_APP", &globex),
            ("GLOBEX_ENDPOINT", globex_ep["id"].as_str().unwrap()),
            ("GLOBEX_DELIVERY", &globex_dlv),
            ("GLOBEX_MARKER", marker),
        ],
    )
    .await;
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "short-link" => {
                let link = portal_link(&fenix, &acme, json!({"access": "read", "expires_in": SHORT_SECONDS})).await;
                script.answer(json!({"url": link["url"]})).await;
            }
            "revoke-acme" => {
                let ps = acme_link["id"].as_str().unwrap();
                let (status, body) = fenix.call("DELETE", &format!("/v1/apps/{acme}/portal-sessions/{ps}"), None).await;
                assert_eq!(status, 204, "{body}");
                script.answer(json!({})).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();

    // Each customer sees its own app.
    assert_eq!(out.fact("acme_hash_after_exchange"), "", "the link's secret leaves the address bar");
    assert!(!out.text("acme_url_after_exchange").contains("fxp_"), "{}", out.text("acme_url_after_exchange"));
    assert_eq!(out.fact("acme_endpoint_rows"), &json!([acme_ep["id"]]));
    assert_eq!(out.fact("globex_endpoint_rows"), &json!([globex_ep["id"]]));
    assert_eq!(out.fact("acme_operator_nav"), 0, "no operator navigation in the portal");
    assert_eq!(out.fact("globex_read_can_create"), 0, "a read link offers no creation");
    // Typed URLs and direct API calls reach nothing of the other app.
    assert_eq!(out.fact("typed_url_leaks"), &json!([]), "a typed URL showed globex's data");
    assert_eq!(out.fact("api_globex_app"), 404);
    assert_eq!(out.fact("api_globex_delivery"), 404);
    assert_eq!(out.fact("api_tokens"), 403);
    assert_eq!(out.fact("api_settings"), 403);
    let apps = out.fact("api_apps")["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(apps.len(), 1, "GET /v1/apps lists acme only: {apps:?}");
    assert_eq!(apps[0]["id"], acme.as_str());
    assert_eq!(out.fact("operator_page_token_rows"), 0, "the operator pages stay closed");
    // Once only, and not for ever.
    assert_eq!(out.fact("reused_code"), "link_used");
    assert_eq!(out.fact("revoked_code"), "session_revoked");
    assert_eq!(out.fact("short_session_code"), "session_expired");
    assert_eq!(out.fact("expired_link_code"), "link_expired");
    // The customer's own data was untouched by all this.
    let (_, eps) = fenix.call("GET", &format!("/v1/apps/{globex}/endpoints"), None).await;
    assert_eq!(eps["data"].as_array().map(Vec::len), Some(1));
}
