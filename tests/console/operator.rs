//! The operator's console: log in, create an app and an endpoint, copy the
//! secret, send a test event and see it succeed; the operator-only pages.

use serde_json::json;

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, send_one, wait_for_delivery},
};
use crate::support::{signed_v1_by, Backend, Fenix, Plan, Receiver, TestDb};

async fn an_operator_logs_in_creates_an_endpoint_copies_its_secret_and_sees_a_test_event_succeed(backend: Backend) {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;

    let out = Script::start(
        "operator_flow",
        &[("FENIX_URL", &fenix.base), ("FENIX_ADMIN_TOKEN", &fenix.token), ("RECEIVER_URL", &receiver.url)],
    )
    .await
    .finish()
    .await;

    // What the page showed.
    assert!(!out.text("wrong_token_error").is_empty(), "a wrong token is refused in words");
    assert!(!out.text("url_error").is_empty(), "a refused URL is explained next to the field");
    assert_eq!(out.fact("csrf_status"), 403, "a cookie without the CSRF header changes nothing");
    assert_eq!(out.fact("csrf_code"), "csrf_failed");
    let secret = out.text("secret");
    assert!(secret.starts_with("whsec_"), "the page shows the secret: {secret}");
    assert_eq!(out.text("clipboard"), secret, "the copy button puts the secret on the clipboard");
    let chart = out.text("chart_tag");
    assert!(chart == "svg" || chart == "canvas", "the health chart is drawn by the page: {chart}");
    assert_eq!(out.fact("after_logout_status"), 401, "logout ends the session");

    // What the server holds.
    let app_id = out.text("app_id");
    let (status, app) = fenix.call("GET", "/v1/apps/acme", None).await;
    assert_eq!(status, 200, "{app}");
    assert_eq!(app["id"], app_id.as_str());
    assert_eq!(app["name"], "Acme Travel");
    let (_, apps) = fenix.call("GET", "/v1/apps", None).await;
    assert_eq!(apps["data"].as_array().map(Vec::len), Some(1), "the forged request created nothing: {apps}");
    let ep_id = out.text("endpoint_id");
    let (status, ep) = fenix.call("GET", &format!("/v1/apps/acme/endpoints/{ep_id}"), None).await;
    assert_eq!(status, 200, "{ep}");
    assert_eq!(ep["url"], receiver.url.as_str());
    assert_eq!(ep["description"], "Booking service");
    let dlv = wait_for_delivery(&fenix, &app_id, &out.text("delivery_id"), "succeeded").await;
    assert_eq!(dlv["endpoint_id"], ep_id.as_str());

    // What the receiver got: one request, signed with the secret the page showed.
    let got = receiver.received();
    assert_eq!(got.len(), 1, "one test event delivered");
    assert!(signed_v1_by(&secret, &got[0]), "the copied secret verifies the signature");
    let attempts = out.fact("attempts").as_array().cloned().unwrap_or_default();
    assert_eq!(attempts.len(), 1, "the delivery page lists its one attempt: {attempts:?}");
    assert!(attempts[0].as_str().unwrap_or("").contains("200"), "the attempt shows its status code: {attempts:?}");
}

