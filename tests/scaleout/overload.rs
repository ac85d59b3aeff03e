//! Sustained overload: producers send three times what the receiver takes.
//! The receiver answers at a fixed pace (each request waits for its slot in
//! one FIFO of `PACE_PER_S` a second), the producers offer three times that,
//! and the test samples `/metrics` and the process's resident memory the
//! whole time. Fenix must accept or shed each request (`503 overloaded` with
//! `Retry-After`), never lose an accepted event, show the backlog and its
//! age in `/metrics` while it lasts, and drain it once the receiver keeps up.
//! The ten-minute run is `fenix-bench --phases overload` (docs/benchmarks.md).

use std::{
    collections::BTreeSet,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use serde_json::json;

use super::common::{sample, tally, wait_all_delivered, NORMAL_LEASES};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

/// What the receiver takes a second while the overload lasts.
const PACE_PER_S: u64 = 100;

/// How long the producers offer three times that.
const OVERLOAD: Duration = Duration::from_secs(15);

/// Resident memory the process may reach (a debug build; the release
/// figure of the ten-minute run is in docs/benchmarks.md).
const RSS_BOUND_MB: f64 = 512.0;

/// A FIFO that serves `per_s` a second: each call answers how long its
/// request waits for its slot (0 when pacing is off).
#[derive(Default)]
struct Pace {
    per_s: AtomicU64,
    next_us: AtomicU64,
    origin: std::sync::OnceLock<Instant>,
}

impl Pace {
    fn wait(&self) -> Duration {
        let per_s = self.per_s.load(Ordering::Relaxed);
        if per_s == 0 {
            return Duration::ZERO;
        }
        let origin = *self.origin.get_or_init(Instant::now);
        let now = origin.elapsed().as_micros() as u64;
        let step = 1_000_000 / per_s;
        let slot = self
            .next_us
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| Some(next.max(now) + step))
            .expect("always Some");
        Duration::from_micros(slot.max(now) - now)
    }
}

/// The process's resident memory now (MB), from /proc.
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb =
        status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().split(' ').next()?.parse().ok());
    kb.unwrap_or(0.0) / 1024.0
}

/// What the producers saw.
#[derive(Default)]
struct Offered {
    accepted: BTreeSet<String>,
    shed: u64,
    shed_without_retry_after: u64,
    slowest: Duration,
}

/// Offers `3 × PACE_PER_S` events a second for [`OVERLOAD`], each its own request.
async fn offer(fenix: &Fenix, app: &str) -> Offered {
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / (3 * PACE_PER_S)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut requests = tokio::task::JoinSet::new();
    let until = Instant::now() + OVERLOAD;
    let mut n = 0u64;
    while Instant::now() < until {
        tick.tick().await;
        n += 1;
        let request = fenix.request("POST", &format!("/v1/apps/{app}/events"));
        let body = json!({"type": "load.tick", "data": {"n": n}});
        requests.spawn(async move {
            let sent = Instant::now();
            let resp = request.json(&body).timeout(Duration::from_secs(30)).send().await.expect("ingestion answered");
            let took = sent.elapsed();
            let status = resp.status().as_u16();
            let retry_after = resp.headers().contains_key("retry-after");
            let body: serde_json::Value = resp.json().await.unwrap_or_default();
            (status, retry_after, body, took)
        });
    }
    let mut offered = Offered::default();
    while let Some(done) = requests.join_next().await {
        let (status, retry_after, body, took) = done.expect("a producer task");
        offered.slowest = offered.slowest.max(took);
        match status {
            202 => {
                offered.accepted.insert(body["id"].as_str().expect("id").to_string());
            }
            503 => {
                assert_eq!(body["error"]["code"], "overloaded", "a shed request says why: {body}");
                offered.shed += 1;
                offered.shed_without_retry_after += u64::from(!retry_after);
            }
            _ => panic!("ingestion under overload answered {status}: {body}"),
        }
    }
    offered
}

/// What `/metrics` and /proc showed while the producers sent.
#[derive(Default)]
struct Watched {
    samples: u64,
    /// Samples that showed both the app's backlog and its age.
    with_backlog_series: u64,
    last_due: f64,
    last_age_s: f64,
    max_rss_mb: f64,
    /// Each sample: seconds into the run, the app's backlog and how long its oldest has been due.
    timeline: Vec<(f64, Option<f64>, Option<f64>)>,
}

