//! The tasks phase (issue 33, "at scale"): a bulk replay of `--task-deliveries`
//! failed deliveries (1,000,000 by default) as one task, with fresh events
//! sent to another app meanwhile. It reports how long the dry run and the
//! task's creation took, the task's rate (its `done` over its
//! `started_at`..`finished_at`), and the latency of the fresh deliveries
//! (receipt at the verifying receiver − the `202`), which the task's bounded
//! rate (`FENIX_TASK_RATE`, set to `--task-rate`) must leave low.
//!
//! The failed deliveries are written by direct SQL (`log::fill_shaped`) into
//! a database made by `fenix serve`, to 10 endpoints on the sink; the replay
//! then sends every one of them there.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};

use crate::ctx::{app_with_endpoints, Ctx, ProcUsage, Target};
use crate::db::Databases;
use crate::fenix::{Api, Fenix, Role};
use crate::fresh::{match_latencies, offer, percentile, wait_received};
use crate::log;
use crate::progress;

/// What the tasks phase measured.
#[derive(Debug, Clone)]
pub struct TaskReplay {
    /// Failed deliveries written before the task (the selection).
    pub deliveries: u64,
    pub fill_secs: f64,
    /// The dry run's count, and how long it took to answer (ms).
    pub dry_run_count: i64,
    pub dry_run_ms: f64,
    /// How long `POST …/tasks` took to answer `202` (it selects every delivery).
    pub create_ms: f64,
    /// `FENIX_TASK_RATE` of the run.
    pub rate_limit: u64,
    /// The task's `done`, `failed`, and its running time (started to finished).
    pub done: i64,
    pub failed: i64,
    pub task_secs: f64,
    /// Fresh events offered per second while the task ran, and what became of them.
    pub fresh_rate: u64,
    pub fresh_sent: u64,
    pub fresh_received: u64,
    pub fresh_shed: u64,
    /// Fresh requests whose signature did not verify at the receiver.
    pub fresh_failures: u64,
    pub fresh_p50_ms: f64,
    pub fresh_p99_ms: f64,
    pub fresh_max_ms: f64,
    pub procs: Vec<ProcUsage>,
}

impl TaskReplay {
    /// Deliveries the task re-queued per second of its running time.
    pub fn replayed_per_s(&self) -> f64 {
        if self.task_secs > 0.0 {
            self.done as f64 / self.task_secs
        } else {
            0.0
        }
    }
}

/// Every row `failed`, created over the last hour (well inside the payload retention).
const FAILED: log::Shape = log::Shape { status: |_, _| "failed", span_ms: 3_600_000 };

