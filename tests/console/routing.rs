//! An endpoint's routing in the console (issue 32): channels, a filter and a
//! transformation edited on the endpoint's page and tested there before they
//! are saved, by the operator and by a portal `manage` session (a `read`
//! session sees them and may change nothing); the delivery log filtered by
//! channel and tag, and what the transformation did to a delivery.

use std::time::Duration;

use serde_json::{json, Value};

use super::{
    browser::{self, Script},
    common::{app_with_endpoint, portal_link, wait_for_delivery},
};
use crate::support::{attempts, eventually, Backend, Fenix, Plan, Receiver, TestDb};

const FILTER: &str = r#"data.amount > 100 && data.currency == "EUR""#;
/// `>` with nothing after it: a syntax error at column 15.
const BAD_FILTER: &str = r#"data.amount > && data.currency == "EUR""#;
/// Its comment and its payload carry markup that must show as text and never run.
const TRANSFORMATION: &str = r#"// <img src=x onerror="window.__pwned='transformation'">
function handler(webhook) {
  const d = webhook.payload.data;
  webhook.method = "PUT";
  webhook.headers = Object.assign({}, webhook.headers, { "x-routed": "console" });
  webhook.payload = { routed: "console", amount: d.amount, note: MARKUP };
  return webhook;
}
const MARKUP = "<script>window.__pwned='payload'</script>";"#;
const BAD_TRANSFORMATION: &str = "function handler(webhook) { return webhook";
const EXAMPLE: &str = r#"{"amount": 250, "currency": "EUR"}"#;

/// A catalogued `invoice.paid` with an example, which the tests' samples start from.
async fn catalogue_invoice_paid(fenix: &Fenix) {
    let example: Value = serde_json::from_str(EXAMPLE).unwrap();
    let body = json!({"name": "invoice.paid", "description": "An invoice was paid.", "example": example});
    let (status, out) = fenix.call("POST", "/v1/event-types", Some(body)).await;
    assert_eq!(status, 201, "catalogue invoice.paid: {out}");
}

/// The endpoint as the API answers it.
async fn endpoint(fenix: &Fenix, app: &str, ep: &str) -> Value {
    let (status, out) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}"), None).await;
    assert_eq!(status, 200, "{out}");
    out
}

/// The endpoint holds what the page saved.
fn assert_routing_saved(ep: &Value, channels: Value) {
    assert_eq!(ep["channels"], channels, "{ep}");
    assert_eq!(ep["filter"], FILTER, "{ep}");
    assert_eq!(ep["transformation"], TRANSFORMATION, "{ep}");
}

