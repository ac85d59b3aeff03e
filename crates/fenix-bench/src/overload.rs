//! The overload phase (issue 34, "sustained overload"): producers offer
//! three times what the receiver takes, for `--overload-secs` (ten minutes by
//! default). The verifying receiver is paced at `--overload-receiver-rate`
//! requests a second (each waits for its slot in one FIFO), one app's one
//! endpoint points at it, and single events are offered at three times that
//! rate, each its own request. Every five seconds the phase reads Fenix's
//! `/metrics` (the app's backlog and its age) and its resident memory. Then
//! the receiver keeps up again (pacing off) and the backlog drains; every
//! event answered `202` must reach the receiver.
//!
//! It reports the ingestion answers (202 and shed, their times), the largest
//! backlog and age `/metrics` showed, the peak resident memory sampled, the
//! slowest scrape, the drain's time and rate, and what was lost (must be 0).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::ctx::{app_with_endpoints, event_body, Ctx, ProcUsage, Target};
use crate::db::Databases;
use crate::fenix::{self, Api, Fenix, Role};
use crate::fresh::percentile;
use crate::progress;

/// How often `/metrics` and the resident memory are read.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);

/// What the overload phase measured.
#[derive(Debug, Clone, Default)]
pub struct Overload {
    pub secs: u64,
    pub receiver_rate: u64,
    pub offered_rate: u64,
    pub offered: u64,
    pub accepted: u64,
    /// Answered `503` (shed), and of those without `Retry-After`.
    pub shed: u64,
    pub shed_without_retry_after: u64,
    /// The shed answers' `error.code`s, each with how many.
    pub shed_codes: String,
    /// Requests that got no answer (a refused or dropped connection, a timeout).
    pub unanswered: u64,
    /// Times to the answer of accepted events, ms.
    pub ingest_p50_ms: f64,
    pub ingest_p99_ms: f64,
    pub ingest_max_ms: f64,
    /// Samples of `/metrics` taken, and of those showing the app's backlog and its age.
    pub samples: u64,
    pub samples_with_backlog: u64,
    pub max_backlog: f64,
    pub max_backlog_age_s: f64,
    /// The slowest `/metrics` answer (its gauges are read from the database).
    pub slowest_scrape_ms: f64,
    /// The largest resident memory sampled during the overload (MB).
    pub max_rss_mb: f64,
    /// One line a minute: seconds in, accepted so far, backlog, its age, RSS.
    pub timeline: Vec<(u64, u64, f64, f64, f64)>,
    /// After the overload: how long the backlog took to reach the receiver.
    pub drain_secs: f64,
    pub delivered: u64,
    pub lost: u64,
    pub duplicates: u64,
    /// The database afterwards: its size and its deliveries (each with one attempt).
    pub db_bytes: i64,
    pub db_deliveries: i64,
    pub procs: Vec<ProcUsage>,
}

