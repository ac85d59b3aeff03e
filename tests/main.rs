//! Fenix's integration suites, compiled and linked once as one test binary
//! (`cargo nextest run -p fenix --test integration`).
//!
//! Each folder is a suite and a module, so a test's name starts with its suite
//! (`e2e::api::sqlite::…`, `storage::claims::postgres::…`) and a filter picks
//! a suite, a file or a scenario: `cargo nextest run -p fenix --test integration
//! e2e::retries`. `support/` is the harness they share: a fresh database per
//! test, the real `fenix` binary as a child process, loopback receivers and DNS.
//!
//! One binary rather than one per suite: the harness and the suites' shared
//! generic code (reqwest, hyper, sqlx) are compiled once, and a change to the
//! product relinks one test binary instead of six (docs/ARCHITECTURE.md, "Tests").

mod support;

mod console;
mod destination;
mod e2e;
mod operations;
mod scaleout;
mod secrets;
mod storage;
