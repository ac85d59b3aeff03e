//! The console in a real browser: Debian's chromium, headless, driven by
//! playwright-core from node scripts in `tests/browser/` (one per scenario).
//! Rust starts Fenix and loopback receivers, runs the script, answers what it
//! asks for (a receiver fixed, a portal link minted), then checks what the
//! script saw and what the server and the receivers hold.
//!
//! Every scenario fails on a Content-Security-Policy violation, an uncaught
//! page error, a console error or a request past 127.0.0.1 (`browser.rs`).
//! Screenshots land in `target/console-screenshots/`. The suite runs one test
//! at a time (a nextest test group, `.config/nextest.toml`): each Chromium
//! takes a core and a few hundred MB.
//!
//! `cargo nextest run -p fenix --test integration console::`

mod browser;
mod common;
mod deliveries;
mod docs;
mod embed;
mod markup;
mod operator;
mod phone;
mod portal;
mod routing;
mod sessions;
mod tasks;
mod tls;
