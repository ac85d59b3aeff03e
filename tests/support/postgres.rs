//! A private, throwaway PostgreSQL server for one test: for the tests that stop
//! and restart the database, so the shared server every other test uses
//! (`FENIX_TEST_POSTGRES_URL`) is never disturbed.
//!
//! `initdb` into a temporary directory (owned by `nobody` when the tests run as
//! root: PostgreSQL refuses root), a free loopback port, `fsync=off`. `stop()`
//! and `start()` restart the same server (same data, same port); dropping it
//! stops it with `pg_ctl -m immediate stop` and removes its files.

use std::{
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    process::Stdio,
};

use super::{free_port, Backend, TestDb};

/// Where the PostgreSQL binaries are: `FENIX_TEST_PG_BIN`, else Debian's PostgreSQL 15.
pub fn pg_bin() -> PathBuf {
    std::env::var("FENIX_TEST_PG_BIN")
        .ok()
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
}

/// True when a private server can be started. Without the binaries the test is
/// skipped with a note, except under CI, where that is an error.
pub fn private_postgres_available() -> bool {
    if pg_bin().join("initdb").exists() && pg_bin().join("pg_ctl").exists() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("PostgreSQL binaries not found in {} (set FENIX_TEST_PG_BIN) under CI", pg_bin().display());
    }
    eprintln!("note: PostgreSQL binaries not found in {}; test not run (set FENIX_TEST_PG_BIN)", pg_bin().display());
    false
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

/// A PostgreSQL server of one test.
pub struct PrivatePostgres {
    /// Superuser URL of the `postgres` database, e.g. `postgres://fenix@127.0.0.1:41234/postgres`.
    pub admin_url: String,
    pub port: u16,
    data: PathBuf,
    log: PathBuf,
    as_nobody: bool,
    /// Holds the data directory until the server is dropped.
    _dir: tempfile::TempDir,
}

impl PrivatePostgres {
    /// Initialises and starts a new server; `None` (after a printed note) when
    /// the PostgreSQL binaries are missing outside CI.
    pub async fn start_new() -> Option<PrivatePostgres> {
        PrivatePostgres::start_new_with("").await
    }

