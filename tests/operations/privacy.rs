//! Payloads are operational data: a marker inside an event's data appears in no
//! log line (at debug level), no metric, no error message and no API answer
//! except the event read that explicitly asks for the payload.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::common::{attempts, ep_path, id_of, wait_for_delivery, wait_for_requests};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

const MARKER: &str = "MARKER-7f3a9c";

/// Posts a raw body to the ingest route; answers status and the body text.
async fn post_raw(fenix: &Fenix, app: &str, body: &str) -> (u16, String) {
    let resp = fenix
        .request("POST", &format!("/v1/apps/{app}/events"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("ingest request");
    (resp.status().as_u16(), resp.text().await.expect("answer"))
}

/// Reads `path` and answers its body as text, asserting 200.
async fn read_text(fenix: &Fenix, path: &str) -> String {
    let resp = fenix.request("GET", path).send().await.expect("API request");
    assert_eq!(resp.status().as_u16(), 200, "GET {path}");
    resp.text().await.expect("answer")
}

async fn a_marker_inside_payloads_appears_in_no_log_metric_error_or_answer_without_include_payload(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_LOG", "debug"), ("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let ok = Receiver::http(|_| Plan::ok().with_body("thanks")).await;
    let down = Receiver::http(|_| Plan::status(500).with_body("we are down")).await;
    let app = fenix.create_app("acme").await;
    let ok_ep = id_of(&fenix.create_endpoint(&app, json!({"url": ok.url})).await);
    let down_ep = id_of(&fenix.create_endpoint(&app, json!({"url": down.url})).await);

    let data = json!({"note": MARKER, "nested": {"list": [MARKER, 1]}});
    let ingested = fenix.send_event(&app, json!({"type": "patient.updated", "data": data})).await;
    assert!(!ingested.to_string().contains(MARKER), "the ingest answer echoes the payload: {ingested}");
    assert!(ingested.get("data").is_none());
    let event = id_of(&ingested);
    wait_for_delivery(&fenix, &app, &event, &ok_ep, "succeeded").await;
    wait_for_delivery(&fenix, &app, &event, &down_ep, "failed").await;
    let received = wait_for_requests(&ok, 1).await;
    assert!(String::from_utf8_lossy(&received[0].body).contains(MARKER), "the receiver got the payload");
    assert_eq!(
        ingested["payload_sha256"],
        hex::encode(Sha256::digest(&received[0].body)).as_str(),
        "the digest is the SHA-256 of the envelope sent"
    );

    // Requests the API refuses, each carrying the marker somewhere other than a valid data object.
    let bad = [
        (json!({"type": format!("not a type {MARKER}!"), "data": {"note": MARKER}}).to_string(), 422),
        (json!({"type": "patient.updated", "data": MARKER}).to_string(), 422),
        (json!({"type": [MARKER], "data": {"note": MARKER}}).to_string(), 422),
        (json!({"type": "patient.updated", "data": {"note": MARKER}, "id": {"k": MARKER}}).to_string(), 422),
        (format!(r#"{{"type":"patient.updated","data":{{"note":"{MARKER}""#), 400),
        (format!(r#"{{"type":"patient.updated","data":{{"note":"{MARKER}" oops}}}}"#), 400),
    ];
    for (body, expected) in &bad {
        let (status, answer) = post_raw(&fenix, &app, body).await;
        assert_eq!(status, *expected, "{body} → {answer}");
        let parsed: Value = serde_json::from_str(&answer).expect("error answers are JSON");
        assert!(parsed["error"]["code"].is_string(), "{answer}");
        assert!(!answer.contains(MARKER), "the error message echoes the request's content: {answer}");
    }

    let plain = read_text(&fenix, &format!("/v1/apps/{app}/events/{event}")).await;
    let plain_json: Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(plain_json["payload_sha256"], ingested["payload_sha256"]);
    assert!(plain_json.get("data").is_none(), "the event log shows data only when asked: {plain}");
    let mut answers = vec![plain];
    answers.push(read_text(&fenix, &format!("/v1/apps/{app}/events")).await);
    answers.push(read_text(&fenix, &format!("/v1/apps/{app}/deliveries")).await);
    for d in fenix.deliveries(&app, &format!("event_id={event}")).await {
        let dlv = id_of(&d);
        answers.push(read_text(&fenix, &format!("/v1/apps/{app}/deliveries/{dlv}")).await);
        answers.push(read_text(&fenix, &format!("/v1/apps/{app}/deliveries/{dlv}/attempts")).await);
        assert!(!attempts(&fenix, &app, &dlv).await.is_empty());
    }
    for ep in [&ok_ep, &down_ep] {
        answers.push(read_text(&fenix, &ep_path(&app, ep, "/stats")).await);
        answers.push(read_text(&fenix, &ep_path(&app, ep, "")).await);
    }
    answers.push(read_text(&fenix, "/metrics").await);
    for answer in &answers {
        assert!(!answer.contains(MARKER), "an API answer without include=payload shows the payload: {answer}");
    }

    let with_payload = read_text(&fenix, &format!("/v1/apps/{app}/events/{event}?include=payload")).await;
    let with_payload: Value = serde_json::from_str(&with_payload).unwrap();
    assert_eq!(with_payload["data"], data, "include=payload answers the producer's data");
    assert_eq!(with_payload["payload_sha256"], ingested["payload_sha256"]);
    let listed = read_text(&fenix, &format!("/v1/apps/{app}/events?include=payload")).await;
    assert!(listed.contains(MARKER), "the event list with include=payload shows the data");

    let logs = fenix.logs();
    assert!(logs.contains("attempt finished"), "the log is at debug level and records attempts");
    if let Some(line) = logs.lines().find(|l| l.contains(MARKER)) {
        panic!("the payload marker appears in the log: {line}");
    }
}

crate::on_both_backends!(a_marker_inside_payloads_appears_in_no_log_metric_error_or_answer_without_include_payload);
