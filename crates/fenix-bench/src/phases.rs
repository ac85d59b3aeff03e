//! The phases: ceiling, delivery, batch ingestion, latency, backlog scaling, and the
//! delivery log on a large database (`log`, with its fill in `log.rs`); the
//! single-event ingestion phases, driven by `wrk`, are in `wrk_ingest.rs`. Each
//! phase starts its own fenix process(es) on a fresh database, so peak RSS is
//! per phase.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use base64::Engine as _;
use bytes::Bytes;
use rand::RngCore as _;

use crate::ctx::{app_with_endpoints, event_body, Ctx, ProcUsage, Target};
use crate::db::Databases;
use crate::drain::{backlog, Drain};
use crate::fenix::{self, Api, Fenix, Role};
use crate::fresh::{match_latencies, offer, percentile, wait_received};
use crate::sink::WrkCeiling;
use crate::wrk_ingest::Ingestion;
use crate::{now_us, progress, Phase};

#[derive(Debug, Clone)]
pub struct Ceiling {
    pub rps: f64,
    pub requests: u64,
    pub concurrency: usize,
    pub body_bytes: usize,
    pub failures: u64,
    pub connections: u64,
    pub receiver_cpu_s: f64,
    /// CPU time of the bench process (the client) during the phase.
    pub client_cpu_s: f64,
}

#[derive(Debug, Clone)]
pub struct Latency {
    pub rate: u64,
    pub secs: u64,
    pub sent: u64,
    pub achieved_rate: f64,
    pub received: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Requests that reached the receiver before the client had the `202` (counted as 0 ms).
    pub before_ack: u64,
    /// Events slower than 100 ms, and the span of phase time (s) in which they were acknowledged.
    pub slow: u64,
    pub slow_span: Option<(f64, f64)>,
    pub failures: u64,
    /// Events Fenix refused with `503 overloaded` or whose connection it dropped
    /// (not retried; left out of the percentiles).
    pub shed: u64,
    pub procs: Vec<ProcUsage>,
}

/// One query of the log phase, timed.
#[derive(Debug, Clone)]
pub struct LogQuery {
    pub name: &'static str,
    /// The query string after `/v1/apps/{app}/deliveries?` (cursor shortened).
    pub shown: String,
    /// Deliveries on the page.
    pub rows: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Clone)]
pub struct LogPages {
    pub deliveries: u64,
    pub events: u64,
    pub fill_secs: f64,
    pub requests: u64,
    pub queries: Vec<LogQuery>,
    pub procs: Vec<ProcUsage>,
}

#[derive(Debug, Default)]
pub struct Results {
    pub ceiling: Option<Ceiling>,
    /// `wrk` against the sink: the machine's ceiling (`ceiling_wrk_rps`).
    pub wrk: Option<WrkCeiling>,
    pub delivery: Option<Drain>,
    /// One endpoint's backlog drained to the sink (`delivery_1ep_per_s`).
    pub delivery_1ep: Option<Drain>,
    /// The correctness phase: a backlog drained to the verifying receiver.
    pub verify: Option<Drain>,
    pub ingestion: Option<Ingestion>,
    /// Single events with 10 endpoints (`ingest_fanout10_per_s`).
    pub ingestion_fanout: Option<Ingestion>,
    pub batch: Option<Ingestion>,
    pub latency: Option<Latency>,
    pub drain_small: Option<Drain>,
    pub drain_large: Option<Drain>,
    pub log: Option<LogPages>,
    /// The `ordered` phase: one lane, then `--ordered-keys` lanes.
    pub ordered: Option<crate::ordered::OrderedDrain>,
    pub ordered_keys: Option<crate::ordered::OrderedDrain>,
    /// The `routing` phase: channels and a filter at fan-out, a transformation in delivery.
    pub routing: Option<crate::routing::Routing>,
    /// The `tasks` phase: a bulk replay as one task, fresh deliveries meanwhile.
    pub tasks: Option<crate::tasks::TaskReplay>,
    /// The `overload` phase: three times what the receiver takes, then the drain.
    pub overload: Option<crate::overload::Overload>,
}

