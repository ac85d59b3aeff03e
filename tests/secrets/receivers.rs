//! Every receiver of `docs/receiving.md`, run against real Fenix deliveries.
//!
//! Fenix delivers to a recording receiver: one event before a rotation (one
//! signature) and one during its overlap (two). Each documented receiver is
//! then started twice, once knowing only the old secret and once only the new
//! one, and fed those requests exactly as Fenix sent them (same headers, same
//! raw bytes). Finally the endpoint is pointed at the documented receiver
//! itself, so Fenix's own attempt is answered by it.

use fenix_signing::Scheme;
use serde_json::json;

use super::{
    common::{attempts, rotate, send, signatures, succeeded_delivery, tampered},
    snippets::{available, forward, wait_for, RustReceiver, SnippetProcess},
    support::{Backend, Fenix, Plan, Receiver, TestDb},
};

/// A documented receiver, running.
enum Running {
    Process(SnippetProcess),
    Rust(RustReceiver),
}

impl Running {
    async fn start(snippet: &str, scheme: Scheme, secrets: &[&str]) -> Running {
        match snippet {
            "rust" => Running::Rust(RustReceiver::start(scheme, secrets).await),
            name => Running::Process(SnippetProcess::start(name, secrets).await),
        }
    }

    fn url(&self) -> &str {
        match self {
            Running::Process(p) => &p.url,
            Running::Rust(r) => &r.url,
        }
    }
}

async fn documented_receiver_verifies_what_fenix_sends(snippet: &str, scheme: Scheme) {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let recorder = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": recorder.url, "signature_scheme": scheme.as_str()})).await;
    let ep_id = ep["id"].as_str().unwrap();
    let old = ep["secret"].as_str().unwrap().to_string();

    fenix.send_event(&app, json!({"type": "invoice.paid", "data": {"amount": 100, "note": "ünïcødé ✓"}})).await;
    let before = wait_for(&recorder, 1).await[0].clone();
    let new =
        rotate(&fenix, &app, ep_id, json!({"overlap_seconds": 3600})).await["secret"].as_str().unwrap().to_string();
    fenix.send_event(&app, json!({"type": "invoice.paid", "data": {"amount": 100, "n": 2}})).await;
    let during = wait_for(&recorder, 2).await[1].clone();
    assert_eq!(signatures(&before).len(), 1);
    assert_eq!(signatures(&during).len(), 2, "two signatures during the overlap");

    let knows_old = Running::start(snippet, scheme, &[&old]).await;
    assert_eq!(forward(knows_old.url(), &before, &before.body).await, (200, "ok".into()), "{snippet}: old secret");
    assert_eq!(forward(knows_old.url(), &during, &during.body).await, (200, "ok".into()), "{snippet}: overlap");
    assert_eq!(
        forward(knows_old.url(), &before, &before.body).await,
        (200, "duplicate".into()),
        "{snippet}: the same event again is a duplicate"
    );
    assert_eq!(forward(knows_old.url(), &during, &tampered(&during.body)).await.0, 401, "{snippet}: tampered body");
    assert_eq!(forward(knows_old.url(), &before, &tampered(&before.body)).await.0, 401, "{snippet}: tampered body");

    let knows_new = Running::start(snippet, scheme, &[&new]).await;
    assert_eq!(
        forward(knows_new.url(), &before, &before.body).await.0,
        401,
        "{snippet}: a request signed only with the old secret does not verify with the new one"
    );
    assert_eq!(forward(knows_new.url(), &during, &during.body).await, (200, "ok".into()), "{snippet}: overlap");
    assert_eq!(forward(knows_new.url(), &during, &tampered(&during.body)).await.0, 401, "{snippet}: tampered body");

    // Fenix itself delivers to the documented receiver.
    let (status, out) =
        fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep_id}"), Some(json!({"url": knows_new.url()}))).await;
    assert_eq!(status, 200, "{out}");
    let event = send(&fenix, &app, 3).await;
    let delivery = succeeded_delivery(&fenix, &app, &event, ep_id).await;
    let list = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(list.len(), 1, "{snippet}: accepted at the first attempt: {list:?}");
    assert_eq!(list[0]["response_status"], 200);
    assert_eq!(list[0]["response_excerpt"], "ok");
    assert_eq!(recorder.count(), 2, "the recorder got nothing after the URL changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_receiver_accepts_fenix_v1_deliveries_and_rejects_tampered_ones() {
    documented_receiver_verifies_what_fenix_sends("rust", Scheme::FenixV1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_receiver_accepts_standard_webhooks_deliveries_and_rejects_tampered_ones() {
    documented_receiver_verifies_what_fenix_sends("rust", Scheme::StandardWebhooks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_receiver_with_plain_crypto_accepts_fenix_v1_deliveries_and_rejects_tampered_ones() {
    if available("node", &["--version"], "node") {
        documented_receiver_verifies_what_fenix_sends("fenix-v1-node", Scheme::FenixV1).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_receiver_with_hmac_accepts_fenix_v1_deliveries_and_rejects_tampered_ones() {
    if available("python3", &["--version"], "python3") {
        documented_receiver_verifies_what_fenix_sends("fenix-v1-python", Scheme::FenixV1).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_node_standardwebhooks_package_accepts_deliveries_and_rejects_tampered_ones() {
    if available("node", &["-e", "require('standardwebhooks')"], "the standardwebhooks npm package (tests/receivers)") {
        documented_receiver_verifies_what_fenix_sends("standard-webhooks-node", Scheme::StandardWebhooks).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_standardwebhooks_package_accepts_deliveries_and_rejects_tampered_ones() {
    if available("python3", &["-c", "import standardwebhooks"], "the standardwebhooks Python package") {
        documented_receiver_verifies_what_fenix_sends("standard-webhooks-python", Scheme::StandardWebhooks).await;
    }
}

/// The worked examples of the page are what Fenix's signing code computes.
#[test]
fn the_worked_signature_examples_in_the_docs_are_correct() {
    let doc = super::snippets::RECEIVING_MD;
    let new = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let old = "whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoM=";
    let body = br#"{"id":"evt_01JDQ4X5B6M7N8P9Q0R1S2T3V4","type":"booking.confirmed","created_at":"2026-11-29T21:04:19.123Z","data":{"booking_id":42}}"#;
    let ts = 1_795_986_262;
    assert!(doc.contains(std::str::from_utf8(body).unwrap()));
    assert!(doc.contains(&format!("X-Fenix-Timestamp: {ts}")));
    let one = fenix_signing::fenix_v1_header(&[new], ts, body);
    assert!(doc.contains(&format!("X-Fenix-Signature: {one}\n")), "single fenix-v1 signature");
    let both = fenix_signing::fenix_v1_header(&[new, old], ts, body);
    assert!(doc.contains(&format!("X-Fenix-Signature: {both}\n")), "rotation fenix-v1 signatures");
    let sw = fenix_signing::standard_webhooks_header(&[new, old], "evt_01JDQ4X5B6M7N8P9Q0R1S2T3V4", ts, body).unwrap();
    assert!(doc.contains(&format!("webhook-signature: {sw}\n")), "standard webhooks signatures");
}
