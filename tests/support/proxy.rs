//! A real HTTP proxy for the egress tests: Debian's `tinyproxy`, started on a
//! free loopback port with its own configuration in a temporary directory
//! (only 127.0.0.1 may use it, every `CONNECT` port allowed, optional Basic
//! credentials), logging each connection and request line to a file the test
//! reads. Without tinyproxy a test is skipped with a note, except under CI,
//! where that is an error (scripts/test.sh installs it).

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const TINYPROXY: &str = "/usr/bin/tinyproxy";

/// A running tinyproxy; stopped when dropped.
pub struct Proxy {
    /// `http://[user:password@]127.0.0.1:port`, for `FENIX_EGRESS_PROXY`.
    pub url: String,
    pub port: u16,
    log: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

/// True when tinyproxy is installed; otherwise a note (or, under CI, a panic).
pub fn tinyproxy_available() -> bool {
    if Path::new(TINYPROXY).exists() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{TINYPROXY} is missing under CI (scripts/test.sh installs Debian's tinyproxy)");
    }
    eprintln!("note: {TINYPROXY} is missing; egress test not run (apt-get install tinyproxy)");
    false
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

impl Proxy {
    /// Starts tinyproxy; with `credentials`, it demands them (`BasicAuth`).
    /// `None` when tinyproxy is missing outside CI.
    pub async fn start(credentials: Option<(&str, &str)>) -> Option<Proxy> {
        if !tinyproxy_available() {
            return None;
        }
        let dir = tempfile::tempdir().expect("proxy dir");
        // As root tinyproxy drops to `nobody`, who must write its log there.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod proxy dir");
        let port = super::free_port();
        let log = dir.path().join("tinyproxy.log");
        let mut conf = String::new();
        if running_as_root() {
            conf.push_str("User nobody\nGroup nogroup\n");
        }
        conf.push_str(&format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{}\"\nLogLevel Connect\nMaxClients 64\n\
             Allow 127.0.0.1\nDisableViaHeader Yes\n",
            log.display()
        ));
        if let Some((user, password)) = credentials {
            conf.push_str(&format!("BasicAuth {user} {password}\n"));
        }
        let conf_path = dir.path().join("tinyproxy.conf");
        std::fs::write(&conf_path, conf).expect("write tinyproxy.conf");
        let child = Command::new(TINYPROXY)
            .arg("-d")
            .arg("-c")
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tinyproxy");
        let userinfo = credentials.map(|(u, p)| format!("{u}:{p}@")).unwrap_or_default();
        let proxy = Proxy { url: format!("http://{userinfo}127.0.0.1:{port}"), port, log, child, _dir: dir };
        super::eventually("tinyproxy listens", Duration::from_secs(10), || async {
            tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()
        })
        .await;
        Some(proxy)
    }

    /// The proxy's log so far (`Connect` level: each client, request line and upstream).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The request lines tinyproxy logged, e.g. `CONNECT 127.0.0.1:41234 HTTP/1.1`.
    pub fn requests(&self) -> Vec<String> {
        self.log()
            .lines()
            .filter_map(|l| l.split_once("]: Request (file descriptor ").map(|(_, rest)| rest))
            .filter_map(|rest| rest.split_once("): ").map(|(_, line)| line.to_string()))
            .collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
