//! The table (Markdown, so it can be pasted into docs/benchmarks.md) and, last,
//! the one-line JSON summary.

use std::path::Path;

use crate::ctx::{Ctx, ProcUsage, Target};
use crate::phases::{Drain, Results};
use crate::wrk_ingest::Ingestion;

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

fn drain_row(name: &str, d: &Drain, wrk: Option<f64>, extra: &str) -> String {
    let (to, target_cpu) = match d.target {
        Target::Sink => ("sink", "sink CPU"),
        Target::Verifying => ("verifying receiver", "receiver CPU"),
    };
    let ratio = match wrk {
        Some(c) if c > 0.0 && d.target == Target::Sink => format!("; **{:.3} of the wrk ceiling**", d.per_s / c),
        _ => String::new(),
    };
    format!(
        "| {name} | deliveries/s draining {} events × {} endpoints = {} to the {to} (worker start → all `succeeded`) | {} | {} | {} | \
         {:.2} s; {}/s counted from the first request ({:.0} ms after start); worker {:.1} µs CPU per delivery; \
         {} connections ({:.1} per 10k deliveries); {target_cpu} {:.1} s; ingested at {}/s{ratio}{extra} |",
        thousands(d.events as f64),
        d.endpoints,
        thousands(d.deliveries as f64),
        thousands(d.per_s),
        rss(&d.procs),
        cpu(&d.procs),
        d.secs,
        thousands(d.per_s_after_first),
        d.first_request_ms,
        d.cpu_us_per_delivery(),
        thousands(d.connections as f64),
        d.connections_per_10k(),
        d.receiver_cpu_s,
        thousands(d.setup_ingest_per_s),
    )
}

