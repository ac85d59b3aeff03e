//! Prometheus metrics, kept in-process with atomics and rendered in the text
//! exposition format. Label cardinality is bounded: outcome and error class,
//! final status, and the app id — never an endpoint id, a payload or a secret.

use std::{
    collections::HashMap,
    fmt::Write,
    sync::{
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
        Mutex,
    },
};

use crate::lifecycle::DeliveryStatus;

/// Upper bounds (seconds) shared by the histograms.
const BUCKETS: [f64; 14] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 600.0, 3600.0];

/// A fixed-bucket histogram.
#[derive(Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_ms: AtomicU64,
}

impl Histogram {
    fn observe_ms(&self, ms: i64) {
        let ms = ms.max(0) as u64;
        let secs = ms as f64 / 1000.0;
        for (i, le) in BUCKETS.iter().enumerate() {
            if secs <= *le {
                self.buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_ms.fetch_add(ms, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {}", self.buckets[i].load(Ordering::Relaxed));
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {}", self.sum_ms.load(Ordering::Relaxed) as f64 / 1000.0);
        let _ = writeln!(out, "{name}_count {count}");
    }
}

/// Every figure Fenix exports.
#[derive(Default)]
pub struct Metrics {
    events_ingested: AtomicU64,
    deliveries_created: AtomicU64,
    /// error class ("none" on success) → attempts.
    attempts: Mutex<HashMap<&'static str, u64>>,
    /// (app id, final status) → deliveries.
    app_deliveries: Mutex<HashMap<String, [u64; 3]>>,
    attempt_duration: Histogram,
    delivery_latency: Histogram,
    /// form (`without_response`, …) → outcomes the database refused as they were.
    degraded: Mutex<HashMap<&'static str, u64>>,
    /// Whether this instance's worker moves; behind `/readyz` and `fenix_worker_stalled`.
    pub worker: WorkerProgress,
    /// Each app's share of this instance's worker, read at scrape time.
    pub shares: WorkerShares,
    /// Endpoints whose client certificate expires within 14 days, as the
    /// last maintenance pass counted them (`tls_expiry`).
    pub client_certificates_expiring: AtomicI64,
}

/// One app's share of this instance's worker (`worker::fair`, `worker::hands`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppShareFigure {
    pub app_id: String,
    /// Attempts of the app in flight here (worker slots it holds).
    pub in_flight: usize,
    /// Its claimed deliveries in this worker's hands not sending yet.
    pub waiting: usize,
}

type ShareSource = Box<dyn Fn() -> Vec<AppShareFigure> + Send + Sync>;

/// Where the per-app share figures come from: the worker registers itself
/// (an instance without a worker shows none).
#[derive(Default)]
pub struct WorkerShares(Mutex<Option<ShareSource>>);

impl WorkerShares {
    pub fn register(&self, source: ShareSource) {
        *self.0.lock().expect("shares lock") = Some(source);
    }

    fn read(&self) -> Vec<AppShareFigure> {
        self.0.lock().expect("shares lock").as_ref().map(|f| f()).unwrap_or_default()
    }
}

/// When this instance's worker last moved, for readiness: an idle worker
/// looks at the queue at least every second, a busy one claims or records
/// often, so a long silence while deliveries are due means it is stuck.
#[derive(Default)]
pub struct WorkerProgress {
    running: AtomicBool,
    stall_after_ms: AtomicI64,
    /// Last claim (with or without work found) or outcome batch written.
    last_progress_ms: AtomicI64,
    /// When the recorder started failing to write; 0 while it writes.
    blocked_since_ms: AtomicI64,
}

/// Why a worker is not ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    /// The recorder has not been able to write outcomes for this long (ms).
    RecorderBlocked(i64),
    /// Deliveries are due and nothing was claimed or recorded for this long (ms).
    NoProgress(i64),
}

impl WorkerProgress {
    /// The worker starts now; a stall is reported after `stall_after`.
    pub fn start(&self, now_ms: i64, stall_after: std::time::Duration) {
        self.stall_after_ms.store(i64::try_from(stall_after.as_millis()).unwrap_or(i64::MAX), Ordering::Relaxed);
        self.last_progress_ms.store(now_ms, Ordering::Relaxed);
        self.running.store(true, Ordering::Relaxed);
    }

    /// True when this instance runs a worker.
    pub fn running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }

    /// The worker claimed (or found nothing due) or wrote a batch of outcomes.
    pub fn progressed(&self, now_ms: i64) {
        self.last_progress_ms.fetch_max(now_ms, Ordering::Relaxed);
    }

    /// The recorder failed to write (`true`) or wrote (`false`).
    pub fn recorder_blocked(&self, blocked: bool, now_ms: i64) {
        if blocked {
            let _ = self.blocked_since_ms.compare_exchange(0, now_ms, Ordering::Relaxed, Ordering::Relaxed);
        } else {
            self.blocked_since_ms.store(0, Ordering::Relaxed);
        }
    }