pub async fn run_all(ctx: &mut Ctx, dbs: &mut Databases, phases: &[Phase]) -> anyhow::Result<Results> {
    let mut r = Results::default();
    let s = ctx.sizes.clone();
    if phases.contains(&Phase::Ceiling) {
        let body = envelope(ctx);
        let conns = u32::try_from(s.concurrency).unwrap_or(256);
        match crate::sink::wrk_ceiling(&ctx.sink, &ctx.dir, &body, conns, s.wrk_secs).await {
            Ok(w) => r.wrk = Some(w),
            Err(e) => progress(&format!("WARNING: no wrk ceiling ({e:#}); ratios to it are not printed")),
        }
        r.ceiling = Some(ceiling(ctx).await.context("ceiling phase")?);
    }
    if phases.contains(&Phase::Verify) {
        let (events, endpoints) = (s.verify_events, s.endpoints);
        r.verify =
            Some(backlog(ctx, dbs, "verify", events, endpoints, Target::Verifying).await.context("correctness phase")?);
    }
    if phases.contains(&Phase::Delivery) {
        r.delivery =
            Some(backlog(ctx, dbs, "delivery", s.events, s.endpoints, Target::Sink).await.context("delivery phase")?);
        r.delivery_1ep = Some(
            backlog(ctx, dbs, "delivery-1ep", s.events_1ep, 1, Target::Sink).await.context("1-endpoint delivery")?,
        );
    }
    if phases.contains(&Phase::Ingestion) {
        r.ingestion = Some(crate::wrk_ingest::ingestion(ctx, dbs, 1).await.context("ingestion phase")?);
        r.ingestion_fanout =
            Some(crate::wrk_ingest::ingestion(ctx, dbs, 10).await.context("ingestion phase, 10 endpoints")?);
    }
    if phases.contains(&Phase::Batch) {
        r.batch = Some(batch_ingestion(ctx, dbs).await.context("batch ingestion phase")?);
    }
    if phases.contains(&Phase::Latency) {
        r.latency = Some(latency(ctx, dbs).await.context("latency phase")?);
    }
    if phases.contains(&Phase::Drain) {
        let e = s.drain_endpoints;
        r.drain_small =
            Some(backlog(ctx, dbs, "drain-small", s.drain_small / e, e, Target::Sink).await.context("small drain")?);
        r.drain_large =
            Some(backlog(ctx, dbs, "drain-large", s.drain_large / e, e, Target::Sink).await.context("large drain")?);
    }
    if phases.contains(&Phase::Log) {
        r.log = Some(log_pages(ctx, dbs).await.context("log phase")?);
    }
    if phases.contains(&Phase::Ordered) {
        let (n, keys) = (s.ordered_events, s.ordered_keys);
        r.ordered = Some(crate::ordered::ordered(ctx, dbs, n, 0).await.context("ordered phase")?);
        r.ordered_keys = Some(crate::ordered::ordered(ctx, dbs, n, keys).await.context("ordered phase, keys")?);
    }
    if phases.contains(&Phase::Routing) {
        r.routing = Some(crate::routing::routing(ctx, dbs).await.context("routing phase")?);
    }
    if phases.contains(&Phase::Tasks) {
        r.tasks = Some(crate::tasks::tasks(ctx, dbs).await.context("tasks phase")?);
    }
    if phases.contains(&Phase::Overload) {
        r.overload = Some(crate::overload::overload(ctx, dbs).await.context("overload phase")?);
    }
    Ok(r)
}

fn new_secret() -> String {
    let mut b = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut b);
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(b))
}

/// An envelope exactly as Fenix builds it (same id length, same fields).
fn envelope(ctx: &Ctx) -> String {
    format!(
        r#"{{"id":"evt_01KBENCH000000000000000000","type":"bench.event","created_at":"2026-01-01T00:00:00Z","data":{}}}"#,
        ctx.data(0)
    )
}

