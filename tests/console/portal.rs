//! Portal links in the browser: two customers of different apps side by
//! side, each confined to its app whatever URL it types; a link works once;
//! a revoked link ends its session; expired links and sessions are refused.

use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, portal_link, send_one, wait_for_delivery},
};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// How long the short links of this scenario live.
const SHORT_SECONDS: u64 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_portal_link_opens_one_app_only_works_once_and_not_once_expired_or_revoked() {
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
    let mut short_expiry = None;
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "short-link" => {
                let link = portal_link(&fenix, &acme, json!({"access": "read", "expires_in": SHORT_SECONDS})).await;
                short_expiry = Some(expiry(&link));
                script.answer(json!({"url": link["url"]})).await;
            }
            "wait-expired" => {
                let at = short_expiry.expect("a short link was minted");
                eventually("the short link to expire", Duration::from_secs(SHORT_SECONDS + 10), || async move {
                    SystemTime::now() > at
                })
                .await;
                script.answer(json!({})).await;
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
    assert!(!out.text("acme_hash_after_exchange").contains("fxp_"), "the link's secret leaves the address bar");
    assert!(!out.text("acme_url_after_exchange").contains("fxp_"), "{}", out.text("acme_url_after_exchange"));
    assert_eq!(out.fact("acme_endpoint_rows"), &json!([acme_ep["id"]]));
    assert_eq!(out.fact("globex_endpoint_rows"), &json!([globex_ep["id"]]));
    assert_eq!(out.fact("acme_operator_nav"), 0, "no operator navigation in the portal");
    assert_eq!(out.fact("globex_read_can_create"), 0, "a read link offers no creation");
    // Typed URLs and direct API calls reach nothing of the other app.
    assert_eq!(out.fact("typed_url_leaks"), &json!([]), "a typed URL showed globex's data");
    assert_eq!(out.fact("typed_url_not_found"), out.fact("typed_urls"), "each typed URL says there is nothing");
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
    assert_eq!(out.fact("expired_link_code"), "link_expired");
    // The customer's own data was untouched by all this.
    let (_, eps) = fenix.call("GET", &format!("/v1/apps/{globex}/endpoints"), None).await;
    assert_eq!(eps["data"].as_array().map(Vec::len), Some(1));
}

/// When a minted link expires.
fn expiry(link: &Value) -> SystemTime {
    let at = link["expires_at"].as_str().expect("expires_at");
    humantime::parse_rfc3339_weak(at).unwrap_or_else(|e| panic!("expires_at {at:?}: {e}"))
}
