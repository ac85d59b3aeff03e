//! Runs one scenario script of `tests/browser/` (node + playwright-core +
//! Debian's chromium) and talks with it.
//!
//! The script prints `@@ask {json}` when it needs the test to act (flip a
//! receiver, mint a portal link through the admin API) and waits for one JSON
//! line on stdin; it ends with `@@result {json}`. The test drives the loop:
//!
//! ```ignore
//! let mut script = Script::start("operator_flow", &[("FENIX_URL", &fenix.base)]).await;
//! while let Some(ask) = script.ask().await {
//!     match ask.what() { "flip" => { ...; script.answer(json!({})).await } ... }
//! }
//! let outcome = script.outcome(); // asserts ok and no CSP violation, page or console error
//! ```

use std::{
    path::PathBuf,
    process::Stdio,
    time::{Duration, Instant},
};

use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines},
    process::{Child, ChildStdin, ChildStdout, Command},
};

/// `tests/browser/` in the source tree.
pub fn scripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser")
}

/// Where screenshots go: `target/console-screenshots/`, kept after the test
/// as an artifact (docs/console/ holds a chosen copy).
pub fn screenshots_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("console-screenshots")
}

/// True when node, playwright-core and /usr/bin/chromium are there. Under CI a
/// missing piece fails the test (scripts/test.sh installs them); elsewhere the
/// scenario is skipped with a note.
pub fn available() -> bool {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let missing = if !std::path::Path::new(&chromium).exists() {
        Some(format!("{chromium} (Debian's chromium package)"))
    } else if !scripts_dir().join("node_modules/playwright-core/package.json").exists() {
        Some("playwright-core (npm install in tests/browser)".into())
    } else if !std::process::Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        Some("node".into())
    } else {
        None
    };
    match missing {
        None => true,
        Some(what) if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") => {
            panic!("{what} is missing under CI: scripts/test.sh installs it")
        }
        Some(what) => {
            eprintln!("note: {what} is missing, browser scenario not run (scripts/test.sh installs it)");
            false
        }
    }
}

/// A scenario script, running.
pub struct Script {
    name: String,
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    result: Option<Value>,
    /// Everything else the script printed (for a failure message).
    chatter: Vec<String>,
    deadline: Instant,
}

/// The script asked for something.
pub struct Ask(pub Value);

impl Ask {
    /// What it asks for (`"what"`).
    pub fn what(&self) -> &str {
        self.0["what"].as_str().unwrap_or("")
    }
}

impl Script {
    /// Starts `tests/browser/<name>.mjs` with these environment variables (plus
    /// SCREENSHOT_DIR and SCENARIO).
    pub async fn start(name: &str, vars: &[(&str, &str)]) -> Script {
        let mut cmd = Command::new("node");
        cmd.arg(scripts_dir().join(format!("{name}.mjs")))
            .current_dir(scripts_dir())
            .env("SCREENSHOT_DIR", screenshots_dir())
            .env("SCENARIO", name)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("run node");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Script {
            name: name.into(),
            child,
            stdin,
            stdout,
            result: None,
            chatter: Vec::new(),
            deadline: Instant::now() + Duration::from_secs(200),
        }
    }

    /// The script's next request, or None once it has printed its result.
    pub async fn ask(&mut self) -> Option<Ask> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            let line = match tokio::time::timeout(left, self.stdout.next_line()).await {
                Ok(Ok(Some(line))) => line,
                Ok(_) => {
                    panic!("{}: the script ended without a result; it printed:\n{}", self.name, self.chatter.join("\n"))
                }
                Err(_) => panic!("{}: no result within 200 s; it printed:\n{}", self.name, self.chatter.join("\n")),
            };
            if let Some(json) = line.strip_prefix("@@ask ") {
                return Some(Ask(serde_json::from_str(json).expect("ask is JSON")));
            }
            if let Some(json) = line.strip_prefix("@@result ") {
                self.result = Some(serde_json::from_str(json).expect("result is JSON"));
                let _ = self.child.wait().await;
                return None;
            }
            self.chatter.push(line);
        }
    }

    /// Answers the last request.
    pub async fn answer(&mut self, value: Value) {
        let line = format!("{value}\n");
        self.stdin.write_all(line.as_bytes()).await.expect("answer the script");
        self.stdin.flush().await.expect("flush");
    }

    /// Runs the script to its end, answering no request (a script that asks
    /// fails the test).
    pub async fn finish(mut self) -> Outcome {
        if let Some(ask) = self.ask().await {
            panic!("{}: unexpected request {}", self.name, ask.0);
        }
        self.outcome()
    }

    /// The result, checked: the scenario completed, and no page broke its
    /// Content-Security-Policy, threw, logged an error or reached past 127.0.0.1.
    pub fn outcome(&self) -> Outcome {
        let r = self.result.clone().unwrap_or_else(|| panic!("{}: no result yet", self.name));
        let pretty = serde_json::to_string_pretty(&r).unwrap_or_default();
        // Shown when a later assertion fails (the test's output is kept then).
        eprintln!("{}: {pretty}", self.name);
        assert_eq!(r["ok"], true, "{}: the scenario failed at step {}: {}\n{pretty}", self.name, r["step"], r["error"]);
        for list in ["csp", "pageErrors", "consoleErrors", "offLoopback"] {
            assert_eq!(r[list].as_array().map(Vec::len), Some(0), "{}: {list} is not empty:\n{pretty}", self.name);
        }
        Outcome(r)
    }
}

/// What a scenario reported, after the checks every scenario gets.
pub struct Outcome(pub Value);

impl Outcome {
    /// A fact the script recorded with `t.fact(key, value)`.
    pub fn fact(&self, key: &str) -> &Value {
        &self.0["facts"][key]
    }

    /// The fact as a string (panics when it is not one).
    pub fn text(&self, key: &str) -> String {
        self.fact(key).as_str().unwrap_or_else(|| panic!("fact {key} is not a string: {}", self.0)).to_string()
    }
}