/// One issue-18 target: `value` against `goal` (at least, unless `at_most`).
fn target_row(what: &str, value: Option<f64>, goal: f64, at_most: bool, unit: &str, note: &str) -> String {
    let shown = |x: f64| if x >= 100.0 { thousands(x) } else { format!("{x:.2}") };
    let Some(v) = value else {
        return format!(
            "| {what} | {} {} {unit} | not measured in this run{note} | – |",
            if at_most { "≤" } else { "≥" },
            shown(goal)
        );
    };
    let verdict = if (at_most && v <= goal) || (!at_most && v >= goal) {
        "met".to_string()
    } else if at_most {
        format!("**missed**: {:.0} % over", (v / goal - 1.0) * 100.0)
    } else {
        format!("**missed** by {:.0} % (×{:.2} needed)", (1.0 - v / goal) * 100.0, goal / v)
    };
    format!(
        "| {what} | {} {} {unit} | {} {unit}{note} | {verdict} |",
        if at_most { "≤" } else { "≥" },
        shown(goal),
        shown(v)
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
    let wrk = r.wrk.as_ref().map(|w| w.rps);
    if let Some(w) = &r.wrk {
        out.push(format!(
            "| ceiling (wrk) | requests/s, `wrk -t{} -c{} -d{}s` POSTing {} B → {} on loopback: **the machine's ceiling** | {} | – | – | \
             every sink-phase throughput below is printed with its ratio to this |",
            w.threads,
            w.connections,
            w.secs,
            w.body_bytes,
            w.target,
            thousands(w.rps)
        ));
    } else {
        out.push("| ceiling (wrk) | not measured (wrk missing and not installable, or the phase was not run) | – | – | – | |".into());
    }
    if let Some(c) = &r.ceiling {
        out.push(format!(
            "| ceiling (verifying) | requests/s, reqwest client → verifying receiver, {} in flight, {} B bodies, each signed | {} | – | – | \
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
            Some(x) => format!("; ratio to the verifying ceiling {x:.3}"),
            None => String::new(),
        };
        out.push(drain_row("delivery", d, wrk, &extra));
    }
    if let Some(d) = &r.delivery_1ep {
        out.push(drain_row("delivery, 1 endpoint", d, wrk, ""));
    }
    if let Some(d) = &r.verify {
        out.push(drain_row(
            "correctness",
            d,
            None,
            &format!(
                "; **{} requests failed verification, {} duplicates** (not a throughput figure)",
                d.failures,
                d.received.saturating_sub(d.deliveries)
            ),
        ));
    }
    if let Some(i) = &r.ingestion {
        out.push(ingestion_row("ingestion", "single events", i));
    }
    if let Some(i) = &r.ingestion_fanout {
        out.push(ingestion_row("ingestion, fan-out", "single events", i));
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
             max {:.1} ms, {slow}; offered {:.0}/s; {} events, **{} refused (`503 overloaded` or connection dropped)**, {} received; {} arrived before the client had the 202; \
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
            l.shed,
            l.received,
            l.before_ack,
            total_cpu(&l.procs) * 1e6 / l.sent as f64,
        ));
    }
    if let Some(d) = &r.drain_small {
        out.push(drain_row(&format!("drain {}", size(d.deliveries)), d, wrk, ""));
    }
    if let Some(d) = &r.drain_large {
        let extra = match &r.drain_small {
            Some(small) if small.per_s > 0.0 => {
                format!("; **{:.2} × the rate at {}**", d.per_s / small.per_s, size(small.deliveries))
            }
            _ => String::new(),
        };
        out.push(drain_row(&format!("drain {}", size(d.deliveries)), d, wrk, &extra));
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
        + r.verify.iter().map(|d| d.failures).sum::<u64>()
        + r.latency.iter().map(|l| l.failures).sum::<u64>();
    let duplicates: u64 = [&r.delivery, &r.delivery_1ep, &r.verify, &r.drain_small, &r.drain_large]
        .iter()
        .filter_map(|d| d.as_ref())
        .map(|d| d.received.saturating_sub(d.deliveries))
        .sum();
    out.push(format!(
        "| receiver | requests whose signature did not verify; duplicate requests in the drains | {failures} / {duplicates} | – | – | \
         signatures are verified in the verifying phases (ceiling (verifying), correctness, latency, ordered); the sink phases only count |"
    ));

    let mut all_procs: Vec<&ProcUsage> = Vec::new();
    for d in [&r.delivery, &r.delivery_1ep, &r.verify, &r.drain_small, &r.drain_large].into_iter().flatten() {
        all_procs.extend(&d.procs);
    }
    for i in [&r.ingestion, &r.ingestion_fanout, &r.batch].into_iter().flatten() {
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
    out.extend(targets(r, backend, peak_rss, s.rate));
    for line in out {
        println!("{line}");
    }

    // Written by hand to keep the keys in the documented order.
    let int = |v: Option<f64>| v.map_or(serde_json::Value::Null, |x| serde_json::Value::from(x.round() as u64));
    let float =
        |v: Option<f64>, places: i32| v.map_or(serde_json::Value::Null, |x| serde_json::Value::from(round(x, places)));
    let log_first = r.log.as_ref().and_then(|l| l.queries.first()).map(|q| q.p50_ms);
    let log_worst = r.log.as_ref().and_then(|l| l.queries.iter().map(|q| q.p99_ms).max_by(f64::total_cmp));
    let refused = |i: &Option<Ingestion>| {
        i.as_ref().and_then(|i| i.wrk.as_ref()).map_or(serde_json::Value::Null, |w| w.summary.non_2xx.into())
    };
    let fields: [(&str, serde_json::Value); 24] = [
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
        ("ceiling_wrk_rps", int(wrk)),
        ("delivery_1ep_per_s", int(r.delivery_1ep.as_ref().map(|d| d.per_s))),
        ("ingest_fanout10_per_s", int(r.ingestion_fanout.as_ref().map(|i| i.per_s))),
        ("cpu_us_per_delivery", float(r.delivery.as_ref().map(Drain::cpu_us_per_delivery), 2)),
        ("connections_per_10k", float(r.delivery.as_ref().map(Drain::connections_per_10k), 2)),
        ("ratio_wrk", float(wrk.zip(r.delivery.as_ref()).map(|(c, d)| d.per_s / c), 3)),
        ("ingest_refused", refused(&r.ingestion)),
        ("ingest_fanout10_refused", refused(&r.ingestion_fanout)),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{}:{v}", serde_json::Value::from(*k))).collect();
    println!("{{{}}}", body.join(","));
}

/// The issue-18 targets, each next to its figure of this run.
fn targets(r: &Results, backend: &str, peak_rss: Option<f64>, rate: u64) -> Vec<String> {
    let pg = backend == "postgres";
    let mut out = vec![
        format!("Issue 18 targets ({backend}, this run):"),
        String::new(),
        "| target | goal | measured | verdict |".into(),
        "|---|---:|---:|---|".into(),
    ];
    let ten = r.delivery.as_ref().filter(|d| d.endpoints == 10).map(|d| d.per_s);
    let other = match &r.delivery {
        Some(d) if d.endpoints != 10 => format!(" (this run's delivery phase had {} endpoints)", d.endpoints),
        _ => String::new(),
    };
    out.push(target_row("delivery, 10 endpoints", ten, if pg { 25_000.0 } else { 40_000.0 }, false, "/s", &other));
    out.push(target_row("delivery, 1 endpoint", r.delivery_1ep.as_ref().map(|d| d.per_s), 20_000.0, false, "/s", ""));
    out.push(target_row(
        "ingestion, single events, 1 endpoint",
        r.ingestion.as_ref().map(|i| i.per_s),
        if pg { 10_000.0 } else { 20_000.0 },
        false,
        "/s",
        "",
    ));
    out.push(target_row(
        "ingestion, single events, 10 endpoints",
        r.ingestion_fanout.as_ref().map(|i| i.per_s),
        8_000.0,
        false,
        "/s",
        "",
    ));
    let at = if rate == 5000 { String::new() } else { format!(" (at {rate}/s, not 5,000/s)") };
    match r.latency.as_ref().filter(|l| l.shed > 0) {
        // Events refused with 503 never reached the receiver: the p99 of the
        // others does not meet a latency target.
        Some(l) => out.push(format!(
            "| p99 `202` → receiver at 5,000 ev/s | ≤ 5.00 ms | {:.2} ms of the accepted events{at}; {} of {} refused (`503` or connection dropped) | **missed** (events refused) |",
            l.p99_ms, l.shed, l.sent
        )),
        None => out.push(target_row(
            "p99 `202` → receiver at 5,000 ev/s",
            r.latency.as_ref().map(|l| l.p99_ms),
            5.0,
            true,
            "ms",
            &at,
        )),
    }
    out.push(target_row("peak RSS, every phase", peak_rss, 128.0, true, "MB", ""));
    let scaling = match (&r.drain_small, &r.drain_large) {
        (Some(a), Some(b)) if a.per_s > 0.0 => Some((b.per_s / a.per_s, size(b.deliveries), size(a.deliveries))),
        _ => None,
    };
    out.push(target_row(
        "drain 1M ÷ drain 10k",
        scaling.as_ref().map(|x| x.0),
        0.9,
        false,
        "×",
        &scaling.as_ref().map(|x| format!(" ({} ÷ {})", x.1, x.2)).unwrap_or_default(),
    ));
    out.push(String::new());
    out
}

/// A table row of an ingestion phase: events/s accepted, and the API's CPU per event.
fn ingestion_row(phase: &str, how: &str, i: &Ingestion) -> String {
    let Some(w) = &i.wrk else {
        return format!(
            "| {phase} | events/s accepted ({how}, {} keep-alive clients, {} endpoint(s)) | {} | {} | {} | {} events; api {:.0} µs CPU per event |",
            i.clients,
            i.endpoints,
            thousands(i.per_s),
            rss(&i.procs),
            cpu(&i.procs),
            thousands(i.events as f64),
            total_cpu(&i.procs) * 1e6 / i.events as f64
        );
    };
    let s = &w.summary;
    format!(
        "| {phase} | events/s answered `202` ({how}, `wrk -t{} -c{} -d{}s`, {} endpoint(s)) | {} | {} | {} | \
         {} events in {:.2} s, each found in the database with its deliveries ({} in all), {} more stored that were in flight at wrk's cut-off; \
         **{}**; api {:.0} µs CPU per stored event |",
        w.threads,
        w.connections,
        w.duration_s,
        i.endpoints,
        thousands(i.per_s),
        rss(&i.procs),
        cpu(&i.procs),
        thousands(i.events as f64),
        s.secs,
        thousands(w.stored.deliveries as f64),
        w.stored.unanswered,
        s.refusals(),
        total_cpu(&i.procs) * 1e6 / w.stored.events.max(1) as f64
    )
}
