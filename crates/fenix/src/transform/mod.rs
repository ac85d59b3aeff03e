//! Endpoint transformations: an owner's JavaScript `function handler(webhook)`
//! that reshapes a delivery's request before it is signed and sent.
//!
//! The script runs in QuickJS (`sandbox.rs`: the language alone, no I/O, no
//! clock, no randomness; memory, stack and time limits) on threads of its own
//! (`pool.rs`); what it returns is checked here ([`Transforms::run`] →
//! [`request::Transformed`]) by the same rules as the owner's own headers,
//! with the URL's scheme, host and port kept. The worker runs it once per
//! delivery and stores the result, so every attempt sends the same bytes
//! (`worker::transformed`); `POST …/transformations/test` runs it on a
//! given event and stores nothing.
//!
//! A failure is a [`Failure`]: its `reason` names what went wrong (a limit,
//! an error's class and line, a refused part of the result) and never quotes
//! the event's data; the script's own message is kept apart, in `detail`,
//! for the test call, whose caller gave the event.

mod pool;
pub mod request;
mod sandbox;
#[cfg(test)]
mod tests;

use std::{fmt, sync::Arc, time::Duration};

pub use request::{Cancelled, Method, Transformed};

/// Longest script an endpoint may have.
pub const MAX_SCRIPT_BYTES: usize = 64 * 1024;
/// The sandbox's stack limit.
pub const STACK_BYTES: usize = 256 * 1024;
/// Largest payload a transformation may return: the largest an event may
/// carry (`POST …/events`' body limit).
pub const MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// How long an API call (a save, `transformations/test`) waits for a
/// transformation thread before it is answered that none was free.
pub const API_WAIT: Duration = Duration::from_secs(2);

/// What one run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time of one run, top level and handler together (`FENIX_TRANSFORM_TIMEOUT`).
    pub timeout: Duration,
    /// Memory of the runtime (`FENIX_TRANSFORM_MEMORY`).
    pub memory: usize,
    /// Stack of the script ([`STACK_BYTES`]).
    pub stack: usize,
}

/// Whether a failure is the script not compiling (refused when saved) or a
/// run going wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// `invalid_transformation`.
    Compile,
    /// `transformation_failed`.
    Run,
}

/// Why a transformation did not give a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    /// What went wrong, never the event's data.
    pub reason: String,
    /// The script's line, when known.
    pub line: Option<u32>,
    /// The script's own error message (it may quote the event's data: shown
    /// only to whoever gave the event, never stored).
    pub detail: Option<String>,
    /// A limit was hit: the runtime is made anew.
    spent: bool,
}

impl Failure {
    fn new(kind: FailureKind, reason: impl Into<String>, line: Option<u32>, detail: Option<String>) -> Failure {
        Failure { kind, reason: reason.into(), line, detail, spent: false }
    }

    fn compile(reason: &str, line: Option<u32>, detail: Option<String>) -> Failure {
        Failure::new(FailureKind::Compile, reason, line, detail)
    }

    pub(crate) fn run(reason: &str, line: Option<u32>, detail: Option<String>) -> Failure {
        Failure::new(FailureKind::Run, reason, line, detail)
    }

    fn spent(reason: String) -> Failure {
        Failure { spent: true, ..Failure::new(FailureKind::Run, reason, None, None) }
    }

    fn timeout(limit: Duration) -> Failure {
        Failure::spent(format!(
            "the transformation ran longer than its time limit ({}, FENIX_TRANSFORM_TIMEOUT)",
            humantime::format_duration(limit)
        ))
    }

    fn memory(limit: usize) -> Failure {
        Failure::spent(format!(
            "the transformation used more than its memory limit ({} KiB, FENIX_TRANSFORM_MEMORY)",
            limit / 1024
        ))
    }

    fn stack() -> Failure {
        Failure::spent(format!("the transformation overflowed its stack ({} KiB)", STACK_BYTES / 1024))
    }

    fn busy() -> Failure {
        Failure::new(
            FailureKind::Run,
            "no transformation thread was free in time (FENIX_TRANSFORM_THREADS); it is tried again",
            None,
            None,
        )
    }

    fn internal(reason: &str) -> Failure {
        Failure::spent(reason.to_string())
    }

    /// Whether the runtime that gave this failure may run again.
    fn keeps_runtime(&self) -> bool {
        !self.spent
    }

    /// The message an API answer gives: the reason, then the script's own
    /// message when the caller may see it.
    pub fn message(&self, with_detail: bool) -> String {
        match (&self.detail, with_detail) {
            (Some(d), true) if !d.is_empty() => format!("{}: {}", self.reason, d.chars().take(500).collect::<String>()),
            _ => self.reason.clone(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A script checked when saved: at most [`MAX_SCRIPT_BYTES`], no NUL.
/// Whether it compiles is [`Transforms::compile`]'s to say.
pub fn check_size(script: &str) -> Result<(), Failure> {
    if script.len() > MAX_SCRIPT_BYTES {
        return Err(Failure::compile(
            &format!("the transformation is {} bytes; at most {MAX_SCRIPT_BYTES} are allowed", script.len()),
            None,
            None,
        ));
    }
    if script.contains('\0') {
        return Err(Failure::compile("the transformation must not contain NUL characters", None, None));
    }
    Ok(())
}

/// The transformation threads, shared by the API and the worker.
#[derive(Clone)]
pub struct Transforms {
    pool: pool::Pool,
}

impl Transforms {
    /// Starts `threads` threads running scripts within `timeout` and `memory` bytes.
    pub fn start(threads: usize, timeout: Duration, memory: usize) -> Transforms {
        Transforms { pool: pool::Pool::start(threads, Limits { timeout, memory, stack: STACK_BYTES }) }
    }

    /// The limits of each run.
    pub fn limits(&self) -> Limits {
        self.pool.limits()
    }

    /// Checks that `script` compiles, runs its top level within the limits and
    /// defines `handler`; `wait` bounds the wait for a thread.
    pub async fn compile(&self, script: &str, wait: Duration) -> Result<(), Failure> {
        check_size(script)?;
        let start_by = std::time::Instant::now() + wait;
        self.pool.run(Arc::from(script), None, None, start_by).await.map(|_| ())
    }

    /// Runs `script` on `webhook` and checks its result against the endpoint's
    /// URL `endpoint_url`. The run must start by `start_by`. With a `keeper`
    /// (the endpoint's id) it runs in the sandbox kept for that keeper and
    /// script, whose top level ran once; without, in a fresh context.
    pub async fn run(
        &self,
        script: Arc<str>,
        keeper: Option<Arc<str>>,
        webhook: &request::Webhook<'_>,
        start_by: std::time::Instant,
    ) -> Result<Result<Transformed, Cancelled>, Failure> {
        let input = webhook.to_json();
        let raw = self.pool.run(script, keeper, Some(input), start_by).await?;
        let raw = raw.ok_or_else(|| Failure::internal("the transformation gave no result"))?;
        request::checked(&raw, webhook.url)
    }
}
