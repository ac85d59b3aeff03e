//! The single-event ingestion phases (issue 18), driven by `wrk` as the
//! issue's checkers drive every sender: `wrk -t2 -c<--ingest-connections>
//! -d<--ingest-secs>s` POSTs one event a request to `fenix --api-only`. The
//! bench's own clients each wait for their answer, so with 8 of them Fenix's
//! group commit never saw more than 8 events at once and the figure was the
//! clients'; `wrk`'s many connections are a loaded producer.
//!
//! The figure is checked, not assumed: wrk's Lua script keeps the event id
//! of every `202` answer, and after fenix has stopped every one of them must
//! be in the database, each with one delivery per endpoint. A `202` whose
//! event is missing is data loss and fails the phase. Events stored without
//! an answer counted are the requests still in flight when wrk stopped (at
//! most one per connection); answers other than `2xx` (`503 overloaded`) are
//! reported, never hidden.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{bail, Context};

use crate::ctx::{app_with_endpoints_extra, event_body, Ctx, ProcUsage, Target};
use crate::db::{Databases, Log};
use crate::fenix::{Api, Fenix, Role};
use crate::progress;

/// `wrk`'s threads: one per core of the 2-core bench machine, as the ceiling uses.
const THREADS: u32 = 2;

/// `Socket errors: connect 0, read 10, write 0, timeout 0`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketErrors {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub timeout: u64,
}

impl SocketErrors {
    pub fn total(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout
    }
}

/// What `wrk` prints at the end of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WrkSummary {
    /// Complete answers (`N requests in …`), whatever their status.
    pub requests: u64,
    /// The run's length as wrk measured it (`… in 10.01s`).
    pub secs: f64,
    /// `Non-2xx or 3xx responses`: wrk counts every status above 399 there.
    pub non_2xx: u64,
    pub socket: SocketErrors,
}

impl WrkSummary {
    /// What was not answered `202`, for progress lines and the table.
    pub fn refusals(&self) -> String {
        let e = &self.socket;
        format!(
            "{} refused (non-2xx), socket errors {} (connect {}, read {}, write {}, timeout {})",
            self.non_2xx,
            e.total(),
            e.connect,
            e.read,
            e.write,
            e.timeout
        )
    }

    /// Answers with a status below 400 (for Fenix's ingestion: the `202`s).
    pub fn answered_2xx(&self) -> u64 {
        self.requests.saturating_sub(self.non_2xx)
    }

    /// Parses wrk's summary; `None` without its `N requests in T` line.
    pub fn parse(text: &str) -> Option<WrkSummary> {
        let mut summary: Option<WrkSummary> = None;
        let (mut non_2xx, mut socket) = (0, SocketErrors::default());
        for line in text.lines().map(str::trim) {
            if let Some((n, rest)) = line.split_once(" requests in ") {
                let secs = duration_secs(rest.split(',').next()?.trim())?;
                summary = Some(WrkSummary { requests: n.trim().parse().ok()?, secs, non_2xx: 0, socket });
            } else if let Some(n) = line.strip_prefix("Non-2xx or 3xx responses:") {
                non_2xx = n.trim().parse().ok()?;
            } else if let Some(list) = line.strip_prefix("Socket errors:") {
                for item in list.split(',') {
                    let (name, n) = item.trim().split_once(' ')?;
                    let n: u64 = n.trim().parse().ok()?;
                    match name {
                        "connect" => socket.connect = n,
                        "read" => socket.read = n,
                        "write" => socket.write = n,
                        "timeout" => socket.timeout = n,
                        _ => return None,
                    }
                }
            }
        }
        summary.map(|s| WrkSummary { non_2xx, socket, ..s })
    }
}

/// wrk's time format: `850.00ms`, `10.01s`, `1.00m` (`us`, `ms`, `s`, `m`, `h`).
fn duration_secs(text: &str) -> Option<f64> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = text.split_at(split);
    let n: f64 = n.parse().ok()?;
    let scale = match unit {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Some(n * scale)
}

/// A Lua string literal holding `s`.
fn lua_string(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").replace('\r', "\\r");
    format!("\"{escaped}\"")
}