    /// Milliseconds since the worker last moved (0 when it runs no worker).
    pub fn since_progress_ms(&self, now_ms: i64) -> i64 {
        if !self.running() {
            return 0;
        }
        now_ms.saturating_sub(self.last_progress_ms.load(Ordering::Relaxed)).max(0)
    }

    /// The stall to report, if any; `work_due` says whether deliveries are due now.
    pub fn stall(&self, now_ms: i64, work_due: bool) -> Option<Stall> {
        if !self.running() {
            return None;
        }
        let limit = self.stall_after_ms.load(Ordering::Relaxed);
        let blocked_since = self.blocked_since_ms.load(Ordering::Relaxed);
        if blocked_since > 0 && now_ms.saturating_sub(blocked_since) > limit {
            return Some(Stall::RecorderBlocked(now_ms - blocked_since));
        }
        let quiet = self.since_progress_ms(now_ms);
        (work_due && quiet > limit).then_some(Stall::NoProgress(quiet))
    }
}

impl Metrics {
    /// An event was accepted with `deliveries` deliveries.
    pub fn ingested(&self, deliveries: i64) {
        self.events_ingested.fetch_add(1, Ordering::Relaxed);
        self.deliveries_created.fetch_add(deliveries.max(0) as u64, Ordering::Relaxed);
    }

    /// One attempt finished (`error` None = 2xx).
    pub fn attempt(&self, error: Option<&'static str>, duration_ms: i64) {
        *self.attempts.lock().expect("metrics lock").entry(error.unwrap_or("none")).or_default() += 1;
        self.attempt_duration.observe_ms(duration_ms);
    }

    /// The database refused an outcome as it was; it was written as `form`.
    pub fn outcome_degraded(&self, form: &'static str) {
        *self.degraded.lock().expect("metrics lock").entry(form).or_default() += 1;
    }

    /// A delivery's first success, `latency_ms` after its event was created.
    pub fn first_success(&self, latency_ms: i64) {
        self.delivery_latency.observe_ms(latency_ms);
    }

    /// A delivery of `app_id` reached a final status.
    pub fn finished(&self, app_id: &str, status: DeliveryStatus) {
        let Some(i) = DeliveryStatus::FINAL.iter().position(|s| *s == status) else { return };
        let mut map = self.app_deliveries.lock().expect("metrics lock");
        match map.get_mut(app_id) {
            Some(c) => c[i] += 1,
            None => {
                let mut c = [0; 3];
                c[i] = 1;
                map.insert(app_id.to_string(), c);
            }
        }
    }

    /// The text exposition, with the queue figures read from the database.
    pub fn render(&self, queue: &QueueFigures) -> String {
        let mut out = String::with_capacity(4096);
        let now = crate::time::now_ms();
        self.render_event_counters(&mut out);
        self.render_attempts(&mut out);
        self.render_app_deliveries(&mut out);
        self.render_degraded(&mut out);
        self.attempt_duration.render(&mut out, "fenix_attempt_duration_seconds", "Duration of delivery attempts.");
        self.delivery_latency.render(
            &mut out,
            "fenix_delivery_latency_seconds",
            "Time from an event's creation to its delivery's first success.",
        );
        self.render_queue_gauges(&mut out, queue, now);
        self.render_shares(&mut out);
        render_oldest_due(&mut out, queue, now);
        self.render_client_certificates(&mut out);
        render_storage_full(&mut out);
        crate::filter::render_errors(&mut out);
        out
    }

    fn render_client_certificates(&self, out: &mut String) {
        let name = "fenix_client_certificates_expiring";
        let _ = writeln!(
            out,
            "# HELP {name} Endpoints whose client certificate (mTLS) expires within 14 days.\n# TYPE {name} gauge\n{name} {}",
            self.client_certificates_expiring.load(Ordering::Relaxed)
        );
    }

