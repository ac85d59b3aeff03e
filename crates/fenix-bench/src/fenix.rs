//! The `fenix` child process (one per phase and role) and the few admin API
//! calls the bench makes.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context};
use base64::Engine as _;
use rand::RngCore as _;
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::progress;

/// Which half (or both) of Fenix a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    ApiOnly,
    WorkerOnly,
    Both,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::ApiOnly => "api",
            Role::WorkerOnly => "worker",
            Role::Both => "api+worker",
        }
    }
}

/// Settings shared by every fenix process of one run.
pub struct Launch {
    pub bin: PathBuf,
    pub admin_token: String,
    pub master_key: String,
    pub log_dir: PathBuf,
}

impl Launch {
    pub fn new(bin: PathBuf, log_dir: PathBuf) -> Launch {
        let mut key = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut key);
        let mut tok = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut tok);
        Launch {
            bin,
            admin_token: format!("fxa_bench{}", hex_lower(&tok)),
            master_key: base64::engine::general_purpose::STANDARD.encode(key),
            log_dir,
        }
    }
}

fn hex_lower(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A running fenix process.
pub struct Fenix {
    child: tokio::process::Child,
    pid: u32,
    pub role: Role,
    /// `http://127.0.0.1:<port>` when the API runs.
    pub base: Option<String>,
    pub log_path: PathBuf,
}

/// CPU seconds and peak RSS of a stopped process, read just before it was stopped.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub peak_rss_mb: f64,
    pub cpu_s: f64,
}

impl Fenix {
    /// Starts `fenix serve [--api-only|--worker-only]` on `database_url`; for
    /// the API roles, waits for its `Fenix listening on http://…` line.
    pub async fn start(launch: &Launch, role: Role, database_url: &str, label: &str) -> anyhow::Result<Fenix> {
        Fenix::start_with(launch, role, database_url, label, &[]).await
    }

    /// [`Fenix::start`] with `env` set for the process (over the bench's own environment).
    pub async fn start_with(
        launch: &Launch,
        role: Role,
        database_url: &str,
        label: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Fenix> {
        let log_path = launch.log_dir.join(format!("fenix-{label}-{}.log", role.name().replace('+', "-")));
        let log = std::fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
        let mut cmd = serve_command(launch, role, database_url, env, log);
        let mut child = cmd.spawn().with_context(|| format!("starting {}", launch.bin.display()))?;
        let pid = child.id().context("fenix exited at once")?;
        let stdout = child.stdout.take().context("fenix stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let base = match role {
            Role::WorkerOnly => None,
            Role::ApiOnly | Role::Both => Some(listening_on(&mut child, &mut lines, role, &log_path).await?),
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Fenix { child, pid, role, base, log_path })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The API's base URL (API roles only).
    pub fn base(&self) -> &str {
        self.base.as_deref().unwrap_or("http://127.0.0.1:0")
    }

    /// Fails when the process has exited.
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("fenix ({}) exited unexpectedly ({status}); its log:\n{}", self.role.name(), tail(&self.log_path));
        }
        Ok(())
    }

    /// Peak RSS and CPU time so far.
    pub fn usage(&self) -> Usage {
        Usage { peak_rss_mb: peak_rss_mb(self.pid).unwrap_or(0.0), cpu_s: cpu_seconds(self.pid).unwrap_or(0.0) }
    }

    /// Reads the usage, then SIGTERM and waits (SIGKILL after 30 s).
    pub async fn stop(mut self) -> anyhow::Result<Usage> {
        self.check_alive()?;
        let usage = self.usage();
        let _ = std::process::Command::new("kill").args(["-TERM", &self.pid.to_string()]).status();
        match tokio::time::timeout(Duration::from_secs(30), self.child.wait()).await {
            Ok(status) => {
                let status = status?;
                if !status.success() {
                    progress(&format!("note: fenix ({}) exited with {status} after SIGTERM", self.role.name()));
                }
            }
            Err(_) => {
                progress(&format!(
                    "note: fenix ({}) did not stop within 30 s of SIGTERM; killing it",
                    self.role.name()
                ));
                let _ = self.child.kill().await;
            }
        }
        Ok(usage)
    }
}

