//! A Fenix webhook receiver: axum for HTTP, the `fenix-signing` crate to verify.
//!
//! Cargo.toml: axum = "0.8", serde_json = "1", tokio = { version = "1", features = ["full"] }, and
//! fenix-signing = { version = "0.1", path = "../fenix/crates/fenix-signing" } (a checkout of Fenix: not on crates.io)

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    routing::post,
    Router,
};
use fenix_signing::{verify, Scheme, SignedRequest, DEFAULT_TOLERANCE};

/// Everything the handler needs.
#[derive(Clone)]
struct Inbox {
    /// The endpoint's `signature_scheme` (`fenix-v1` unless you chose otherwise).
    scheme: Scheme,
    /// The endpoint's secret(s), newest first: during a rotation, the new and the old one.
    secrets: Arc<Vec<String>>,
    /// Event ids already handled. Keep them in your database in production.
    seen: Arc<Mutex<HashSet<String>>>,
}

/// `POST /webhooks`, verifying every request against `secrets`.
pub fn router(scheme: Scheme, secrets: Vec<String>) -> Router {
    let inbox = Inbox { scheme, secrets: Arc::new(secrets), seen: Arc::default() };
    Router::new().route("/webhooks", post(webhook)).with_state(inbox)
}

async fn webhook(State(inbox): State<Inbox>, headers: HeaderMap, body: Bytes) -> (StatusCode, String) {
    let scheme = inbox.scheme;
    let request = SignedRequest {
        scheme,
        timestamp: header(&headers, scheme.timestamp_header()),
        signature_header: header(&headers, scheme.signature_header()),
        msg_id: scheme.msg_id_header().map(|name| header(&headers, name)),
        body: &body, // the raw bytes as received: verify before parsing JSON
    };
    let secrets: Vec<&str> = inbox.secrets.iter().map(String::as_str).collect();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    if let Err(error) = verify(&request, &secrets, DEFAULT_TOLERANCE, now) {
        eprintln!("rejected a webhook: {error}");
        return (StatusCode::UNAUTHORIZED, "invalid signature".into());
    }
    let Ok(event) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON".into());
    };
    if event["type"] == "webhook.verification" {
        // Proof of ownership (when Fenix asks for it): echo the challenge.
        return (StatusCode::OK, serde_json::json!({ "challenge": event["data"]["challenge"] }).to_string());
    }
    let id = event["id"].as_str().unwrap_or_default().to_owned();
    if !inbox.seen.lock().unwrap().insert(id) {
        return (StatusCode::OK, "duplicate".into()); // a retry of an event already handled: acknowledge it
    }
    // ... handle the event (or queue it), then answer within a few seconds ...
    (StatusCode::OK, "ok".into())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|value| value.to_str().ok()).unwrap_or("")
}

/// Listens on `PORT` (default 8000) with `WEBHOOK_SECRETS` (space-separated, newest first).
#[tokio::main]
pub async fn main() -> std::io::Result<()> {
    let secrets = std::env::var("WEBHOOK_SECRETS").unwrap_or_default();
    let secrets = secrets.split_whitespace().map(String::from).collect();
    let port = std::env::var("PORT").unwrap_or_else(|_| "8000".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    axum::serve(listener, router(Scheme::FenixV1, secrets)).await // or Scheme::StandardWebhooks
}