    /// Like [`PrivatePostgres::start_new`], with `config` (lines of
    /// `postgresql.conf`) after the tests' own settings.
    pub async fn start_new_with(config: &str) -> Option<PrivatePostgres> {
        if !private_postgres_available() {
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let as_nobody = running_as_root();
        let root = dir.path().join("pg");
        std::fs::create_dir(&root).expect("pg dir");
        if as_nobody {
            // nobody must be able to reach its directory inside our 0700 temp dir.
            set_mode(dir.path(), 0o755);
            let ok = std::process::Command::new("chown").arg("nobody").arg(&root).status().expect("chown");
            assert!(ok.success(), "chown nobody {}", root.display());
        }
        let data = root.join("data");
        let log = root.join("server.log");
        let mut pg =
            PrivatePostgres { admin_url: String::new(), port: 0, data: data.clone(), log, as_nobody, _dir: dir };
        let out = pg
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "fenix", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
            .output()
            .await
            .expect("run initdb");
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        // A port is free when we look; another process may take it before the server
        // binds it, so try a few.
        for _ in 0..5 {
            let port = free_port();
            pg.write_config(port, &root);
            pg.append_config(config);
            pg.port = port;
            pg.admin_url = format!("postgres://fenix@127.0.0.1:{port}/postgres");
            if pg.try_start().await {
                return Some(pg);
            }
        }
        panic!("private PostgreSQL did not start; its log:\n{}", pg.server_log());
    }

    /// A streaming standby of this server (`pg_basebackup -R`) on its own
    /// free loopback port (or `port`), started, with `config` after the
    /// tests' settings; the primary's name for it is `walreceiver`.
    pub async fn start_standby(&self, port: Option<u16>, config: &str) -> PrivatePostgres {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("pg");
        std::fs::create_dir(&root).expect("pg dir");
        if self.as_nobody {
            set_mode(dir.path(), 0o755);
            let ok = std::process::Command::new("chown").arg("nobody").arg(&root).status().expect("chown");
            assert!(ok.success(), "chown nobody {}", root.display());
        }
        let data = root.join("data");
        let mut standby = PrivatePostgres {
            admin_url: String::new(),
            port: 0,
            data: data.clone(),
            log: root.join("server.log"),
            as_nobody: self.as_nobody,
            _dir: dir,
        };
        let out = standby
            .command("pg_basebackup")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "fenix", "-D"])
            .arg(&data)
            .args(["-R", "-X", "stream", "--no-sync"])
            .output()
            .await
            .expect("run pg_basebackup");
        assert!(out.status.success(), "pg_basebackup failed: {}", String::from_utf8_lossy(&out.stderr));
        for _ in 0..5 {
            let port = port.unwrap_or_else(free_port);
            standby.write_config(port, &root);
            standby.append_config(config);
            standby.port = port;
            standby.admin_url = format!("postgres://fenix@127.0.0.1:{port}/postgres");
            if standby.try_start().await {
                return standby;
            }
        }
        panic!("the standby did not start; its log:\n{}", standby.server_log());
    }

    /// Promotes this standby to a primary (`pg_ctl promote`, waiting until it takes writes).
    pub async fn promote(&self) {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-w", "-t", "30", "promote"])
            .output()
            .await
            .expect("run pg_ctl promote");
        assert!(out.status.success(), "pg_ctl promote failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Kills the server as a crash would (`-m immediate`: no checkpoint, sessions cut).
    pub async fn kill(&self) {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "-t", "30", "stop"])
            .output()
            .await
            .expect("run pg_ctl stop");
        assert!(out.status.success(), "pg_ctl stop -m immediate failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn append_config(&self, config: &str) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data.join("postgresql.conf"))
            .expect("open postgresql.conf");
        writeln!(f, "\n{config}").expect("write postgresql.conf");
    }

    fn write_config(&self, port: u16, socket_dir: &Path) {
        use std::io::Write;
        // Appending keeps the file's owner (nobody) when we run as root.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data.join("postgresql.conf"))
            .expect("open postgresql.conf");
        writeln!(
            f,
            "\n# fenix tests\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\n\
             shared_buffers = 16MB\n",
            socket_dir.display()
        )
        .expect("write postgresql.conf");
    }

    /// A pg binary, run as `nobody` when we are root.
    fn command(&self, binary: &str) -> tokio::process::Command {
        let path = pg_bin().join(binary);
        let mut cmd = if self.as_nobody {
            let mut c = tokio::process::Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(path);
            c
        } else {
            tokio::process::Command::new(path)
        };
        cmd.stdin(Stdio::null()).kill_on_drop(true);
        cmd
    }

    async fn try_start(&self) -> bool {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(&self.log)
            .args(["-w", "-t", "30", "start"])
            .output()
            .await
            .expect("run pg_ctl start");
        out.status.success()
    }

    /// Starts the server again (same data directory, same port).
    pub async fn start(&self) {
        assert!(self.try_start().await, "private PostgreSQL did not restart; its log:\n{}", self.server_log());
    }

    /// Stops the server (`-m fast`: sessions are ended, as in an orderly restart) and waits until it is down.
    pub async fn stop(&self) {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "fast", "-w", "-t", "30", "stop"])
            .output()
            .await
            .expect("run pg_ctl stop");
        assert!(out.status.success(), "pg_ctl stop failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// The server's own log so far.
    pub fn server_log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A fresh database on this server, as a [`TestDb`] (with its own temp dir for logs).
    pub async fn test_db(&self) -> TestDb {
        let name = format!("fenix_test_{}", ulid::Ulid::new().to_string().to_lowercase());
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&self.admin_url)
            .await
            .expect("connect to private PostgreSQL");
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await.expect("create test database");
        let url = format!("postgres://fenix@127.0.0.1:{}/{name}", self.port);
        TestDb { backend: Backend::Postgres, url, dir: tempfile::tempdir().expect("temp dir") }
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let mut cmd = if self.as_nobody {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(pg_bin().join("pg_ctl"));
            c
        } else {
            std::process::Command::new(pg_bin().join("pg_ctl"))
        };
        let _ = cmd
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}
