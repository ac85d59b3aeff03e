//! Prometheus metrics, kept in-process with atomics and rendered in the text
//! exposition format. Labels never carry payloads or secrets: only endpoint
//! ids, outcomes and error classes.

use std::{
    collections::HashMap,
    fmt::Write,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
};

/// Upper bounds (seconds) of the attempt duration histogram.
const BUCKETS: [f64; 12] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// Every counter Fenix exports.
#[derive(Default)]
pub struct Metrics {
    events_ingested: AtomicU64,
    deliveries_created: AtomicU64,
    /// (endpoint id, outcome "success"/"failure") → attempts.
    endpoint_attempts: Mutex<HashMap<(String, &'static str), u64>>,
    /// error class → attempts.
    attempt_errors: Mutex<HashMap<&'static str, u64>>,
    /// final status ("succeeded", "failed", "skipped") → deliveries.
    deliveries_finished: Mutex<HashMap<&'static str, u64>>,
    duration_buckets: [AtomicU64; BUCKETS.len()],
    duration_count: AtomicU64,
    duration_sum_ms: AtomicU64,
}

impl Metrics {
    /// An event was accepted with `deliveries` deliveries.
    pub fn ingested(&self, deliveries: i64) {
        self.events_ingested.fetch_add(1, Ordering::Relaxed);
        self.deliveries_created.fetch_add(deliveries.max(0) as u64, Ordering::Relaxed);
    }

    /// One attempt finished.
    pub fn attempt(&self, endpoint_id: &str, error: Option<&'static str>, duration_ms: i64) {
        let outcome = if error.is_none() { "success" } else { "failure" };
        *self.endpoint_attempts.lock().expect("metrics lock").entry((endpoint_id.to_string(), outcome)).or_default() +=
            1;
        if let Some(e) = error {
            *self.attempt_errors.lock().expect("metrics lock").entry(e).or_default() += 1;
        }
        let secs = duration_ms.max(0) as f64 / 1000.0;
        for (i, le) in BUCKETS.iter().enumerate() {
            if secs <= *le {
                self.duration_buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.duration_count.fetch_add(1, Ordering::Relaxed);
        self.duration_sum_ms.fetch_add(duration_ms.max(0) as u64, Ordering::Relaxed);
    }

    /// A delivery reached a final status.
    pub fn finished(&self, status: &'static str) {
        *self.deliveries_finished.lock().expect("metrics lock").entry(status).or_default() += 1;
    }

    /// The text exposition, with the queue figures read from the database.
    pub fn render(&self, waiting: i64, dead_letter: i64) -> String {
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
        let _ =
            writeln!(out, "# HELP fenix_endpoint_attempts_total Attempts per endpoint and outcome (2xx = success).");
        let _ = writeln!(out, "# TYPE fenix_endpoint_attempts_total counter");
        let mut rows: Vec<_> =
            self.endpoint_attempts.lock().expect("metrics lock").iter().map(|(k, v)| (k.clone(), *v)).collect();
        rows.sort();
        for ((ep, outcome), v) in rows {
            let _ = writeln!(out, "fenix_endpoint_attempts_total{{endpoint_id=\"{ep}\",outcome=\"{outcome}\"}} {v}");
        }
        let _ = writeln!(out, "# HELP fenix_attempt_errors_total Failed attempts by error class.");
        let _ = writeln!(out, "# TYPE fenix_attempt_errors_total counter");
        let mut rows: Vec<_> =
            self.attempt_errors.lock().expect("metrics lock").iter().map(|(k, v)| (*k, *v)).collect();
        rows.sort();
        for (e, v) in rows {
            let _ = writeln!(out, "fenix_attempt_errors_total{{error=\"{e}\"}} {v}");
        }
        let _ = writeln!(out, "# HELP fenix_deliveries_finished_total Deliveries that reached a final status.");
        let _ = writeln!(out, "# TYPE fenix_deliveries_finished_total counter");
        let mut rows: Vec<_> =
            self.deliveries_finished.lock().expect("metrics lock").iter().map(|(k, v)| (*k, *v)).collect();
        rows.sort();
        for (s, v) in rows {
            let _ = writeln!(out, "fenix_deliveries_finished_total{{status=\"{s}\"}} {v}");
        }
        let _ = writeln!(out, "# HELP fenix_attempt_duration_seconds Duration of delivery attempts.");
        let _ = writeln!(out, "# TYPE fenix_attempt_duration_seconds histogram");
        for (i, le) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "fenix_attempt_duration_seconds_bucket{{le=\"{le}\"}} {}",
                self.duration_buckets[i].load(Ordering::Relaxed)
            );
        }
        let count = self.duration_count.load(Ordering::Relaxed);
        let _ = writeln!(out, "fenix_attempt_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(
            out,
            "fenix_attempt_duration_seconds_sum {}",
            self.duration_sum_ms.load(Ordering::Relaxed) as f64 / 1000.0
        );
        let _ = writeln!(out, "fenix_attempt_duration_seconds_count {count}");
        let _ = writeln!(out, "# HELP fenix_deliveries_waiting Deliveries pending or in flight (whole database).");
        let _ = writeln!(out, "# TYPE fenix_deliveries_waiting gauge\nfenix_deliveries_waiting {waiting}");
        let _ = writeln!(
            out,
            "# HELP fenix_deliveries_dead_letter Deliveries that exhausted their attempts (failed, replayable)."
        );
        let _ = writeln!(out, "# TYPE fenix_deliveries_dead_letter gauge\nfenix_deliveries_dead_letter {dead_letter}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_counted_per_endpoint_and_outcome() {
        let m = Metrics::default();
        m.attempt("ep_1", None, 12);
        m.attempt("ep_1", Some("timeout"), 2000);
        let text = m.render(3, 1);
        assert!(text.contains("fenix_endpoint_attempts_total{endpoint_id=\"ep_1\",outcome=\"success\"} 1"));
        assert!(text.contains("fenix_attempt_errors_total{error=\"timeout\"} 1"));
        assert!(text.contains("fenix_attempt_duration_seconds_count 2"));
        assert!(text.contains("fenix_deliveries_dead_letter 1"));
    }
}
