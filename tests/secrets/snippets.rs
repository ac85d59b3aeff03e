//! Runs the receiver snippets of `docs/receiving.md`.
//!
//! A snippet is a fenced code block whose info string carries `snippet=<name>`,
//! e.g. ```` ```python snippet=fenix-v1-python ````. The Python and Node ones
//! are complete HTTP servers: the test writes the block, exactly as the page
//! shows it, to a temporary file and runs it with `python3` / `node` (Node
//! finds the `standardwebhooks` package through `NODE_PATH` =
//! `tests/receivers/node_modules`, installed by `scripts/test.sh`). Each one
//! listens on `PORT` and reads `WEBHOOK_SECRETS`, as the page says. The Rust
//! snippet is this directory's `rust_receiver.rs`, compiled into the test;
//! [`rust_snippet_is_the_compiled_receiver`] keeps the page and the file equal.
//!
//! Missing interpreters or packages fail the tests under CI (like a missing
//! PostgreSQL); elsewhere they print a note and the test passes.

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::Duration,
};

use crate::support::{eventually, free_port, Received};

/// The page, as the test binary was built with it.
pub const RECEIVING_MD: &str = include_str!("../../docs/receiving.md");

/// The Rust snippet's source.
pub const RUST_RECEIVER_RS: &str = include_str!("rust_receiver.rs");

/// The Rust Ed25519 snippet's source.
pub const RUST_ED25519_RECEIVER_RS: &str = include_str!("rust_ed25519_receiver.rs");

/// The repository's `tests/receivers` folder (the Node packages for the snippets).
pub fn receivers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/receivers")
}

/// The code block marked `snippet=<name>`, with its language; panics unless exactly one exists.
pub fn snippet(name: &str) -> (String, String) {
    let mut found = Vec::new();
    let mut lines = RECEIVING_MD.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else { continue };
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("").to_string();
        let marked = words.any(|w| w == format!("snippet={name}"));
        let mut body = String::new();
        for line in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        if marked {
            found.push((lang, body));
        }
    }
    assert_eq!(found.len(), 1, "docs/receiving.md must have exactly one block marked snippet={name}");
    found.pop().expect("one snippet")
}

/// True when the tools to run a snippet are there; outside CI a missing tool is a note, under CI a failure.
pub fn available(program: &str, check: &[&str], what: &str) -> bool {
    let ok = Command::new(program)
        .args(check)
        .env("NODE_PATH", receivers_dir().join("node_modules"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("{what} is missing under CI: scripts/test.sh installs it");
        }
        eprintln!("note: {what} is missing, snippet not run (scripts/test.sh installs it)");
    }
    ok
}

/// A snippet running as its own process, listening on loopback.
pub struct SnippetProcess {
    pub url: String,
    child: Child,
    _dir: tempfile::TempDir,
}

impl SnippetProcess {
    /// Starts the snippet `name` with `secrets` (newest first) and waits until
    /// it answers an unsigned request with 401 (so it is this snippet that
    /// listens). The port is picked free beforehand; should another process
    /// take it in between, the snippet exits and is started again on another.
    pub async fn start(name: &str, secrets: &[&str]) -> SnippetProcess {
        let (lang, code) = snippet(name);
        let (program, file) = match lang.as_str() {
            "python" => ("python3", "receiver.py"),
            "js" => ("node", "receiver.js"),
            other => panic!("snippet {name}: no runner for language {other:?}"),
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(file);
        std::fs::write(&path, code).expect("write snippet");
        let log = dir.path().join("stderr");
        for attempt in 1..=3 {
            let port = free_port();
            let mut child = Command::new(program)
                .arg(&path)
                .env_clear()
                .env("PATH", std::env::var("PATH").unwrap_or_default())
                .env("HOME", std::env::var("HOME").unwrap_or_default())
                .env("NODE_PATH", receivers_dir().join("node_modules"))
                .env("PORT", port.to_string())
                .env("WEBHOOK_SECRETS", secrets.join(" "))
                // The Ed25519 receivers read public keys (`whpk_…`) instead.
                .env("WEBHOOK_PUBLIC_KEYS", secrets.join(" "))
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("stderr file"))
                .spawn()
                .unwrap_or_else(|e| panic!("start {program}: {e}"));
            let url = format!("http://127.0.0.1:{port}/webhooks");
            match wait_until_ready(&mut child, &url, &log).await {
                Ok(()) => return SnippetProcess { url, child, _dir: dir },
                Err(err) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    if attempt == 3 || !err.contains("in use") {
                        panic!("snippet {name} did not get ready: {err}");
                    }
                }
            }
        }
        unreachable!("three attempts either returned or panicked")
    }
}