/// `fenix serve` in `role` on `database_url`, its stderr to `log`, its
/// stdout piped (where it prints its address): loopback only, plain HTTP
/// allowed, `env` over the bench's own environment.
fn serve_command(
    launch: &Launch,
    role: Role,
    database_url: &str,
    env: &[(&str, &str)],
    log: std::fs::File,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(&launch.bin);
    cmd.arg("serve");
    match role {
        Role::ApiOnly => {
            cmd.arg("--api-only");
        }
        Role::WorkerOnly => {
            cmd.arg("--worker-only");
        }
        Role::Both => {}
    }
    cmd.env("DATABASE_URL", database_url)
        .env("FENIX_LISTEN", "127.0.0.1:0")
        .env("FENIX_ADMIN_TOKEN", &launch.admin_token)
        .env("FENIX_MASTER_KEY", &launch.master_key)
        .env("FENIX_UNSAFE_ALLOW_HTTP", "true")
        .env("FENIX_UNSAFE_ALLOW_CIDRS", "127.0.0.0/8")
        .env("FENIX_LOG", std::env::var("FENIX_BENCH_FENIX_LOG").unwrap_or_else(|_| "warn".into()))
        // The bench's endpoints stand for different customers, who would be on
        // different hosts; here they all share 127.0.0.1, so the per-host
        // limit is lifted unless the caller sets one (to measure it).
        .env("FENIX_HOST_CONCURRENCY", std::env::var("FENIX_HOST_CONCURRENCY").unwrap_or_else(|_| "100000".into()))
        .env_remove("FENIX_CONFIG")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .kill_on_drop(true);
    cmd
}

/// Reads the process's stdout until its `Fenix listening on http://…` line
/// (at most 120 s): the address, without a trailing `/`.
async fn listening_on(
    child: &mut tokio::process::Child,
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    role: Role,
    log_path: &Path,
) -> anyhow::Result<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let line = tokio::time::timeout_at(deadline, lines.next_line()).await;
        match line {
            Ok(Ok(Some(line))) => {
                if let Some(rest) = line.trim().strip_prefix("Fenix listening on ") {
                    return Ok(rest.trim().trim_end_matches('/').to_string());
                }
            }
            Ok(_) => {
                let status = child.wait().await.ok();
                bail!("fenix ({}) exited before listening ({status:?}); its log:\n{}", role.name(), tail(log_path));
            }
            Err(_) => bail!("fenix did not print its address within 120 s; its log:\n{}", tail(log_path)),
        }
    }
}

/// The last lines of a log file, for error messages.
pub fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// `VmHWM` (peak resident set) of a process, in MB.
pub fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// User + system CPU seconds of a process (from `/proc/<pid>/stat`).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks())
}

fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// An admin API client for one fenix process.
pub struct Api {
    pub base: String,
    token: String,
    client: reqwest::Client,
}

#[derive(Deserialize)]
struct IdOnly {
    id: String,
}

#[derive(Deserialize)]
struct Created {
    id: String,
    secret: Option<String>,
}

