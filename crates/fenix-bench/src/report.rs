//! The table (Markdown, so it can be pasted into docs/benchmarks.md) and, last,
//! the one-line JSON summary.

use std::path::Path;

use crate::phases::{Ctx, Drain, Ingestion, ProcUsage, Results};

fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

/// `12345.6` → `12,346`.
fn thousands(x: f64) -> String {
    let n = x.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn size(n: u64) -> String {
    if n >= 1_000_000 && n % 1_000_000 == 0 {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n % 1_000 == 0 {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

fn rss(procs: &[ProcUsage]) -> String {
    procs.iter().map(|p| format!("{} {:.0} MB", p.role, p.usage.peak_rss_mb)).collect::<Vec<_>>().join(", ")
}

fn cpu(procs: &[ProcUsage]) -> String {
    procs.iter().map(|p| format!("{} {:.1} s", p.role, p.usage.cpu_s)).collect::<Vec<_>>().join(", ")
}

fn total_cpu(procs: &[ProcUsage]) -> f64 {
    procs.iter().map(|p| p.usage.cpu_s).sum()
}

fn worker_cpu_us_per_delivery(d: &Drain) -> f64 {
    let cpu = d.procs.iter().find(|p| p.role == "worker").map(|p| p.usage.cpu_s).unwrap_or(0.0);
    cpu * 1e6 / d.deliveries as f64
}

fn drain_row(name: &str, d: &Drain, extra: &str) -> String {
    format!(
        "| {name} | deliveries/s draining {} events × {} endpoints = {} (worker start → all `succeeded`) | {} | {} | {} | \
         {:.2} s; {}/s counted from the first request ({:.0} ms after start); worker {:.0} µs CPU per delivery; \
         {} connections; receiver CPU {:.1} s; ingested at {}/s{extra} |",
        thousands(d.events as f64),
        d.endpoints,
        thousands(d.deliveries as f64),
        thousands(d.per_s),
        rss(&d.procs),
        cpu(&d.procs),
        d.secs,
        thousands(d.per_s_after_first),
        d.first_request_ms,
        worker_cpu_us_per_delivery(d),
        thousands(d.connections as f64),
        d.receiver_cpu_s,
        thousands(d.setup_ingest_per_s),
    )
}

pub fn print(r: &Results, ctx: &Ctx, backend: &str, bin: &Path) {
    let s = &ctx.sizes;
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let ratio = match (&r.ceiling, &r.delivery) {
        (Some(c), Some(d)) if c.rps > 0.0 => Some(d.per_s / c.rps),
        _ => None,
    };
    let mut out = Vec::new();
    out.push(String::new());
    out.push(format!(
        "fenix-bench: backend {backend}, {} sizes, {cores} CPUs, fenix {}",
        if s.quick { "quick" } else { "full" },
        bin.display()
    ));
    out.push(String::new());
    out.push("| phase | measures | figure | fenix peak RSS | fenix CPU | notes |".into());
    out.push("|---|---|---:|---|---|---|".into());
    if let Some(c) = &r.ceiling {
        out.push(format!(
            "| ceiling | requests/s, reqwest client → receiver, {} in flight, {} B bodies, each signed | {} | – | – | \
             {} requests, {} connections; client {:.0} µs CPU per request; receiver CPU {:.1} s |",
            c.concurrency,
            c.body_bytes,
            thousands(c.rps),
            thousands(c.requests as f64),
            thousands(c.connections as f64),
            c.client_cpu_s * 1e6 / c.requests as f64,
            c.receiver_cpu_s
        ));
    }
    if let Some(d) = &r.delivery {
        let extra = match ratio {
            Some(x) => format!("; **ratio to the ceiling {x:.3}**"),
            None => String::new(),
        };
        out.push(drain_row("delivery", d, &extra));
    }
    if let Some(i) = &r.ingestion {
        out.push(ingestion_row("ingestion", "single events", i));
    }
    if let Some(i) = &r.batch {
        out.push(ingestion_row("batch ingestion", "`POST …/events/batch`", i));
    }
    if let Some(l) = &r.latency {
        let slow = match l.slow_span {
            Some((a, b)) => format!("{} over 100 ms (sent {a:.1}–{b:.1} s into the phase)", l.slow),
            None => "none over 100 ms".into(),
        };
        out.push(format!(
            "| latency | p50 / p90 / p99 ms, `202` at the client → receipt, {} events/s for {} s | {:.2} / {:.2} / {:.2} | {} | {} | \
             max {:.1} ms, {slow}; offered {:.0}/s; {} events, {} received; {} arrived before the client had the 202; \
             fenix {:.0} µs CPU per event |",
            l.rate,
            l.secs,
            l.p50_ms,
            l.p90_ms,
            l.p99_ms,
            rss(&l.procs),
            cpu(&l.procs),
            l.max_ms,
            l.achieved_rate,
            l.sent,
            l.received,
            l.before_ack,
            total_cpu(&l.procs) * 1e6 / l.sent as f64,
        ));
    }
    if let Some(d) = &r.drain_small {
        out.push(drain_row(&format!("drain {}", size(d.deliveries)), d, ""));
    }
    if let Some(d) = &r.drain_large {
        let extra = match &r.drain_small {
            Some(small) if small.per_s > 0.0 => {
                format!("; **{:.2} × the rate at {}**", d.per_s / small.per_s, size(small.deliveries))
            }
            _ => String::new(),
        };
        out.push(drain_row(&format!("drain {}", size(d.deliveries)), d, &extra));
    }
    if let Some(l) = &r.log {
        let worst = l.queries.iter().max_by(|a, b| a.p99_ms.total_cmp(&b.p99_ms));
        let first = l.queries.first();
        out.push(format!(
            "| log {} | ms for a page of 50 deliveries, first page median / worst p99 of {} queries | {:.2} / {:.2} | {} | {} | \
             {} deliveries of {} events written by direct SQL in {:.1} s; {} timed requests per query, one at a time; \
             worst: {}; per query below |",
            size(l.deliveries),
            l.queries.len(),
            first.map_or(0.0, |q| q.p50_ms),
            worst.map_or(0.0, |q| q.p99_ms),
            rss(&l.procs),
            cpu(&l.procs),
            thousands(l.deliveries as f64),
            thousands(l.events as f64),
            l.fill_secs,
            l.requests,
            worst.map_or("", |q| q.name),
        ));
    }
    for d in [&r.ordered, &r.ordered_keys].into_iter().flatten() {
        out.push(format!(
            "| ordered, {} | deliveries/s draining {} events of one ordered endpoint in {} (worker start → all `succeeded`) | {} | {} | {} | \
             {:.2} s; {} requests received; compare with `delivery` (unordered) |",
            if d.lanes == 1 { "no key".to_string() } else { format!("{} keys", d.lanes) },
            thousands(d.events as f64),
            if d.lanes == 1 { "one lane".to_string() } else { format!("{} lanes", d.lanes) },
            thousands(d.per_s),
            rss(&d.procs),
            cpu(&d.procs),
            d.secs,
            thousands(d.received as f64),
        ));
    }
    let failures: u64 = r.ceiling.iter().map(|c| c.failures).sum::<u64>()
        + [&r.ordered, &r.ordered_keys].iter().filter_map(|d| d.as_ref()).map(|d| d.failures).sum::<u64>()
        + [&r.delivery, &r.drain_small, &r.drain_large]
            .iter()
            .filter_map(|d| d.as_ref())
            .map(|d| d.failures)
            .sum::<u64>()
        + r.latency.iter().map(|l| l.failures).sum::<u64>();
    let duplicates: u64 = [&r.delivery, &r.drain_small, &r.drain_large]
        .iter()
        .filter_map(|d| d.as_ref())
        .map(|d| d.received.saturating_sub(d.deliveries))
        .sum();
    out.push(format!(
        "| receiver | requests whose signature did not verify; duplicate requests in the drains | {failures} / {duplicates} | – | – | \
         every request is verified with fenix-signing |"
    ));

    let mut all_procs: Vec<&ProcUsage> = Vec::new();
    for d in [&r.delivery, &r.drain_small, &r.drain_large].into_iter().flatten() {
        all_procs.extend(&d.procs);
    }
    for i in [&r.ingestion, &r.batch].into_iter().flatten() {
        all_procs.extend(&i.procs);
    }
    if let Some(l) = &r.latency {
        all_procs.extend(&l.procs);
    }
    if let Some(l) = &r.log {
        all_procs.extend(&l.procs);
    }
    for d in [&r.ordered, &r.ordered_keys].into_iter().flatten() {
        all_procs.extend(&d.procs);
    }
    let peak_rss =
        all_procs.iter().map(|p| p.usage.peak_rss_mb).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    out.push(String::new());
    if let Some(l) = &r.log {
        out.push(format!(
            "Delivery log, {} deliveries: `GET /v1/apps/{{app}}/deliveries?…`, {} requests each",
            thousands(l.deliveries as f64),
            l.requests
        ));
        out.push(String::new());
        out.push("| query | parameters | rows | median ms | p99 ms | max ms |".into());
        out.push("|---|---|---:|---:|---:|---:|".into());
        for q in &l.queries {
            out.push(format!(
                "| {} | `{}` | {} | {:.2} | {:.2} | {:.2} |",
                q.name, q.shown, q.rows, q.p50_ms, q.p99_ms, q.max_ms
            ));
        }
        out.push(String::new());
    }
    for line in out {
        println!("{line}");
    }

    // Written by hand to keep the keys in the documented order.
    let int = |v: Option<f64>| v.map_or(serde_json::Value::Null, |x| serde_json::Value::from(x.round() as u64));
    let float =
        |v: Option<f64>, places: i32| v.map_or(serde_json::Value::Null, |x| serde_json::Value::from(round(x, places)));
    let log_first = r.log.as_ref().and_then(|l| l.queries.first()).map(|q| q.p50_ms);
    let log_worst = r.log.as_ref().and_then(|l| l.queries.iter().map(|q| q.p99_ms).max_by(f64::total_cmp));
    let fields: [(&str, serde_json::Value); 16] = [
        ("backend", serde_json::Value::from(backend)),
        ("ceiling_rps", int(r.ceiling.as_ref().map(|c| c.rps))),
        ("delivery_per_s", int(r.delivery.as_ref().map(|d| d.per_s))),
        ("ratio", float(ratio, 3)),
        ("ingest_per_s", int(r.ingestion.as_ref().map(|i| i.per_s))),
        ("p50_ms", float(r.latency.as_ref().map(|l| l.p50_ms), 2)),
        ("p90_ms", float(r.latency.as_ref().map(|l| l.p90_ms), 2)),
        ("p99_ms", float(r.latency.as_ref().map(|l| l.p99_ms), 2)),
        ("drain_10k_per_s", int(r.drain_small.as_ref().map(|d| d.per_s))),
        ("drain_1m_per_s", int(r.drain_large.as_ref().map(|d| d.per_s))),
        ("peak_rss_mb", float(peak_rss, 1)),
        ("ingest_batch_per_s", int(r.batch.as_ref().map(|i| i.per_s))),
        ("log_page_p50_ms", float(log_first, 2)),
        ("log_page_worst_p99_ms", float(log_worst, 2)),
        ("ordered_per_s", int(r.ordered.as_ref().map(|d| d.per_s))),
        ("ordered_keys_per_s", int(r.ordered_keys.as_ref().map(|d| d.per_s))),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{}:{v}", serde_json::Value::from(*k))).collect();
    println!("{{{}}}", body.join(","));
}

/// A table row of an ingestion phase: events/s accepted, and the API's CPU per event.
fn ingestion_row(phase: &str, how: &str, i: &Ingestion) -> String {
    format!(
        "| {phase} | events/s accepted ({how}, {} keep-alive clients, 1 endpoint) | {} | {} | {} | {} events; api {:.0} µs CPU per event |",
        i.clients,
        thousands(i.per_s),
        rss(&i.procs),
        cpu(&i.procs),
        thousands(i.events as f64),
        total_cpu(&i.procs) * 1e6 / i.events as f64
    )
}
