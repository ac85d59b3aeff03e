//! The `fenix` command line as a newcomer meets it: the bootstrap token is
//! never lost to a start that failed, commands that need a database refuse a
//! directory without one, `serve --help` points to the settings, `--config`
//! is accepted only where it is read, and each warning is said once.

use std::{
    io::{BufRead, BufReader},
    net::TcpListener,
    path::Path,
    process::{Child, Command, Output, Stdio},
    time::Duration,
};

use crate::support::{Backend, Fenix, TestDb};

const BIN: &str = env!("CARGO_BIN_EXE_fenix");

/// `fenix <args>` in `dir` with only `env` set; runs to its exit.
fn fenix_in(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).current_dir(dir).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null()).output().expect("run fenix")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A `fenix serve` in `dir` (SQLite file `fenix.db` there, no admin token
/// given), and what it printed on standard output up to its address.
struct Served {
    child: Child,
    base: String,
    stdout: Vec<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn serve_in(dir: &Path, listen: &str) -> Served {
    let mut child = Command::new(BIN)
        .arg("serve")
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("FENIX_LISTEN", listen)
        .env("FENIX_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fenix");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let address = line.strip_prefix("Fenix listening on ").map(|a| a.trim().to_string());
            lines.push(line);
            if let Some(base) = address {
                let _ = tx.send((base, lines));
                return;
            }
        }
    });
    let (base, stdout) = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(60)))
        .await
        .expect("join")
        .expect("fenix serve printed its address");
    Served { child, base, stdout }
}

/// The token a `serve` printed, if it printed one.
fn printed_token(lines: &[String]) -> Option<String> {
    lines.iter().find_map(|l| l.strip_prefix("Admin token (shown once, store it now): ")).map(str::to_string)
}

