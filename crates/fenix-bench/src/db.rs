//! Fresh databases, one per phase: a SQLite file in the run's temporary
//! directory, or a new database on a PostgreSQL server (the one given, or a
//! throwaway one started here as in `scripts/test.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr as _;

use anyhow::{bail, Context};
use sqlx::Connection as _;

use crate::progress;

pub enum Databases {
    Sqlite {
        dir: PathBuf,
    },
    Postgres {
        /// URL of the maintenance database (`…/postgres`) on the server.
        admin_url: String,
        prefix: String,
        created: Vec<String>,
        /// Set when the bench started the server itself.
        throwaway: Option<Throwaway>,
    },
}

impl Databases {
    pub fn sqlite(dir: &Path) -> Databases {
        Databases::Sqlite { dir: dir.to_path_buf() }
    }

    pub async fn postgres(url: Option<String>) -> anyhow::Result<Databases> {
        let (admin_url, throwaway) = match url {
            Some(u) => (u, None),
            None => {
                let t = Throwaway::start()?;
                (t.url.clone(), Some(t))
            }
        };
        let conn = sqlx::PgConnection::connect(&admin_url)
            .await
            .with_context(|| format!("connecting to PostgreSQL at {}", redact(&admin_url)))?;
        conn.close().await?;
        Ok(Databases::Postgres {
            admin_url,
            prefix: format!("fenix_bench_{}_{}", std::process::id(), rand::random::<u16>()),
            created: Vec::new(),
            throwaway,
        })
    }

    pub fn backend(&self) -> &'static str {
        match self {
            Databases::Sqlite { .. } => "sqlite",
            Databases::Postgres { .. } => "postgres",
        }
    }

    /// A new, empty database for a phase; returns its `DATABASE_URL`.
    pub async fn fresh(&mut self, phase: &str) -> anyhow::Result<String> {
        match self {
            Databases::Sqlite { dir } => {
                let path = dir.join(format!("{phase}.db"));
                Ok(format!("sqlite://{}", path.display()))
            }
            Databases::Postgres { admin_url, prefix, created, .. } => {
                let name = format!("{prefix}_{}", phase.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
                let mut conn = sqlx::PgConnection::connect(admin_url).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\"")).execute(&mut conn).await?;
                sqlx::query(&format!("CREATE DATABASE \"{name}\"")).execute(&mut conn).await?;
                conn.close().await?;
                created.push(name.clone());
                let mut url = url::Url::parse(admin_url).context("the PostgreSQL URL")?;
                url.set_path(&format!("/{name}"));
                Ok(url.to_string())
            }
        }
    }

    /// Drops the databases this run created on a server it did not start.
    pub async fn cleanup(&mut self) {
        if let Databases::Postgres { admin_url, created, throwaway: None, .. } = self {
            if let Ok(mut conn) = sqlx::PgConnection::connect(admin_url).await {
                for name in created.drain(..) {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                        .execute(&mut conn)
                        .await;
                }
                let _ = conn.close().await;
            }
        }
    }
}

/// Hides a password in a URL for messages.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => url.to_string(),
    }
}

/// A PostgreSQL server started for this run (as `nobody` when we are root),
/// stopped and deleted when dropped.
pub struct Throwaway {
    dir: PathBuf,
    data: PathBuf,
    bin: PathBuf,
    as_nobody: bool,
    pub url: String,
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).map(|l| l.split_whitespace().nth(2) == Some("0")))
        .unwrap_or(false)
}

