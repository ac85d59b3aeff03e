//! The real `fenix` binary as a child process, and a small client for its API.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::Duration,
};

use serde_json::Value;

use super::TestDb;

/// A running `fenix serve`.
pub struct Fenix {
    pub child: Child,
    pub base: String,
    pub token: String,
    pub db_url: String,
    env: Vec<(String, String)>,
    pub log_path: std::path::PathBuf,
    http: reqwest::Client,
}

/// Settings every test instance gets: loopback receivers allowed, a short
/// retry schedule, a fixed admin token and master key.
pub fn base_env(db: &TestDb) -> Vec<(String, String)> {
    vec![
        ("DATABASE_URL".into(), db.url.clone()),
        ("FENIX_LISTEN".into(), "127.0.0.1:0".into()),
        ("FENIX_ADMIN_TOKEN".into(), "fxa_test_token_0123456789abcdef".into()),
        ("FENIX_MASTER_KEY".into(), "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=".into()),
        ("FENIX_UNSAFE_ALLOW_HTTP".into(), "true".into()),
        ("FENIX_UNSAFE_ALLOW_CIDRS".into(), "127.0.0.0/8,::1/128".into()),
        ("FENIX_RETRY_SCHEDULE".into(), "200ms,400ms,800ms,1600ms".into()),
        ("FENIX_ATTEMPT_TIMEOUT".into(), "2s".into()),
        ("FENIX_LEASE_DURATION".into(), "5s".into()),
        ("FENIX_LOG".into(), "debug,sqlx=warn,hyper=warn,hyper_util=warn,reqwest=warn,hickory_proto=warn,hickory_resolver=warn,h2=warn,rustls=warn".into()),
    ]
}

impl Fenix {
    /// Starts `fenix serve` on `db` with the base settings plus `extra` (which override).
    pub async fn start(db: &TestDb, extra: &[(&str, &str)]) -> Fenix {
        let mut env = base_env(db);
        for (k, v) in extra {
            env.retain(|(name, _)| name != k);
            env.push((k.to_string(), v.to_string()));
        }
        let log_path = db.path(&format!("fenix-{}.log", ulid::Ulid::new()));
        Fenix::spawn(env, log_path, &["serve"]).await
    }

    /// Starts like [`Fenix::start`] under an open-file limit of `fd_limit` (set
    /// with util-linux `prlimit`), as on a host with a modest `ulimit -n`.
    /// [`Fenix::restart`] does not keep the limit.
    pub async fn start_with_fd_limit(db: &TestDb, extra: &[(&str, &str)], fd_limit: u64) -> Fenix {
        let mut env = base_env(db);
        for (k, v) in extra {
            env.retain(|(name, _)| name != k);
            env.push((k.to_string(), v.to_string()));
        }
        let log_path = db.path(&format!("fenix-{}.log", ulid::Ulid::new()));
        let mut cmd = Command::new("prlimit");
        cmd.arg(format!("--nofile={fd_limit}:{fd_limit}")).arg("--").arg(env!("CARGO_BIN_EXE_fenix")).arg("serve");
        Fenix::spawn_command(cmd, env, log_path).await
    }

    /// Starts with exactly these variables and arguments.
    pub async fn spawn(env: Vec<(String, String)>, log_path: std::path::PathBuf, args: &[&str]) -> Fenix {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fenix"));
        cmd.args(args);
        Fenix::spawn_command(cmd, env, log_path).await
    }

