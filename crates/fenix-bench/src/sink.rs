//! The sink (issue 18): where the throughput phases deliver, a receiver that
//! costs almost nothing, so that those phases measure Fenix and not the
//! bench's verifying receiver (whose HMAC check capped it at 29k–43k
//! requests/s). It is Debian's `nginx` answering `204` on a loopback port
//! with its own temporary configuration, installed with `apt-get` when missing
//! (the bench runs as root on the bench machine) and stopped at the end. The
//! machine's ceiling is `wrk` (Debian's package, installed the same way)
//! against that sink in the same run.
//!
//! Counting at the sink is nginx's `stub_status`: `requests` (every request
//! nginx read, the bench's own status reads subtracted) tells when a drain is
//! complete, and `accepts` the connections Fenix opened — no access log, so
//! counting costs nothing in the timed phases.
//!
//! When nginx cannot be had (not root, no package), the sink falls back to the
//! bench's own receiver in sink mode (`receiver --sink`: `204`, no
//! verification, counters only), says so on stderr and in the table, and the
//! ceiling is measured against that fallback.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, Context};

use crate::progress;
use crate::receiver::Receiver;

/// Counters read at the sink.
#[derive(Debug, Clone, Copy, Default)]
pub struct SinkCount {
    /// Delivery requests received (the bench's own status reads excluded).
    pub requests: u64,
    /// Connections accepted.
    pub connections: u64,
}

pub enum Sink {
    Nginx(Nginx),
    Builtin(Receiver),
}

