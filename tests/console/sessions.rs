//! Sessions that run out: the page says the session expired, whether it was
//! open at the time or loaded again later, for a portal customer and for an
//! operator.

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