    /// Runs `cmd` (the binary and its arguments) with exactly the variables `env`.
    async fn spawn_command(mut cmd: Command, env: Vec<(String, String)>, log_path: std::path::PathBuf) -> Fenix {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).expect("log file");
        cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let log_path_for_panic = log_path.clone();
        let mut child = cmd.stdout(Stdio::piped()).stderr(log).spawn().expect("spawn fenix");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("Fenix listening on ") {
                    let _ = tx.send(addr.trim().to_string());
                }
            }
        });
        let base = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(60)))
            .await
            .expect("join")
            .unwrap_or_else(|_| {
                panic!(
                    "fenix did not start; its log:\n{}",
                    std::fs::read_to_string(&log_path_for_panic).unwrap_or_default()
                )
            });
        let token = env.iter().find(|(k, _)| k == "FENIX_ADMIN_TOKEN").map(|(_, v)| v.clone()).unwrap_or_default();
        let db_url = env.iter().find(|(k, _)| k == "DATABASE_URL").map(|(_, v)| v.clone()).unwrap_or_default();
        Fenix { child, base, token, db_url, env, log_path, http: reqwest::Client::new() }
    }

    /// Kills the process with SIGKILL (no drain, no cleanup).
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits for the exit status.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let mut child_wait = || self.child.try_wait();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = child_wait() {
                return status;
            }
            assert!(std::time::Instant::now() < deadline, "fenix did not exit within 30s of SIGTERM");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts a new process with the same settings (same database); the old one
    /// is killed with SIGKILL first if it still runs.
    pub async fn restart(&mut self) {
        self.kill9();
        let next = Fenix::spawn(self.env.clone(), self.log_path.clone(), &["serve"]).await;
        let old = std::mem::replace(self, next);
        drop(old);
    }

    /// Everything the process logged so far.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Calls the admin API with the admin token; answers status and JSON body (Null when empty).
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        self.call_as(Some(&self.token), method, path, body).await
    }

    /// Calls the admin API with the given token (or none).
    pub async fn call_as(&self, token: Option<&str>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.http.request(method.parse().expect("method"), format!("{}{}", self.base, path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("API request");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("API body");
        (status, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) })
    }

    /// A raw request builder (for headers and raw bodies).
    pub fn request(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method.parse().expect("method"), format!("{}{}", self.base, path)).bearer_auth(&self.token)
    }

    /// Creates an app; returns its id.
    pub async fn create_app(&self, uid: &str) -> String {
        let (status, body) = self.call("POST", "/v1/apps", Some(serde_json::json!({"name": uid, "uid": uid}))).await;
        assert_eq!(status, 201, "create app: {body}");
        body["id"].as_str().expect("app id").to_string()
    }

    /// Creates an endpoint; returns its JSON (with the secret).
    pub async fn create_endpoint(&self, app: &str, body: Value) -> Value {
        let (status, out) = self.call("POST", &format!("/v1/apps/{app}/endpoints"), Some(body)).await;
        assert_eq!(status, 201, "create endpoint: {out}");
        out
    }

    /// Sends an event; returns its JSON.
    pub async fn send_event(&self, app: &str, body: Value) -> Value {
        let (status, out) = self.call("POST", &format!("/v1/apps/{app}/events"), Some(body)).await;
        assert!(status == 202 || status == 200, "send event: {status} {out}");
        out
    }

    /// One task of an app (`GET …/tasks/{id}`), which must answer 200.
    pub async fn task(&self, app: &str, id: &str) -> Value {
        let (status, out) = self.call("GET", &format!("/v1/apps/{app}/tasks/{id}"), None).await;
        assert_eq!(status, 200, "{out}");
        out
    }

    /// All deliveries of an app matching `query` (e.g. `status=succeeded`), following cursors.
    pub async fn deliveries(&self, app: &str, query: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut path = format!("/v1/apps/{app}/deliveries?limit=250&{query}");
            if let Some(c) = &cursor {
                path.push_str(&format!("&cursor={c}"));
            }
            let (status, body) = self.call("GET", &path, None).await;
            assert_eq!(status, 200, "list deliveries: {body}");
            out.extend(body["data"].as_array().cloned().unwrap_or_default());
            match body["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return out,
            }
        }
    }
}

/// A delivery's attempts, in attempt order.
pub async fn attempts(fenix: &Fenix, app: &str, delivery_id: &str) -> Vec<Value> {
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{delivery_id}/attempts"), None).await;
    assert_eq!(status, 200, "list attempts: {body}");
    let mut list = body["data"].as_array().cloned().unwrap_or_default();
    list.sort_by_key(|a| a["attempt_number"].as_i64());
    list
}

impl Drop for Fenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
