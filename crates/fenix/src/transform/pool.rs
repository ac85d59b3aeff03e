//! The threads transformations run on: a few dedicated OS threads
//! (`FENIX_TRANSFORM_THREADS`), each with its own QuickJS runtime, fed by one
//! bounded queue. A run is handed over with the time by which it must have
//! started: a caller finding the queue full waits for room until then, and
//! a thread that takes it later answers that no thread was free, without
//! running it. The caller waits for the answer asynchronously, so a
//! slow script holds one of these threads, never the async runtime or the
//! worker's other deliveries.
//!
//! A run with a keeper (the worker's: the endpoint's id) runs in a sandbox
//! the thread keeps for that keeper and script ([`Kept`]): its top level
//! runs once, not once per delivery. Each thread keeps up to
//! [`KEPT_PER_THREAD`], holding together no more memory than one run may
//! use (`FENIX_TRANSFORM_MEMORY`), the least recently used given up first.

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

use tokio::sync::{mpsc, oneshot};

use super::{
    sandbox::{RawResult, Sandbox},
    Failure, Limits,
};

/// Runs queued per thread; past them a caller waits for room.
const QUEUED_PER_THREAD: usize = 64;
/// Each thread's own stack: well above the sandbox's stack limit, so a deep
/// recursion meets QuickJS's check first.
const THREAD_STACK: usize = 8 * 1024 * 1024;

/// Sandboxes a thread keeps for keepers' scripts.
pub const KEPT_PER_THREAD: usize = 32;

/// One run handed to a thread.
struct Run {
    script: Arc<str>,
    /// Whose sandbox the run may keep (an endpoint's id); `None`: a fresh context.
    keeper: Option<Arc<str>>,
    /// JSON of the webhook; `None`: only compile.
    input: Option<String>,
    /// After this instant the run is not started.
    start_by: Instant,
    answer: oneshot::Sender<Result<Option<RawResult>, Failure>>,
}

/// The queue's sending side; cloning shares the threads.
#[derive(Clone)]
pub struct Pool {
    queue: mpsc::Sender<Run>,
    limits: Limits,
}

impl Pool {
    /// Starts `threads` threads, each keeping a runtime under `limits`.
    pub fn start(threads: usize, limits: Limits) -> Pool {
        let (queue, runs) = mpsc::channel::<Run>(threads.max(1) * QUEUED_PER_THREAD);
        let runs = Arc::new(Mutex::new(runs));
        for n in 0..threads.max(1) {
            let runs = runs.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("fenix-transform-{n}"))
                .stack_size(THREAD_STACK)
                .spawn(move || serve(&runs, limits));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "a transformation thread could not be started");
            }
        }
        Pool { queue, limits }
    }

    /// The limits each run has.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs `script` (with `input`, its handler) on a thread of the pool, in
    /// `keeper`'s kept sandbox when there is one; the run must have started
    /// by `start_by`.
    pub async fn run(
        &self,
        script: Arc<str>,
        keeper: Option<Arc<str>>,
        input: Option<String>,
        start_by: Instant,
    ) -> Result<Option<RawResult>, Failure> {
        let (answer, answered) = oneshot::channel();
        let run = Run { script, keeper, input, start_by, answer };
        match tokio::time::timeout_at(start_by.into(), self.queue.send(run)).await {
            Ok(Ok(())) => {}
            Err(_) => return Err(Failure::busy()),
            Ok(Err(_)) => return Err(Failure::internal("the transformation threads have stopped")),
        }
        answered.await.unwrap_or_else(|_| Err(Failure::internal("the transformation thread stopped during the run")))
    }
}

/// A thread's loop: takes runs until the pool is dropped.
fn serve(runs: &Mutex<mpsc::Receiver<Run>>, limits: Limits) {
    let mut shared: Option<Sandbox> = None;
    let mut kept = Kept::default();
    loop {
        let run = {
            let Ok(mut runs) = runs.lock() else { return };
            match runs.blocking_recv() {
                Some(run) => run,
                None => return,
            }
        };
        if Instant::now() > run.start_by || run.answer.is_closed() {
            let _ = run.answer.send(Err(Failure::busy()));
            continue;
        }
        let result = match (run.keeper, run.input) {
            (Some(keeper), Some(input)) => kept.run(keeper, &run.script, &input, limits).map(Some),
            (_, input) => match shared.take().map_or_else(|| Sandbox::new(limits), Ok) {
                Ok(sb) => {
                    let (result, reusable) = sb.run(&run.script, input.as_deref());
                    if reusable {
                        shared = Some(sb);
                    }
                    result
                }
                Err(f) => Err(f),
            },
        };
        let _ = run.answer.send(result);
    }
}

/// The sandboxes one thread keeps, most recently used last.
#[derive(Default)]
struct Kept {
    entries: Vec<Entry>,
}

/// One kept sandbox: whose, for which script, and the memory it held after
/// its last run.
struct Entry {
    keeper: Arc<str>,
    script: Arc<str>,
    sandbox: Sandbox,
    used: usize,
}

impl Kept {
    /// Runs `script`'s handler on `input` in `keeper`'s sandbox, made anew
    /// when there is none, when its script changed, or when its last run
    /// gave it up.
    fn run(&mut self, keeper: Arc<str>, script: &Arc<str>, input: &str, limits: Limits) -> Result<RawResult, Failure> {
        let found = self.entries.iter().position(|e| e.keeper == keeper);
        let mut sandbox = match found.map(|at| self.entries.remove(at)) {
            Some(e) if e.script == *script => e.sandbox,
            _ => Sandbox::new(limits)?,
        };
        let (result, reusable) = sandbox.run_kept(script, input);
        if reusable {
            self.keep(Entry { keeper, script: script.clone(), used: sandbox.memory_used(), sandbox }, limits.memory);
        }
        result
    }

    /// Keeps `entry`, giving up the least recently used while there are too
    /// many or they hold more than `budget` bytes together; one that alone
    /// holds more is not kept.
    fn keep(&mut self, entry: Entry, budget: usize) {
        if entry.used > budget {
            return;
        }
        let mut held: usize = self.entries.iter().map(|e| e.used).sum();
        while !self.entries.is_empty() && (self.entries.len() >= KEPT_PER_THREAD || held + entry.used > budget) {
            held -= self.entries.remove(0).used;
        }
        self.entries.push(entry);
    }
}
