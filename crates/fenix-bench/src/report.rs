//! The table (Markdown, so it can be pasted into docs/benchmarks.md) and, last,
//! the one-line JSON summary.

use std::path::Path;

use crate::ctx::{Ctx, ProcUsage, Target};
use crate::drain::Drain;
use crate::phases::{Latency, Results};
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
    ceiling_rows(r, &mut out);
    throughput_rows(r, wrk, ratio, &mut out);
    latency_rows(r, &mut out);
    drain_rows(r, wrk, &mut out);
    log_and_ordered_rows(r, &mut out);
    routing_rows(r, wrk, &mut out);
    task_rows(r, &mut out);
    overload_rows(r, &mut out);
    receiver_row(r, &mut out);
    let peak_rss = peak_rss_mb(r);
    out.push(String::new());
    log_table(r, &mut out);
    out.extend(targets(r, backend, peak_rss, s.rate));
    out.extend(routing_targets(r, backend));
    out.extend(task_targets(r, backend));
    out.extend(overload_timeline(r, backend));
    for line in out {
        println!("{line}");
    }
    println!("{}", json_line(r, backend, ratio, wrk, peak_rss));
}

/// The rows of the two ceilings: wrk's (the machine's) and the verifying receiver's.
fn ceiling_rows(r: &Results, out: &mut Vec<String>) {
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
}

/// The rows of the throughput phases: delivery, correctness, ingestion.
fn throughput_rows(r: &Results, wrk: Option<f64>, ratio: Option<f64>, out: &mut Vec<String>) {
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
}

/// The latency phase's row.
fn latency_rows(r: &Results, out: &mut Vec<String>) {
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
}

/// The rows of the two drains (10k and 1M), the second with its ratio to the first.
fn drain_rows(r: &Results, wrk: Option<f64>, out: &mut Vec<String>) {
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
}

/// The rows of the delivery log and of ordered delivery.
fn log_and_ordered_rows(r: &Results, out: &mut Vec<String>) {
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
}

/// The receivers' row: failed verifications and duplicates over every phase.
fn receiver_row(r: &Results, out: &mut Vec<String>) {
    let failures: u64 = r.ceiling.iter().map(|c| c.failures).sum::<u64>()
        + [&r.ordered, &r.ordered_keys].iter().filter_map(|d| d.as_ref()).map(|d| d.failures).sum::<u64>()
        + [&r.delivery, &r.drain_small, &r.drain_large]
            .iter()
            .filter_map(|d| d.as_ref())
            .map(|d| d.failures)
            .sum::<u64>()
        + r.verify.iter().map(|d| d.failures).sum::<u64>()
        + r.latency.iter().map(|l| l.failures).sum::<u64>()
        + r.tasks.iter().map(|t| t.fresh_failures).sum::<u64>();
    let routing_drains = r.routing.as_ref().map(|x| [&x.drain_plain, &x.drain_transformed]);
    let duplicates: u64 = [&r.delivery, &r.delivery_1ep, &r.verify, &r.drain_small, &r.drain_large]
        .into_iter()
        .chain(routing_drains.into_iter().flatten())
        .filter_map(|d| d.as_ref())
        .map(|d| d.received.saturating_sub(d.deliveries))
        .sum();
    out.push(format!(
        "| receiver | requests whose signature did not verify; duplicate requests in the drains | {failures} / {duplicates} | – | – | \
         signatures are verified in the verifying phases (ceiling (verifying), correctness, latency, ordered); the sink phases only count |"
    ));
}

