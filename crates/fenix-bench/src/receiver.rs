//! The verifying receiver: a separate process (the bench re-executes itself
//! with the hidden `receiver` sub-command) so that its CPU use is visible and
//! it shares nothing with the client or with Fenix.
//!
//! Every `POST` to a registered path is verified with `fenix-signing` against
//! that path's secret(s), counted and answered `200` (a failed verification is
//! counted, not refused: a refusal would make Fenix retry minutes later and the
//! run would never finish). Control calls, all JSON:
//! - `POST /_bench/register {"path","secrets":[…]}` — the secrets of one path;
//! - `POST /_bench/reset?record=1` — zero the counters; `record=1` also keeps
//!   `(event id, receipt time)` per request for the latency phase;
//! - `GET /_bench/stats` → `{received, verified_failures, first_at_us, last_at_us, bytes, connections}`;
//! - `GET /_bench/latencies` → `{"records":[[event_id, unix_micros], …]}` since the reset;
//! - `POST /_bench/pace?per_s=N` — answer at most N requests a second, in the
//!   order they arrive (each waits for its slot; `0`: no pacing), as a
//!   receiver that takes only so much does (the overload phase).

use std::collections::HashMap;
use std::convert::Infallible;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{bail, Context};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, Method, Request, Response, StatusCode};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::now_us;

#[derive(Default)]
struct State {
    secrets: RwLock<HashMap<String, Vec<String>>>,
    received: AtomicU64,
    failures: AtomicU64,
    first_at_us: AtomicU64,
    last_at_us: AtomicU64,
    bytes: AtomicU64,
    connections: AtomicU64,
    record: AtomicBool,
    records: Mutex<Vec<(String, u64)>>,
    /// Sink mode (the fallback when nginx is missing): no verification, `204`.
    sink: bool,
    /// Requests answered a second at most (0: no pacing), and when the next
    /// slot is (µs since the epoch).
    pace_per_s: AtomicU64,
    pace_next_us: AtomicU64,
}

impl State {
    /// How long this request waits for its slot in the paced FIFO.
    fn pace_wait(&self) -> std::time::Duration {
        let per_s = self.pace_per_s.load(Ordering::Relaxed);
        if per_s == 0 {
            return std::time::Duration::ZERO;
        }
        let now = now_us();
        let step = 1_000_000 / per_s;
        let slot = self
            .pace_next_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| Some(next.max(now) + step))
            .unwrap_or(now);
        std::time::Duration::from_micros(slot.max(now) - now)
    }
}

/// What `GET /_bench/stats` answers.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Stats {
    pub received: u64,
    pub verified_failures: u64,
    pub first_at_us: u64,
    pub last_at_us: u64,
    pub bytes: u64,
    /// Connections accepted since the reset.
    pub connections: u64,
}

#[derive(Deserialize)]
struct Register {
    path: String,
    secrets: Vec<String>,
}

#[derive(Serialize, Deserialize)]
pub struct Latencies {
    pub records: Vec<(String, u64)>,
}

/// Runs the receiver until its standard input closes (the bench died or finished).
pub async fn serve(sink: bool) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.context("binding the receiver")?;
    println!("RECEIVER_PORT {}", listener.local_addr()?.port());
    use std::io::Write as _;
    std::io::stdout().flush()?;
    tokio::spawn(async {
        let mut stdin_bytes = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut stdin_bytes).await;
        std::process::exit(0);
    });
    let state = Arc::new(State { sink, ..State::default() });
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("receiver: accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        state.connections.fetch_add(1, Ordering::Relaxed);
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

fn reply(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r
}

fn json_reply(value: &impl Serialize) -> Response<Full<Bytes>> {
    let mut r = reply(StatusCode::OK, serde_json::to_vec(value).unwrap_or_default());
    r.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
    r
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    if let Some(control) = path.strip_prefix("/_bench/") {
        return Ok(control_call(&state, &method, control, req).await);
    }
    if method != Method::POST {
        return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, ""));
    }
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, "")),
    };
    let at = now_us();
    if state.sink {
        state.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
        let _ = state.first_at_us.compare_exchange(0, at, Ordering::Relaxed, Ordering::Relaxed);
        state.last_at_us.fetch_max(at, Ordering::Relaxed);
        state.received.fetch_add(1, Ordering::Release);
        return Ok(reply(StatusCode::NO_CONTENT, ""));
    }
    let get = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let verified = {
        let secrets = state.secrets.read().unwrap_or_else(|e| e.into_inner());
        match secrets.get(&path) {
            Some(list) => {
                let keys: Vec<&str> = list.iter().map(String::as_str).collect();
                let signed = fenix_signing::SignedRequest {
                    scheme: fenix_signing::Scheme::FenixV1,
                    timestamp: get("x-fenix-timestamp").unwrap_or(""),
                    signature_header: get("x-fenix-signature").unwrap_or(""),
                    msg_id: None,
                    body: &body,
                };
                let now = i64::try_from(at / 1_000_000).unwrap_or(i64::MAX);
                fenix_signing::verify(&signed, &keys, fenix_signing::DEFAULT_TOLERANCE, now).is_ok()
            }
            None => false,
        }
    };
    if !verified {
        state.failures.fetch_add(1, Ordering::Relaxed);
    }
    if state.record.load(Ordering::Relaxed) {
        let id = get("x-fenix-event-id").unwrap_or("").to_string();
        state.records.lock().unwrap_or_else(|e| e.into_inner()).push((id, at));
    }
    state.bytes.fetch_add(body.len() as u64, Ordering::Relaxed);
    let _ = state.first_at_us.compare_exchange(0, at, Ordering::Relaxed, Ordering::Relaxed);
    state.last_at_us.fetch_max(at, Ordering::Relaxed);
    // Counted last, so that a reader who sees the count also sees the times.
    state.received.fetch_add(1, Ordering::Release);
    let wait = state.pace_wait();
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    Ok(reply(StatusCode::OK, ""))
}