    fn render_event_counters(&self, out: &mut String) {
        let mut counter = |name: &str, help: &str, v: u64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
        };
        counter(
            "fenix_events_ingested_total",
            "Events accepted by the API.",
            self.events_ingested.load(Ordering::Relaxed),
        );
        counter(
            "fenix_deliveries_created_total",
            "Deliveries created by fan-out.",
            self.deliveries_created.load(Ordering::Relaxed),
        );
    }

    fn render_attempts(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP fenix_attempts_total Attempts by outcome and error class (2xx = success, error=\"none\")."
        );
        let _ = writeln!(out, "# TYPE fenix_attempts_total counter");
        let mut rows: Vec<_> = self.attempts.lock().expect("metrics lock").iter().map(|(k, v)| (*k, *v)).collect();
        rows.sort();
        for (error, v) in rows {
            let outcome = if error == "none" { "success" } else { "failure" };
            let _ = writeln!(out, "fenix_attempts_total{{outcome=\"{outcome}\",error=\"{error}\"}} {v}");
        }
    }

    fn render_app_deliveries(&self, out: &mut String) {
        let _ = writeln!(out, "# HELP fenix_app_deliveries_total Deliveries that reached a final status, per app.");
        let _ = writeln!(out, "# TYPE fenix_app_deliveries_total counter");
        let mut rows: Vec<_> =
            self.app_deliveries.lock().expect("metrics lock").iter().map(|(k, v)| (k.clone(), *v)).collect();
        rows.sort();
        for (app, counts) in rows {
            for (i, status) in DeliveryStatus::FINAL.iter().enumerate() {
                let _ =
                    writeln!(out, "fenix_app_deliveries_total{{app_id=\"{app}\",status=\"{status}\"}} {}", counts[i]);
            }
        }
    }

    fn render_degraded(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP fenix_outcomes_degraded_total Outcomes the database refused as they were, by the form written instead."
        );
        let _ = writeln!(out, "# TYPE fenix_outcomes_degraded_total counter");
        let mut rows: Vec<_> = self.degraded.lock().expect("metrics lock").iter().map(|(k, v)| (*k, *v)).collect();
        rows.sort();
        for (form, v) in rows {
            let _ = writeln!(out, "fenix_outcomes_degraded_total{{form=\"{form}\"}} {v}");
        }
    }

    /// The queue's gauges and this instance's worker's progress.
    fn render_queue_gauges(&self, out: &mut String, queue: &QueueFigures, now: crate::time::Millis) {
        let mut gauge = |name: &str, help: &str, v: i64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        };
        gauge("fenix_deliveries_due", "Deliveries due now and not yet claimed (queue depth).", queue.due);
        gauge("fenix_deliveries_waiting", "Deliveries pending (due or scheduled) or in flight.", queue.waiting);
        gauge(
            "fenix_deliveries_dead_letter",
            "Deliveries that exhausted their attempts (failed, replayable).",
            queue.dead_letter,
        );
        gauge(
            "fenix_worker_stalled",
            "1 when this instance's worker is stuck (recorder blocked, or deliveries due and no progress) past FENIX_WORKER_STALL_AFTER.",
            i64::from(self.worker.stall(now, queue.due > 0).is_some()),
        );
        let _ = writeln!(
            out,
            "# HELP fenix_worker_seconds_since_progress Seconds since this instance's worker last claimed or recorded (0 without a worker).\n\
             # TYPE fenix_worker_seconds_since_progress gauge\nfenix_worker_seconds_since_progress {}",
            self.worker.since_progress_ms(now) as f64 / 1000.0
        );
    }

    /// Each app's share of this instance's worker.
    fn render_shares(&self, out: &mut String) {
        let mut shares = self.shares.read();
        shares.sort_by(|a, b| a.app_id.cmp(&b.app_id));
        let _ = writeln!(
            out,
            "# HELP fenix_app_attempts_in_flight Attempts in flight in this instance, per app (its share of FENIX_WORKER_CONCURRENCY).\n\
             # TYPE fenix_app_attempts_in_flight gauge"
        );
        for s in &shares {
            let _ = writeln!(out, "fenix_app_attempts_in_flight{{app_id=\"{}\"}} {}", s.app_id, s.in_flight);
        }
        let _ = writeln!(
            out,
            "# HELP fenix_app_deliveries_in_hand_waiting Deliveries this instance's worker claimed per app that wait for a slot.\n\
             # TYPE fenix_app_deliveries_in_hand_waiting gauge"
        );
        for s in &shares {
            let _ = writeln!(out, "fenix_app_deliveries_in_hand_waiting{{app_id=\"{}\"}} {}", s.app_id, s.waiting);
        }
    }
}

/// Whether the database refuses writes for a full disk (`store::disk_full`).
fn render_storage_full(out: &mut String) {
    let full = i64::from(crate::store::disk_full::since().is_some());
    let _ = writeln!(
        out,
        "# HELP fenix_storage_full 1 while the database refuses writes for a full disk (until a probe write succeeds).\n\
         # TYPE fenix_storage_full gauge\nfenix_storage_full {full}\n\
         # HELP fenix_storage_full_refusals_total Writes the database refused for a full disk (probe writes included).\n\
         # TYPE fenix_storage_full_refusals_total counter\nfenix_storage_full_refusals_total {}",
        crate::store::disk_full::refusals()
    );
}

