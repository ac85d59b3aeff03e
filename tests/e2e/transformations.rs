//! Endpoint transformations as a receiver and an owner meet them: the
//! reshaped request arrives signed over its new bytes, the same on every
//! attempt; a cancel skips the delivery with its reason; hostile scripts fail
//! their own deliveries (`transformation_failed`) while another app's keep
//! arriving; `transformations/test` answers without storing anything.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::common::{attempts, secret_of, wait_for_status};
use crate::support::{eventually, signed_v1_by, Backend, Fenix, Plan, Receiver, TestDb};

const RESHAPE: &str = r#"function handler(webhook) {
    webhook.method = "PUT";
    webhook.url = webhook.url + "/slack?team=" + encodeURIComponent(webhook.payload.data.team);
    webhook.headers["X-Kind"] = webhook.payload.type;
    webhook.payload = {
        text: "Booking " + webhook.payload.data.n + " confirmed",
        seen_headers: Object.keys(webhook.headers).sort(),
    };
    return webhook;
}"#;

async fn a_transformed_request_arrives_signed_and_the_same_on_a_retry(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let receiver = Receiver::http(|n| if n == 0 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix
        .create_endpoint(
            &app,
            json!({"url": receiver.url, "transformation": RESHAPE,
                   "headers": {"X-Tenant": "acme", "X-Api-Key": "k-123"}, "sensitive_headers": ["X-Api-Key"]}),
        )
        .await;
    assert_eq!(ep["transformation"], RESHAPE);
    let secret = secret_of(&ep);
    let evt =
        fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 7, "team": "blue & red"}})).await;
    let delivery =
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    assert_eq!(delivery["attempt_count"], 2);

    let got = receiver.received();
    assert_eq!(got.len(), 2);
    for r in &got {
        assert_eq!(r.method, "PUT");
        assert_eq!((r.path.as_str(), r.query.as_str()), ("/hook/slack", "team=blue%20%26%20red"));
        assert_eq!(r.header("x-kind"), "booking.confirmed");
        assert_eq!(r.header("x-tenant"), "acme", "the script kept the endpoint's header");
        assert_eq!(r.header("x-api-key"), "k-123", "the sealed header is added after the script");
        assert_eq!(r.header("x-fenix-event-id"), evt["id"].as_str().unwrap());
        assert!(signed_v1_by(&secret, r), "the signature covers the transformed bytes");
    }
    assert_eq!(got[0].body, got[1].body, "the retry sends the same bytes");
    assert_ne!(got[0].header("x-fenix-signature"), "", "signed");
    assert_eq!(
        String::from_utf8(got[0].body.clone()).unwrap(),
        r#"{"text":"Booking 7 confirmed","seen_headers":["X-Kind","X-Tenant"]}"#,
        "the script's own bytes, key order kept; it never saw the sensitive header"
    );

    // The delivery log shows the stored request.
    let dlv = delivery["id"].as_str().unwrap();
    let (status, shown) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{dlv}/request"), None).await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["method"], "PUT");
    assert!(shown["url"].as_str().unwrap().ends_with("/hook/slack?team=blue%20%26%20red"), "{shown}");
    assert_eq!(shown["payload"]["text"], "Booking 7 confirmed");
    assert!(shown["headers"].get("X-Api-Key").is_none(), "sealed values are never stored with it: {shown}");
}