async fn status_with(base: &str, token: &str) -> u16 {
    let resp = reqwest::Client::new().get(format!("{base}/v1/apps")).bearer_auth(token).send().await.expect("GET");
    resp.status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_that_finds_its_port_busy_keeps_the_bootstrap_token_for_the_next() {
    let dir = tempfile::tempdir().expect("temp dir");
    let busy = TcpListener::bind("127.0.0.1:0").expect("occupy a port");
    let listen = busy.local_addr().expect("address").to_string();

    let failed = fenix_in(dir.path(), &[("FENIX_LISTEN", &listen), ("FENIX_LOG", "warn")], &["serve"]);
    assert!(!failed.status.success(), "serve on a busy port must fail");
    assert!(text(&failed.stderr).contains(&format!("listening on {listen}")), "{}", text(&failed.stderr));
    assert_eq!(printed_token(&text(&failed.stdout).lines().map(String::from).collect::<Vec<_>>()), None);

    drop(busy);
    let served = serve_in(dir.path(), &listen).await;
    let token = printed_token(&served.stdout).unwrap_or_else(|| panic!("no token printed: {:?}", served.stdout));
    assert_eq!(status_with(&served.base, &token).await, 200, "the printed token works");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_that_shows_no_token_says_how_to_make_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = serve_in(dir.path(), "127.0.0.1:0").await;
    assert!(printed_token(&first.stdout).is_some(), "{:?}", first.stdout);
    assert!(!first.stdout.iter().any(|l| l.contains("fenix token create")), "no hint when a token is shown");
    drop(first);

    let second = serve_in(dir.path(), "127.0.0.1:0").await;
    assert_eq!(printed_token(&second.stdout), None, "a token is shown once");
    assert!(
        second.stdout.iter().any(|l| l.contains("fenix token create")),
        "the start says how to get a token: {:?}",
        second.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_that_need_a_database_refuse_a_directory_without_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in
        [&["token", "list"][..], &["token", "create", "--name", "ci"], &["token", "revoke", "tok_x"], &["rekey"]]
    {
        let out = fenix_in(dir.path(), &[("FENIX_LOG", "warn")], args);
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "fenix {args:?} succeeded without a database: {}", text(&out.stdout));
        assert!(stderr.contains("no database at") && stderr.contains("fenix.db"), "fenix {args:?}: {stderr}");
        assert_eq!(text(&out.stdout), "", "fenix {args:?} printed nothing on standard output");
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").map(|e| e.expect("entry").file_name()).collect();
        assert!(left.is_empty(), "fenix {args:?} created {left:?}");
    }

    let migrated = fenix_in(dir.path(), &[("FENIX_LOG", "warn")], &["migrate"]);
    assert!(migrated.status.success(), "migrate creates the database: {}", text(&migrated.stderr));
    let empty = fenix_in(dir.path(), &[("FENIX_LOG", "warn")], &["token", "list"]);
    assert!(empty.status.success(), "{}", text(&empty.stderr));
    assert_eq!(text(&empty.stdout), "", "no token, no line");
    assert!(text(&empty.stderr).contains("fenix token create"), "an empty list says how to make a token");
    let created = fenix_in(dir.path(), &[("FENIX_LOG", "warn")], &["token", "create"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    assert!(text(&created.stdout).starts_with("fxa_"), "{}", text(&created.stdout));
}

#[test]
fn serve_help_names_the_main_settings_and_points_to_the_configuration_reference() {
    let out = Command::new(BIN).args(["serve", "--help"]).output().expect("run fenix");
    assert!(out.status.success());
    let help = text(&out.stdout);
    for needle in ["FENIX_LISTEN", "DATABASE_URL", "FENIX_MASTER_KEY", "FENIX_ADMIN_TOKEN", "docs/configuration.md"] {
        assert!(help.contains(needle), "serve --help lacks {needle}:\n{help}");
    }
    let out = Command::new(BIN).arg("--help").output().expect("run fenix");
    assert!(text(&out.stdout).contains("docs/configuration.md"), "fenix --help: {}", text(&out.stdout));
}

#[test]
fn config_is_refused_by_the_commands_that_read_no_settings() {
    let dir = tempfile::tempdir().expect("temp dir");
    for args in [
        &["keygen", "--config", "fenix.toml"][..],
        &["--config", "fenix.toml", "keygen"],
        &["openapi", "--config", "fenix.toml"],
        &["listen", "--secret", "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0", "--config", "fenix.toml"],
    ] {
        let out = fenix_in(dir.path(), &[], args);
        assert_eq!(out.status.code(), Some(2), "fenix {args:?} accepted --config: {}", text(&out.stdout));
        assert!(text(&out.stderr).contains("--config"), "fenix {args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn the_commands_that_read_settings_take_config_after_their_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("fenix.toml"), "database_url = \"sqlite://from-file.db\"\n").expect("write");
    let migrated = fenix_in(dir.path(), &[("FENIX_LOG", "warn")], &["migrate", "--config", "fenix.toml"]);
    assert!(migrated.status.success(), "{}", text(&migrated.stderr));
    assert!(dir.path().join("from-file.db").exists(), "migrate used the file's database_url");
    for args in [&["token", "create", "--config", "fenix.toml"][..], &["token", "--config", "fenix.toml", "list"]] {
        let out = fenix_in(dir.path(), &[("FENIX_LOG", "warn")], args);
        assert!(out.status.success(), "fenix {args:?}: {}", text(&out.stderr));
    }
    assert!(!dir.path().join("fenix.db").exists(), "no command fell back to the default database");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_development_warning_is_printed_once() {
    let db = TestDb::new(Backend::Sqlite).await;
    // The harness turns on FENIX_UNSAFE_ALLOW_HTTP and FENIX_UNSAFE_ALLOW_CIDRS.
    let fenix = Fenix::start(&db, &[]).await;
    let logs = fenix.logs();
    for setting in ["FENIX_UNSAFE_ALLOW_HTTP=true", "FENIX_UNSAFE_ALLOW_CIDRS="] {
        let lines = logs.lines().filter(|l| l.contains(setting)).count();
        assert_eq!(lines, 1, "{setting} is warned about {lines} times:\n{logs}");
    }
}

/// A SIGTERM sent as soon as `serve` printed its address (a supervisor's
/// stop right after a start) drains and exits 0: the handler is installed
/// before the address is printed (it was installed after, by a task of its
/// own, and such a signal killed the process).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigterm_right_after_the_address_is_printed_stops_serve_cleanly() {
    let db = TestDb::new(Backend::Sqlite).await;
    for _ in 0..5 {
        let mut fenix = Fenix::start(&db, &[]).await;
        let status = fenix.terminate().await;
        assert!(status.success(), "serve did not drain on a SIGTERM right after its start: {status:?}");
    }
}

/// `fenix openapi` prints, without a database, the very document a running
/// server serves at `/openapi.json`: the SDKs in `sdks/` are generated from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_prints_the_document_the_server_serves_without_a_database() {
    let dir = tempfile::tempdir().expect("temp dir");
    let printed = fenix_in(dir.path(), &[], &["openapi"]);
    assert!(printed.status.success(), "fenix openapi: {}", text(&printed.stderr));
    assert!(std::fs::read_dir(dir.path()).expect("read dir").next().is_none(), "fenix openapi created a file");
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let served = fenix.request("GET", "/openapi.json").send().await.expect("GET /openapi.json");
    assert_eq!(served.status(), 200);
    let served = served.text().await.expect("body");
    assert_eq!(text(&printed.stdout).trim_end(), served, "fenix openapi differs from /openapi.json");
}
