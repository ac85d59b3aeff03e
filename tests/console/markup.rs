//! Markup where a customer or a receiver controls the text (an app's name, an
//! endpoint's description, an event's payload, a receiver's answer) shows as
//! text and never runs, for the operator and in the portal.

use serde_json::json;

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, portal_link, send_one, wait_for_delivery},
};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_in_names_descriptions_payloads_and_responses_is_shown_as_text_and_never_runs() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let answer = r#"<script>window.__pwned="excerpt"</script><img src=x onerror="window.__pwned='excerpt-img'">"#;
    let receiver = Receiver::http(move |_| Plan::ok().with_header("content-type", "text/html").with_body(answer)).await;
    let app_name = r#"<b>Acme</b><img src=x onerror="window.__pwned='app'">"#;
    let description =
        r#"<img src=x onerror="window.__pwned='description'"><script>window.__pwned="description-script"</script>"#;
    let (app, ep) =
        app_with_endpoint(&fenix, "acme", app_name, json!({"url": receiver.url, "description": description})).await;
    let payload_script = r#"<script>window.__pwned="payload"</script>"#;
    let payload_img = r#"<img src=x onerror="window.__pwned='payload-img'">"#;
    let dlv = send_one(
        &fenix,
        &app,
        json!({"type": "booking.confirmed", "data": {"note": payload_script, "html": payload_img}}),
    )
    .await;
    wait_for_delivery(&fenix, &app, &dlv, "succeeded").await;
    let link = portal_link(&fenix, &app, json!({"access": "read"})).await;
    // JSON shows `"` inside strings as `\"`: the page prints the payload as
    // JSON, so look for the parts without quotes.
    let markup = json!([
        format!("desc:{}", r#"<img src=x onerror="#),
        format!("desc:{}", "<script>window.__pwned="),
        "<script>window.__pwned=",
        "<img src=x onerror=",
    ]);

    let out = Script::start(
        "inert_flow",
        &[
            ("FENIX_URL", &fenix.base),
            ("FENIX_ADMIN_TOKEN", &fenix.token),
            ("APP_NAME", app_name),
            ("ENDPOINT_ID", ep["id"].as_str().unwrap()),
            ("DELIVERY_ID", &dlv),
            ("PORTAL_LINK", link["url"].as_str().unwrap()),
            ("MARKUP", &markup.to_string()),
        ],
    )
    .await
    .finish()
    .await;

    let seen = out.fact("seen").as_object().cloned().expect("pages inspected");
    assert_eq!(seen.len(), 6, "{seen:?}");
    for (page, what) in &seen {
        assert_eq!(what["pwned"], serde_json::Value::Null, "{page}: markup ran");
        assert_eq!(what["injected"], 0, "{page}: markup became elements");
        assert_eq!(what["missing_text"], json!([]), "{page}: markup not shown as text");
    }
}