/// How long the oldest due, unclaimed delivery of each app has waited, and
/// each app's backlog (due and not finished, claimed or not) and its age.
fn render_oldest_due(out: &mut String, queue: &QueueFigures, now: crate::time::Millis) {
    let _ = writeln!(
        out,
        "# HELP fenix_app_oldest_due_seconds How long the oldest due, unclaimed delivery of each app has waited (whole database).\n\
         # TYPE fenix_app_oldest_due_seconds gauge"
    );
    let mut oldest = queue.oldest_due.clone();
    oldest.sort();
    for (app, at) in oldest {
        let _ = writeln!(out, "fenix_app_oldest_due_seconds{{app_id=\"{app}\"}} {}", (now - at).max(0) as f64 / 1000.0);
    }
    let mut backlog = queue.backlog.clone();
    backlog.sort();
    let _ = writeln!(
        out,
        "# HELP fenix_app_backlog Deliveries of each app due and not finished, claimed by a worker or not (whole database).\n\
         # TYPE fenix_app_backlog gauge"
    );
    for (app, count, _) in &backlog {
        let _ = writeln!(out, "fenix_app_backlog{{app_id=\"{app}\"}} {count}");
    }
    let _ = writeln!(
        out,
        "# HELP fenix_app_backlog_oldest_seconds How long the oldest delivery of each app's backlog has been due (whole database).\n\
         # TYPE fenix_app_backlog_oldest_seconds gauge"
    );
    for (app, _, at) in backlog {
        let _ =
            writeln!(out, "fenix_app_backlog_oldest_seconds{{app_id=\"{app}\"}} {}", (now - at).max(0) as f64 / 1000.0);
    }
}

/// Queue figures read from the database at scrape time (whole database, every instance).
#[derive(Debug, Default, Clone)]
pub struct QueueFigures {
    pub due: i64,
    pub waiting: i64,
    pub dead_letter: i64,
    /// Per app with deliveries due and unclaimed: the oldest one's due time.
    pub oldest_due: Vec<(String, crate::time::Millis)>,
    /// Per app with deliveries due and not finished, claimed or not: how
    /// many, and the oldest one's due time.
    pub backlog: Vec<(String, i64, crate::time::Millis)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_counted_by_outcome_and_error_without_endpoint_labels() {
        let m = Metrics::default();
        m.attempt(None, 12);
        m.attempt(Some("timeout"), 2000);
        m.finished("app_1", DeliveryStatus::Succeeded);
        m.first_success(40);
        m.shares.register(Box::new(|| vec![AppShareFigure { app_id: "app_1".into(), in_flight: 3, waiting: 7 }]));
        let now = crate::time::now_ms();
        let text = m.render(&QueueFigures {
            due: 2,
            waiting: 3,
            dead_letter: 1,
            oldest_due: vec![("app_1".into(), now - 1500)],
            backlog: vec![("app_1".into(), 40, now - 90_000)],
        });
        assert!(text.contains("fenix_app_attempts_in_flight{app_id=\"app_1\"} 3"));
        assert!(text.contains("fenix_app_deliveries_in_hand_waiting{app_id=\"app_1\"} 7"));
        assert!(text.contains("fenix_app_oldest_due_seconds{app_id=\"app_1\"} 1.5"), "{text}");
        assert!(text.contains("fenix_app_backlog{app_id=\"app_1\"} 40"), "{text}");
        assert!(text.contains("fenix_app_backlog_oldest_seconds{app_id=\"app_1\"} 90"), "{text}");
        assert!(text.contains("fenix_attempts_total{outcome=\"success\",error=\"none\"} 1"));
        assert!(text.contains("fenix_attempts_total{outcome=\"failure\",error=\"timeout\"} 1"));
        assert!(text.contains("fenix_app_deliveries_total{app_id=\"app_1\",status=\"succeeded\"} 1"));
        assert!(text.contains("fenix_delivery_latency_seconds_count 1"));
        assert!(text.contains("fenix_deliveries_due 2"));
        assert!(text.contains("fenix_deliveries_dead_letter 1"));
        assert!(!text.contains("endpoint_id"));
    }

    #[test]
    fn a_worker_is_stalled_only_when_quiet_with_work_due_or_its_recorder_blocked_past_the_threshold() {
        let w = WorkerProgress::default();
        assert_eq!(w.stall(1_000_000, true), None, "no worker: never stalled");
        w.start(1_000, std::time::Duration::from_secs(60));
        assert_eq!(w.stall(61_000, true), None, "at the threshold");
        assert_eq!(w.stall(61_001, false), None, "quiet, but nothing is due");
        assert_eq!(w.stall(61_001, true), Some(Stall::NoProgress(60_001)));
        w.progressed(61_000);
        assert_eq!(w.stall(61_001, true), None);
        w.recorder_blocked(true, 62_000);
        w.recorder_blocked(true, 70_000);
        assert_eq!(w.stall(122_001, false), Some(Stall::RecorderBlocked(60_001)), "blocked since the first failure");
        w.recorder_blocked(false, 122_002);
        w.progressed(122_002);
        assert_eq!(w.stall(122_003, true), None);
    }
}