async fn watch(fenix: &Fenix, app: &str, stop: &tokio_util::sync::CancellationToken) -> Watched {
    let pid = fenix.child.id();
    let backlog_series = format!("fenix_app_backlog{{app_id=\"{app}\"}}");
    let age_series = format!("fenix_app_backlog_oldest_seconds{{app_id=\"{app}\"}}");
    let mut w = Watched::default();
    let started = Instant::now();
    // The backlog has formed after the first seconds.
    tokio::time::sleep(Duration::from_secs(3)).await;
    while !stop.is_cancelled() {
        let resp = fenix.request("GET", "/metrics").send().await.expect("metrics answered under overload");
        assert_eq!(resp.status(), 200, "GET /metrics under overload");
        let text = resp.text().await.expect("metrics body");
        w.samples += 1;
        let (due, age) = (sample(&text, &backlog_series), sample(&text, &age_series));
        w.timeline.push((started.elapsed().as_secs_f64(), due, age));
        if let (Some(due), Some(age)) = (due, age) {
            w.with_backlog_series += 1;
            (w.last_due, w.last_age_s) = (due, age);
        }
        w.max_rss_mb = w.max_rss_mb.max(rss_mb(pid));
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            _ = stop.cancelled() => {}
        }
    }
    w
}

async fn three_times_what_the_receiver_takes_is_accepted_or_shed_and_drains_with_nothing_lost(backend: Backend) {
    let db = TestDb::new(backend).await;
    let pace = Arc::new(Pace::default());
    pace.per_s.store(PACE_PER_S, Ordering::Relaxed);
    let paced = pace.clone();
    let receiver = Receiver::http(move |_| Plan::ok().after(paced.wait())).await;
    // At most 16 requests wait in the receiver's FIFO (160 ms at its pace).
    let mut env = NORMAL_LEASES.to_vec();
    env.push(("FENIX_ENDPOINT_CONCURRENCY", "16"));
    let fenix = Fenix::start(&db, &env).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    let stop = tokio_util::sync::CancellationToken::new();
    let (offered, watched) = tokio::join!(
        async {
            let offered = offer(&fenix, &app).await;
            stop.cancel();
            offered
        },
        watch(&fenix, &app, &stop),
    );
    let received_during = receiver.count();
    assert!(offered.accepted.len() as u64 > 2 * PACE_PER_S * OVERLOAD.as_secs() / 2, "most of the offer was accepted");
    assert_eq!(offered.shed_without_retry_after, 0, "every 503 overloaded carries Retry-After");
    assert_eq!(
        watched.with_backlog_series, watched.samples,
        "every sample showed the backlog and its age: {:?}",
        watched.timeline
    );
    assert!(
        watched.last_due >= (PACE_PER_S * OVERLOAD.as_secs()) as f64 / 2.0 && watched.last_age_s >= 1.0,
        "the backlog grew and aged: {:?}",
        watched.timeline
    );
    assert!(watched.max_rss_mb < RSS_BOUND_MB, "resident memory {:.0} MB", watched.max_rss_mb);

    // The receiver keeps up again: the backlog drains, nothing lost.
    pace.per_s.store(0, Ordering::Relaxed);
    let drain = Instant::now();
    wait_all_delivered(&receiver, &offered.accepted, &["/hook".to_string()], Duration::from_secs(180)).await;
    let drained_in = drain.elapsed();
    let t = tally(&receiver);
    println!(
        "{backend:?} overload: {} events/s offered for {} s to a receiver taking {PACE_PER_S}/s: {} accepted, {} shed \
         (503 overloaded, all with Retry-After), slowest answer {:.0} ms; {received_during} received meanwhile; \
         /metrics showed the backlog in {}/{} samples (last: {} deliveries, the oldest due {:.1} s ago); peak RSS {:.0} MB; drained in \
         {:.1} s once the receiver kept up: {} delivered, {} duplicated",
        3 * PACE_PER_S,
        OVERLOAD.as_secs(),
        offered.accepted.len(),
        offered.shed,
        offered.slowest.as_secs_f64() * 1000.0,
        watched.with_backlog_series,
        watched.samples,
        watched.last_due,
        watched.last_age_s,
        watched.max_rss_mb,
        drained_in.as_secs_f64(),
        t.delivered,
        t.duplicated
    );
    assert_eq!(t.delivered, offered.accepted.len(), "every accepted event delivered, and no other");
}

crate::on_both_backends!(three_times_what_the_receiver_takes_is_accepted_or_shed_and_drains_with_nothing_lost);
