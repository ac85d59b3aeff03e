//! What the operator webhook may have to report, accumulated between
//! maintenance passes: each endpoint's attempts over the last hour (for
//! `endpoint.success_rate_low`) and the deliveries that exhausted their
//! attempts (for `delivery.dead_lettered`). The worker counts into it; the
//! maintenance loop takes what is due and `operator.rs` sends it.
//! Kept per instance, in memory.

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
};

use serde_json::json;

use crate::time::{self, Millis};

/// Success-rate alert threshold and minimum sample.
const LOW_RATE: f64 = 0.99;
const MIN_ATTEMPTS: u64 = 20;
const HOUR_MS: Millis = 3_600_000;
/// Deliveries listed by id in one `delivery.dead_lettered` event.
const SAMPLE: usize = 20;

#[derive(Default)]
struct Window {
    app_id: String,
    /// (minute, successes, failures), oldest first, the last hour only.
    minutes: VecDeque<(i64, u64, u64)>,
}

#[derive(Default)]
struct DeadLetters {
    app_id: String,
    count: u64,
    first_at: Millis,
    deliveries: Vec<String>,
}

/// What the operator may have to hear about, accumulated between maintenance passes.
#[derive(Default)]
pub struct OperatorAlerts {
    windows: Mutex<HashMap<String, Window>>,
    dead: Mutex<HashMap<String, DeadLetters>>,
    last_low_alert: Mutex<HashMap<String, Millis>>,
    /// SHA-256 of the client certificates already reported as expiring.
    expiring_reported: Mutex<std::collections::HashSet<String>>,
}

impl OperatorAlerts {
    /// Counts one attempt of an endpoint.
    pub fn attempt(&self, endpoint_id: &str, app_id: &str, ok: bool, now: Millis) {
        let minute = now / 60_000;
        let mut map = self.windows.lock().expect("alerts lock");
        let w = match map.get_mut(endpoint_id) {
            Some(w) => w,
            None => map
                .entry(endpoint_id.to_string())
                .or_insert_with(|| Window { app_id: app_id.to_string(), ..Window::default() }),
        };
        match w.minutes.back_mut() {
            Some(last) if last.0 == minute => {
                if ok {
                    last.1 += 1
                } else {
                    last.2 += 1
                }
            }
            _ => w.minutes.push_back((minute, u64::from(ok), u64::from(!ok))),
        }
        while w.minutes.front().is_some_and(|m| m.0 <= minute - 60) {
            w.minutes.pop_front();
        }
    }

    /// Whether client certificate `sha256` is to be reported as expiring:
    /// true the first time only.
    pub fn certificate_expiring(&self, sha256: &str) -> bool {
        self.expiring_reported.lock().expect("alerts lock").insert(sha256.to_string())
    }

    /// Notes a delivery that exhausted its attempts.
    pub fn dead_lettered(&self, endpoint_id: &str, app_id: &str, delivery_id: &str, now: Millis) {
        let mut map = self.dead.lock().expect("alerts lock");
        let d = map.entry(endpoint_id.to_string()).or_insert_with(|| DeadLetters {
            app_id: app_id.to_string(),
            first_at: now,
            ..Default::default()
        });
        d.count += 1;
        if d.deliveries.len() < SAMPLE {
            d.deliveries.push(delivery_id.to_string());
        }
    }

    /// The events due now: aggregated dead letters, and endpoints whose hourly success rate is low.
    pub fn take_due(&self, now: Millis) -> Vec<(&'static str, String, serde_json::Value)> {
        let mut out = Vec::new();
        for (endpoint_id, d) in self.dead.lock().expect("alerts lock").drain() {
            let data = json!({
                "endpoint_id": endpoint_id, "app_id": d.app_id, "count": d.count,
                "since": time::rfc3339_ms(d.first_at), "delivery_ids": d.deliveries,
            });
            out.push(("delivery.dead_lettered", d.app_id, data));
        }
        let minute = now / 60_000;
        let mut last = self.last_low_alert.lock().expect("alerts lock");
        let mut windows = self.windows.lock().expect("alerts lock");
        windows.retain(|_, w| w.minutes.back().is_some_and(|m| m.0 > minute - 60));
        for (endpoint_id, w) in windows.iter() {
            let (ok, failed) =
                w.minutes.iter().filter(|m| m.0 > minute - 60).fold((0, 0), |a, m| (a.0 + m.1, a.1 + m.2));
            let total = ok + failed;
            if total < MIN_ATTEMPTS || (ok as f64 / total as f64) >= LOW_RATE {
                continue;
            }
            if last.get(endpoint_id).is_some_and(|t| now - t < HOUR_MS) {
                continue;
            }
            last.insert(endpoint_id.clone(), now);
            let data = json!({
                "endpoint_id": endpoint_id, "app_id": w.app_id, "attempts": total, "successes": ok,
                "success_rate": ok as f64 / total as f64, "window_seconds": 3600,
            });
            out.push(("endpoint.success_rate_low", w.app_id.clone(), data));
        }
        out
    }
}