pub async fn overload(ctx: &mut Ctx, dbs: &mut Databases) -> anyhow::Result<Overload> {
    let label = "overload";
    let url = dbs.fresh(label).await?;
    let (secs, receiver_rate) = (ctx.sizes.overload_secs, ctx.sizes.overload_receiver_rate);
    let offered_rate = 3 * receiver_rate;
    let mut proc = Fenix::start(&ctx.launch, Role::Both, &url, label).await?;
    let api = Api::new(&proc, &ctx.launch)?;
    let app = app_with_endpoints(ctx, &api, label, 1, Target::Verifying).await?;
    ctx.receiver.reset(true).await?;
    ctx.receiver.pace(receiver_rate).await?;
    progress(&format!(
        "{label}: {offered_rate} events/s for {secs} s to one endpoint whose receiver takes {receiver_rate}/s"
    ));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let events_url = format!("{}/v1/apps/{app}/events", api.base);
    let (offered, watched) = tokio::join!(
        async {
            let r = offer(ctx, &events_url, offered_rate, secs).await;
            let _ = stop.send(true);
            r
        },
        watch(&api, &app, proc.pid(), stopped),
    );
    let (offered, mut r) = (offered?, watched?);
    ctx.receiver.pace(0).await?;
    let drain_started = Instant::now();
    progress(&format!(
        "{label}: {} accepted, {} shed, {} unanswered; the receiver keeps up again, draining",
        offered.acked.len(),
        offered.shed,
        offered.unanswered
    ));
    wait_all(ctx, &mut proc, offered.acked.len() as u64, label).await?;
    r.drain_secs = drain_started.elapsed().as_secs_f64();
    let records = ctx.receiver.latencies().await?;
    let usage = proc.stop().await?;
    let mut db = crate::db::Log::open(&url).await?;
    if let Err(e) = db.wait_until_alone(Duration::from_secs(10)).await {
        progress(&format!("{label}: {e:#} (the size is read anyway)"));
    }
    r.db_bytes = db.size_bytes().await?;
    r.db_deliveries = db.succeeded_of_all().await?.1;
    db.close().await;
    let got: HashSet<&str> = records.iter().map(|(id, _)| id.as_str()).collect();
    r.delivered = offered.acked.iter().filter(|id| got.contains(id.as_str())).count() as u64;
    r.lost = offered.acked.len() as u64 - r.delivered;
    r.duplicates = records.len() as u64 - got.len() as u64;
    let mut lat = offered.latencies_ms;
    lat.sort_by(f64::total_cmp);
    r.secs = secs;
    r.receiver_rate = receiver_rate;
    r.offered_rate = offered_rate;
    r.offered = offered.offered;
    r.accepted = offered.acked.len() as u64;
    r.shed = offered.shed;
    r.shed_without_retry_after = offered.shed_without_retry_after;
    r.shed_codes = offered.shed_codes.iter().map(|(c, n)| format!("{c} {n}")).collect::<Vec<_>>().join(", ");
    r.unanswered = offered.unanswered;
    r.ingest_p50_ms = percentile(&lat, 0.50);
    r.ingest_p99_ms = percentile(&lat, 0.99);
    r.ingest_max_ms = lat.last().copied().unwrap_or(0.0);
    r.procs = vec![ProcUsage { role: "api+worker", usage }];
    progress(&format!(
        "{label}: drained in {:.1} s; delivered {} of {} accepted, lost {}, duplicates {}; peak RSS sampled {:.0} MB",
        r.drain_secs, r.delivered, r.accepted, r.lost, r.duplicates, r.max_rss_mb
    ));
    if r.lost > 0 {
        bail!("{label}: {} accepted events never reached the receiver", r.lost);
    }
    Ok(r)
}

/// What the producers saw.
#[derive(Default)]
struct Offered {
    offered: u64,
    acked: Vec<String>,
    latencies_ms: Vec<f64>,
    shed: u64,
    shed_without_retry_after: u64,
    shed_codes: std::collections::BTreeMap<String, u64>,
    unanswered: u64,
}