pub async fn tasks(ctx: &mut Ctx, dbs: &mut Databases) -> anyhow::Result<TaskReplay> {
    let label = "tasks";
    let url = dbs.fresh(label).await?;
    let (bulk, fresh, filled) = prepare(ctx, &url, label).await?;
    let rate_limit = ctx.sizes.task_rate;
    let env = [("FENIX_TASK_RATE", rate_limit.to_string())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut proc = Fenix::start_with(&ctx.launch, Role::Both, &url, label, &env).await?;
    let api = Api::new(&proc, &ctx.launch)?;
    ctx.receiver.reset(true).await?;
    let created = create(&api, &bulk, label).await?;

    // Fresh events for as long as the task should run at its rate.
    let n = ctx.sizes.task_deliveries;
    let fresh_rate = ctx.sizes.task_fresh_rate;
    let fresh_secs = n.div_ceil(rate_limit).max(1);
    let fresh_total = fresh_rate * fresh_secs;
    progress(&format!("{label}: {fresh_rate} fresh events/s for {fresh_secs} s while the task runs"));
    let events_url = format!("{}/v1/apps/{fresh}/events", api.base);
    let (offered, ended) = tokio::join!(
        offer(ctx, events_url, fresh_rate, fresh_total),
        until_ended(&api, &created.path, Duration::from_secs(fresh_secs * 3 + 600)),
    );
    let (acks, shed, _, start_us) = offered?;
    let ended = ended?;
    wait_received(ctx, &mut proc, label, fresh_total - shed).await?;
    let records = ctx.receiver.latencies().await?;
    let stats = ctx.receiver.stats().await?;
    let usage = proc.stop().await?;
    let acked: std::collections::HashMap<String, u64> = acks.into_iter().collect();
    let (mut lat, _, _, _) = match_latencies(records, &acked, start_us);
    lat.sort_by(f64::total_cmp);
    let r = TaskReplay {
        deliveries: filled.deliveries,
        fill_secs: filled.secs,
        dry_run_count: created.dry_run_count,
        dry_run_ms: created.dry_run_ms,
        create_ms: created.create_ms,
        rate_limit,
        done: ended["done"].as_i64().unwrap_or(0),
        failed: ended["failed"].as_i64().unwrap_or(0),
        task_secs: running_secs(&ended, label)?,
        fresh_rate,
        fresh_sent: fresh_total,
        fresh_received: stats.received,
        fresh_shed: shed,
        fresh_failures: stats.verified_failures,
        fresh_p50_ms: percentile(&lat, 0.50),
        fresh_p99_ms: percentile(&lat, 0.99),
        fresh_max_ms: lat.last().copied().unwrap_or(0.0),
        procs: vec![ProcUsage { role: "api+worker", usage }],
    };
    progress(&format!(
        "{label}: task {} in {:.1} s ({:.0}/s of {rate_limit}/s), done {} failed {}; fresh p50 {:.2} ms, p99 {:.2} ms",
        ended["state"],
        r.task_secs,
        r.replayed_per_s(),
        r.done,
        r.failed,
        r.fresh_p50_ms,
        r.fresh_p99_ms
    ));
    if ended["state"] != "succeeded" {
        bail!("{label}: the task ended {}", ended["state"]);
    }
    Ok(r)
}

/// The bulk app with its 10 endpoints on the sink and `--task-deliveries`
/// failed deliveries written by direct SQL, and the fresh app (one
/// verifying endpoint): their ids, and what the fill wrote.
async fn prepare(ctx: &mut Ctx, url: &str, label: &str) -> anyhow::Result<(String, String, log::Filled)> {
    let setup = Fenix::start(&ctx.launch, Role::ApiOnly, url, label).await?;
    let api = Api::new(&setup, &ctx.launch)?;
    let bulk = api.create_app("bench tasks bulk").await?;
    let mut endpoints = Vec::new();
    for i in 0..log::ENDPOINTS {
        let target = format!("{}/tasks/{i}", ctx.sink.base());
        endpoints.push(api.create_endpoint_with_id(&bulk, &target, None).await?.0);
    }
    let fresh = app_with_endpoints(ctx, &api, "tasks-fresh", 1, Target::Verifying).await?;
    setup.stop().await?;
    let n = ctx.sizes.task_deliveries;
    progress(&format!("{label}: writing {n} failed deliveries by direct SQL"));
    let filled = log::fill_shaped(url, &bulk, &endpoints, n, FAILED).await?;
    Ok((bulk, fresh, filled))
}

/// What the dry run and the creation of the replay task answered.
struct Created {
    dry_run_count: i64,
    dry_run_ms: f64,
    create_ms: f64,
    /// The task's path under the API.
    path: String,
}

/// Counts the replay of every failed delivery of `bulk` (a dry run), then creates it as a task.
async fn create(api: &Api, bulk: &str, label: &str) -> anyhow::Result<Created> {
    let tasks_path = format!("/v1/apps/{bulk}/tasks");
    let replay = |dry_run: bool| json!({"kind": "replay", "dry_run": dry_run, "filter": {"statuses": ["failed"]}});
    let started = Instant::now();
    let dry: Value = serde_json::from_slice(&api.post(&tasks_path, replay(true)).await?).context("the dry run")?;
    let dry_run_ms = started.elapsed().as_secs_f64() * 1000.0;
    let dry_run_count = dry["count"].as_i64().context("the dry run's count")?;
    let started = Instant::now();
    let task: Value = serde_json::from_slice(&api.post(&tasks_path, replay(false)).await?).context("the task")?;
    let create_ms = started.elapsed().as_secs_f64() * 1000.0;
    let task_id = task["id"].as_str().context("the task's id")?;
    progress(&format!(
        "{label}: dry run counted {dry_run_count} in {dry_run_ms:.0} ms; task {task_id} created in {create_ms:.0} ms"
    ));
    Ok(Created { dry_run_count, dry_run_ms, create_ms, path: format!("{tasks_path}/{task_id}") })
}

/// Seconds from the ended task's `started_at` to its `finished_at`.
fn running_secs(ended: &Value, label: &str) -> anyhow::Result<f64> {
    let at = |field: &str| ended[field].as_str().and_then(::fenix::time::parse_rfc3339);
    match (at("started_at"), at("finished_at")) {
        (Some(a), Some(b)) => Ok((b - a) as f64 / 1000.0),
        _ => bail!("{label}: the task has no start or finish time: {ended}"),
    }
}

/// Polls the task at `path` every second until it has ended; its last answer.
async fn until_ended(api: &Api, path: &str, patience: Duration) -> anyhow::Result<Value> {
    let deadline = Instant::now() + patience;
    loop {
        let task: Value = serde_json::from_slice(&api.get(path).await?).context("the task")?;
        if !matches!(task["state"].as_str(), Some("queued" | "running")) {
            return Ok(task);
        }
        if Instant::now() > deadline {
            bail!("the task had not ended after {} s: {task}", patience.as_secs());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
