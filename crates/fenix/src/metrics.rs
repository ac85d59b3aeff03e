//! Prometheus metrics, kept in-process with atomics and rendered in the text
//! exposition format. Label cardinality is bounded: outcome and error class,
//! final status, and the app id — never an endpoint id, a payload or a secret.

use std::{
    collections::HashMap,
    fmt::Write,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
};

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
}

const FINAL: [&str; 3] = ["succeeded", "failed", "skipped"];

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

    /// A delivery's first success, `latency_ms` after its event was created.
    pub fn first_success(&self, latency_ms: i64) {
        self.delivery_latency.observe_ms(latency_ms);
    }

    /// A delivery of `app_id` reached a final status.
    pub fn finished(&self, app_id: &str, status: &str) {
        let Some(i) = FINAL.iter().position(|s| *s == status) else { return };
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
        let _ = writeln!(out, "# HELP fenix_app_deliveries_total Deliveries that reached a final status, per app.");
        let _ = writeln!(out, "# TYPE fenix_app_deliveries_total counter");
        let mut rows: Vec<_> =
            self.app_deliveries.lock().expect("metrics lock").iter().map(|(k, v)| (k.clone(), *v)).collect();
        rows.sort();
        for (app, counts) in rows {
            for (i, status) in FINAL.iter().enumerate() {
                let _ =
                    writeln!(out, "fenix_app_deliveries_total{{app_id=\"{app}\",status=\"{status}\"}} {}", counts[i]);
            }
        }
        self.attempt_duration.render(&mut out, "fenix_attempt_duration_seconds", "Duration of delivery attempts.");
        self.delivery_latency.render(
            &mut out,
            "fenix_delivery_latency_seconds",
            "Time from an event's creation to its delivery's first success.",
        );
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
        out
    }
}

/// Queue figures read from the database at scrape time (whole database, every instance).
#[derive(Debug, Default, Clone, Copy)]
pub struct QueueFigures {
    pub due: i64,
    pub waiting: i64,
    pub dead_letter: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_counted_by_outcome_and_error_without_endpoint_labels() {
        let m = Metrics::default();
        m.attempt(None, 12);
        m.attempt(Some("timeout"), 2000);
        m.finished("app_1", "succeeded");
        m.first_success(40);
        let text = m.render(&QueueFigures { due: 2, waiting: 3, dead_letter: 1 });
        assert!(text.contains("fenix_attempts_total{outcome=\"success\",error=\"none\"} 1"));
        assert!(text.contains("fenix_attempts_total{outcome=\"failure\",error=\"timeout\"} 1"));
        assert!(text.contains("fenix_app_deliveries_total{app_id=\"app_1\",status=\"succeeded\"} 1"));
        assert!(text.contains("fenix_delivery_latency_seconds_count 1"));
        assert!(text.contains("fenix_deliveries_due 2"));
        assert!(text.contains("fenix_deliveries_dead_letter 1"));
        assert!(!text.contains("endpoint_id"));
    }
}