/// The same HTTP stack as Fenix's worker (reqwest + rustls, keep-alive pool,
/// HTTP/1.1, no redirects, no proxy, nodelay), signing every request, to the
/// same receiver, with the same concurrency and body size.
async fn ceiling(ctx: &mut Ctx) -> anyhow::Result<Ceiling> {
    let s = &ctx.sizes;
    let secret = new_secret();
    let path = "/ceiling";
    ctx.receiver.register(path, std::slice::from_ref(&secret)).await?;
    ctx.receiver.reset(false).await?;
    let body = Bytes::from(envelope(ctx));
    let client = worker_client()?;
    let url = format!("{}{path}", ctx.receiver.base);
    let total = s.ceiling_requests;
    progress(&format!("ceiling: {total} signed requests, {} in flight, {} B bodies", s.concurrency, body.len()));
    let cpu0 = ctx.receiver_cpu();
    let own0 = fenix::cpu_seconds(std::process::id()).unwrap_or(0.0);
    let next = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..s.concurrency {
        tasks.spawn(send_signed(client.clone(), url.clone(), body.clone(), secret.clone(), next.clone(), total));
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    let secs = start.elapsed().as_secs_f64();
    let client_cpu_s = fenix::cpu_seconds(std::process::id()).unwrap_or(0.0) - own0;
    let stats = ctx.receiver.stats().await?;
    if stats.received != total {
        bail!("the receiver counted {} requests, {total} were sent", stats.received);
    }
    let rps = total as f64 / secs;
    progress(&format!("ceiling: {rps:.0} requests/s"));
    Ok(Ceiling {
        rps,
        requests: total,
        concurrency: s.concurrency,
        body_bytes: body.len(),
        failures: stats.verified_failures,
        connections: stats.connections,
        receiver_cpu_s: ctx.receiver_cpu() - cpu0,
        client_cpu_s,
    })
}

/// A client built as Fenix's worker builds its own (reqwest + rustls,
/// keep-alive pool, no redirects, no proxy, nodelay).
fn worker_client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .user_agent("Fenix-Webhooks/bench")
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(10))
        .tcp_nodelay(true)
        .build()
}

/// One of the ceiling's clients: signs and posts `body` to `url`, as Fenix
/// does, until `next` reaches `total`; fails on the first answer that is not
/// a success.
async fn send_signed(
    client: reqwest::Client,
    url: String,
    body: Bytes,
    secret: String,
    next: Arc<AtomicU64>,
    total: u64,
) -> anyhow::Result<()> {
    loop {
        let n = next.fetch_add(1, Ordering::Relaxed);
        if n >= total {
            return Ok(());
        }
        let ts = i64::try_from(now_us() / 1_000_000).unwrap_or(0);
        let signature = fenix_signing::fenix_v1_header(&[secret.as_str()], ts, &body);
        let event_id = format!("evt_01KBENCH{n:018}");
        let r = client
            .post(&url)
            .header("content-type", "application/json")
            .header("x-fenix-event-id", &event_id)
            .header("x-fenix-event-type", "bench.event")
            .header("x-fenix-delivery-id", format!("att_01KBENCH{n:018}"))
            .header("idempotency-key", &event_id)
            .header("x-fenix-timestamp", ts.to_string())
            .header("x-fenix-signature", signature)
            .body(body.clone())
            .send()
            .await?;
        let status = r.status();
        let _ = r.bytes().await?;
        if !status.is_success() {
            bail!("the receiver answered {status}");
        }
    }
}

