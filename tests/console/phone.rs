//! The console at phone width and from the keyboard.

use serde_json::json;

use super::{
    browser::{self, Script},
    common::app_with_endpoint,
};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_fits_a_phone_and_the_login_works_from_the_keyboard() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (app, ep) = app_with_endpoint(
        &fenix,
        "acme",
        "Acme Travel",
        json!({"url": receiver.url, "description": "A rather long description that should wrap on a phone screen"}),
    )
    .await;
    fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let out = Script::start(
        "phone_keyboard",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", "Acme Travel"),
            ("ENDPOINT_ID", ep["id"].as_str().unwrap()),
        ],
    )
    .await
    .finish()
    .await;

    let path = out.fact("focus_path").as_array().cloned().unwrap_or_default();
    assert_eq!(path.last(), Some(&json!("login-token")), "Tab reaches the token field: {path:?}");
    assert_eq!(out.fact("logged_in"), true, "Enter sends the form");
    assert_eq!(out.fact("keyboard_nav"), true);
    for (page, extra) in out.fact("overflow").as_object().cloned().unwrap_or_default() {
        assert!(extra.as_i64().unwrap_or(1) <= 0, "{page} is {extra} px wider than a 390 px screen");
    }
}