impl Api {
    pub fn new(fenix: &Fenix, launch: &Launch) -> anyhow::Result<Api> {
        Ok(Api {
            base: fenix.base().to_string(),
            token: launch.admin_token.clone(),
            client: reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(60)).build()?,
        })
    }

    /// `POST path` with a JSON body and the admin token; the answer's body, refused unless `2xx`.
    pub async fn post(&self, path: &str, body: serde_json::Value) -> anyhow::Result<bytes::Bytes> {
        let r = self.client.post(format!("{}{path}", self.base)).bearer_auth(&self.token).json(&body).send().await?;
        let status = r.status();
        let bytes = r.bytes().await?;
        if !status.is_success() {
            bail!("POST {path} answered {status}: {}", String::from_utf8_lossy(&bytes));
        }
        Ok(bytes)
    }

    /// Creates an app and returns its id.
    pub async fn create_app(&self, name: &str) -> anyhow::Result<String> {
        let b = self.post("/v1/apps", serde_json::json!({"name": name})).await?;
        Ok(serde_json::from_slice::<IdOnly>(&b).context("app creation answer")?.id)
    }

    /// Creates an endpoint and returns its secret (from the creation answer);
    /// `extra`'s members are added to the creation body (the routing phase's
    /// `channels`, `filter`, `transformation`).
    pub async fn create_endpoint(
        &self,
        app: &str,
        url: &str,
        extra: Option<&serde_json::Value>,
    ) -> anyhow::Result<String> {
        Ok(self.create_endpoint_with_id(app, url, extra).await?.1)
    }

    /// Creates an endpoint (with `extra`'s members in its body, as
    /// [`Api::create_endpoint`]) and returns its id and secret.
    pub async fn create_endpoint_with_id(
        &self,
        app: &str,
        url: &str,
        extra: Option<&serde_json::Value>,
    ) -> anyhow::Result<(String, String)> {
        let mut body = serde_json::json!({"url": url, "description": "fenix-bench"});
        if let (Some(serde_json::Value::Object(fields)), Some(into)) = (extra, body.as_object_mut()) {
            into.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let b = self.post(&format!("/v1/apps/{app}/endpoints"), body).await?;
        let created = serde_json::from_slice::<Created>(&b).context("endpoint creation answer")?;
        Ok((created.id, created.secret.context("the endpoint creation answer carries no secret")?))
    }

    /// Creates an ordered endpoint (no `ordering_key`: one lane) and returns its secret.
    pub async fn create_ordered_endpoint(&self, app: &str, url: &str) -> anyhow::Result<String> {
        let body = serde_json::json!({"url": url, "description": "fenix-bench", "ordered": true});
        let b = self.post(&format!("/v1/apps/{app}/endpoints"), body).await?;
        let created = serde_json::from_slice::<Created>(&b).context("endpoint creation answer")?;
        created.secret.context("the endpoint creation answer carries no secret")
    }

    /// `GET path` with the admin token; the answer's body, refused unless `200`.
    pub async fn get(&self, path: &str) -> anyhow::Result<bytes::Bytes> {
        let r = self.client.get(format!("{}{path}", self.base)).bearer_auth(&self.token).send().await?;
        let status = r.status();
        let bytes = r.bytes().await?;
        if !status.is_success() {
            bail!("GET {path} answered {status}: {}", String::from_utf8_lossy(&bytes));
        }
        Ok(bytes)
    }
}

/// A client for sending events, with its own keep-alive connection(s).
pub fn event_client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder().no_proxy().tcp_nodelay(true).timeout(Duration::from_secs(60)).build()?)
}

/// Sends one event like `send_event`, but an answer `503` (Fenix's `overloaded`
/// shedding) is `None` instead of an error: the latency phase counts those.
pub async fn send_event_or_shed(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    body: String,
) -> anyhow::Result<Option<(String, u64)>> {
    let r = client
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .context("sending an event")?;
    let at = crate::now_us();
    let status = r.status();
    let bytes = r.bytes().await?;
    if status.as_u16() == 503 {
        return Ok(None);
    }
    if status.as_u16() != 202 {
        bail!("ingestion answered {status}: {}", String::from_utf8_lossy(&bytes));
    }
    Ok(Some((serde_json::from_slice::<IdOnly>(&bytes).context("ingestion answer")?.id, at)))
}

/// Sends one event; returns its id and the moment the `202` arrived (unix micros).
/// A `503` (shed) is an error here.
pub async fn send_event(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    body: String,
) -> anyhow::Result<(String, u64)> {
    send_event_or_shed(client, url, token, body).await?.context("ingestion answered 503 overloaded")
}

/// Posts one batch of `count` events; fails unless all were accepted.
pub async fn send_batch(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    body: String,
    count: u64,
) -> anyhow::Result<()> {
    let r = client
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .context("sending a batch")?;
    let status = r.status();
    let bytes = r.bytes().await?;
    if status.as_u16() != 202 {
        bail!("batch ingestion answered {status}: {}", String::from_utf8_lossy(&bytes));
    }
    #[derive(serde::Deserialize)]
    struct Answer {
        data: Vec<serde::de::IgnoredAny>,
    }
    let answer: Answer = serde_json::from_slice(&bytes).context("batch answer")?;
    if answer.data.len() as u64 != count {
        bail!("batch answered {} items for {count} events", answer.data.len());
    }
    Ok(())
}
