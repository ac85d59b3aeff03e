//! A backlog drained by the worker alone: filled through the API, then
//! timed from the worker's start until every delivery succeeded (`Drain`),
//! shared by the delivery, drain and routing phases.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;

/// The label of the routing phase's transformed drain (profiled with `FENIX_BENCH_PERF`).
pub const ROUTING_PERF_LABEL: &str = "routing-transformed";

use crate::ctx::{app_with_endpoints_extra, event_body, Ctx, ProcUsage, Target};
use crate::db::{Databases, Log};
use crate::fenix::{self, Api, Fenix, Role};
use crate::{now_us, progress};

#[derive(Debug, Clone)]
pub struct Drain {
    pub events: u64,
    pub endpoints: u64,
    pub deliveries: u64,
    /// From the worker's start until every delivery is `succeeded` in the database.
    pub secs: f64,
    pub per_s: f64,
    /// From the first request the receiver saw until all succeeded.
    pub per_s_after_first: f64,
    /// Worker start → first request at the receiver.
    pub first_request_ms: f64,
    pub setup_ingest_per_s: f64,
    pub received: u64,
    pub failures: u64,
    /// Connections the receiver accepted from the worker.
    pub connections: u64,
    /// CPU time of the target (nginx's processes, or the verifying receiver) during the drain.
    pub receiver_cpu_s: f64,
    pub target: Target,
    /// The worker's user + system CPU from its start until the drain was complete.
    pub worker_cpu_s: f64,
    pub procs: Vec<ProcUsage>,
}

impl Drain {
    /// The worker's CPU per delivery, in µs (`cpu_us_per_delivery`).
    pub fn cpu_us_per_delivery(&self) -> f64 {
        self.worker_cpu_s * 1e6 / self.deliveries as f64
    }

    /// Connections the worker opened per 10,000 deliveries.
    pub fn connections_per_10k(&self) -> f64 {
        self.connections as f64 * 10_000.0 / self.deliveries as f64
    }
}

/// Sends `count` events to `app` from `clients` concurrent clients (each with
/// its own keep-alive connection); returns events/s. The drained backlogs'
/// set-up: the measured single-event ingestion is `wrk`'s (`wrk_ingest.rs`).
async fn ingest(ctx: &Ctx, api: &Api, app: &str, count: u64, label: &str) -> anyhow::Result<f64> {
    let url = Arc::new(format!("{}/v1/apps/{app}/events", api.base));
    let token = Arc::new(ctx.launch.admin_token.clone());
    let next = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let pad = Arc::new(ctx.pad.clone());
    let start = Instant::now();
    let reporter = {
        let (done, label) = (done.clone(), label.to_string());
        tokio::spawn(async move {
            let mut last = 0;
            loop {
                tokio::time::sleep(Duration::from_secs(5)).await;
                let d = done.load(Ordering::Relaxed);
                progress(&format!("{label}: ingested {d}/{count} ({:.0}/s lately)", (d - last) as f64 / 5.0));
                last = d;
            }
        })
    };
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..ctx.sizes.clients {
        let (url, token, next, done, pad) = (url.clone(), token.clone(), next.clone(), done.clone(), pad.clone());
        let client = fenix::event_client()?;
        tasks.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= count {
                    return anyhow::Ok(());
                }
                fenix::send_event(&client, &url, &token, event_body(&pad, n)).await?;
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let mut result = Ok(());
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok(Ok(())) => {}
            Err(e) if e.is_cancelled() => {}
            Ok(Err(e)) if result.is_ok() => {
                result = Err(e);
                tasks.abort_all();
            }
            Err(e) if result.is_ok() => {
                result = Err(e.into());
                tasks.abort_all();
            }
            _ => {}
        }
    }
    reporter.abort();
    result?;
    Ok(count as f64 / start.elapsed().as_secs_f64())
}

/// Counters at a phase's target, as differences from the phase's start.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    received: u64,
    failures: u64,
    connections: u64,
    /// When the target saw its first request (the verifying receiver stamps
    /// it; at the sink it is the first poll that saw one, within 10 ms).
    first_at_us: Option<u64>,
}

async fn counts(ctx: &Ctx, target: Target, base: &Counts) -> anyhow::Result<Counts> {
    Ok(match target {
        Target::Sink => {
            let c = ctx.sink.count().await?;
            Counts {
                received: c.requests - base.received,
                failures: 0,
                connections: c.connections - base.connections,
                first_at_us: None,
            }
        }
        Target::Verifying => {
            let s = ctx.receiver.stats().await?;
            Counts {
                received: s.received,
                failures: s.verified_failures,
                connections: s.connections,
                first_at_us: (s.first_at_us > 0).then_some(s.first_at_us),
            }
        }
    })
}