/// The transformation test showed the request `TRANSFORMATION` makes of the example.
fn assert_transformed(shown: &Value) {
    assert_eq!(shown["outcome"], "transformed", "{shown}");
    assert_eq!(shown["method"], "PUT", "{shown}");
    assert!(shown["url"].as_str().is_some_and(|u| u.starts_with("http://127.0.0.1:")), "{shown}");
    assert!(shown["headers"].as_str().is_some_and(|h| h.contains("x-routed") && h.contains("console")), "{shown}");
    let payload: Value = serde_json::from_str(shown["payload"].as_str().unwrap_or("")).expect("the payload as JSON");
    assert_eq!(
        payload,
        json!({"routed": "console", "amount": 250, "note": "<script>window.__pwned='payload'</script>"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_edits_an_endpoints_channels_filter_and_transformation_tests_both_and_saves_them() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    catalogue_invoice_paid(&fenix).await;
    let body = json!({"url": receiver.url, "event_types": ["invoice.paid"]});
    let (app, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", body).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();

    let vars = [
        ("FENIX_URL", fenix.base.as_str()),
        ("FENIX_ADMIN_TOKEN", fenix.token.as_str()),
        ("APP_NAME", "Acme Travel"),
        ("ENDPOINT_ID", ep_id.as_str()),
        ("CHANNELS", "billing, eu"),
        ("FILTER", FILTER),
        ("BAD_FILTER", BAD_FILTER),
        ("TRANSFORMATION", TRANSFORMATION),
        ("BAD_TRANSFORMATION", BAD_TRANSFORMATION),
        ("NO_MATCH_DATA", r#"{"amount": 50, "currency": "EUR"}"#),
    ];
    let mut script = Script::start("routing_flow", &vars).await;
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "check-saved" => {
                assert_routing_saved(&endpoint(&fenix, &app, &ep_id).await, json!(["billing", "eu"]));
                script.answer(json!({})).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();

    // The sample starts from the endpoint's type and the catalogue's example.
    assert_eq!(out.text("prefill_type"), "invoice.paid");
    let prefilled: Value = serde_json::from_str(&out.text("prefill_data")).expect("prefilled data is JSON");
    assert_eq!(prefilled, serde_json::from_str::<Value>(EXAMPLE).unwrap());
    assert_eq!(out.fact("matched")["outcome"], "matched", "{}", out.fact("matched"));
    assert_eq!(out.fact("not_matched")["outcome"], "not_matched", "{}", out.fact("not_matched"));
    let syntax = out.fact("syntax_error");
    assert_eq!(syntax["outcome"], "error", "{syntax}");
    assert_eq!(syntax["line"], "1", "the error's line is shown: {syntax}");
    assert!(
        syntax["column"].as_str().is_some_and(|c| c.parse::<u32>().is_ok_and(|c| (13..=17).contains(&c))),
        "{syntax}"
    );
    assert!(syntax["text"].as_str().is_some_and(|t| t.contains("line 1, column")), "{syntax}");
    let bad = out.fact("transformation_error");
    assert_eq!(bad["outcome"], "error", "{bad}");
    assert!(bad["text"].as_str().is_some_and(|t| t.contains("not valid")), "{bad}");
    assert_transformed(out.fact("transformed"));
    // A refused save names the filter; the next one holds all three.
    let refused = out.fact("save_refused");
    assert_eq!(refused["field"], "filter", "the 422 is shown next to the filter: {refused}");
    assert_eq!(out.fact("filter_invalid"), "true");
    assert_eq!(out.fact("saved")["status"], "Saved.", "{}", out.fact("saved"));
    assert_eq!(out.text("shown_channels"), "billing, eu");
    assert_eq!(out.text("shown_filter"), FILTER);
    assert_eq!(out.text("shown_transformation"), TRANSFORMATION);
    assert_eq!(out.fact("markup_ran"), &json!({"pwned": null, "injected": 0}), "markup in the code or the payload ran");
    assert_routing_saved(&endpoint(&fenix, &app, &ep_id).await, json!(["billing", "eu"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_portal_manage_session_edits_and_tests_its_endpoints_routing_and_a_read_session_only_sees_it() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    catalogue_invoice_paid(&fenix).await;
    let body = json!({"url": receiver.url, "event_types": ["invoice.paid"]});
    let (app, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", body).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    let manage = portal_link(&fenix, &app, json!({"access": "manage"})).await;
    let read = portal_link(&fenix, &app, json!({"access": "read"})).await;

    let vars = [
        ("FENIX_URL", fenix.base.as_str()),
        ("MANAGE_LINK", manage["url"].as_str().unwrap()),
        ("READ_LINK", read["url"].as_str().unwrap()),
        ("APP_ID", app.as_str()),
        ("ENDPOINT_ID", ep_id.as_str()),
        ("CHANNELS", "billing"),
        ("FILTER", FILTER),
        ("TRANSFORMATION", TRANSFORMATION),
    ];
    let mut script = Script::start("portal_routing", &vars).await;
    while let Some(ask) = script.ask().await {
        match ask.what() {
            "check-saved" => {
                assert_routing_saved(&endpoint(&fenix, &app, &ep_id).await, json!(["billing"]));
                script.answer(json!({})).await;
            }
            other => panic!("unexpected request {other}"),
        }
    }
    let out = script.outcome();

    assert_eq!(out.fact("matched")["outcome"], "matched", "{}", out.fact("matched"));
    assert_transformed(out.fact("transformed"));
    assert_eq!(out.fact("saved")["status"], "Saved.", "{}", out.fact("saved"));
    assert_eq!(out.text("read_channels"), "billing");
    assert_eq!(out.text("read_filter"), FILTER);
    assert_eq!(out.text("read_transformation"), TRANSFORMATION);
    assert_eq!(out.fact("read_controls"), 0, "a read session gets no edit or test action");
    assert_eq!(out.fact("markup_ran"), &json!({"pwned": null, "injected": 0}), "markup in the code or the payload ran");
    assert_eq!(out.fact("read_patch_status"), 403, "and the API refuses it a change");
    assert_routing_saved(&endpoint(&fenix, &app, &ep_id).await, json!(["billing"]));
}

/// Cancels an event whose data says `cancel`, throws on `throw`, else adds a header.
const BRANCHING: &str = r#"function handler(webhook) {
  const d = webhook.payload.data;
  if (d.mode === "cancel") { webhook.cancel = true; return webhook; }
  if (d.mode === "throw") { throw new Error("mode throw"); }
  webhook.headers = Object.assign({}, webhook.headers, { "x-routed": "log" });
  return webhook;
}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_delivery_log_filters_by_channel_and_tag_and_tells_a_failed_and_a_cancelled_transformation() {
    if !browser::available() {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let billing = json!({"url": receiver.url, "channels": ["billing"], "transformation": BRANCHING});
    let (app, ep) = app_with_endpoint(&fenix, "acme", "Acme Travel", billing).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    // Every channel, no transformation: it gets the marketing event too.
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    let send = |mode: &str, channels: Value, tags: Value| json!({"type": "invoice.paid", "data": {"mode": mode}, "channels": channels, "tags": tags});
    let mut ours = Vec::new();
    let mut by_channel = Vec::new();
    let mut by_tag = Vec::new();
    for (mode, channels, tags) in [
        ("send", json!(["billing"]), json!(["vip"])),
        ("cancel", json!(["billing"]), json!(["bulk"])),
        ("throw", json!(["billing", "eu"]), json!(["vip"])),
        ("send", json!(["marketing"]), json!(["vip"])),
    ] {
        let evt = fenix.send_event(&app, send(mode, channels.clone(), tags.clone())).await;
        let dlvs = fenix.deliveries(&app, &format!("event_id={}", evt["id"].as_str().unwrap())).await;
        let ids: Vec<String> = dlvs.iter().map(|d| d["id"].as_str().unwrap().to_string()).collect();
        if channels.as_array().unwrap().contains(&json!("billing")) {
            by_channel.extend(ids.clone());
            let mine = dlvs.iter().find(|d| d["endpoint_id"] == ep_id.as_str()).expect("the billing endpoint's");
            ours.push(mine["id"].as_str().unwrap().to_string());
        }
        if tags.as_array().unwrap().contains(&json!("vip")) {
            by_tag.extend(ids);
        }
    }
    let (sent, cancelled, failed) = (ours[0].clone(), ours[1].clone(), ours[2].clone());
    wait_for_delivery(&fenix, &app, &sent, "succeeded").await;
    let skipped = wait_for_delivery(&fenix, &app, &cancelled, "skipped").await;
    eventually("an attempt the transformation failed", Duration::from_secs(10), || {
        let (fenix, app, failed) = (&fenix, &app, &failed);
        async move { attempts(fenix, app, failed).await.iter().any(|a| a["error"] == "transformation_failed") }
    })
    .await;

    let vars = [
        ("FENIX_URL", fenix.base.as_str()),
        ("FENIX_ADMIN_TOKEN", fenix.token.as_str()),
        ("APP_NAME", "Acme Travel"),
        ("APP_ID", app.as_str()),
        ("CHANNEL", "billing"),
        ("TAG", "vip"),
        ("DELIVERY_SENT", sent.as_str()),
        ("DELIVERY_FAILED", failed.as_str()),
        ("DELIVERY_CANCELLED", cancelled.as_str()),
    ];
    let out = Script::start("routing_log", &vars).await.finish().await;

    by_channel.sort();
    by_tag.sort();
    assert_eq!(out.fact("by_channel"), &json!(by_channel), "the log by channel");
    assert_eq!(out.fact("by_tag"), &json!(by_tag), "the log by tag");
    assert_eq!(out.text("sent_channels"), "billing");
    assert_eq!(out.text("sent_tags"), "vip");
    let failed_rows = out.fact("failed_attempts").as_array().cloned().unwrap_or_default();
    assert!(
        failed_rows.iter().any(|r| r.as_str().is_some_and(|r| r.contains("transformation_failed"))),
        "{failed_rows:?}"
    );
    assert!(out.text("failed_error_words").contains("transformation failed"), "{}", out.text("failed_error_words"));
    assert_eq!(out.text("cancelled_status"), "skipped", "{skipped}");
    assert_eq!(out.text("cancelled_reason_code"), "transformation_cancelled");
    assert!(out.text("cancelled_reason").contains("Cancelled by the endpoint's transformation"));
    // What the receiver got: the one sent event of the billing endpoint carries its header.
    let routed = receiver.received().iter().filter(|r| r.header("x-routed") == "log").count();
    assert_eq!(routed, 1, "one request through the transformation");
}