/// The wrk script: every request POSTs `body` with the admin token; each
/// thread keeps the event id of every `202` (the answer's first field), and
/// at the end the main thread writes them all to `ids_path`, one a line.
fn ingest_script(body: &str, token: &str, ids_path: &Path) -> String {
    format!(
        r#"-- Written by fenix-bench (wrk_ingest.rs): single events to Fenix.
wrk.method = "POST"
wrk.body = {body}
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = {auth}

local threads = {{}}
function setup(thread)
  table.insert(threads, thread)
end

accepted = 0
ids = {{}}
function response(status, headers, body)
  if status == 202 then
    accepted = accepted + 1
    ids[accepted] = string.match(body, '^{{"id":"([^"]+)"') or "?"
  end
end

function done(summary, latency, requests)
  local f = assert(io.open({ids}, "w"))
  for _, t in ipairs(threads) do
    local got = t:get("ids")
    for i = 1, t:get("accepted") do
      f:write(got[i], "\n")
    end
  end
  f:close()
end
"#,
        body = lua_string(body),
        auth = lua_string(&format!("Bearer {token}")),
        ids = lua_string(&ids_path.display().to_string()),
    )
}

/// One wrk run: its summary and the ids of the events answered `202`.
struct WrkRun {
    summary: WrkSummary,
    accepted_ids: Vec<String>,
}

async fn run_wrk(
    dir: &Path,
    label: &str,
    url: &str,
    body: &str,
    token: &str,
    connections: u32,
    secs: u64,
) -> anyhow::Result<WrkRun> {
    let wrk = crate::sink::ensure_installed("wrk", "wrk")?;
    let script = dir.join(format!("{label}.lua"));
    let ids_path = dir.join(format!("{label}.ids"));
    std::fs::write(&script, ingest_script(body, token, &ids_path))?;
    let mut cmd = tokio::process::Command::new(&wrk);
    cmd.arg(format!("-t{}", THREADS.min(connections)))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{secs}s"))
        // wrk's default of 2 s counts a slow answer as a socket error; a
        // stall of Fenix's must show as a lower rate, not as errors.
        .args(["--timeout", "10s"])
        .arg("-s")
        .arg(&script)
        .arg(url);
    let text = crate::sink::run_wrk(cmd).await?;
    // Kept beside the script (see `--keep`): wrk's own figures, latency included.
    std::fs::write(dir.join(format!("{label}.wrk.txt")), text.as_bytes())?;
    let summary = WrkSummary::parse(&text).with_context(|| format!("no summary in wrk's output:\n{text}"))?;
    let ids = std::fs::read_to_string(&ids_path).with_context(|| format!("reading {}", ids_path.display()))?;
    let accepted_ids: Vec<String> = ids.lines().map(str::to_string).collect();
    if accepted_ids.len() as u64 != summary.answered_2xx() {
        bail!(
            "wrk counted {} answers below 400 but {} were `202` with an event id; its output:\n{text}",
            summary.answered_2xx(),
            accepted_ids.len()
        );
    }
    Ok(WrkRun { summary, accepted_ids })
}

/// What the database holds after the run, checked against the `202`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stored {
    pub events: u64,
    pub deliveries: u64,
    /// Events stored whose answer wrk did not count: in flight at its cut-off.
    pub unanswered: u64,
}

/// Every `202`'s event must be stored, once, with one delivery per endpoint
/// (`per_event`: how many events have how many deliveries, as
/// [`Log::deliveries_per_event`] reads it); at most `connections` more events
/// (one in flight per connection when wrk stopped) may be stored without an
/// answer counted.
fn check_stored(
    accepted: &[String],
    stored: &[String],
    per_event: &[(u64, u64)],
    endpoints: u64,
    connections: u32,
) -> anyhow::Result<Stored> {
    let stored_set: HashSet<&str> = stored.iter().map(String::as_str).collect();
    let counted: u64 = per_event.iter().map(|(_, events)| events).sum();
    if counted != stored_set.len() as u64 || stored_set.len() != stored.len() {
        bail!(
            "the database changed during the check ({} event ids read, {} distinct, then {counted} events counted)",
            stored.len(),
            stored_set.len()
        );
    }
    let mut seen = HashSet::with_capacity(accepted.len());
    let mut missing = Vec::new();
    for id in accepted {
        if !seen.insert(id.as_str()) {
            bail!("two `202` answers carried the same event id {id}");
        }
        if !stored_set.contains(id.as_str()) {
            missing.push(id.as_str());
        }
    }
    if !missing.is_empty() {
        bail!(
            "DATA LOSS: {} of {} events answered `202` are not in the database (e.g. {})",
            missing.len(),
            accepted.len(),
            missing[..missing.len().min(3)].join(", ")
        );
    }
    let events = stored_set.len() as u64;
    let unanswered = events - accepted.len() as u64;
    if unanswered > u64::from(connections) {
        bail!(
            "{events} events stored but {} answered `202`: more than the {connections} that can have been in flight when wrk stopped",
            accepted.len()
        );
    }
    let deliveries = per_event.iter().map(|(n, events)| n * events).sum();
    // Every event with `endpoints` deliveries (no row at all when nothing was stored).
    let expected: &[(u64, u64)] = if events == 0 { &[] } else { &[(endpoints, events)] };
    if per_event != expected {
        let shown: Vec<String> = per_event.iter().map(|(n, e)| format!("{e} with {n}")).collect();
        bail!(
            "{deliveries} deliveries stored for {events} events × {endpoints} endpoints: events by deliveries: {}",
            shown.join(", ")
        );
    }
    Ok(Stored { events, deliveries, unanswered })
}