/// Waits until the process at `url` answers an unsigned request with 401.
async fn wait_until_ready(child: &mut Child, url: &str, log: &std::path::Path) -> Result<(), String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let client = reqwest::Client::new();
    loop {
        if let Ok(resp) = client.post(url).body("{}").send().await {
            if resp.status().as_u16() == 401 {
                return Ok(());
            }
        }
        let said = || std::fs::read_to_string(log).unwrap_or_default();
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("it exited ({status}):\n{}", said()));
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("{url} did not answer an unsigned request with 401:\n{}", said()));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

impl Drop for SnippetProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Rust snippet's router, served in this process.
pub struct RustReceiver {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl RustReceiver {
    pub async fn start(scheme: fenix_signing::Scheme, secrets: &[&str]) -> RustReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/webhooks", listener.local_addr().expect("addr"));
        let router = super::rust_receiver::router(scheme, secrets.iter().map(|s| s.to_string()).collect());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        RustReceiver { url, task }
    }
}

impl Drop for RustReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Sends a request Fenix made (as a receiver recorded it) to `url` again: the
/// same headers, and `body` (the original bytes unless tampered). Answers status and body text.
pub async fn forward(url: &str, request: &Received, body: &[u8]) -> (u16, String) {
    let mut builder = reqwest::Client::new().post(url).body(body.to_vec());
    for (name, value) in &request.headers {
        if !matches!(name.as_str(), "host" | "content-length" | "connection" | "transfer-encoding") {
            builder = builder.header(name, value);
        }
    }
    let response = builder.send().await.expect("request to the snippet");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// Waits until `receiver` has recorded `n` requests.
pub async fn wait_for(receiver: &crate::support::Receiver, n: usize) -> Vec<Received> {
    eventually(&format!("{n} request(s) at the receiver"), Duration::from_secs(10), || async { receiver.count() >= n })
        .await;
    receiver.received()
}

#[test]
fn rust_snippet_is_the_compiled_receiver() {
    let (lang, code) = snippet("rust");
    assert_eq!(lang, "rust");
    assert!(
        code == RUST_RECEIVER_RS,
        "the Rust block of docs/receiving.md differs from tests/secrets/rust_receiver.rs: keep them identical"
    );
    // The snippet's `main` is part of what the page shows: keep it compiling.
    let _main: fn() -> std::io::Result<()> = super::rust_receiver::main;
}

#[test]
fn rust_ed25519_snippet_is_the_compiled_receiver() {
    let (lang, code) = snippet("rust-ed25519");
    assert_eq!(lang, "rust");
    assert!(
        code == RUST_ED25519_RECEIVER_RS,
        "the rust-ed25519 block of docs/receiving.md differs from tests/secrets/rust_ed25519_receiver.rs: keep them identical"
    );
    let _main: fn() -> std::io::Result<()> = super::rust_ed25519_receiver::main;
}

#[test]
fn every_snippet_named_on_the_page_is_marked_once() {
    for name in [
        "rust",
        "fenix-v1-node",
        "fenix-v1-python",
        "standard-webhooks-node",
        "standard-webhooks-python",
        "rust-ed25519",
        "ed25519-node",
        "ed25519-python",
    ] {
        let (_, code) = snippet(name);
        assert!(code.lines().count() > 10, "snippet {name} looks empty");
    }
}
