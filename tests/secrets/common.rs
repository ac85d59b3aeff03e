//! Helpers shared by the secrets suite: verifying what a receiver got, reading
//! attempts, rotating, and running `fenix` sub-commands to their exit.

use std::{
    process::{Command, ExitStatus, Stdio},
    time::Duration,
};

use base64::{engine::general_purpose::STANDARD, Engine};
use fenix_signing::{Scheme, SignedRequest, Verified, VerifyError};
use serde_json::{json, Value};

use crate::support::{eventually, Fenix, Received};

/// The harness's master key (what `Fenix::start` gives every instance).
pub const KEY_A: &str = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=";
/// A second master key, to move to.
pub const KEY_B: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

pub use crate::support::{attempts, unix_now as now_unix};

/// Which scheme a request was signed with, from its headers.
pub fn scheme_of(req: &Received) -> Scheme {
    if req.headers.contains_key("webhook-signature") {
        Scheme::StandardWebhooks
    } else {
        Scheme::FenixV1
    }
}

/// A received request as the signing crate verifies it, in its own scheme.
pub fn signed_request(req: &Received) -> SignedRequest<'_> {
    let scheme = scheme_of(req);
    SignedRequest {
        scheme,
        timestamp: req.header(scheme.timestamp_header()),
        signature_header: req.header(scheme.signature_header()),
        msg_id: scheme.msg_id_header().map(|h| req.header(h)),
        body: &req.body,
    }
}

/// Verifies a received request against `secrets` with the signing crate.
pub fn verify(req: &Received, secrets: &[&str]) -> Result<Verified, VerifyError> {
    fenix_signing::verify(&signed_request(req), secrets, fenix_signing::DEFAULT_TOLERANCE, now_unix())
}

/// The same bytes with one value of the payload changed.
pub fn tampered(body: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(body.to_vec()).expect("UTF-8 body");
    assert!(text.contains(r#""amount":100"#), "unexpected body {text}");
    text.replace(r#""amount":100"#, r#""amount":999"#).into_bytes()
}

/// The signature entries of a request, in the order sent.
pub fn signatures(req: &Received) -> Vec<String> {
    match scheme_of(req) {
        Scheme::FenixV1 => req.header("x-fenix-signature").split(',').map(str::to_string).collect(),
        Scheme::StandardWebhooks => req.header("webhook-signature").split(' ').map(str::to_string).collect(),
    }
}

/// The one entry `secret` yields for this request (what Fenix must have sent for it).
pub fn expected_signature(req: &Received, secret: &str) -> String {
    let ts: i64 = req.header(scheme_of(req).timestamp_header()).parse().expect("numeric timestamp");
    match scheme_of(req) {
        Scheme::FenixV1 => format!("v1={}", fenix_signing::sign_v1(secret, ts, &req.body)),
        Scheme::StandardWebhooks => {
            fenix_signing::standard_webhooks_header(&[secret], req.header("webhook-id"), ts, &req.body).expect("secret")
        }
    }
}

/// The request a receiver got for `event_id`.
pub fn request_for<'a>(received: &'a [Received], event_id: &str) -> &'a Received {
    received
        .iter()
        .find(|r| r.header("x-fenix-event-id") == event_id)
        .unwrap_or_else(|| panic!("no request for {event_id}"))
}

/// Rotates an endpoint's secret; answers the rotate response.
pub async fn rotate(fenix: &Fenix, app: &str, ep: &str, body: Value) -> Value {
    let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/secret/rotate"), Some(body)).await;
    assert_eq!(status, 200, "rotate: {out}");
    out
}

/// The delivery of `event_id` to `endpoint_id`, once it succeeded.
pub async fn succeeded_delivery(fenix: &Fenix, app: &str, event_id: &str, endpoint_id: &str) -> Value {
    let query = format!("event_id={event_id}&endpoint_id={endpoint_id}&status=succeeded");
    eventually(&format!("delivery of {event_id} to {endpoint_id} succeeded"), Duration::from_secs(15), || async {
        !fenix.deliveries(app, &query).await.is_empty()
    })
    .await;
    fenix.deliveries(app, &query).await.remove(0)
}

/// `signed_with` of the single attempt of the delivery of `event_id` to `endpoint_id`.
pub async fn signed_with(fenix: &Fenix, app: &str, event_id: &str, endpoint_id: &str) -> Value {
    let delivery = succeeded_delivery(fenix, app, event_id, endpoint_id).await;
    let list = attempts(fenix, app, delivery["id"].as_str().expect("id")).await;
    list.last().expect("an attempt")["signed_with"].clone()
}

/// A fresh, valid secret of `n` random bytes (as an owner could supply).
pub fn random_secret(n: usize) -> String {
    format!("whsec_{}", STANDARD.encode(random_bytes(n)))
}

pub fn random_bytes(n: usize) -> Vec<u8> {
    (0..n).map(|_| rand::random::<u8>()).collect()
}

/// Sends one event and answers its id.
pub async fn send(fenix: &Fenix, app: &str, n: i64) -> String {
    let evt = fenix.send_event(app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
    evt["id"].as_str().expect("event id").to_string()
}

/// What a finished `fenix` process said.
pub struct Exited {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `fenix <args>` with exactly `env` until it exits; panics (after killing
/// it) if it is still running after `timeout`.
pub async fn run_fenix(env: &[(String, String)], args: &[&str], timeout: Duration) -> Exited {
    let dir = tempfile::tempdir().expect("temp dir");
    let (out_path, err_path) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fenix"));
    cmd.args(args).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("spawn fenix");
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "fenix {args:?} still ran after {timeout:?}; it said:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    Exited {
        status,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

/// `env` with `name` set to `value` (or removed when `None`).
pub fn with_env(mut env: Vec<(String, String)>, name: &str, value: Option<&str>) -> Vec<(String, String)> {
    env.retain(|(k, _)| k != name);
    if let Some(v) = value {
        env.push((name.to_string(), v.to_string()));
    }
    env
}