async fn control_call(state: &State, method: &Method, what: &str, req: Request<Incoming>) -> Response<Full<Bytes>> {
    match (method, what) {
        (&Method::GET, "stats") => {
            let received = state.received.load(Ordering::Acquire);
            json_reply(&Stats {
                received,
                verified_failures: state.failures.load(Ordering::Relaxed),
                first_at_us: state.first_at_us.load(Ordering::Relaxed),
                last_at_us: state.last_at_us.load(Ordering::Relaxed),
                bytes: state.bytes.load(Ordering::Relaxed),
                connections: state.connections.load(Ordering::Relaxed),
            })
        }
        (&Method::GET, "latencies") => {
            let records = state.records.lock().unwrap_or_else(|e| e.into_inner()).clone();
            json_reply(&Latencies { records })
        }
        (&Method::POST, "reset") => {
            let record = req.uri().query().is_some_and(|q| q.split('&').any(|p| p == "record=1"));
            state.record.store(record, Ordering::Relaxed);
            state.records.lock().unwrap_or_else(|e| e.into_inner()).clear();
            for counter in [
                &state.received,
                &state.failures,
                &state.first_at_us,
                &state.last_at_us,
                &state.bytes,
                &state.connections,
            ] {
                counter.store(0, Ordering::Relaxed);
            }
            reply(StatusCode::OK, "")
        }
        (&Method::POST, "pace") => {
            let per_s = req.uri().query().and_then(|q| q.strip_prefix("per_s=")).and_then(|v| v.parse().ok());
            let Some(per_s) = per_s else { return reply(StatusCode::BAD_REQUEST, "per_s=N") };
            state.pace_per_s.store(per_s, Ordering::Relaxed);
            reply(StatusCode::OK, "")
        }
        (&Method::POST, "register") => {
            let body = match req.into_body().collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => return reply(StatusCode::BAD_REQUEST, ""),
            };
            match serde_json::from_slice::<Register>(&body) {
                Ok(r) => {
                    state.secrets.write().unwrap_or_else(|e| e.into_inner()).insert(r.path, r.secrets);
                    reply(StatusCode::OK, "")
                }
                Err(e) => reply(StatusCode::BAD_REQUEST, e.to_string()),
            }
        }
        _ => reply(StatusCode::NOT_FOUND, ""),
    }
}

/// The bench's side: the child process and calls to its control API.
pub struct Receiver {
    child: tokio::process::Child,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    client: reqwest::Client,
}

impl Receiver {
    /// Starts `<this executable> receiver` and waits for its port.
    pub async fn spawn() -> anyhow::Result<Receiver> {
        Receiver::spawn_with(&[]).await
    }

    /// The fallback sink: `receiver --sink` (`204`, counters only, no verification).
    pub async fn spawn_sink() -> anyhow::Result<Receiver> {
        Receiver::spawn_with(&["--sink"]).await
    }

    async fn spawn_with(args: &[&str]) -> anyhow::Result<Receiver> {
        let exe = std::env::current_exe().context("locating the bench executable")?;
        let mut child = tokio::process::Command::new(exe)
            .arg("receiver")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .context("starting the receiver process")?;
        let stdout = child.stdout.take().context("receiver stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .context("the receiver did not report its port within 10 s")??
            .context("the receiver exited before reporting its port")?;
        let Some(port) = line.strip_prefix("RECEIVER_PORT ") else {
            bail!("unexpected receiver output {line:?}");
        };
        let base = format!("http://127.0.0.1:{}", port.trim());
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Receiver { child, base, client: reqwest::Client::builder().no_proxy().build()? })
    }

    /// Process id, to read its CPU time.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub async fn register(&self, path: &str, secrets: &[String]) -> anyhow::Result<()> {
        let r = self
            .client
            .post(format!("{}/_bench/register", self.base))
            .json(&serde_json::json!({"path": path, "secrets": secrets}))
            .send()
            .await?;
        if !r.status().is_success() {
            bail!("receiver refused a registration: {}", r.status());
        }
        Ok(())
    }

    pub async fn reset(&self, record: bool) -> anyhow::Result<()> {
        let q = if record { "?record=1" } else { "" };
        let r = self.client.post(format!("{}/_bench/reset{q}", self.base)).send().await?;
        if !r.status().is_success() {
            bail!("receiver refused a reset: {}", r.status());
        }
        Ok(())
    }

    /// Answers at most `per_s` requests a second from now on (0: as fast as it can).
    pub async fn pace(&self, per_s: u64) -> anyhow::Result<()> {
        let r = self.client.post(format!("{}/_bench/pace?per_s={per_s}", self.base)).send().await?;
        if !r.status().is_success() {
            bail!("receiver refused to pace: {}", r.status());
        }
        Ok(())
    }

    pub async fn stats(&self) -> anyhow::Result<Stats> {
        Ok(self.client.get(format!("{}/_bench/stats", self.base)).send().await?.error_for_status()?.json().await?)
    }

    pub async fn latencies(&self) -> anyhow::Result<Vec<(String, u64)>> {
        let l: Latencies =
            self.client.get(format!("{}/_bench/latencies", self.base)).send().await?.error_for_status()?.json().await?;
        Ok(l.records)
    }
}