impl Sink {
    /// nginx when it is installed or can be installed, else the built-in sink.
    pub async fn start(dir: &Path) -> anyhow::Result<Sink> {
        match Nginx::start(dir).await {
            Ok(n) => Ok(Sink::Nginx(n)),
            Err(e) => {
                progress(&format!(
                    "WARNING: no nginx sink ({e:#}); falling back to the built-in sink (fenix-bench receiver --sink): \
                     the figures are then NOT comparable with runs against nginx"
                ));
                Ok(Sink::Builtin(Receiver::spawn_sink().await?))
            }
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> &str {
        match self {
            Sink::Nginx(n) => &n.base,
            Sink::Builtin(r) => &r.base,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Sink::Nginx(_) => "nginx 204",
            Sink::Builtin(_) => "built-in sink (nginx missing)",
        }
    }

    pub async fn count(&self) -> anyhow::Result<SinkCount> {
        match self {
            Sink::Nginx(n) => n.count().await,
            Sink::Builtin(r) => {
                let s = r.stats().await?;
                Ok(SinkCount { requests: s.received, connections: s.connections })
            }
        }
    }

    /// The process whose CPU time is the sink's (nginx's master only forks
    /// workers, so this is its workers' CPU as read by the caller per pid).
    pub fn pids(&self) -> Vec<u32> {
        match self {
            Sink::Nginx(n) => n.worker_pids(),
            Sink::Builtin(r) => r.pid().into_iter().collect(),
        }
    }

    /// Stops nginx (gracefully, its workers with it); the fallback stops when dropped.
    pub async fn stop(&mut self) {
        if let Sink::Nginx(n) = self {
            n.stop().await;
        }
    }
}

pub struct Nginx {
    child: tokio::process::Child,
    pub base: String,
    status_url: String,
    client: reqwest::Client,
    /// Status reads made so far (each one is counted by nginx as a request).
    polls: AtomicU64,
}

/// Installs Debian packages with apt-get when their program is missing (root only).
pub fn ensure_installed(program: &str, package: &str) -> anyhow::Result<PathBuf> {
    if let Some(p) = which(program) {
        return Ok(p);
    }
    let euid = std::process::Command::new("id").arg("-u").output().ok().map(|o| o.stdout);
    if euid.as_deref().map(|s| String::from_utf8_lossy(s).trim() == "0") != Some(true) {
        bail!("{program} is not installed and this is not root (apt-get install {package})");
    }
    progress(&format!("{program} is missing: apt-get install {package}"));
    let ok = |args: &[&str]| {
        std::process::Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    // Try without refreshing the package lists first; `apt-get update` only if that fails.
    let installed =
        ok(&["install", "-y", "-qq", package]) || (ok(&["update", "-qq"]) && ok(&["install", "-y", "-qq", package]));
    if !installed {
        bail!("apt-get install {package} failed");
    }
    which(program).with_context(|| format!("{program} still missing after apt-get install {package}"))
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// nginx's configuration: answers `204` on every path of 127.0.0.1:`port`
/// and its counters on `/_bench_status`, its files under `dir` (as root, its
/// workers run as root too).
fn nginx_conf(dir: &Path, port: u16, root: bool) -> String {
    let d = dir.display();
    // Two workers (the machine has 2 cores), no access log, keep-alive
    // without a request limit (nginx's default of 1,000 requests would
    // make Fenix reconnect and the connection count meaningless).
    format!(
        "{user}worker_processes {workers};\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 8192; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;\n  \
         fastcgi_temp_path {d}/fastcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n  \
         keepalive_requests 100000000; keepalive_timeout 600s;\n  \
         server {{\n    listen 127.0.0.1:{port};\n    location = /_bench_status {{ stub_status; }}\n    \
         location / {{ return 204; }}\n  }}\n}}\n",
        user = if root { "user root;\n" } else { "" },
        workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
    )
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Nginx {
    async fn start(dir: &Path) -> anyhow::Result<Nginx> {
        let bin = ensure_installed("nginx", "nginx-light")?;
        let dir = dir.join("nginx");
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        let conf = nginx_conf(&dir, port, root);
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf)?;
        let log = std::fs::File::create(dir.join("stderr.log"))?;
        let child = tokio::process::Command::new(&bin)
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let base = format!("http://127.0.0.1:{port}");
        let n = Nginx {
            child,
            status_url: format!("{base}/_bench_status"),
            base,
            client: reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build()?,
            polls: AtomicU64::new(0),
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if n.count().await.is_ok() {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                let err = std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default();
                bail!("nginx did not answer on port {port} within 10 s: {}", err.trim());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress(&format!("sink: nginx answering 204 on {}", n.base));
        Ok(n)
    }

    async fn count(&self) -> anyhow::Result<SinkCount> {
        let text = self.client.get(&self.status_url).send().await?.error_for_status()?.text().await?;
        // Counted only once answered: a read that never reached nginx (the
        // start-up loop's first tries) is not among nginx's requests. The
        // answer counts the read itself.
        let polls = self.polls.fetch_add(1, Ordering::Relaxed) + 1;
        // "Active connections: 1 \nserver accepts handled requests\n 2 2 2 \n…"
        let line = text.lines().nth(2).context("stub_status answer")?;
        let nums: Vec<u64> = line.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        let [accepts, _handled, requests] = nums[..] else { bail!("unexpected stub_status answer {text:?}") };
        // The status client's own keep-alive connection is one of `accepts`
        // (or a few, if it had to reconnect); it is small and constant within a phase,
        // and phases use differences.
        Ok(SinkCount { requests: requests.saturating_sub(polls), connections: accepts })
    }

    fn worker_pids(&self) -> Vec<u32> {
        let Some(master) = self.child.id() else { return Vec::new() };
        let children = std::fs::read_to_string(format!("/proc/{master}/task/{master}/children")).unwrap_or_default();
        children.split_whitespace().filter_map(|p| p.parse().ok()).chain([master]).collect()
    }

    async fn stop(&mut self) {
        if let Some(pid) = self.child.id() {
            // SIGQUIT: graceful stop of master and workers.
            let _ = std::process::Command::new("kill").args(["-QUIT", &pid.to_string()]).status();
            if tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await.is_err() {
                let _ = self.child.kill().await;
            }
        }
    }
}

/// One `wrk` run: the machine's HTTP ceiling against the sink.
#[derive(Debug, Clone)]
pub struct WrkCeiling {
    pub rps: f64,
    pub threads: u32,
    pub connections: u32,
    pub secs: u64,
    pub body_bytes: usize,
    /// Against what (nginx, or the fallback).
    pub target: &'static str,
}

/// `wrk -t2 -c<connections> -d<secs>s` POSTing an envelope-sized body to the sink.
pub async fn wrk_ceiling(
    sink: &Sink,
    dir: &Path,
    body: &str,
    connections: u32,
    secs: u64,
) -> anyhow::Result<WrkCeiling> {
    let wrk = ensure_installed("wrk", "wrk")?;
    let script = dir.join("post.lua");
    let body_lua = body.replace('\\', "\\\\").replace('"', "\\\"");
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.body = \"{body_lua}\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
        ),
    )?;
    let threads = 2u32;
    progress(&format!("ceiling: wrk -t{threads} -c{connections} -d{secs}s POST {} B → {}", body.len(), sink.name()));
    let mut cmd = tokio::process::Command::new(&wrk);
    cmd.arg(format!("-t{threads}"))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{secs}s"))
        .arg("-s")
        .arg(&script)
        .arg(format!("{}/ceiling", sink.base()));
    let text = run_wrk(cmd).await?;
    if text.contains("Non-2xx") || text.contains("Socket errors") {
        progress(&format!("note: wrk reported errors:\n{text}"));
    }
    let rps = parse_wrk_rps(&text).with_context(|| format!("no Requests/sec in wrk's output:\n{text}"))?;
    progress(&format!("ceiling: wrk {rps:.0} requests/s"));
    Ok(WrkCeiling { rps, threads, connections, secs, body_bytes: body.len(), target: sink.name() })
}

/// `Requests/sec:  71474.03` → 71474.03.
pub fn parse_wrk_rps(text: &str) -> Option<f64> {
    text.lines().find_map(|l| l.trim().strip_prefix("Requests/sec:")).and_then(|v| v.trim().parse().ok())
}

/// Runs a prepared `wrk` command and answers its summary (stdout), or an
/// error with everything it printed when it failed.
pub async fn run_wrk(mut cmd: tokio::process::Command) -> anyhow::Result<String> {
    let out = cmd.stdin(Stdio::null()).output().await.context("running wrk")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        bail!("wrk failed ({}): {text}{}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_wrk_requests_per_second() {
        let out = "Running 5s test @ http://127.0.0.1:1/ceiling\n  364097 requests in 5.09s, 38.20MB read\n\
                   Requests/sec:  71474.03\nTransfer/sec:      7.50MB\n";
        assert_eq!(super::parse_wrk_rps(out), Some(71474.03));
        assert_eq!(super::parse_wrk_rps("no figure"), None);
    }
}
