//! `fenix-bench`: runs the real `fenix` binary against a verifying receiver on
//! loopback and measures, in one run, the figures of issue 7 — the HTTP
//! ceiling of the machine, delivery throughput and its ratio to the ceiling,
//! ingestion, latency at a fixed offered load, backlog scaling and peak RSS,
//! (issue 15) the time of a page of the delivery log on 1 M deliveries, and
//! (issue 32) what routing costs.
//! See `docs/benchmarks.md`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand, ValueEnum};

mod ctx;
mod db;
mod drain;
mod fenix;
mod fresh;
mod log;
mod ordered;
mod overload;
mod phases;
mod receiver;
mod report;
mod routing;
mod sink;
mod tasks;
mod wrk_ingest;

#[derive(Parser)]
#[command(
    name = "fenix-bench",
    about = "Benchmark the fenix binary against the machine's own HTTP ceiling (see docs/benchmarks.md).",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    opts: Opts,
}

#[derive(Subcommand)]
enum Command {
    /// The verifying receiver (started by the bench itself).
    #[command(hide = true)]
    Receiver {
        /// Sink mode: answer `204` without verifying (the fallback when nginx is missing).
        #[arg(long)]
        sink: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Phase {
    /// `wrk` against the sink (the machine's ceiling), then the reqwest client against the verifying receiver.
    Ceiling,
    /// Correctness: a backlog drained to the verifying receiver, every request's signature checked.
    Verify,
    /// Backlogs drained to the sink: `--endpoints` endpoints, then one endpoint.
    Delivery,
    /// Single events to `--api-only`: one endpoint, then 10 endpoints.
    Ingestion,
    /// Batch ingestion: `POST …/events/batch`, `--batch-size` events a request.
    Batch,
    Latency,
    Drain,
    /// The delivery log of a large database, read as the console reads it.
    Log,
    /// One ordered endpoint's backlog drained, without keys and with `--ordered-keys` keys.
    Ordered,
    /// What routing costs: fan-out ingestion with channels and a filter, delivery with a transformation.
    Routing,
    /// A bulk replay of `--task-deliveries` failed deliveries as one task, fresh events sent meanwhile.
    Tasks,
    /// Producers offering three times what a paced receiver takes for `--overload-secs`, then the drain.
    /// Not among the default phases (ten minutes and more): name it.
    Overload,
}

#[derive(Args, Debug, Clone)]
pub struct Opts {
    /// Database backend of the fenix processes.
    #[arg(long, value_enum, default_value = "sqlite")]
    backend: Backend,
    /// Every phase at small sizes (under a minute; for CI smoke runs).
    #[arg(long)]
    quick: bool,
    /// Delivery phase: events in the backlog [default: 10000; quick: 1000].
    #[arg(long)]
    events: Option<u64>,
    /// Delivery phase: endpoints each event fans out to [default: 10; quick: 5].
    #[arg(long)]
    endpoints: Option<u64>,
    /// Delivery phase, one endpoint: events in its backlog [default: 50000; quick: 5000].
    #[arg(long)]
    events_1ep: Option<u64>,
    /// Correctness phase: events (× --endpoints) drained to the verifying receiver [default: 2000; quick: 200].
    #[arg(long)]
    verify_events: Option<u64>,
    /// Ceiling: seconds of `wrk` against the sink [default: 10; quick: 3].
    #[arg(long)]
    wrk_secs: Option<u64>,
    /// PostgreSQL server to create fresh databases on (a user allowed to CREATE DATABASE);
    /// without it a throwaway server is started from /usr/lib/postgresql/15/bin.
    #[arg(long, env = "FENIX_BENCH_POSTGRES_URL")]
    postgres_url: Option<String>,
    /// The fenix binary [default: `fenix` beside this executable, built with cargo first].
    #[arg(long, env = "FENIX_BENCH_FENIX")]
    fenix: Option<PathBuf>,
    /// Do not run `cargo build -p fenix` before starting (use the binary as it is).
    #[arg(long)]
    no_build: bool,
    /// Ceiling: requests to send [default: 100000; quick: 10000].
    #[arg(long)]
    ceiling_requests: Option<u64>,
    /// Ceiling: requests in flight [default: FENIX_WORKER_CONCURRENCY, else 256 (Fenix's worker default until 2026-12-01; kept so ceilings stay comparable)].
    #[arg(long)]
    concurrency: Option<usize>,
    /// Ingestion (single events, driven by `wrk`): connections wrk keeps open [default: 128].
    #[arg(long)]
    ingest_connections: Option<u32>,
    /// Ingestion (single events, driven by `wrk`): seconds of each run [default: 10; quick: 3].
    #[arg(long)]
    ingest_secs: Option<u64>,
    /// Batch ingestion: events to send [default: 200000; quick: 20000].
    #[arg(long)]
    batch_events: Option<u64>,
    /// Batch ingestion: events per request (at most the server's FENIX_MAX_BATCH_EVENTS).
    #[arg(long, default_value_t = 1000)]
    batch_size: u64,
    /// Concurrent ingestion clients (each keeps one connection alive), in every phase.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Latency: offered load in events/s (issue 18's target is at 5,000/s; earlier runs used 500).
    #[arg(long, default_value_t = 5000)]
    rate: u64,
    /// Latency: seconds of offered load [default: 20; quick: 3].
    #[arg(long)]
    latency_secs: Option<u64>,
    /// Backlog scaling: the small backlog, in deliveries [default: 10000; quick: 2000].
    #[arg(long)]
    drain_small: Option<u64>,
    /// Backlog scaling: the large backlog, in deliveries [default: 1000000; quick: 20000].
    #[arg(long)]
    drain_large: Option<u64>,
    /// Backlog scaling: endpoints per event (deliveries / endpoints events are ingested).
    #[arg(long, default_value_t = 10)]
    drain_endpoints: u64,
    /// Approximate size of each event's `data` object, in bytes.
    #[arg(long, default_value_t = 512)]
    payload_bytes: usize,
    /// Log: deliveries in the filled database [default: 1000000; quick: 20000].
    #[arg(long)]
    log_deliveries: Option<u64>,
    /// Log: timed requests per query [default: 50; quick: 20].
    #[arg(long)]
    log_requests: Option<u64>,
    /// Ordered: events in the ordered endpoint's backlog [default: 10000; quick: 1000].
    #[arg(long)]
    ordered_events: Option<u64>,
    /// Ordered: distinct ordering keys (lanes) in the second drain.
    #[arg(long, default_value_t = 16)]
    ordered_keys: u64,
    /// Routing: events (× 10 endpoints) in each drained backlog [default: 10000; quick: 1000].
    #[arg(long)]
    routing_events: Option<u64>,
    /// Tasks: failed deliveries the bulk replay selects [default: 1000000; quick: 20000].
    #[arg(long)]
    task_deliveries: Option<u64>,
    /// Tasks: the task's rate, `FENIX_TASK_RATE` of the fenix process (deliveries/s).
    #[arg(long, default_value_t = 10_000)]
    task_rate: u64,
    /// Tasks: fresh events per second sent to another app while the task runs.
    #[arg(long, default_value_t = 100)]
    task_fresh_rate: u64,
    /// Overload: seconds producers offer three times what the receiver takes [default: 600; quick: 20].
    #[arg(long)]
    overload_secs: Option<u64>,
    /// Overload: requests a second the (paced) receiver takes; producers offer three times as many.
    #[arg(long, default_value_t = 1000)]
    overload_receiver_rate: u64,
    /// Run only these phases (comma-separated) [default: all but overload].
    #[arg(long, value_enum, value_delimiter = ',')]
    phases: Vec<Phase>,
    /// Keep the temporary directory (databases and fenix logs) and print its path.
    #[arg(long)]
    keep: bool,
}

/// `wrk`'s connections in the single-event ingestion phases, chosen by
/// measuring 64, 128 and 256 on both backends (docs/benchmarks.md).
const DEFAULT_INGEST_CONNECTIONS: u32 = 128;

/// The sizes in force, after `--quick` and the explicit flags.
#[derive(Debug, Clone)]
pub struct Sizes {
    pub quick: bool,
    pub ceiling_requests: u64,
    pub concurrency: usize,
    pub events: u64,
    pub endpoints: u64,
    pub events_1ep: u64,
    pub verify_events: u64,
    pub wrk_secs: u64,
    pub ingest_connections: u32,
    pub ingest_secs: u64,
    pub batch_events: u64,
    pub batch_size: u64,
    pub clients: usize,
    pub rate: u64,
    pub latency_secs: u64,
    pub drain_small: u64,
    pub drain_large: u64,
    pub drain_endpoints: u64,
    pub payload_bytes: usize,
    pub log_deliveries: u64,
    pub log_requests: u64,
    pub ordered_events: u64,
    pub ordered_keys: u64,
    pub routing_events: u64,
    pub task_deliveries: u64,
    pub task_rate: u64,
    pub task_fresh_rate: u64,
    pub overload_secs: u64,
    pub overload_receiver_rate: u64,
}

impl Sizes {
    fn from(o: &Opts) -> anyhow::Result<Sizes> {
        let q = o.quick;
        let pick = |v: Option<u64>, full: u64, quick: u64| v.unwrap_or(if q { quick } else { full });
        let worker_concurrency =
            std::env::var("FENIX_WORKER_CONCURRENCY").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(256);
        let s = Sizes {
            quick: q,
            ceiling_requests: pick(o.ceiling_requests, 100_000, 10_000),
            concurrency: o.concurrency.unwrap_or(worker_concurrency),
            events: pick(o.events, 10_000, 1_000),
            endpoints: pick(o.endpoints, 10, 5),
            events_1ep: pick(o.events_1ep, 50_000, 5_000),
            verify_events: pick(o.verify_events, 2_000, 200),
            wrk_secs: pick(o.wrk_secs, 10, 3),
            ingest_connections: o.ingest_connections.unwrap_or(DEFAULT_INGEST_CONNECTIONS),
            ingest_secs: pick(o.ingest_secs, 10, 3),
            batch_events: pick(o.batch_events, 200_000, 20_000),
            batch_size: o.batch_size,
            clients: o.clients,
            rate: o.rate,
            latency_secs: pick(o.latency_secs, 20, 3),
            drain_small: pick(o.drain_small, 10_000, 2_000),
            drain_large: pick(o.drain_large, 1_000_000, 20_000),
            drain_endpoints: o.drain_endpoints,
            payload_bytes: o.payload_bytes,
            log_deliveries: pick(o.log_deliveries, 1_000_000, 20_000),
            log_requests: pick(o.log_requests, 50, 20),
            ordered_events: pick(o.ordered_events, 10_000, 1_000),
            ordered_keys: o.ordered_keys,
            routing_events: pick(o.routing_events, 10_000, 1_000),
            task_deliveries: pick(o.task_deliveries, 1_000_000, 20_000),
            task_rate: o.task_rate,
            task_fresh_rate: o.task_fresh_rate,
            overload_secs: pick(o.overload_secs, 600, 20),
            overload_receiver_rate: o.overload_receiver_rate,
        };
        if s.out_of_bounds() {
            bail!("every size must be at least 1 (and each drain at least --drain-endpoints deliveries)");
        }
        Ok(s)
    }

    /// Whether a size is 0 (or a drain has fewer deliveries than endpoints,
    /// or the task rate is outside 1..=100,000).
    fn out_of_bounds(&self) -> bool {
        self.ceiling_requests == 0
            || self.concurrency == 0
            || self.events == 0
            || self.endpoints == 0
            || self.events_1ep == 0
            || self.verify_events == 0
            || self.wrk_secs == 0
            || self.ingest_connections == 0
            || self.ingest_secs == 0
            || self.batch_events == 0
            || self.batch_size == 0
            || self.clients == 0
            || self.rate == 0
            || self.latency_secs == 0
            || self.drain_endpoints == 0
            || self.drain_small < self.drain_endpoints
            || self.drain_large < self.drain_endpoints
            || self.log_deliveries < log::ENDPOINTS
            || self.log_requests == 0
            || self.ordered_events == 0
            || self.ordered_keys == 0
            || self.routing_events == 0
            || self.task_deliveries < log::ENDPOINTS
            || !(1..=100_000).contains(&self.task_rate)
            || self.task_fresh_rate == 0
            || self.overload_secs == 0
            || self.overload_receiver_rate == 0
    }
}

fn started() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// A progress line on stderr (the table and JSON go to stdout).
pub fn progress(msg: &str) {
    eprintln!("[fenix-bench {:>6.1}s] {msg}", started().elapsed().as_secs_f64());
}

/// Wall-clock time in unix microseconds (receiver and bench share the machine clock).
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let Some(Command::Receiver { sink }) = cli.command {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
        return match rt.block_on(receiver::serve(sink)) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("fenix-bench receiver: {e:#}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    started();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    match rt.block_on(run(cli.opts)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fenix-bench: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(opts: Opts) -> anyhow::Result<()> {
    let sizes = Sizes::from(&opts)?;
    let bin = locate_fenix(&opts)?;
    let tmp = tempfile::Builder::new().prefix("fenix-bench-").tempdir().context("creating a temporary directory")?;
    let mut dbs = match opts.backend {
        Backend::Sqlite => db::Databases::sqlite(tmp.path()),
        Backend::Postgres => db::Databases::postgres(opts.postgres_url.clone()).await?,
    };
    let phases: Vec<Phase> = if opts.phases.is_empty() {
        vec![
            Phase::Ceiling,
            Phase::Verify,
            Phase::Delivery,
            Phase::Ingestion,
            Phase::Batch,
            Phase::Latency,
            Phase::Drain,
            Phase::Log,
            Phase::Ordered,
            Phase::Routing,
            Phase::Tasks,
        ]
    } else {
        opts.phases.clone()
    };
    progress(&format!(
        "backend {}, fenix {}, {}; temporary files in {}",
        dbs.backend(),
        bin.display(),
        if sizes.quick { "quick sizes" } else { "full sizes" },
        tmp.path().display()
    ));
    let receiver = receiver::Receiver::spawn().await?;
    progress(&format!("verifying receiver listening on {}", receiver.base));
    let sink = sink::Sink::start(tmp.path()).await?;
    let launch = fenix::Launch::new(bin.clone(), tmp.path().to_path_buf());
    let mut ctx = ctx::Ctx::new(sizes.clone(), launch, receiver, sink, tmp.path().to_path_buf());
    // On Ctrl-C, stop cleanly: the fenix children and the receiver are killed
    // when dropped, a throwaway PostgreSQL is stopped and deleted.
    let outcome = tokio::select! {
        r = phases::run_all(&mut ctx, &mut dbs, &phases) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    dbs.cleanup().await;
    ctx.sink.stop().await;
    if opts.keep {
        let kept = tmp.keep();
        progress(&format!("kept {}", kept.display()));
    }
    let results = outcome?;
    report::print(&results, &ctx, dbs.backend(), &bin);
    Ok(())
}

/// The fenix binary to run: `--fenix`, else `fenix` beside this executable,
/// first (re)built with cargo so that it matches the sources.
fn locate_fenix(opts: &Opts) -> anyhow::Result<PathBuf> {
    if let Some(p) = &opts.fenix {
        if !p.exists() {
            bail!("--fenix {} does not exist", p.display());
        }
        return Ok(p.clone());
    }
    let exe = std::env::current_exe().context("locating the bench executable")?;
    let dir = exe.parent().context("the bench executable has no directory")?;
    let bin = dir.join("fenix");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let can_build = workspace.join("Cargo.toml").exists();
    let missing = !bin.exists();
    if can_build && (missing || !opts.no_build) {
        build_fenix(&workspace, dir, &bin, missing)?;
    }
    if !bin.exists() {
        bail!("no fenix binary at {} (build it with `cargo build --release -p fenix`, or pass --fenix)", bin.display());
    }
    Ok(bin)
}

/// `cargo build -p fenix --bin fenix` in `workspace` (`--release` when the
/// bench in `dir` is a release build); a failed build is an error only when
/// there is no binary at `bin` to fall back on.
fn build_fenix(workspace: &Path, dir: &Path, bin: &Path, missing: bool) -> anyhow::Result<()> {
    let release = dir.file_name().is_some_and(|n| n == "release");
    let mut args = vec!["build", "-p", "fenix", "--bin", "fenix"];
    if release {
        args.insert(1, "--release");
    } else {
        progress("warning: this is not a release build; the figures mean little");
    }
    progress(&format!(
        "{} cargo {}",
        if missing {
            "fenix binary not found beside the bench; building it:"
        } else {
            "making sure fenix is up to date:"
        },
        args.join(" ")
    ));
    let status = cargo_command()
        .args(&args)
        .current_dir(workspace)
        .stdout(std::process::Stdio::null())
        .status()
        .context("running cargo build")?;
    if !status.success() {
        if bin.exists() {
            progress("warning: cargo build failed; using the existing fenix binary");
        } else {
            bail!("cargo build -p fenix failed ({status})");
        }
    }
    Ok(())
}

/// `cargo` (`$CARGO` when set) without the bench package's variables.
fn cargo_command() -> std::process::Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    // `cargo run` gave this process the bench package's CARGO_PKG_* and
    // CARGO_MANIFEST_* variables. Some build scripts (ring's) re-run when
    // those change, so passing them on would rebuild ring, rustls and
    // reqwest here and again in the next plain `cargo build`.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_CRATE_", "CARGO_BIN_", "CARGO_PRIMARY_PACKAGE"]
            .iter()
            .any(|p| key.starts_with(p))
            || key == "OUT_DIR"
        {
            cmd.env_remove(key);
        }
    }
    cmd
}
