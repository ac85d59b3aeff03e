//! A fresh database per test: a SQLite file in a temporary directory, or a new
//! database on the PostgreSQL server the test command started
//! (`FENIX_TEST_POSTGRES_URL`).

use std::path::PathBuf;

/// Which storage backend a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// True when PostgreSQL tests can run. Under CI a missing server is an error,
/// never a silent skip.
pub fn postgres_available() -> bool {
    if std::env::var("FENIX_TEST_POSTGRES_URL").map(|v| !v.is_empty()).unwrap_or(false) {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("FENIX_TEST_POSTGRES_URL is not set under CI: run the tests with scripts/test.sh");
    }
    eprintln!("note: FENIX_TEST_POSTGRES_URL unset, PostgreSQL variant not run (scripts/test.sh starts a server)");
    false
}

/// A database that exists for one test.
pub struct TestDb {
    pub backend: Backend,
    pub url: String,
    /// Holds the SQLite directory (and other files of the test) until the test ends.
    pub dir: tempfile::TempDir,
}

impl TestDb {
    /// Creates an empty database.
    pub async fn new(backend: Backend) -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = match backend {
            Backend::Sqlite => format!("sqlite://{}", dir.path().join("fenix.db").display()),
            Backend::Postgres => {
                let admin = std::env::var("FENIX_TEST_POSTGRES_URL").expect("FENIX_TEST_POSTGRES_URL");
                let name = format!("fenix_test_{}", ulid::Ulid::new().to_string().to_lowercase());
                let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
                    .await
                    .expect("connect to test PostgreSQL");
                sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut conn).await.expect("create test database");
                let base = admin.rsplit_once('/').map(|(b, _)| b.to_string()).unwrap_or(admin.clone());
                format!("{base}/{name}")
            }
        };
        TestDb { backend, url, dir }
    }

    /// A path inside the test's temporary directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `sql` (one text column; `$1`, `$2`… bound to `binds`) on the
    /// test's database, as stored: what a test reads behind Fenix's back.
    pub async fn texts(&self, sql: &str, binds: &[&str]) -> Vec<String> {
        use sqlx::Connection;
        match self.backend {
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&self.url).await.expect("open SQLite");
                let mut q = sqlx::query_scalar(sql);
                for b in binds {
                    q = q.bind(*b);
                }
                q.fetch_all(&mut conn).await.expect("query")
            }
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&self.url).await.expect("connect");
                let mut q = sqlx::query_scalar(sql);
                for b in binds {
                    q = q.bind(*b);
                }
                q.fetch_all(&mut conn).await.expect("query")
            }
        }
    }
}