impl Throwaway {
    fn start() -> anyhow::Result<Throwaway> {
        let bin =
            PathBuf::from(std::env::var("FENIX_BENCH_PG_BIN").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin".into()));
        if !bin.join("initdb").exists() {
            bail!(
                "no PostgreSQL server given (--postgres-url or FENIX_BENCH_POSTGRES_URL) and no {}/initdb to start one",
                bin.display()
            );
        }
        let dir = tempfile::Builder::new().prefix("fenix-bench-pg-").tempdir()?.keep();
        let data = dir.join("data");
        std::fs::create_dir(&data)?;
        let as_nobody = running_as_root();
        let mut t = Throwaway { dir: dir.clone(), data: data.clone(), bin, as_nobody, url: String::new() };
        if as_nobody {
            run(Command::new("chmod").arg("755").arg(&dir))?;
            run(Command::new("chown").arg("nobody").arg(&data))?;
        }
        let port = free_port()?;
        progress(&format!("starting a throwaway PostgreSQL on 127.0.0.1:{port} ({})", data.display()));
        run(t
            .pg("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "fenix", "--auth=trust", "-E", "UTF8"])
            .stdout(std::process::Stdio::null()))?;
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB \
             -c synchronous_commit=off",
            data.display()
        );
        // From here on, dropping `t` stops the server.
        t.url = format!("postgres://fenix@127.0.0.1:{port}/postgres");
        run(t
            .pg("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(data.join("server.log"))
            .args(["-w", "-o", &opts, "start"])
            .stdout(std::process::Stdio::null()))?;
        Ok(t)
    }

    fn pg(&self, tool: &str) -> Command {
        let path = self.bin.join(tool);
        if self.as_nobody {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        if !self.url.is_empty() {
            let _ = self
                .pg("pg_ctl")
                .arg("-D")
                .arg(&self.data)
                .args(["-m", "immediate", "stop"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let status = cmd.status().with_context(|| format!("running {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// A read connection to a phase's database, to see what the delivery log says.
pub enum Log {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl Log {
    pub async fn open(database_url: &str) -> anyhow::Result<Log> {
        if database_url.starts_with("sqlite:") {
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(database_url)?.read_only(true);
            Ok(Log::Sqlite(sqlx::SqliteConnection::connect_with(&opts).await.context("opening the SQLite database")?))
        } else {
            Ok(Log::Postgres(sqlx::PgConnection::connect(database_url).await.context("connecting to the database")?))
        }
    }

    async fn count(&mut self, sql: &str) -> anyhow::Result<i64> {
        Ok(match self {
            Log::Sqlite(c) => sqlx::query_scalar::<_, i64>(sql).fetch_one(c).await?,
            Log::Postgres(c) => sqlx::query_scalar::<_, i64>(sql).fetch_one(c).await?,
        })
    }

    /// Deliveries still to do (`pending`, leased or not).
    pub async fn unfinished(&mut self) -> anyhow::Result<i64> {
        self.count("SELECT COUNT(*) FROM deliveries WHERE status = 'pending'").await
    }

    /// `(succeeded, all)` deliveries.
    pub async fn succeeded_of_all(&mut self) -> anyhow::Result<(i64, i64)> {
        let ok = self.count("SELECT COUNT(*) FROM deliveries WHERE status = 'succeeded'").await?;
        let all = self.count("SELECT COUNT(*) FROM deliveries").await?;
        Ok((ok, all))
    }

    /// Every stored event's id (the ingestion phases look up each `202`'s event).
    pub async fn event_ids(&mut self) -> anyhow::Result<Vec<String>> {
        let sql = "SELECT id FROM events";
        Ok(match self {
            Log::Sqlite(c) => sqlx::query_scalar::<_, String>(sql).fetch_all(c).await?,
            Log::Postgres(c) => sqlx::query_scalar::<_, String>(sql).fetch_all(c).await?,
        })
    }

    /// Events stored.
    pub async fn events(&mut self) -> anyhow::Result<u64> {
        u64::try_from(self.count("SELECT COUNT(*) FROM events").await?).context("a negative count")
    }

    /// Waits until no other session is connected to this database: on
    /// PostgreSQL a statement whose client process has exited still runs to
    /// its end (and commits) in its server process, so a stopped fenix's
    /// last write can land after the process is gone. SQLite is written only
    /// from inside the fenix process: nothing to wait for.
    pub async fn wait_until_alone(&mut self, timeout: std::time::Duration) -> anyhow::Result<()> {
        let Log::Postgres(c) = self else { return Ok(()) };
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let others: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() \
                 AND backend_type = 'client backend'",
            )
            .fetch_one(&mut *c)
            .await?;
            if others == 0 {
                return Ok(());
            }
            if std::time::Instant::now() > deadline {
                bail!("{others} other sessions still on the database {timeout:?} after fenix stopped");
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// How many events have how many deliveries: `(deliveries of an event,
    /// events)`, fewest first; an event without any delivery counts as 0.
    pub async fn deliveries_per_event(&mut self) -> anyhow::Result<Vec<(u64, u64)>> {
        let sql = "SELECT n, COUNT(*) FROM (SELECT e.id, COUNT(d.id) AS n FROM events e \
                   LEFT JOIN deliveries d ON d.event_id = e.id GROUP BY e.id) AS per GROUP BY n ORDER BY n";
        let rows: Vec<(i64, i64)> = match self {
            Log::Sqlite(c) => sqlx::query_as(sql).fetch_all(c).await?,
            Log::Postgres(c) => sqlx::query_as(sql).fetch_all(c).await?,
        };
        rows.into_iter()
            .map(|(n, events)| Ok((u64::try_from(n)?, u64::try_from(events)?)))
            .collect::<Result<_, std::num::TryFromIntError>>()
            .context("a negative count")
    }

    /// Pairs of (event, endpoint) with more than one delivery, and one such
    /// event id: what a failed fan-out check looks for first.
    pub async fn duplicate_deliveries(&mut self) -> anyhow::Result<(i64, Option<String>)> {
        let pairs = "SELECT event_id FROM deliveries GROUP BY event_id, endpoint_id HAVING COUNT(*) > 1";
        let n = self.count(&format!("SELECT COUNT(*) FROM ({pairs}) AS dup")).await?;
        let sql = format!("{pairs} LIMIT 1");
        let example = match self {
            Log::Sqlite(c) => sqlx::query_scalar::<_, String>(&sql).fetch_optional(c).await?,
            Log::Postgres(c) => sqlx::query_scalar::<_, String>(&sql).fetch_optional(c).await?,
        };
        Ok((n, example))
    }

    /// The database's size on disk in bytes (SQLite: its pages, the
    /// write-ahead log not counted; PostgreSQL: `pg_database_size`).
    pub async fn size_bytes(&mut self) -> anyhow::Result<i64> {
        match self {
            Log::Sqlite(_) => {
                self.count("SELECT p.page_count * s.page_size FROM pragma_page_count() p, pragma_page_size() s").await
            }
            Log::Postgres(_) => self.count("SELECT pg_database_size(current_database())").await,
        }
    }

    pub async fn close(self) {
        let _ = match self {
            Log::Sqlite(c) => c.close().await,
            Log::Postgres(c) => c.close().await,
        };
    }
}