async fn a_stateful_script_keeps_its_state_but_retries_and_replays_send_the_stored_bytes(backend: Backend) {
    let db = TestDb::new(backend).await;
    // One transformation thread: each thread keeps its own sandbox per endpoint.
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms,100ms"), ("FENIX_TRANSFORM_THREADS", "1")]).await;
    // Three failed attempts, then every request answered 200.
    let receiver = Receiver::http(|n| if n < 3 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let script = "var calls = 0; function handler(w) { calls++; w.payload = {calls: calls}; return w; }";
    fenix.create_endpoint(&app, json!({"url": receiver.url, "transformation": script})).await;
    let first = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {}})).await;
    let failed = wait_for_status(&fenix, &app, first["id"].as_str().unwrap(), "failed", Duration::from_secs(10)).await;
    assert_eq!(failed["attempt_count"], 3);
    let dlv = failed["id"].as_str().unwrap();
    let (status, replayed) = fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{dlv}/replay"), None).await;
    assert_eq!(status, 202, "{replayed}");
    wait_for_status(&fenix, &app, first["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    let second = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {}})).await;
    wait_for_status(&fenix, &app, second["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;

    let bodies: Vec<String> = receiver.received().iter().map(|r| String::from_utf8(r.body.clone()).unwrap()).collect();
    assert_eq!(
        bodies,
        [r#"{"calls":1}"#; 4].into_iter().chain([r#"{"calls":2}"#]).collect::<Vec<_>>(),
        "the script ran once for the first delivery (its retries and its replay sent the stored bytes), \
         and its state carried over to the next delivery"
    );
}

async fn many_transformed_deliveries_at_once_are_each_stored_and_sent_with_their_own_bytes(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let script = "function handler(w) { w.payload = {n: w.payload.data.n}; return w; }";
    for _ in 0..3 {
        fenix.create_endpoint(&app, json!({"url": receiver.url, "transformation": script})).await;
    }
    let events: Vec<Value> = (0..60).map(|n| json!({"type": "booking.confirmed", "data": {"n": n}})).collect();
    let (status, accepted) =
        fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": events}))).await;
    assert_eq!(status, 202, "{accepted}");
    eventually("every transformed delivery arrives", Duration::from_secs(20), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == 180
    })
    .await;
    let mut got: Vec<String> = receiver.received().iter().map(|r| String::from_utf8(r.body.clone()).unwrap()).collect();
    got.sort();
    let mut want: Vec<String> = (0..60).flat_map(|n| vec![format!(r#"{{"n":{n}}}"#); 3]).collect();
    want.sort();
    assert_eq!(got, want, "each delivery sent its own transformation's bytes, once");
    // Each delivery's stored request is its own.
    for d in fenix.deliveries(&app, "").await.into_iter().take(20) {
        let (status, shown) =
            fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{}/request", d["id"].as_str().unwrap()), None).await;
        assert_eq!(status, 200, "{shown}");
        let (_, event) = fenix
            .call("GET", &format!("/v1/apps/{app}/events/{}?include=payload", d["event_id"].as_str().unwrap()), None)
            .await;
        assert_eq!(shown["payload"]["n"], event["data"]["n"], "{shown} {event}");
    }
}

async fn a_cancel_skips_the_delivery_with_its_reason(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let script = "function handler(w) { if (w.payload.data.internal) { w.cancel = true; } return w; }";
    fenix.create_endpoint(&app, json!({"url": receiver.url, "transformation": script})).await;
    let quiet = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"internal": true}})).await;
    let loud = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"internal": false}})).await;

    let skipped =
        wait_for_status(&fenix, &app, quiet["id"].as_str().unwrap(), "skipped", Duration::from_secs(10)).await;
    assert_eq!(skipped["skip_reason"], "transformation_cancelled");
    assert_eq!(skipped["attempt_count"], 0);
    assert!(attempts(&fenix, &app, skipped["id"].as_str().unwrap()).await.is_empty(), "no attempt is made");
    let sent = wait_for_status(&fenix, &app, loud["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    assert_eq!(sent["skip_reason"], Value::Null);
    assert_eq!(receiver.count(), 1);
    assert_eq!(receiver.received()[0].header("x-fenix-event-id"), loud["id"].as_str().unwrap());
}

async fn hostile_scripts_fail_their_own_deliveries_while_another_apps_keep_arriving(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1h")]).await;
    let hostile_receiver = Receiver::http(|_| Plan::ok()).await;
    let good_receiver = Receiver::http(|_| Plan::ok()).await;
    let hostile = fenix.create_app("hostile").await;
    let good = fenix.create_app("good").await;
    let scripts = [
        ("function handler(w) { while (true) {} }", "time limit"),
        ("function handler(w) { var a = []; for (;;) a.push(new Array(10000).fill(w)); }", "memory limit"),
        ("function handler(w) { w.payload = 'x'.repeat(10 * 1000 * 1000); return w; }", "limit"),
        ("function handler(w) { w.url = 'http://127.0.0.2:1/hook'; return w; }", "scheme, host and port"),
    ];
    for (script, _) in &scripts {
        let ep = fenix.create_endpoint(&hostile, json!({"url": hostile_receiver.url, "transformation": script})).await;
        assert_eq!(ep["transformation"], *script);
    }
    fenix.create_endpoint(&good, json!({"url": good_receiver.url})).await;
    for n in 0..3 {
        fenix.send_event(&hostile, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
    }
    for n in 0..5 {
        let sent = Instant::now();
        fenix.send_event(&good, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
        eventually("the other app's event arrives within a second", Duration::from_secs(1), || async {
            good_receiver.count() == n + 1
        })
        .await;
        assert!(sent.elapsed() < Duration::from_secs(1));
    }

    let deliveries = fenix.deliveries(&hostile, "").await;
    assert_eq!(deliveries.len(), 12);
    eventually("every hostile delivery has its failed attempt", Duration::from_secs(20), || async {
        let d = fenix.deliveries(&hostile, "").await;
        d.iter().all(|d| d["attempt_count"] == 1 && d["status"] == "pending")
    })
    .await;
    let (status, endpoints) = fenix.call("GET", &format!("/v1/apps/{hostile}/endpoints"), None).await;
    assert_eq!(status, 200);
    for ep in endpoints["data"].as_array().unwrap() {
        let reason = scripts.iter().find(|(s, _)| *s == ep["transformation"]).unwrap().1;
        let of_ep = fenix.deliveries(&hostile, &format!("endpoint_id={}", ep["id"].as_str().unwrap())).await;
        assert_eq!(of_ep.len(), 3);
        for d in of_ep {
            let logged = attempts(&fenix, &hostile, d["id"].as_str().unwrap()).await;
            assert_eq!(logged.len(), 1);
            let a = &logged[0];
            assert_eq!(a["error"], "transformation_failed", "{a}");
            assert_eq!(a["response_status"], Value::Null);
            let detail = a["error_detail"].as_str().unwrap();
            assert!(detail.contains(reason), "{detail} names {reason}");
            assert!(a["duration_ms"].as_i64().unwrap() < 5000, "{a}");
            assert!(d["next_attempt_at"].is_string(), "a failed transformation is retried on the schedule: {d}");
        }
        assert_eq!(ep["state"], "active", "a failing script never disables its endpoint");
    }
    assert_eq!(hostile_receiver.count(), 0, "no request left for a failed transformation");
}

async fn a_script_is_compiled_when_saved_and_patched_like_the_other_fields(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let body = json!({"url": receiver.url, "transformation": "function handler(w) {\n  return w +;\n}"});
    let (status, refused) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints"), Some(body)).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["code"], "invalid_transformation");
    assert!(refused["error"]["message"].as_str().unwrap().contains("line 2"), "{refused}");
    let body = json!({"url": receiver.url, "transformation": "function other(w) { return w; }"});
    let (status, refused) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints"), Some(body)).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (422, Some("invalid_transformation")), "{refused}");
    let big = format!("function handler(w) {{ return w; }} //{}", "x".repeat(64 * 1024));
    let body = json!({"url": receiver.url, "transformation": big});
    let (status, refused) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints"), Some(body)).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (422, Some("invalid_transformation")), "{refused}");

    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    assert_eq!(ep["transformation"], Value::Null);
    let path = format!("/v1/apps/{app}/endpoints/{}", ep["id"].as_str().unwrap());
    let script = "function handler(w) { return w; }";
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"transformation": script}))).await;
    assert_eq!((status, patched["transformation"].as_str()), (200, Some(script)), "{patched}");
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"description": "d"}))).await;
    assert_eq!((status, patched["transformation"].as_str()), (200, Some(script)), "left out: unchanged");
    let (status, refused) = fenix.call("PATCH", &path, Some(json!({"transformation": "function ("}))).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (422, Some("invalid_transformation")), "{refused}");
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"transformation": null}))).await;
    assert_eq!((status, &patched["transformation"]), (200, &Value::Null), "null removes it");
}