/// The peak RSS of any Fenix process over every phase.
fn peak_rss_mb(r: &Results) -> Option<f64> {
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
    if let Some(t) = &r.tasks {
        all_procs.extend(&t.procs);
    }
    if let Some(o) = &r.overload {
        all_procs.extend(&o.procs);
    }
    if let Some(x) = &r.routing {
        all_procs.extend(&x.procs);
        for i in [&x.ingest_plain, &x.ingest_routed].into_iter().flatten() {
            all_procs.extend(&i.procs);
        }
        for d in [&x.drain_plain, &x.drain_transformed].into_iter().flatten() {
            all_procs.extend(&d.procs);
        }
    }
    all_procs.iter().map(|p| p.usage.peak_rss_mb).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

/// The delivery log's table, one row per query.
fn log_table(r: &Results, out: &mut Vec<String>) {
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
}

/// The JSON line of the run's figures.
fn json_line(r: &Results, backend: &str, ratio: Option<f64>, wrk: Option<f64>, peak_rss: Option<f64>) -> String {
    // Written by hand to keep the keys in the documented order.
    let int = |v: Option<f64>| v.map_or(serde_json::Value::Null, |x| serde_json::Value::from(x.round() as u64));
    let float =
        |v: Option<f64>, places: i32| v.map_or(serde_json::Value::Null, |x| serde_json::Value::from(round(x, places)));
    let log_first = r.log.as_ref().and_then(|l| l.queries.first()).map(|q| q.p50_ms);
    let log_worst = r.log.as_ref().and_then(|l| l.queries.iter().map(|q| q.p99_ms).max_by(f64::total_cmp));
    let refused = |i: &Option<Ingestion>| {
        i.as_ref().and_then(|i| i.wrk.as_ref()).map_or(serde_json::Value::Null, |w| w.summary.non_2xx.into())
    };
    let routing = r.routing.as_ref();
    let (plain, transformed) =
        (routing.and_then(|x| x.drain_plain.as_ref()), routing.and_then(|x| x.drain_transformed.as_ref()));
    let tasks = r.tasks.as_ref();
    let fields: [(&str, serde_json::Value); 35] = [
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
        ("routing_ingest_plain_per_s", int(routing.and_then(|x| x.ingest_plain.as_ref()).map(|i| i.per_s))),
        ("routing_ingest_per_s", int(routing.and_then(|x| x.ingest_routed.as_ref()).map(|i| i.per_s))),
        ("routing_ingest_ratio", float(routing.and_then(|x| x.ingest_ratio()), 3)),
        ("transform_plain_per_s", int(plain.map(|d| d.per_s))),
        ("transform_per_s", int(transformed.map(|d| d.per_s))),
        ("transform_ratio", float(routing.and_then(|x| x.transform_ratio()), 3)),
        ("transform_plain_cpu_us_per_delivery", float(plain.map(Drain::cpu_us_per_delivery), 2)),
        ("transform_cpu_us_per_delivery", float(transformed.map(Drain::cpu_us_per_delivery), 2)),
        ("task_replay_per_s", int(tasks.map(|t| t.replayed_per_s()))),
        ("task_create_ms", float(tasks.map(|t| t.create_ms), 1)),
        ("task_fresh_p99_ms", float(tasks.map(|t| t.fresh_p99_ms), 2)),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{}:{v}", serde_json::Value::from(*k))).collect();
    format!("{{{}}}", body.join(","))
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
    throughput_targets(r, pg, &mut out);
    out.push(latency_target(r.latency.as_ref(), rate));
    out.push(target_row("peak RSS, every phase", peak_rss, 128.0, true, "MB", ""));
    out.push(scaling_target(r));
    out.push(String::new());
    out
}

/// The delivery and single-event ingestion targets (lower on PostgreSQL for
/// the 10-endpoint delivery and the 1-endpoint ingestion).
fn throughput_targets(r: &Results, pg: bool, out: &mut Vec<String>) {
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
}

/// The p99 target, measured at `rate` events/s.
fn latency_target(latency: Option<&Latency>, rate: u64) -> String {
    let at = if rate == 5000 { String::new() } else { format!(" (at {rate}/s, not 5,000/s)") };
    match latency.filter(|l| l.shed > 0) {
        // Events refused with 503 never reached the receiver: the p99 of the
        // others does not meet a latency target.
        Some(l) => format!(
            "| p99 `202` → receiver at 5,000 ev/s | ≤ 5.00 ms | {:.2} ms of the accepted events{at}; {} of {} refused (`503` or connection dropped) | **missed** (events refused) |",
            l.p99_ms, l.shed, l.sent
        ),
        None => target_row("p99 `202` → receiver at 5,000 ev/s", latency.map(|l| l.p99_ms), 5.0, true, "ms", &at),
    }
}

/// The large drain's rate against the small one's.
fn scaling_target(r: &Results) -> String {
    let scaling = match (&r.drain_small, &r.drain_large) {
        (Some(a), Some(b)) if a.per_s > 0.0 => Some((b.per_s / a.per_s, size(b.deliveries), size(a.deliveries))),
        _ => None,
    };
    target_row(
        "drain 1M ÷ drain 10k",
        scaling.as_ref().map(|x| x.0),
        0.9,
        false,
        "×",
        &scaling.as_ref().map(|x| format!(" ({} ÷ {})", x.1, x.2)).unwrap_or_default(),
    )
}

/// The routing phase's rows: what the probe found, the two fan-out runs and
/// their ratio, the two drains (the transformed one with its ratio).
fn routing_rows(r: &Results, wrk: Option<f64>, out: &mut Vec<String>) {
    let Some(x) = &r.routing else { return };
    out.push(format!(
        "| routing: features | what Fenix honoured (probe: fresh database, `fenix serve`, verifying receiver) | – | {} | {} | {} |",
        rss(&x.procs),
        cpu(&x.procs),
        x.features.describe()
    ));
    let how = "single events carrying channels, tags, `amount` and `currency`";
    if let Some(i) = &x.ingest_plain {
        out.push(ingestion_row("routing: fan-out, no routing", how, i));
    }
    if let Some(i) = &x.ingest_routed {
        out.push(ingestion_row(&format!("routing: fan-out, {}", x.routed_with), how, i));
    }
    if let Some(q) = x.ingest_ratio() {
        let filter = if x.routed_with.contains("filter") {
            format!(", filter `{}`", crate::routing::FILTER)
        } else {
            String::new()
        };
        let channels = if x.routed_with.contains("channels") { "every endpoint lists the event's channel" } else { "" };
        out.push(format!(
            "| routing: fan-out ratio | events/s with {} ÷ without, run back to back | {q:.3} | – | – | {channels}{filter}; the same event bytes in both |",
            x.routed_with
        ));
    }
    if let Some(d) = &x.drain_plain {
        out.push(drain_row("routing: delivery, no transformation", d, wrk, ""));
    }
    if let Some(d) = &x.drain_transformed {
        let extra = match (x.transform_ratio(), &x.drain_plain) {
            (Some(q), Some(p)) => format!(
                "; **{q:.3} × the rate without**; {:+.1} µs worker CPU per delivery",
                d.cpu_us_per_delivery() - p.cpu_us_per_delivery()
            ),
            _ => String::new(),
        };
        out.push(drain_row("routing: delivery, transformation", d, wrk, &extra));
    }
}

/// The issue-32 targets: routing's cost, as ratios to the same run without.
/// The tasks phase's row: the bulk replay and the fresh deliveries beside it.
fn task_rows(r: &Results, out: &mut Vec<String>) {
    let Some(t) = &r.tasks else { return };
    out.push(format!(
        "| tasks: bulk replay | deliveries/s a replay task of {} failed deliveries re-queued (`done` ÷ started → finished) | {} | {} | {} | \
         FENIX_TASK_RATE {}; {:.1} s; done {} failed {}; dry run counted {} in {:.0} ms; `POST …/tasks` answered in {:.0} ms; \
         the rows written by direct SQL in {:.1} s, to 10 endpoints on the sink |",
        thousands(t.deliveries as f64),
        thousands(t.replayed_per_s()),
        rss(&t.procs),
        cpu(&t.procs),
        thousands(t.rate_limit as f64),
        t.task_secs,
        t.done,
        t.failed,
        t.dry_run_count,
        t.dry_run_ms,
        t.create_ms,
        t.fill_secs,
    ));
    out.push(format!(
        "| tasks: fresh deliveries | ms from `202` to receipt of events sent to another app while the task ran, p50 / p99 / max | \
         {:.2} / {:.2} / {:.2} | – | – | {} events/s, {} sent, {} shed, {} received at the verifying receiver |",
        t.fresh_p50_ms, t.fresh_p99_ms, t.fresh_max_ms, t.fresh_rate, t.fresh_sent, t.fresh_shed, t.fresh_received,
    ));
}

/// The overload phase's rows: what the producers saw, what `/metrics` showed, the drain.
fn overload_rows(r: &Results, out: &mut Vec<String>) {
    let Some(o) = &r.overload else { return };
    out.push(format!(
        "| overload: ingestion | ms to the `202` of single events offered at {}/s for {} s (3 × what the receiver takes), \
         p50 / p99 / max | {:.2} / {:.2} / {:.2} | {} | {} | {} offered, {} accepted, {} shed `503` ({} without \
         `Retry-After`; {}), {} unanswered |",
        thousands(o.offered_rate as f64),
        o.secs,
        o.ingest_p50_ms,
        o.ingest_p99_ms,
        o.ingest_max_ms,
        rss(&o.procs),
        cpu(&o.procs),
        o.offered,
        o.accepted,
        o.shed,
        o.shed_without_retry_after,
        if o.shed_codes.is_empty() { "none" } else { &o.shed_codes },
        o.unanswered,
    ));
    out.push(format!(
        "| overload: backlog | the app's backlog at its largest, and its oldest delivery's age, as `/metrics` showed \
         them (`fenix_app_backlog`, `fenix_app_backlog_oldest_seconds`) | {} deliveries, {:.0} s | resident memory \
         sampled, at most {:.0} MB | – | in {} of {} samples (every 5 s); slowest `/metrics` answer {:.0} ms |",
        thousands(o.max_backlog),
        o.max_backlog_age_s,
        o.max_rss_mb,
        o.samples_with_backlog,
        o.samples,
        o.slowest_scrape_ms,
    ));
    let rate = if o.drain_secs > 0.0 {
        (o.accepted as f64 - o.receiver_rate as f64 * o.secs as f64) / o.drain_secs
    } else {
        0.0
    };
    out.push(format!(
        "| overload: drain | s until every accepted event reached the receiver once it kept up again (pacing off) | \
         {:.1} | – | – | about {}/s; {} delivered of {} accepted, {} lost, {} duplicates; the database then held \
         {} deliveries in {:.0} MB ({:.0} B a delivery with its event and attempt) |",
        o.drain_secs,
        thousands(rate.max(0.0)),
        o.delivered,
        o.accepted,
        o.lost,
        o.duplicates,
        thousands(o.db_deliveries as f64),
        o.db_bytes as f64 / 1e6,
        o.db_bytes as f64 / o.db_deliveries.max(1) as f64,
    ));
}

/// The overload phase's minute-by-minute line.
fn overload_timeline(r: &Results, backend: &str) -> Vec<String> {
    let Some(o) = &r.overload else { return Vec::new() };
    let mut out = vec![
        format!("Overload ({backend}), minute by minute:"),
        String::new(),
        "| s | events accepted | backlog | oldest (s) | RSS (MB) |".into(),
        "|---:|---:|---:|---:|---:|".into(),
    ];
    for (at, accepted, backlog, age, rss) in &o.timeline {
        out.push(format!("| {at} | {} | {} | {age:.0} | {rss:.0} |", thousands(*accepted as f64), thousands(*backlog)));
    }
    out.push(String::new());
    out
}

/// The issue-33 target: fresh deliveries keep their latency beside a bulk replay.
fn task_targets(r: &Results, backend: &str) -> Vec<String> {
    let Some(t) = &r.tasks else { return Vec::new() };
    vec![
        format!("Issue 33 (tasks) target ({backend}, this run):"),
        String::new(),
        "| target | goal | measured | verdict |".into(),
        "|---|---:|---:|---|".into(),
        target_row("fresh deliveries' p99 while a bulk replay runs", Some(t.fresh_p99_ms), 50.0, true, "ms", ""),
        String::new(),
    ]
}

fn routing_targets(r: &Results, backend: &str) -> Vec<String> {
    let Some(x) = &r.routing else { return Vec::new() };
    let missing = |what: &str| if what.is_empty() { String::new() } else { format!(" ({what})") };
    let fanout_note = match x.ingest_ratio() {
        Some(_) if x.routed_with != "channels + filter" => format!(" (with {} only)", x.routed_with),
        Some(_) => String::new(),
        None => missing("channels and filter not measurable, see the features row"),
    };
    let transform_note = match x.transform_ratio() {
        Some(_) => String::new(),
        None => missing("transformation not measurable, see the features row"),
    };
    vec![
        format!("Issue 32 (routing) targets ({backend}, this run):"),
        String::new(),
        "| target | goal | measured | verdict |".into(),
        "|---|---:|---:|---|".into(),
        target_row(
            "fan-out ingestion (10 endpoints) with channels + filter ÷ without",
            x.ingest_ratio(),
            0.8,
            false,
            "×",
            &fanout_note,
        ),
        target_row(
            "deliveries/s (10 endpoints) with a transformation ÷ without",
            x.transform_ratio(),
            0.6,
            false,
            "×",
            &transform_note,
        ),
        String::new(),
    ]
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
