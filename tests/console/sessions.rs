//! Sessions in the browser: the page says a session expired, whether it was
//! open at the time or loaded again later, for a portal customer and for an
//! operator; and a portal link opened beside a live session asks which to
//! keep before anything is exchanged.

use std::time::{Duration, SystemTime};

use serde_json::json;

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, portal_link},
};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// How long the sessions of these scenarios live: long enough for a slow
/// machine to start Chromium and open the page before the time is up.
const TTL_SECONDS: u64 = 10;

/// Runs `session_expiry` with `vars`, answering "wait-expired" once `expires`
/// has passed (`None`: a session opened just before the script asks, so
/// `TTL_SECONDS` after the ask).
async fn run_until_expired(vars: &[(&str, &str)], expires: Option<SystemTime>) -> browser::Outcome {
    let mut script = Script::start("session_expiry", vars).await;
    while let Some(ask) = script.ask().await {
        assert_eq!(ask.what(), "wait-expired", "unexpected request {}", ask.0);
        let expires = expires.unwrap_or_else(|| SystemTime::now() + Duration::from_secs(TTL_SECONDS + 1));
        eventually(
            "the session's time to run out",
            Duration::from_secs(30),
            || async move { SystemTime::now() > expires },
        )
        .await;
        script.answer(json!({})).await;
    }
    script.outcome()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapsed_portal_session_says_it_expired() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (app, _) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;
    let link = portal_link(&fenix, &app, json!({"access": "read", "expires_in": TTL_SECONDS})).await;
    let at = link["expires_at"].as_str().unwrap();
    let expires = humantime::parse_rfc3339_weak(at).expect("expires_at");

    let out =
        run_until_expired(&[("FENIX_URL", &fenix.base), ("PORTAL_LINK", link["url"].as_str().unwrap())], Some(expires))
            .await;
    assert_eq!(out.fact("open_page_code"), "session_expired", "the open page says the session expired");
    assert_eq!(out.fact("reload_code"), "session_expired", "coming back later says the session expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapsed_operator_session_asks_to_log_in_again_and_says_why() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_CONSOLE_SESSION_TTL", &format!("{TTL_SECONDS}s"))]).await;
    // The session starts when the script has logged in, just before it asks to wait.
    let out = run_until_expired(&[("FENIX_URL", &fenix.base), ("FENIX_ADMIN_TOKEN", &fenix.token)], None).await;
    for when in ["open_page_code", "reload_code"] {
        let reason = out.fact(when).as_str().unwrap_or("").to_lowercase();
        assert!(reason.contains("expired"), "{when}: the login form says the session expired: {:?}", out.fact(when));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_portal_link_opened_beside_a_live_session_asks_which_to_keep() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (acme, _) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;
    let (globex, _) = app_with_endpoint(&fenix, "globex", "Globex", json!({"url": receiver.url})).await;
    let app_of = |name: &str| if name == "globex" { globex.clone() } else { acme.clone() };

    let mut script =
        Script::start("session_choice", &[("FENIX_URL", &fenix.base), ("FENIX_ADMIN_TOKEN", &fenix.token)]).await;
    while let Some(ask) = script.ask().await {
        let app = app_of(ask.0["app"].as_str().unwrap_or_default());
        match ask.what() {
            "link" => {
                let link = portal_link(&fenix, &app, json!({"access": ask.0["access"]})).await;
                script.answer(json!({"url": link["url"], "id": link["id"]})).await;
            }
            "link-used" => {
                let (status, list) = fenix.call("GET", &format!("/v1/apps/{app}/portal-sessions"), None).await;
                assert_eq!(status, 200, "{list}");
                let row = list["data"].as_array().unwrap().iter().find(|r| r["id"] == ask.0["id"]).cloned();
                let used = !row.unwrap_or_else(|| panic!("{} in {list}", ask.0))["used_at"].is_null();
                script.answer(json!({ "used": used })).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();
    assert_eq!(out.fact("operator_choice_kind"), "operator", "the page asks the operator first");
    assert!(out.text("operator_choice_current").contains("operator"), "{}", out.text("operator_choice_current"));
    assert!(!out.text("choice_url").contains("fxp_"), "the link's secret left the address bar while asking");
    assert_eq!(out.fact("link_used_while_asking"), false, "nothing is exchanged until the person picks");
    assert_eq!(out.fact("kept_kind"), "operator");
    assert_eq!(out.fact("link_used_after_keep"), false, "keeping leaves the link unused");
    assert_eq!(out.fact("operator_after_keep")["status"], 200, "and the operator session live");
    assert_eq!(out.fact("portal_app_after_replace"), "Acme Travel");
    assert_eq!(out.fact("link_used_after_replace"), true);
    assert_eq!(
        out.fact("operator_after_replace"),
        &json!({"status": 401, "code": "session_revoked"}),
        "the replaced operator session is ended on the server"
    );
    assert_eq!(out.fact("customer_choice_kind"), "portal", "a customer is asked before another app's link");
    assert!(out.text("customer_choice_current").contains("Acme Travel"), "{}", out.text("customer_choice_current"));
    assert_eq!(out.fact("portal_app_after_keep"), "Acme Travel");
    assert_eq!(out.fact("globex_link_used"), false);
    assert_eq!(out.fact("same_app_choices"), 0, "a fresh link of the same app and access asks nothing");
    assert_eq!(out.fact("same_app_link_used"), true);
}