/// Batches of `--batch-size` events from the concurrent clients to
/// `fenix --api-only` with one endpoint: events/s accepted, each batch stored
/// with its deliveries in one transaction.
async fn batch_ingestion(ctx: &mut Ctx, dbs: &mut Databases) -> anyhow::Result<Ingestion> {
    let label = "batch";
    let url = dbs.fresh(label).await?;
    let proc = Fenix::start(&ctx.launch, Role::ApiOnly, &url, label).await?;
    let api = Api::new(&proc, &ctx.launch)?;
    let app = app_with_endpoints(ctx, &api, label, 1, Target::Sink).await?;
    let (n, size) = (ctx.sizes.batch_events, ctx.sizes.batch_size);
    let requests = n.div_ceil(size);
    progress(&format!("{label}: {n} events in batches of {size} from {} clients (keep-alive)", ctx.sizes.clients));
    let url = Arc::new(format!("{}/v1/apps/{app}/events/batch", api.base));
    let token = Arc::new(ctx.launch.admin_token.clone());
    let next = Arc::new(AtomicU64::new(0));
    let pad = Arc::new(ctx.pad.clone());
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..ctx.sizes.clients {
        let (url, token, next, pad) = (url.clone(), token.clone(), next.clone(), pad.clone());
        let client = fenix::event_client()?;
        tasks.spawn(async move {
            loop {
                let r = next.fetch_add(1, Ordering::Relaxed);
                if r >= requests {
                    return anyhow::Ok(());
                }
                let (from, to) = (r * size, ((r + 1) * size).min(n));
                let events: Vec<String> = (from..to).map(|seq| event_body(&pad, seq)).collect();
                let body = format!(r#"{{"events":[{}]}}"#, events.join(","));
                fenix::send_batch(&client, &url, &token, body, to - from).await?;
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        if let Err(e) = r.map_err(anyhow::Error::from).and_then(|r| r) {
            tasks.abort_all();
            return Err(e);
        }
    }
    let per_s = n as f64 / start.elapsed().as_secs_f64();
    let usage = proc.stop().await?;
    progress(&format!("{label}: {per_s:.0} events/s"));
    Ok(Ingestion {
        per_s,
        events: n,
        clients: ctx.sizes.clients,
        endpoints: 1,
        procs: vec![ProcUsage { role: "api", usage }],
        wrk: None,
    })
}

/// `fenix serve` (both roles), one endpoint, events at a fixed rate; latency
/// = receipt at the receiver − the moment the client had the `202`.
async fn latency(ctx: &mut Ctx, dbs: &mut Databases) -> anyhow::Result<Latency> {
    let label = "latency";
    let url = dbs.fresh(label).await?;
    let proc = Fenix::start(&ctx.launch, Role::Both, &url, label).await?;
    let api = Api::new(&proc, &ctx.launch)?;
    let app = app_with_endpoints(ctx, &api, label, 1, Target::Verifying).await?;
    ctx.receiver.reset(true).await?;
    let (rate, secs) = (ctx.sizes.rate, ctx.sizes.latency_secs);
    let total = rate * secs;
    progress(&format!("{label}: {rate} events/s for {secs} s to fenix serve (api + worker)"));
    let events_url = format!("{}/v1/apps/{app}/events", api.base);
    let (acks, shed, offered_secs, start_us) = offer(ctx, events_url, rate, total).await?;
    let achieved_rate = total as f64 / offered_secs;
    if shed > 0 {
        progress(&format!("{label}: fenix refused {shed} of {total} events (503 overloaded or connection dropped)"));
    }
    let accepted = total - shed;
    let mut proc = proc;
    wait_received(ctx, &mut proc, label, accepted).await?;
    let stats = ctx.receiver.stats().await?;
    let records = ctx.receiver.latencies().await?;
    let usage = proc.stop().await?;
    let acked: std::collections::HashMap<String, u64> = acks.into_iter().collect();
    let (mut lat, before_ack, slow, slow_span) = match_latencies(records, &acked, start_us);
    if (lat.len() as u64) < accepted {
        // Under overload an event can be stored while its client saw the
        // connection drop (counted as shed), so the receiver's count can
        // reach `accepted` before every acknowledged event arrived.
        progress(&format!(
            "{label}: {} of {accepted} acknowledged events were matched at the receiver (overload); percentiles over those",
            lat.len()
        ));
        if lat.is_empty() {
            bail!("{label}: no acknowledged event reached the receiver");
        }
    }
    lat.sort_by(f64::total_cmp);
    let l = Latency {
        rate,
        secs,
        sent: total,
        achieved_rate,
        received: stats.received,
        p50_ms: percentile(&lat, 0.50),
        p90_ms: percentile(&lat, 0.90),
        p99_ms: percentile(&lat, 0.99),
        max_ms: lat.last().copied().unwrap_or(0.0),
        before_ack,
        slow,
        slow_span,
        failures: stats.verified_failures,
        shed,
        procs: vec![ProcUsage { role: "api+worker", usage }],
    };
    progress(&format!("{label}: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms", l.p50_ms, l.p90_ms, l.p99_ms));
    Ok(l)
}

/// The delivery log of a large database as the console reads it: a page of
/// 50, first and deep, and each filter, every query timed `--log-requests`
/// times (after two untimed ones) from one keep-alive client, one at a time.
async fn log_pages(ctx: &mut Ctx, dbs: &mut Databases) -> anyhow::Result<LogPages> {
    use crate::log;
    let label = "log";
    let url = dbs.fresh(label).await?;
    let (app, endpoints) = log_app(ctx, &url, label).await?;
    let n = ctx.sizes.log_deliveries;
    progress(&format!("{label}: filling the log with {n} deliveries by direct SQL"));
    let filled = log::fill(&url, &app, &endpoints, n).await?;
    progress(&format!(
        "{label}: {} deliveries of {} events written in {:.1} s; timing the delivery log with fenix serve --api-only",
        filled.deliveries, filled.events, filled.secs
    ));
    let proc = Fenix::start(&ctx.launch, Role::ApiOnly, &url, label).await?;
    let api = Api::new(&proc, &ctx.launch)?;
    let cursor = ::fenix::api::deliveries::unfiltered_cursor_after(&app, &filled.deep_id);
    let mut timed = Vec::new();
    for (name, query) in log_queries(&endpoints, &filled, &cursor) {
        let path = format!("/v1/apps/{app}/deliveries?{query}");
        let Some((rows, ms)) = time_page(&api, &path, ctx.sizes.log_requests).await? else {
            bail!("{label}: {name} answered an empty page ({path})");
        };
        let q = LogQuery {
            name,
            shown: query.replace(&cursor, "…"),
            rows,
            p50_ms: percentile(&ms, 0.50),
            p99_ms: percentile(&ms, 0.99),
            max_ms: ms.last().copied().unwrap_or(0.0),
        };
        progress(&format!("{label}: {name}: {} rows, median {:.2} ms, p99 {:.2} ms", q.rows, q.p50_ms, q.p99_ms));
        timed.push(q);
    }
    let usage = proc.stop().await?;
    Ok(LogPages {
        deliveries: filled.deliveries,
        events: filled.events,
        fill_secs: filled.secs,
        requests: ctx.sizes.log_requests,
        queries: timed,
        procs: vec![ProcUsage { role: "api", usage }],
    })
}

/// Fenix makes the schema (its migrations), the app and the endpoints: the
/// app's id and its endpoints' ids.
async fn log_app(ctx: &Ctx, url: &str, label: &str) -> anyhow::Result<(String, Vec<String>)> {
    let setup = Fenix::start(&ctx.launch, Role::ApiOnly, url, label).await?;
    let api = Api::new(&setup, &ctx.launch)?;
    let app = api.create_app("bench log").await?;
    let mut endpoints = Vec::new();
    for i in 0..crate::log::ENDPOINTS {
        endpoints.push(api.create_endpoint_with_id(&app, &format!("{}/log/{i}", ctx.receiver.base), None).await?.0);
    }
    setup.stop().await?;
    Ok((app, endpoints))
}

/// The log phase's queries: each one's name and query string.
fn log_queries(endpoints: &[String], filled: &crate::log::Filled, cursor: &str) -> Vec<(&'static str, String)> {
    let day = 86_400_000;
    let t = |ms: i64| ::fenix::time::rfc3339_ms(ms);
    let mid = filled.newest_ms - 15 * day;
    vec![
        ("first page", "limit=50".into()),
        ("deep page (cursor 90 % down the log)", format!("limit=50&cursor={cursor}")),
        ("status=failed (4 %)", "limit=50&status=failed".into()),
        ("status=pending (1 %)", "limit=50&status=pending".into()),
        ("endpoint_id (10 %)", format!("limit=50&endpoint_id={}", endpoints[3])),
        ("event_type (1 in 8)", "limit=50&event_type=bench.t3".into()),
        ("event_type (1 in 1,000)", format!("limit=50&event_type={}", crate::log::RARE_TYPE)),
        ("time window (one day, 15 days back)", format!("limit=50&since={}&until={}", t(mid), t(mid + day))),
        (
            "endpoint + status=failed + 7 days",
            format!("limit=50&endpoint_id={}&status=failed&since={}", endpoints[5], t(filled.newest_ms - 7 * day)),
        ),
        ("event_id", format!("limit=50&event_id={}", filled.middle_event)),
    ]
}

/// The deliveries on the page at `path` (`None` when there are none, before
/// any timing), and the milliseconds of `requests` timed requests after a
/// second untimed one, sorted.
async fn time_page(api: &Api, path: &str, requests: u64) -> anyhow::Result<Option<(usize, Vec<f64>)>> {
    let first = api.get(path).await?;
    let page: serde_json::Value = serde_json::from_slice(&first).context("a page of the delivery log")?;
    let rows = page["data"].as_array().map_or(0, Vec::len);
    if rows == 0 {
        return Ok(None);
    }
    api.get(path).await?;
    let mut ms = Vec::with_capacity(requests as usize);
    for _ in 0..requests {
        let start = Instant::now();
        api.get(path).await?;
        ms.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    Ok(Some((rows, ms)))
}
