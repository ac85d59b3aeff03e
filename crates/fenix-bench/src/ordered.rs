//! The `ordered` phase: what ordered delivery costs. One ordered endpoint, a
//! backlog ingested in batches (request order is lane order) by
//! `fenix --api-only`, then drained by `fenix --worker-only`: once with no
//! `ordering_key` (one lane: strictly one delivery at a time, so the figure is
//! bounded by one round trip of claim, request and record per delivery) and
//! once spread over `--ordered-keys` keys (that many lanes side by side).
//! Compare with the `delivery` phase, which drains unordered endpoints.

use std::time::{Duration, Instant};

use anyhow::bail;

use crate::ctx::{Ctx, ProcUsage};
use crate::db::{Databases, Log};
use crate::fenix::{self, Api, Fenix, Role};
use crate::progress;

/// One drain of an ordered endpoint's backlog.
#[derive(Debug, Clone)]
pub struct OrderedDrain {
    pub events: u64,
    /// Lanes (distinct ordering keys); 1 without keys.
    pub lanes: u64,
    pub secs: f64,
    pub per_s: f64,
    pub received: u64,
    pub failures: u64,
    pub procs: Vec<ProcUsage>,
}

/// Ingests `events` for one ordered endpoint (keys `k0`…, round-robin, when
/// `keys` > 0), then times the worker from its start until every delivery is
/// `succeeded`.
pub async fn ordered(ctx: &mut Ctx, dbs: &mut Databases, events: u64, keys: u64) -> anyhow::Result<OrderedDrain> {
    let label = if keys == 0 { "ordered".to_string() } else { format!("ordered-{keys}-keys") };
    let url = dbs.fresh(&label).await?;
    let api_usage = ingest(ctx, &url, &label, events, keys).await?;

    let mut log = Log::open(&url).await?;
    if u64::try_from(log.unfinished().await?).unwrap_or(0) != events {
        bail!("{label}: not every event has its pending delivery");
    }
    ctx.receiver.reset(false).await?;
    let start = Instant::now();
    let mut worker = Fenix::start(&ctx.launch, Role::WorkerOnly, &url, &label).await?;
    let secs = until_delivered(ctx, &mut log, &mut worker, &label, events, start).await?;
    let (succeeded, all) = log.succeeded_of_all().await?;
    log.close().await;
    let worker_usage = worker.stop().await?;
    let stats = ctx.receiver.stats().await?;
    if u64::try_from(succeeded).unwrap_or(0) != events || u64::try_from(all).unwrap_or(0) != events {
        bail!("{label}: {succeeded} of {all} deliveries succeeded, {events} expected");
    }
    let per_s = events as f64 / secs;
    progress(&format!("{label}: {events} deliveries in {secs:.2} s = {per_s:.0}/s"));
    Ok(OrderedDrain {
        events,
        lanes: keys.max(1),
        secs,
        per_s,
        received: stats.received,
        failures: stats.verified_failures,
        procs: vec![
            ProcUsage { role: "api (ingest)", usage: api_usage },
            ProcUsage { role: "worker", usage: worker_usage },
        ],
    })
}

/// Makes the app and its ordered endpoint on `url` with `fenix --api-only`
/// and ingests the backlog in batches of 1,000; the API process's usage.
async fn ingest(ctx: &Ctx, url: &str, label: &str, events: u64, keys: u64) -> anyhow::Result<fenix::Usage> {
    progress(&format!("{label}: ingesting {events} events for one ordered endpoint with fenix --api-only"));
    let api_proc = Fenix::start(&ctx.launch, Role::ApiOnly, url, label).await?;
    let api = Api::new(&api_proc, &ctx.launch)?;
    let app = api.create_app(&format!("bench {label}")).await?;
    let path = format!("/{label}/0");
    let secret = api.create_ordered_endpoint(&app, &format!("{}{path}", ctx.receiver.base)).await?;
    ctx.receiver.register(&path, &[secret]).await?;
    let client = fenix::event_client()?;
    let batch_url = format!("{}/v1/apps/{app}/events/batch", api.base);
    let mut seq = 0;
    while seq < events {
        let n = (events - seq).min(1000);
        let items: Vec<String> = (seq..seq + n)
            .map(|i| {
                let key = if keys == 0 { String::new() } else { format!(r#","ordering_key":"k{}""#, i % keys) };
                format!(r#"{{"type":"bench.event","data":{}{key}}}"#, ctx.data(i))
            })
            .collect();
        let body = format!(r#"{{"events":[{}]}}"#, items.join(","));
        fenix::send_batch(&client, &batch_url, &ctx.launch.admin_token, body, n).await?;
        seq += n;
    }
    api_proc.stop().await
}

/// Waits until the receiver has all `events` and no delivery is left
/// unfinished, reporting every 5 s; the seconds since `start`. Fails after
/// 60 s without a new request.
async fn until_delivered(
    ctx: &Ctx,
    log: &mut Log,
    worker: &mut Fenix,
    label: &str,
    events: u64,
    start: Instant,
) -> anyhow::Result<f64> {
    let (mut last_count, mut last_change, mut last_report) = (0, Instant::now(), Instant::now());
    loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        worker.check_alive()?;
        let stats = ctx.receiver.stats().await?;
        if stats.received != last_count {
            (last_count, last_change) = (stats.received, Instant::now());
        } else if last_change.elapsed() > Duration::from_secs(60) {
            bail!(
                "{label}: no progress for 60 s ({}/{events}); fenix log:\n{}",
                stats.received,
                fenix::tail(&worker.log_path)
            );
        }
        if last_report.elapsed() > Duration::from_secs(5) {
            last_report = Instant::now();
            progress(&format!(
                "{label}: {}/{events} received after {:.1} s",
                stats.received,
                start.elapsed().as_secs_f64()
            ));
        }
        if stats.received >= events && log.unfinished().await? == 0 {
            return Ok(start.elapsed().as_secs_f64());
        }
    }
}
