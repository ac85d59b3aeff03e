//! What several e2e scenarios share: receivers' verifiers written from the
//! DESIGN §1 table alone (in Python and in Node, independent of the Rust
//! signing crate), and small readers of the delivery log.

use std::{io::Write, process::Stdio, time::Duration};

use serde_json::Value;

use crate::support::{eventually, Fenix, Received};

/// A Python receiver's check, from the wire contract only: HMAC-SHA256 with the
/// secret's UTF-8 bytes over `timestamp + "." + raw body`, lower-case hex, compared
/// in constant time with every `v1=` entry; timestamp within 300 s.
const PYTHON_VERIFIER: &str = r#"
import hashlib, hmac, os, sys, time
body = sys.stdin.buffer.read()
ts = os.environ["FX_TIMESTAMP"]
expected = hmac.new(os.environ["FX_SECRET"].encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
candidates = [p.strip()[3:] for p in os.environ["FX_SIGNATURE"].split(",") if p.strip().startswith("v1=")]
signed = any(hmac.compare_digest(expected, c) for c in candidates)
fresh = abs(time.time() - int(ts)) <= 300
print("OK" if signed and fresh else "BAD")
"#;

/// The same check in Node, as the DESIGN suggests: `createHmac` and `timingSafeEqual`.
const NODE_VERIFIER: &str = r#"
const crypto = require("crypto");
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const body = Buffer.concat(chunks);
  const { FX_SECRET, FX_TIMESTAMP, FX_SIGNATURE } = process.env;
  const expected = Buffer.from(
    crypto.createHmac("sha256", FX_SECRET).update(Buffer.concat([Buffer.from(FX_TIMESTAMP + "."), body])).digest("hex")
  );
  const signed = FX_SIGNATURE.split(",")
    .map((p) => p.trim())
    .filter((p) => p.startsWith("v1="))
    .some((p) => {
      const got = Buffer.from(p.slice(3));
      return got.length === expected.length && crypto.timingSafeEqual(got, expected);
    });
  const fresh = Math.abs(Date.now() / 1000 - Number(FX_TIMESTAMP)) <= 300;
  console.log(signed && fresh ? "OK" : "BAD");
});
"#;

/// What one request's headers and body look like to a verifier.
pub struct Signed<'a> {
    pub timestamp: &'a str,
    pub signature: &'a str,
    pub body: &'a [u8],
}

impl<'a> Signed<'a> {
    /// The fenix-v1 parts of a received request.
    pub fn of(r: &'a Received) -> Signed<'a> {
        Signed { timestamp: r.header("x-fenix-timestamp"), signature: r.header("x-fenix-signature"), body: &r.body }
    }
}

/// Runs `program -flag script` with the request in the environment and the body
/// on stdin; true when it prints `OK`.
async fn run_verifier(program: &str, flag: &str, script: &str, secret: &str, req: &Signed<'_>) -> bool {
    let (program, flag, script) = (program.to_string(), flag.to_string(), script.to_string());
    let (secret, ts, sig, body) =
        (secret.to_string(), req.timestamp.to_string(), req.signature.to_string(), req.body.to_vec());
    tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(&program)
            .args([flag.as_str(), script.as_str()])
            .env("FX_SECRET", secret)
            .env("FX_TIMESTAMP", ts)
            .env("FX_SIGNATURE", sig)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("could not run {program}: {e}"));
        child.stdin.take().expect("stdin").write_all(&body).expect("write body to verifier");
        let out = child.wait_with_output().expect("verifier output");
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(
            out.status.success() && (stdout == "OK" || stdout == "BAD"),
            "{program} verifier broke: status {:?}, stdout {stdout:?}, stderr {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        stdout == "OK"
    })
    .await
    .expect("verifier task")
}

/// True when an independent Python receiver accepts the request.
pub async fn python_accepts(secret: &str, req: &Signed<'_>) -> bool {
    run_verifier("python3", "-c", PYTHON_VERIFIER, secret, req).await
}

/// True when an independent Node receiver accepts the request.
pub async fn node_accepts(secret: &str, req: &Signed<'_>) -> bool {
    run_verifier("node", "-e", NODE_VERIFIER, secret, req).await
}

/// True when the signing crate accepts the request (fenix-v1, default tolerance).
pub fn signing_crate_accepts(secret: &str, req: &Signed<'_>) -> bool {
    let signed = fenix_signing::SignedRequest {
        scheme: fenix_signing::Scheme::FenixV1,
        timestamp: req.timestamp,
        signature_header: req.signature,
        msg_id: None,
        body: req.body,
    };
    fenix_signing::verify(&signed, &[secret], fenix_signing::DEFAULT_TOLERANCE, unix_now()).is_ok()
}

pub use crate::support::unix_now;

/// The deliveries of one event.
pub async fn deliveries_of(fenix: &Fenix, app: &str, event_id: &str) -> Vec<Value> {
    fenix.deliveries(app, &format!("event_id={event_id}")).await
}

/// Waits until the event's only delivery has `status`; returns it.
pub async fn wait_for_status(fenix: &Fenix, app: &str, event_id: &str, status: &str, timeout: Duration) -> Value {
    let what = format!("the delivery of {event_id} is {status}");
    eventually(&what, timeout, || async {
        let d = deliveries_of(fenix, app, event_id).await;
        d.len() == 1 && d[0]["status"] == status
    })
    .await;
    deliveries_of(fenix, app, event_id).await.remove(0)
}

pub use crate::support::attempts;

/// The endpoint's signing secret from its create answer.
pub fn secret_of(endpoint: &Value) -> String {
    endpoint["secret"].as_str().expect("create answers the secret").to_string()
}