/// Zeroes the target's counters (the sink's are read and kept as the base).
async fn reset(ctx: &Ctx, target: Target) -> anyhow::Result<Counts> {
    match target {
        Target::Sink => {
            let c = ctx.sink.count().await?;
            Ok(Counts { received: c.requests, connections: c.connections, ..Counts::default() })
        }
        Target::Verifying => {
            ctx.receiver.reset(false).await?;
            Ok(Counts::default())
        }
    }
}

fn target_cpu(ctx: &Ctx, target: Target) -> f64 {
    match target {
        Target::Sink => ctx.sink.pids().into_iter().filter_map(fenix::cpu_seconds).sum(),
        Target::Verifying => ctx.receiver_cpu(),
    }
}

/// A backlog of `events × endpoints` deliveries, ingested by `fenix --api-only`,
/// then drained by `fenix --worker-only` to `target`, timed until all are `succeeded`.
pub async fn backlog(
    ctx: &mut Ctx,
    dbs: &mut Databases,
    label: &str,
    events: u64,
    endpoints: u64,
    target: Target,
) -> anyhow::Result<Drain> {
    backlog_with(ctx, dbs, label, (events, endpoints), target, &[]).await
}

/// [`backlog`], endpoint `i` created with `extras[i]`'s members in its body
/// (the routing phase's transformation).
pub async fn backlog_with(
    ctx: &mut Ctx,
    dbs: &mut Databases,
    label: &str,
    (events, endpoints): (u64, u64),
    target: Target,
    extras: &[serde_json::Value],
) -> anyhow::Result<Drain> {
    let expected = events * endpoints;
    let url = dbs.fresh(label).await?;
    let (setup_ingest_per_s, api_usage) = fill_backlog(ctx, &url, label, (events, endpoints), target, extras).await?;
    progress(&format!(
        "{label}: ingested at {setup_ingest_per_s:.0} events/s; draining {expected} deliveries with fenix --worker-only to the {}",
        match target {
            Target::Sink => ctx.sink.name(),
            Target::Verifying => "verifying receiver",
        }
    ));

    let Drained { secs, start_us, done_us, first_seen_us, worker_cpu_s, worker_usage, stats, cpu0 } =
        drain(ctx, &url, label, expected, target).await?;
    let first_at_us = first_seen_us.unwrap_or(start_us);
    let first_request_ms = first_at_us.saturating_sub(start_us) as f64 / 1000.0;
    let after_first = done_us.saturating_sub(first_at_us) as f64 / 1e6;
    let per_s = expected as f64 / secs;
    progress(&format!(
        "{label}: {expected} deliveries in {secs:.2} s = {per_s:.0}/s (peak RSS {:.0} MB, {:.1} µs CPU per delivery, {} connections)",
        worker_usage.peak_rss_mb,
        worker_cpu_s * 1e6 / expected as f64,
        stats.connections,
    ));
    Ok(Drain {
        events,
        endpoints,
        deliveries: expected,
        secs,
        per_s,
        per_s_after_first: if after_first > 0.0 { expected as f64 / after_first } else { per_s },
        first_request_ms,
        setup_ingest_per_s,
        received: stats.received,
        failures: stats.failures,
        connections: stats.connections,
        receiver_cpu_s: target_cpu(ctx, target) - cpu0,
        target,
        worker_cpu_s,
        procs: vec![
            ProcUsage { role: "api (ingest)", usage: api_usage },
            ProcUsage { role: "worker", usage: worker_usage },
        ],
    })
}

/// What a drain measured, for [`backlog_with`] to report.
struct Drained {
    /// Worker start → every delivery `succeeded`.
    secs: f64,
    start_us: u64,
    done_us: u64,
    first_seen_us: Option<u64>,
    worker_cpu_s: f64,
    worker_usage: fenix::Usage,
    /// The target's counters once the worker stopped.
    stats: Counts,
    /// The target's CPU seconds before the worker started.
    cpu0: f64,
}

/// Drains the backlog ingested on `url` with `fenix --worker-only` (profiled
/// when asked, [`start_perf`]) and checks that all `expected` deliveries
/// succeeded.
async fn drain(ctx: &Ctx, url: &str, label: &str, expected: u64, target: Target) -> anyhow::Result<Drained> {
    let mut log = Log::open(url).await?;
    let unfinished = log.unfinished().await?;
    if u64::try_from(unfinished).unwrap_or(0) != expected {
        bail!("{unfinished} deliveries are due after ingestion, {expected} expected");
    }
    let base = reset(ctx, target).await?;
    let cpu0 = target_cpu(ctx, target);
    let start_us = now_us();
    let start = Instant::now();
    let mut worker = Fenix::start(&ctx.launch, Role::WorkerOnly, url, label).await?;
    let perf = start_perf(label, &worker);
    let drained = wait_drained(ctx, target, &base, (&mut worker, &mut log), label, expected, start).await?;
    let (secs, done_us, worker_cpu_s, first_seen_us) = drained;
    stop_perf(perf).await;
    let (succeeded, all) = log.succeeded_of_all().await?;
    log.close().await;
    let worker_usage = worker.stop().await?;
    let stats = counts(ctx, target, &base).await?;
    if u64::try_from(succeeded).unwrap_or(0) != expected || u64::try_from(all).unwrap_or(0) != expected {
        bail!("{label}: {succeeded} of {all} deliveries succeeded, {expected} expected");
    }
    Ok(Drained { secs, start_us, done_us, first_seen_us, worker_cpu_s, worker_usage, stats, cpu0 })
}

