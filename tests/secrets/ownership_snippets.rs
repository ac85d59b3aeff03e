//! The receivers of `docs/receiving.md` answer Fenix's ownership challenge:
//! the real binary (with `FENIX_REQUIRE_ENDPOINT_VERIFICATION`) sends each its
//! signed `webhook.verification` request, the endpoint becomes `active`, and
//! the next event is delivered to it.

use std::time::Duration;

use fenix_signing::Scheme;
use serde_json::json;

use super::{
    snippets::{available, RustReceiver, SnippetProcess},
    support::{eventually, Backend, Fenix, TestDb},
};

/// The endpoint's secret, chosen by the owner so the receiver can start with it
/// before the endpoint exists (the challenge is sent as soon as it does).
const SECRET: &str = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

async fn documented_receiver_proves_it_owns_its_endpoint(url: &str) {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_REQUIRE_ENDPOINT_VERIFICATION", "true")]).await;
    let app = fenix.create_app("acme").await;
    let created = fenix.create_endpoint(&app, json!({"url": url, "secret": SECRET})).await;
    let ep = created["id"].as_str().unwrap().to_string();
    let path = format!("/v1/apps/{app}/endpoints/{ep}");
    eventually(&format!("{url} verified"), Duration::from_secs(15), || async {
        fenix.call("GET", &path, None).await.1["state"] == "active"
    })
    .await;
    let event = fenix.send_event(&app, json!({"type": "invoice.paid", "data": {"amount": 100}})).await;
    let query = format!("event_id={}", event["id"].as_str().unwrap());
    eventually("the event delivered", Duration::from_secs(15), || async {
        fenix.deliveries(&app, &query).await.first().is_some_and(|d| d["status"] == "succeeded")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_receiver_answers_the_ownership_challenge() {
    let receiver = RustReceiver::start(Scheme::FenixV1, &[SECRET]).await;
    documented_receiver_proves_it_owns_its_endpoint(&receiver.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_receiver_answers_the_ownership_challenge() {
    if !available("node", &["--version"], "node") {
        return;
    }
    let receiver = SnippetProcess::start("fenix-v1-node", &[SECRET]).await;
    documented_receiver_proves_it_owns_its_endpoint(&receiver.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_receiver_answers_the_ownership_challenge() {
    if !available("python3", &["--version"], "python3") {
        return;
    }
    let receiver = SnippetProcess::start("fenix-v1-python", &[SECRET]).await;
    documented_receiver_proves_it_owns_its_endpoint(&receiver.url).await;
}