async fn transformations_test_answers_the_request_or_the_failure_and_stores_nothing(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix
        .create_endpoint(
            &app,
            json!({"url": receiver.url, "headers": {"X-Tenant": "acme", "Authorization": "Bearer hidden"}}),
        )
        .await;
    let test = format!("/v1/apps/{app}/transformations/test");
    let event = json!({"type": "booking.confirmed", "data": {"n": 7, "team": "blue"}});

    let (status, out) = fenix.call("POST", &test, Some(json!({"transformation": RESHAPE, "event": event}))).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["method"], "PUT");
    assert_eq!(out["url"], "https://receiver.example/webhook/slack?team=blue");
    assert_eq!(out["headers"], json!({"X-Kind": "booking.confirmed"}));
    assert_eq!(out["payload"], json!({"text": "Booking 7 confirmed", "seen_headers": ["X-Kind"]}));
    assert_eq!(out["cancel"], false);

    let body = json!({"transformation": RESHAPE, "event": event, "endpoint_id": ep["id"]});
    let (status, out) = fenix.call("POST", &test, Some(body)).await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["url"], format!("{}/slack?team=blue", receiver.url));
    assert_eq!(out["payload"]["seen_headers"], json!(["X-Kind", "X-Tenant"]), "never the sensitive Authorization");

    let cancel = "function handler(w) { w.cancel = w.payload.data.n > 5; return w; }";
    let (status, out) = fenix.call("POST", &test, Some(json!({"transformation": cancel, "event": event}))).await;
    assert_eq!((status, &out["cancel"]), (200, &json!(true)), "{out}");

    for (script, code, says) in [
        ("function handler(w) {", "invalid_transformation", "SyntaxError"),
        (
            "function handler(w) { throw new Error('no team ' + w.payload.data.team); }",
            "transformation_failed",
            "no team blue",
        ),
        ("function handler(w) { w.url = 'https://elsewhere.example/'; return w; }", "transformation_failed", "host"),
        ("function handler(w) { for (;;) {} }", "transformation_failed", "time limit"),
    ] {
        let (status, out) = fenix.call("POST", &test, Some(json!({"transformation": script, "event": event}))).await;
        assert_eq!((status, out["error"]["code"].as_str()), (422, Some(code)), "{script}: {out}");
        assert!(out["error"]["message"].as_str().unwrap().contains(says), "{script}: {out}");
    }
    let (status, out) = fenix
        .call("POST", &test, Some(json!({"transformation": RESHAPE, "event": event, "endpoint_id": "ep_nope"})))
        .await;
    assert_eq!((status, out["error"]["code"].as_str()), (404, Some("endpoint_not_found")), "{out}");

    // Authorized like an endpoint update: an app token with manage, not read.
    for (access, want) in [("read", 403), ("manage", 200)] {
        let (s, tok) =
            fenix.call("POST", "/v1/tokens", Some(json!({"name": access, "app": app, "access": access}))).await;
        assert_eq!(s, 201, "{tok}");
        let body = json!({"transformation": RESHAPE, "event": event});
        let (status, out) = fenix.call_as(tok["token"].as_str(), "POST", &test, Some(body)).await;
        assert_eq!(status, want, "{access}: {out}");
    }
    assert!(fenix.deliveries(&app, "").await.is_empty(), "a test stores no delivery");
    let (_, events) = fenix.call("GET", &format!("/v1/apps/{app}/events"), None).await;
    assert_eq!(events["data"], json!([]), "and no event");
    assert_eq!(receiver.count(), 0);
}

crate::on_both_backends!(
    a_transformed_request_arrives_signed_and_the_same_on_a_retry,
    a_stateful_script_keeps_its_state_but_retries_and_replays_send_the_stored_bytes,
    many_transformed_deliveries_at_once_are_each_stored_and_sent_with_their_own_bytes,
    a_cancel_skips_the_delivery_with_its_reason,
    hostile_scripts_fail_their_own_deliveries_while_another_apps_keep_arriving,
    a_script_is_compiled_when_saved_and_patched_like_the_other_fields,
    transformations_test_answers_the_request_or_the_failure_and_stores_nothing,
);