/// Ingests `events` for an app with `endpoints` endpoints through `fenix
/// --api-only` on `url`: the ingestion rate and the API process's usage.
async fn fill_backlog(
    ctx: &mut Ctx,
    url: &str,
    label: &str,
    (events, endpoints): (u64, u64),
    target: Target,
    extras: &[serde_json::Value],
) -> anyhow::Result<(f64, fenix::Usage)> {
    progress(&format!("{label}: ingesting {events} events × {endpoints} endpoints with fenix --api-only"));
    let api_proc = Fenix::start(&ctx.launch, Role::ApiOnly, url, label).await?;
    let api = Api::new(&api_proc, &ctx.launch)?;
    let app = app_with_endpoints_extra(ctx, &api, label, endpoints, target, extras).await?;
    let setup_ingest_per_s = ingest(ctx, &api, &app, events, label).await?;
    let api_usage = api_proc.stop().await?;
    Ok((setup_ingest_per_s, api_usage))
}

/// `FENIX_BENCH_PERF=<file>` profiles the worker of the 1-endpoint drain and
/// of the routing phase's transformed drain (`perf record --call-graph dwarf`
/// at 499 Hz: the release build has no frame pointers, so `-g` gives broken
/// stacks; the last of them run writes the file), stopped when the drain is
/// complete ([`stop_perf`]).
fn start_perf(label: &str, worker: &Fenix) -> Option<tokio::process::Child> {
    match std::env::var_os("FENIX_BENCH_PERF") {
        Some(out) if label == "delivery-1ep" || label == ROUTING_PERF_LABEL => {
            let pid = worker.pid().to_string();
            progress(&format!("{label}: perf record --call-graph dwarf -p {pid} -o {}", out.to_string_lossy()));
            tokio::process::Command::new("perf")
                .args(["record", "--call-graph", "dwarf,32768", "-F", "499", "-p", &pid, "-o"])
                .arg(&out)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .ok()
        }
        _ => None,
    }
}

/// Stops a profile [`start_perf`] started (SIGINT: perf writes its file).
async fn stop_perf(mut perf: Option<tokio::process::Child>) {
    if let Some(p) = perf.as_mut() {
        if let Some(pid) = p.id() {
            let _ = std::process::Command::new("kill").args(["-INT", &pid.to_string()]).status();
        }
        let _ = tokio::time::timeout(Duration::from_secs(60), p.wait()).await;
    }
}

/// Polls until `expected` requests were received and no delivery is left
/// unfinished (an error after 60 s without progress): the drain's seconds,
/// its end (µs), the worker's CPU seconds and when the first request came.
async fn wait_drained(
    ctx: &Ctx,
    target: Target,
    base: &Counts,
    (worker, log): (&mut Fenix, &mut Log),
    label: &str,
    expected: u64,
    start: Instant,
) -> anyhow::Result<(f64, u64, f64, Option<u64>)> {
    let mut last_count = 0;
    let mut first_seen_us = None;
    let mut last_change = Instant::now();
    let mut last_report = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        worker.check_alive()?;
        let stats = counts(ctx, target, base).await?;
        if stats.received > 0 && first_seen_us.is_none() {
            first_seen_us = Some(stats.first_at_us.unwrap_or_else(now_us));
        }
        if stats.received != last_count {
            last_count = stats.received;
            last_change = Instant::now();
        } else if last_change.elapsed() > Duration::from_secs(60) {
            bail!(
                "{label}: no progress for 60 s ({}/{expected} received); fenix log:\n{}",
                stats.received,
                fenix::tail(&worker.log_path)
            );
        }
        if last_report.elapsed() > Duration::from_secs(5) {
            last_report = Instant::now();
            let t = start.elapsed().as_secs_f64();
            progress(&format!("{label}: {}/{expected} received after {t:.1} s", stats.received));
        }
        if stats.received >= expected && log.unfinished().await? == 0 {
            return Ok((start.elapsed().as_secs_f64(), now_us(), worker.usage().cpu_s, first_seen_us));
        }
    }
}