async fn the_operator_pages_create_and_revoke_tokens_mint_portal_links_and_show_settings_redacted(backend: Backend) {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(backend).await;
    // A database password, where the URL can carry one, must not show either.
    let db_url = db.url.replacen("postgres://fenix@", "postgres://fenix:pg-password-not-shown@", 1);
    let fenix = Fenix::start(&db, &[("DATABASE_URL", &db_url)]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (app_id, _) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;
    let master_key = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=";
    let secrets = json!([master_key, fenix.token, "pg-password-not-shown"]).to_string();

    let out = Script::start(
        "operator_pages",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", "Acme Travel"),
            ("SECRETS", &secrets),
        ],
    )
    .await
    .finish()
    .await;

    let token = out.text("token");
    assert!(token.starts_with("fxk_"), "an app token is shown once: {token}");
    let (status, body) = fenix.call_as(Some(&token), "GET", "/v1/apps", None).await;
    assert_eq!(status, 401, "the revoked token no longer works: {body}");
    let admin = out.text("admin_token");
    assert!(admin.starts_with("fxa_"), "an admin token is made on the page too: {admin}");
    assert_eq!(out.fact("admin_token_app_hidden"), &json!(true), "an admin token asks for no app");
    let (status, body) = fenix.call_as(Some(&admin), "GET", "/v1/settings", None).await;
    assert_eq!(status, 200, "the admin token reaches admin routes: {body}");
    let login = out.text("login_form");
    assert!(
        login.contains("fenix token create") && !login.contains('`'),
        "the login hint reads without backticks: {login}"
    );
    let link = out.text("portal_link");
    assert!(link.starts_with(&format!("{}/console/portal#fxp_", fenix.base)), "a portal link: {link}");
    let (status, links) = fenix.call("GET", &format!("/v1/apps/{app_id}/portal-sessions"), None).await;
    assert_eq!(status, 200, "{links}");
    assert_eq!(links["data"].as_array().map(Vec::len), Some(1), "the page minted one link: {links}");
    assert_eq!(out.fact("settings_text_has_secret"), &json!([]), "the settings page shows no secret");
    let settings = out.fact("settings").as_object().cloned().unwrap_or_default();
    for key in ["DATABASE_URL", "FENIX_MASTER_KEY", "FENIX_RETRY_SCHEDULE", "FENIX_UNSAFE_ALLOW_HTTP"] {
        assert!(settings.contains_key(key), "the settings page lists {key} on a row of its own: {settings:?}");
    }
    assert!(
        settings["FENIX_MASTER_KEY"].as_str().unwrap_or("").contains("redacted"),
        "the master key shows as redacted: {settings:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_top_bar_names_the_app_an_operator_opens() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;

    let out = Script::start(
        "app_header",
        &[("FENIX_URL", &fenix.base), ("FENIX_ADMIN_TOKEN", &fenix.token), ("APP_NAME", "Acme Travel")],
    )
    .await
    .finish()
    .await;
    assert_eq!(out.fact("second_visit"), "Acme Travel");
    assert_eq!(out.fact("first_visit"), "Acme Travel", "the first visit shows the app's id instead of its name");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_is_edited_rotated_with_an_overlap_and_deleted_after_a_confirmation() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (app, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    let old_secret = ep["secret"].as_str().unwrap().to_string();
    let path = format!("/v1/apps/{app}/endpoints/{ep_id}");

    let mut script = Script::start(
        "endpoint_manage",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", "Acme Travel"),
            ("ENDPOINT_ID", &ep_id),
        ],
    )
    .await;
    let mut delivered = None;
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "check-edit" => {
                let (_, now) = fenix.call("GET", &path, None).await;
                assert_eq!(now["url"], receiver.url.as_str(), "the refused URL was not saved");
                assert_eq!(now["description"], "Bookings, <b>v2</b>");
                assert_eq!(now["event_types"], json!(["booking.*", "invoice.paid"]));
                script.answer(json!({})).await;
            }
            "deliver" => {
                let id = send_one(&fenix, &app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
                wait_for_delivery(&fenix, &app, &id, "succeeded").await;
                delivered = receiver.received().pop();
                script.answer(json!({})).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();

    assert!(!out.text("edit_url_error").is_empty(), "a refused URL is explained next to the field");
    let new_secret = out.text("rotated_secret");
    assert!(new_secret.starts_with("whsec_") && new_secret != old_secret, "the new secret is shown: {new_secret}");
    let got = delivered.expect("a delivery after the rotation");
    assert!(signed_v1_by(&new_secret, &got), "signed with the new secret shown on the page");
    assert!(signed_v1_by(&old_secret, &got), "and, during the chosen overlap, with the old one");
    assert_eq!(out.fact("rows_after_cancel"), 1, "cancelling the confirmation deletes nothing");
    assert_eq!(out.fact("rows_after_delete"), 0);
    let (status, _) = fenix.call("GET", &path, None).await;
    assert_eq!(status, 404, "the endpoint is gone");
}

crate::on_both_backends!(
    an_operator_logs_in_creates_an_endpoint_copies_its_secret_and_sees_a_test_event_succeed,
    the_operator_pages_create_and_revoke_tokens_mint_portal_links_and_show_settings_redacted,
);

/// An Ed25519 endpoint has no secret to show: its rotation shows the new
/// public key (the one receivers verify with), which an empty box once hid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_an_ed25519_endpoint_shows_its_new_public_key() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let body = json!({"url": receiver.url, "signing_algorithm": "ed25519"});
    let (app, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", body).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    let old_key = ep["public_key"].as_str().unwrap().to_string();

    let out = Script::start(
        "ed25519_rotate",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", "Acme Travel"),
            ("ENDPOINT_ID", &ep_id),
        ],
    )
    .await
    .finish()
    .await;

    let shown = out.text("rotated_key");
    assert!(shown.starts_with("whpk_") && shown != old_key, "the new public key is shown: {shown:?}");
    assert!(out.text("rotated_title").contains("public key"), "{:?}", out.text("rotated_title"));
    let (_, keys) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep_id}/public-keys"), None).await;
    let listed: Vec<&str> = keys["data"].as_array().unwrap().iter().filter_map(|k| k["public_key"].as_str()).collect();
    assert!(listed.contains(&shown.as_str()), "the key shown is one that signs: {keys}");
}