/// An ingestion phase's result: the single-event phases here, batch ingestion
/// (`phases.rs`) without the `wrk` part.
#[derive(Debug, Clone)]
pub struct Ingestion {
    pub per_s: f64,
    pub events: u64,
    pub clients: usize,
    /// Endpoints each event fans out to.
    pub endpoints: u64,
    pub procs: Vec<ProcUsage>,
    /// The single-event phases: wrk's run and the database check (`None` for batch ingestion).
    pub wrk: Option<WrkIngest>,
}

/// The wrk-driven part of an ingestion phase's result.
#[derive(Debug, Clone)]
pub struct WrkIngest {
    pub threads: u32,
    pub connections: u32,
    /// `-d`, as asked.
    pub duration_s: u64,
    pub summary: WrkSummary,
    pub stored: Stored,
}

/// Single events from `wrk` to `fenix --api-only` with `endpoints` endpoints
/// (each event fans out to all); events/s = `202` answers / wrk's duration.
pub async fn ingestion(ctx: &mut Ctx, dbs: &mut Databases, endpoints: u64) -> anyhow::Result<Ingestion> {
    let label = if endpoints == 1 { "ingestion".to_string() } else { format!("ingestion-{endpoints}ep") };
    let body = event_body(ctx.pad(), 0);
    ingestion_of(ctx, dbs, IngestRun { label: &label, endpoints, extras: &[], body }).await
}

/// What one single-event ingestion run sends: the routing phase's runs
/// differ from [`ingestion`]'s only in these.
pub struct IngestRun<'a> {
    /// The phase's name (its database, fenix log and wrk files).
    pub label: &'a str,
    pub endpoints: u64,
    /// Endpoint `i` is created with `extras[i]`'s members in its body.
    pub extras: &'a [serde_json::Value],
    /// The body wrk POSTs, every request the same.
    pub body: String,
}

/// [`ingestion`] of `run`: the same protocol and the same check (every
/// `202`'s event stored with one delivery per endpoint).
pub async fn ingestion_of(ctx: &mut Ctx, dbs: &mut Databases, run: IngestRun<'_>) -> anyhow::Result<Ingestion> {
    let IngestRun { label, endpoints, extras, body } = run;
    let url = dbs.fresh(label).await?;
    let proc = Fenix::start(&ctx.launch, Role::ApiOnly, &url, label).await?;
    let api = Api::new(&proc, &ctx.launch)?;
    let app = app_with_endpoints_extra(ctx, &api, label, endpoints, Target::Sink, extras).await?;
    let (connections, secs) = (ctx.sizes.ingest_connections, ctx.sizes.ingest_secs);
    let threads = THREADS.min(connections);
    progress(&format!("{label}: wrk -t{threads} -c{connections} -d{secs}s, single events, {endpoints} endpoint(s)"));
    let events_url = format!("{}/v1/apps/{app}/events", api.base);
    let run = run_wrk(&ctx.dir, label, &events_url, &body, &ctx.launch.admin_token, connections, secs).await?;
    // Stopped first (SIGTERM), so that the database holds all it will ever
    // hold of this run; on PostgreSQL once fenix's last statement has ended.
    let usage = proc.stop().await?;
    let stored = check_database(&url, label, &run.accepted_ids, endpoints, connections).await?;
    let s = run.summary;
    let accepted = s.answered_2xx();
    let per_s = accepted as f64 / s.secs;
    progress(&format!(
        "{label}: {per_s:.0} events/s ({accepted} answered 202 in {:.2} s, all stored with their {} deliveries; \
         {}; {} more stored, in flight at wrk's cut-off)",
        s.secs,
        stored.deliveries,
        s.refusals(),
        stored.unanswered,
    ));
    Ok(Ingestion {
        per_s,
        events: accepted,
        clients: connections as usize,
        endpoints,
        procs: vec![ProcUsage { role: "api", usage }],
        wrk: Some(WrkIngest { threads, connections, duration_s: secs, summary: s, stored }),
    })
}