/// Offers `rate` events a second for `secs`, each its own request and task.
async fn offer(ctx: &Ctx, url: &str, rate: u64, secs: u64) -> anyhow::Result<Offered> {
    let client = fenix::event_client()?;
    let (url, token) = (Arc::new(url.to_string()), Arc::new(ctx.launch.admin_token.clone()));
    let seen = Arc::new(Mutex::new(Offered::default()));
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = tokio::task::JoinSet::new();
    let total = rate * secs;
    for n in 0..total {
        ticker.tick().await;
        let (client, url, token, seen) = (client.clone(), url.clone(), token.clone(), seen.clone());
        let body = event_body(&ctx.pad, n);
        tasks.spawn(async move {
            let sent = Instant::now();
            let answer = client
                .post(url.as_str())
                .bearer_auth(token.as_str())
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await;
            let Ok(resp) = answer else {
                seen.lock().unwrap_or_else(|e| e.into_inner()).unanswered += 1;
                return anyhow::Ok(());
            };
            let (status, retry_after) = (resp.status().as_u16(), resp.headers().contains_key("retry-after"));
            let bytes = resp.bytes().await.unwrap_or_default();
            let took_ms = sent.elapsed().as_secs_f64() * 1000.0;
            let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            match status {
                202 => {
                    let id: serde_json::Value = serde_json::from_slice(&bytes).context("ingestion answer")?;
                    seen.acked.push(id["id"].as_str().context("an event id")?.to_string());
                    seen.latencies_ms.push(took_ms);
                }
                503 => {
                    let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
                    let code = body["error"]["code"].as_str().unwrap_or("(no code)").to_string();
                    *seen.shed_codes.entry(code).or_default() += 1;
                    seen.shed += 1;
                    seen.shed_without_retry_after += u64::from(!retry_after);
                }
                _ => bail!("ingestion under overload answered {status}: {}", String::from_utf8_lossy(&bytes)),
            }
            anyhow::Ok(())
        });
        while let Some(done) = tasks.try_join_next() {
            done??;
        }
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    let mut out = std::mem::take(&mut *seen.lock().unwrap_or_else(|e| e.into_inner()));
    out.offered = total;
    Ok(out)
}

/// Waits until the receiver got `accepted` requests (a delivery sent twice
/// counts twice: the phase then checks ids), or fails after 30 minutes.
async fn wait_all(ctx: &Ctx, proc: &mut Fenix, accepted: u64, label: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(1800);
    loop {
        proc.check_alive()?;
        let stats = ctx.receiver.stats().await?;
        if stats.received >= accepted {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("{label}: only {}/{accepted} events reached the receiver within 30 minutes", stats.received);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Samples `/metrics` (the app's backlog and its age) and the resident
/// memory every [`SAMPLE_EVERY`] until `stop`.
async fn watch(
    api: &Api,
    app: &str,
    pid: u32,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<Overload> {
    let backlog_series = format!("fenix_app_backlog{{app_id=\"{app}\"}}");
    let age_series = format!("fenix_app_backlog_oldest_seconds{{app_id=\"{app}\"}}");
    let started = Instant::now();
    let mut r = Overload::default();
    let mut next_line = 60;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(SAMPLE_EVERY) => {}
            _ = stop.changed() => return Ok(r),
        }
        let asked = Instant::now();
        let text = api.get("/metrics").await.context("GET /metrics under overload")?;
        r.slowest_scrape_ms = r.slowest_scrape_ms.max(asked.elapsed().as_secs_f64() * 1000.0);
        let text = String::from_utf8_lossy(&text);
        r.samples += 1;
        let rss = rss_mb(pid);
        r.max_rss_mb = r.max_rss_mb.max(rss);
        let (backlog, age) = (sample(&text, &backlog_series), sample(&text, &age_series));
        if let (Some(backlog), Some(age)) = (backlog, age) {
            r.samples_with_backlog += 1;
            r.max_backlog = r.max_backlog.max(backlog);
            r.max_backlog_age_s = r.max_backlog_age_s.max(age);
        }
        let at = started.elapsed().as_secs();
        if at >= next_line {
            next_line += 60;
            let ingested = sample(&text, "fenix_events_ingested_total").unwrap_or(0.0) as u64;
            let (backlog, age) = (backlog.unwrap_or(0.0), age.unwrap_or(0.0));
            r.timeline.push((at, ingested, backlog, age, rss));
            progress(&format!(
                "overload: {at} s: {ingested} accepted, backlog {backlog:.0} deliveries, oldest {age:.0} s, RSS {rss:.0} MB"
            ));
        }
    }
}

/// One sample's value in Prometheus text (`name` or `name{labels}` as written).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find(|l| l.split(' ').next() == Some(series)).and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// The resident memory of a process now (MB).
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb =
        status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.split_whitespace().next()?.parse().ok());
    kb.unwrap_or(0.0) / 1024.0
}
