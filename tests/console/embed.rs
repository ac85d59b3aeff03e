//! The portal inside a product's page: framing is allowed for the origins
//! in FENIX_CONSOLE_FRAME_ANCESTORS only.

use serde_json::json;

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, portal_link, send_one, wait_for_delivery},
};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

/// A product's page that frames `link`.
fn product_page(link: &str) -> Plan {
    let html = format!(
        "<!doctype html><title>Product</title><h1>Your webhooks</h1>\
         <iframe src=\"{link}\" width=\"1000\" height=\"600\" title=\"Webhooks\"></iframe>"
    );
    Plan::ok().with_header("content-type", "text/html; charset=utf-8").with_body(html)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_portal_works_in_an_iframe_of_an_allowed_origin_and_is_refused_elsewhere() {
    if !browser::available() {
        return;
    }
    let product = Receiver::http(|_| Plan::ok()).await;
    let stranger = Receiver::http(|_| Plan::ok()).await;
    let origin = product.url.trim_end_matches("/hook").to_string();
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_CONSOLE_FRAME_ANCESTORS", &origin)]).await;
    let hooks = Receiver::http(|_| Plan::ok()).await;
    let (app, _) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": hooks.url})).await;
    let dlv = send_one(&fenix, &app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    wait_for_delivery(&fenix, &app, &dlv, "succeeded").await;
    let link = portal_link(&fenix, &app, json!({"access": "read"})).await;
    let other = portal_link(&fenix, &app, json!({"access": "read"})).await;
    let (url, other_url) = (link["url"].as_str().unwrap().to_string(), other["url"].as_str().unwrap().to_string());
    product.set_behaviour(move |_| product_page(&url));
    stranger.set_behaviour(move |_| product_page(&other_url));

    let out = Script::start("embed_flow", &[("PRODUCT_URL", &product.url), ("STRANGER_URL", &stranger.url)])
        .await
        .finish()
        .await;
    assert_eq!(out.fact("embedded_rows"), 1, "the framed portal lists the app's endpoint");
    assert_eq!(out.fact("embedded_deliveries"), 1, "and its delivery");
    assert_eq!(out.fact("stranger_loaded"), false, "an origin not listed cannot frame the console");
    let expected = out.0["expected"].as_array().cloned().unwrap_or_default();
    assert!(!expected.is_empty(), "the browser reported the refused frame");
}
