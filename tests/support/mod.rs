//! Test support shared by the end-to-end and storage suites: a fresh database
//! per test on either backend, the real `fenix` binary as a child process, and
//! real HTTP/HTTPS receivers on loopback that record what arrives.
//!
//! Compiled once: the suites are modules of the one `integration` test binary
//! (tests/main.rs) and reach this harness as `crate::support`.

#![allow(dead_code, unused_imports)]

pub mod certs;
pub mod db;
pub mod dns;
pub mod fenix;
pub mod helpers;
pub mod postgres;
pub mod proxy;
pub mod receiver;

pub use db::{Backend, TestDb};
pub use fenix::{attempts, Fenix};
pub use helpers::{
    delivery_of, endpoint, error_code, error_code_or_empty, error_message, event_count, fenix_cli, fenix_cli_stdout,
    free_port, id_of, post_with_retry_after, wait_for_state,
};
pub use receiver::{signed_v1_by, Plan, Received, Receiver, Tls};

/// Expands one async scenario `fn name(backend: Backend)` into a test per backend.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::support::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if $crate::support::db::postgres_available() {
                        super::$name($crate::support::Backend::Postgres).await;
                    }
                }
            )*
        }
    };
}

/// Waits until `check` holds, polling; panics with `what` after `timeout`.
pub async fn eventually<F, Fut>(what: &str, timeout: std::time::Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if check().await {
            return;
        }
        if std::time::Instant::now() > deadline {
            panic!("timed out after {timeout:?} waiting for: {what}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

/// Seconds since the Unix epoch (the clock signatures are checked against).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock after 1970").as_secs() as i64
}
