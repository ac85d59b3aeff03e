//! A Fenix webhook receiver for Ed25519 endpoints: axum for HTTP, `fenix-signing` to verify.
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
use fenix_signing::{verify_with, Ed25519PublicKey, Scheme, SignedRequest, VerifyKey, DEFAULT_TOLERANCE};

/// Everything the handler needs.
#[derive(Clone)]
struct Inbox {
    /// The endpoint's `signature_scheme` (`fenix-v1` unless you chose otherwise).
    scheme: Scheme,
    /// The endpoint's public key(s): during a rotation, the new and the old one.
    keys: Arc<Vec<Ed25519PublicKey>>,
    /// Event ids already handled. Keep them in your database in production.
    seen: Arc<Mutex<HashSet<String>>>,
}

/// `POST /webhooks`, verifying every request against `public_keys` (`whpk_…`).
pub fn router(scheme: Scheme, public_keys: &[String]) -> Router {
    let keys = public_keys.iter().map(|key| Ed25519PublicKey::parse(key).expect("a whpk_ public key")).collect();
    let inbox = Inbox { scheme, keys: Arc::new(keys), seen: Arc::default() };
    Router::new().route("/webhooks", post(webhook)).with_state(inbox)
}

async fn webhook(State(inbox): State<Inbox>, headers: HeaderMap, body: Bytes) -> (StatusCode, &'static str) {
    let scheme = inbox.scheme;
    let request = SignedRequest {
        scheme,
        timestamp: header(&headers, scheme.timestamp_header()),
        signature_header: header(&headers, scheme.signature_header()),
        msg_id: scheme.msg_id_header().map(|name| header(&headers, name)),
        body: &body, // the raw bytes as received: verify before parsing JSON
    };
    let keys: Vec<VerifyKey<'_>> = inbox.keys.iter().map(VerifyKey::Ed25519).collect();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    if let Err(error) = verify_with(&request, &keys, DEFAULT_TOLERANCE, now) {
        eprintln!("rejected a webhook: {error}");
        return (StatusCode::UNAUTHORIZED, "invalid signature");
    }
    let Ok(event) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON");
    };
    let id = event["id"].as_str().unwrap_or_default().to_owned();
    if !inbox.seen.lock().unwrap().insert(id) {
        return (StatusCode::OK, "duplicate"); // a retry of an event already handled: acknowledge it
    }
    // ... handle the event (or queue it), then answer within a few seconds ...
    (StatusCode::OK, "ok")
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|value| value.to_str().ok()).unwrap_or("")
}

/// Listens on `PORT` (default 8000) with `WEBHOOK_PUBLIC_KEYS` (space-separated `whpk_…`).
#[tokio::main]
pub async fn main() -> std::io::Result<()> {
    let keys = std::env::var("WEBHOOK_PUBLIC_KEYS").unwrap_or_default();
    let keys: Vec<String> = keys.split_whitespace().map(String::from).collect();
    let port = std::env::var("PORT").unwrap_or_else(|_| "8000".into());
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
    axum::serve(listener, router(Scheme::FenixV1, &keys)).await // or Scheme::StandardWebhooks
}