/// Checks the database on `url` against wrk's `accepted` ids (the events
/// answered `202`), once no other connection is left: every one stored with
/// one delivery per endpoint ([`check_stored`]); a failed check names the
/// (event, endpoint) pairs delivered more than once.
async fn check_database(
    url: &str,
    label: &str,
    accepted: &[String],
    endpoints: u64,
    connections: u32,
) -> anyhow::Result<Stored> {
    let mut log = Log::open(url).await?;
    let at_exit = log.events().await?;
    log.wait_until_alone(std::time::Duration::from_secs(30)).await?;
    let stored_ids = log.event_ids().await?;
    let late = (stored_ids.len() as u64).saturating_sub(at_exit);
    if late > 0 {
        progress(&format!(
            "{label}: note: {late} events were committed after fenix had exited (its last statement, \
             still running in the database server)"
        ));
    }
    let per_event = log.deliveries_per_event().await?;
    let checked = check_stored(accepted, &stored_ids, &per_event, endpoints, connections);
    let stored = match checked {
        Ok(stored) => stored,
        Err(e) => {
            let (pairs, example) = log.duplicate_deliveries().await?;
            log.close().await;
            let example = example.map(|id| format!(", e.g. event {id}")).unwrap_or_default();
            return Err(e.context(format!(
                "{label}: checking the database against wrk's `202` answers \
                 ({pairs} (event, endpoint) pairs have more than one delivery{example})"
            )));
        }
    };
    log.close().await;
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real output: `fenix --api-only` at its defaults, 1 endpoint, SQLite
    /// (the bench's ingestion phase at 128 connections): every answer `202`.
    const CLEAN: &str = "Running 10s test @ http://127.0.0.1:44845/v1/apps/app_01M8QS2CDDZRSAG7SDZZMSAPC1/events
  2 threads and 128 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.35ms    3.15ms  28.51ms   92.39%
    Req/Sec    12.63k     1.43k   15.53k    69.50%
  251779 requests in 10.02s, 91.00MB read
Requests/sec:  25123.75
Transfer/sec:      9.08MB
";

    /// Real output: `fenix --api-only` with FENIX_HTTP_MAX_IN_FLIGHT=2, `wrk -c64`:
    /// most answers `503 overloaded`.
    const REFUSED: &str = "Running 2s test @ http://127.0.0.1:42983/v1/apps/app_01M8QRW83EDWFJ3A55BKRMZK6B/events
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.37ms    2.90ms  35.77ms   82.77%
    Req/Sec     8.99k     2.34k   13.14k    55.00%
  36026 requests in 2.02s, 8.93MB read
  Non-2xx or 3xx responses: 34281
Requests/sec:  17815.76
Transfer/sec:      4.42MB
";

    /// Real output: FENIX_HTTP_MAX_IN_FLIGHT=4 and FENIX_HTTP_MAX_CONNECTIONS=32
    /// with `wrk -c64`: refusals and connections closed under wrk.
    const SOCKET_ERRORS: &str = "Running 2s test @ http://127.0.0.1:37983/v1/apps/app_01M8QRWNCJRCNHMNRT0B2NRJC6/events
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.30ms    2.21ms  45.02ms   81.85%
    Req/Sec     9.00k     1.27k   10.70k    77.50%
  36113 requests in 2.02s, 9.12MB read
  Socket errors: connect 0, read 10, write 0, timeout 0
  Non-2xx or 3xx responses: 33014
Requests/sec:  17875.42
Transfer/sec:      4.51MB
";

    #[test]
    fn a_clean_run_counts_every_request_as_accepted() {
        let s = WrkSummary::parse(CLEAN).unwrap();
        assert_eq!(s, WrkSummary { requests: 251_779, secs: 10.02, non_2xx: 0, socket: SocketErrors::default() });
        assert_eq!(s.answered_2xx(), 251_779);
    }

    #[test]
    fn refused_answers_are_subtracted_from_the_accepted() {
        let s = WrkSummary::parse(REFUSED).unwrap();
        assert_eq!((s.requests, s.non_2xx, s.answered_2xx()), (36_026, 34_281, 1_745));
        assert_eq!(s.secs, 2.02);
        assert_eq!(s.socket.total(), 0);
    }

    #[test]
    fn socket_errors_are_read_by_kind() {
        let s = WrkSummary::parse(SOCKET_ERRORS).unwrap();
        assert_eq!(s.socket, SocketErrors { connect: 0, read: 10, write: 0, timeout: 0 });
        assert_eq!((s.requests, s.non_2xx, s.answered_2xx()), (36_113, 33_014, 3_099));
    }

    #[test]
    fn durations_in_every_unit_of_wrk_are_read_as_seconds() {
        let at = |d: &str| WrkSummary::parse(&format!("  10 requests in {d}, 1.00KB read\n")).unwrap().secs;
        assert_eq!(at("850.00ms"), 0.85);
        assert_eq!(at("1.50m"), 90.0);
        assert_eq!(at("10.01s"), 10.01);
    }

    #[test]
    fn output_without_a_summary_or_with_an_unknown_error_kind_is_refused() {
        assert_eq!(WrkSummary::parse("unable to connect to 127.0.0.1:1 Connection refused\n"), None);
        let odd = CLEAN.replace("Requests/sec", "  Socket errors: connect 0, reset 3\nRequests/sec");
        assert_eq!(WrkSummary::parse(&odd), None);
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_accepted_event_stored_with_its_deliveries_passes_with_in_flight_extras() {
        let stored =
            check_stored(&ids(&["evt_a", "evt_b"]), &ids(&["evt_a", "evt_b", "evt_c"]), &[(10, 3)], 10, 2).unwrap();
        assert_eq!(stored, Stored { events: 3, deliveries: 30, unanswered: 1 });
    }

    #[test]
    fn an_accepted_event_missing_from_the_database_is_data_loss() {
        let e = check_stored(&ids(&["evt_a", "evt_b"]), &ids(&["evt_a", "evt_c"]), &[(1, 2)], 1, 8).unwrap_err();
        assert!(e.to_string().contains("DATA LOSS: 1 of 2 events answered `202`"), "{e}");
        assert!(e.to_string().contains("evt_b"), "{e}");
    }

    #[test]
    fn more_unanswered_events_than_connections_fail_the_check() {
        let e = check_stored(&ids(&["evt_a"]), &ids(&["evt_a", "evt_b", "evt_c"]), &[(1, 3)], 1, 1).unwrap_err();
        assert!(e.to_string().contains("more than the 1 that can have been in flight"), "{e}");
    }

    #[test]
    fn an_event_stored_without_all_its_deliveries_fails_the_check() {
        let e =
            check_stored(&ids(&["evt_a", "evt_b"]), &ids(&["evt_a", "evt_b"]), &[(9, 1), (10, 1)], 10, 8).unwrap_err();
        assert!(e.to_string().contains("19 deliveries stored for 2 events × 10 endpoints"), "{e}");
        assert!(e.to_string().contains("1 with 9, 1 with 10"), "{e}");
    }

    #[test]
    fn extra_deliveries_of_one_event_fail_the_check_even_when_another_lacks_as_many() {
        let e =
            check_stored(&ids(&["evt_a", "evt_b"]), &ids(&["evt_a", "evt_b"]), &[(0, 1), (20, 1)], 10, 8).unwrap_err();
        assert!(
            e.to_string().contains(
                "20 deliveries stored for 2 events × 10 endpoints: events by deliveries: 1 with 0, 1 with 20"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_run_whose_every_answer_was_a_refusal_stores_nothing_and_passes() {
        assert_eq!(check_stored(&[], &[], &[], 10, 8).unwrap(), Stored { events: 0, deliveries: 0, unanswered: 0 });
    }

    #[test]
    fn events_counted_apart_from_the_ids_read_fail_the_check() {
        let e = check_stored(&ids(&["evt_a"]), &ids(&["evt_a"]), &[(1, 2)], 1, 8).unwrap_err();
        assert!(e.to_string().contains("the database changed during the check"), "{e}");
    }

    #[test]
    fn the_same_id_answered_twice_fails_the_check() {
        let e = check_stored(&ids(&["evt_a", "evt_a"]), &ids(&["evt_a"]), &[(1, 1)], 1, 8).unwrap_err();
        assert!(e.to_string().contains("same event id evt_a"), "{e}");
    }

    #[test]
    fn the_script_quotes_the_body_token_and_path_for_lua() {
        let lua = ingest_script(r#"{"type":"bench.event","data":{"a":"\n"}}"#, "fxa_x", Path::new("/tmp/a b.ids"));
        assert!(lua.contains(r#"wrk.body = "{\"type\":\"bench.event\",\"data\":{\"a\":\"\\n\"}}""#), "{lua}");
        assert!(lua.contains(r#"wrk.headers["Authorization"] = "Bearer fxa_x""#), "{lua}");
        assert!(lua.contains(r#"io.open("/tmp/a b.ids", "w")"#), "{lua}");
    }
}
