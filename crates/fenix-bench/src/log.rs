//! The delivery log on a large database (issue 15: "a page of 50 deliveries
//! from a database with 1 M deliveries answers in well under 100 ms"): a
//! database made by `fenix serve` (its migrations, its app and endpoints made
//! through the API) is filled with deliveries by direct SQL, far faster than
//! ingestion could, then `fenix serve --api-only` answers the console's
//! queries on it, each timed many times.
//!
//! The rows are shaped like a real log: ids made the way Fenix makes them
//! (`fenix::ids`, so they sort by creation time and time windows work), one
//! event per 10 deliveries (each event to every endpoint), spread over the
//! last 30 days, eight event types and one rare one, mostly `succeeded`
//! with some `failed`, `skipped` and `pending` (due in the future: no worker
//! runs). No attempts and no noise in other apps: the list reads neither.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use sqlx::{Connection as _, QueryBuilder};

use crate::progress;

/// Endpoints of the app (each event fans out to all of them).
pub const ENDPOINTS: u64 = 10;
/// The common event types; every 1,000th event is `bench.rare` instead.
const TYPES: u64 = 8;
pub const RARE_TYPE: &str = "bench.rare";
/// How far back the log reaches.
pub const SPAN_MS: i64 = 30 * 86_400_000;

/// What the filled log holds, for the queries to aim at.
pub struct Filled {
    pub deliveries: u64,
    pub events: u64,
    /// The newest delivery's creation time (ms).
    pub newest_ms: i64,
    /// The id of the delivery 90 % of the way down the newest-first list.
    pub deep_id: String,
    /// The id of an event half way down, with its deliveries.
    pub middle_event: String,
    pub secs: f64,
}

pub fn event_type(k: u64) -> String {
    if k % 1_000 == 999 {
        RARE_TYPE.into()
    } else {
        format!("bench.t{}", k % TYPES)
    }
}

/// The status of delivery `j` of event `k`: 93 % succeeded, 4 % failed, 2 % skipped, 1 % pending.
fn status(k: u64, j: u64) -> &'static str {
    match (k.wrapping_mul(2_654_435_761) ^ j.wrapping_mul(40_503)) % 100 {
        0..=3 => "failed",
        4..=5 => "skipped",
        6 => "pending",
        _ => "succeeded",
    }
}

/// How a fill shapes its rows: the status of delivery `j` of event `k`, and
/// how far back the rows reach (their creation times spread evenly over it).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub status: fn(u64, u64) -> &'static str,
    pub span_ms: i64,
}

/// The delivery log's shape: [`status`]'s mix over the last 30 days.
const LOG: Shape = Shape { status, span_ms: SPAN_MS };

/// One delivery row, as the fill writes it.
struct Row {
    id: String,
    event: usize,
    endpoint: usize,
    status: &'static str,
    attempts: i64,
    next_at: Option<i64>,
    last_at: Option<i64>,
    created_at: i64,
}

struct Event {
    id: String,
    event_type: String,
    envelope: Vec<u8>,
    created_at: i64,
}

fn event(k: u64, created_at: i64) -> Event {
    let id = ::fenix::ids::EventId::new_at(created_at).into_string();
    let event_type = event_type(k);
    let envelope = format!(
        r#"{{"id":"{id}","type":"{event_type}","created_at":"{}","data":{{"seq":{k}}}}}"#,
        ::fenix::time::rfc3339_ms(created_at)
    )
    .into_bytes();
    Event { id, event_type, envelope, created_at }
}

fn deliveries_of(
    k: u64,
    ev_index: usize,
    created_at: i64,
    now: i64,
    status_of: fn(u64, u64) -> &'static str,
) -> impl Iterator<Item = Row> {
    (0..ENDPOINTS).map(move |j| {
        let status = status_of(k, j);
        let (attempts, next_at, last_at) = match status {
            "succeeded" => (1, None, Some(created_at + 40)),
            "failed" => (8, None, Some(created_at + 3_600_000)),
            "skipped" => (0, None, None),
            _ => (2, Some(now + 3_600_000), Some(created_at + 60_000)),
        };
        Row {
            id: ::fenix::ids::DeliveryId::new_at(created_at).into_string(),
            event: ev_index,
            endpoint: j as usize,
            status,
            attempts,
            next_at,
            last_at,
            created_at,
        }
    })
}

/// Fills the log of `app` (whose endpoints are `endpoints`) with `deliveries`
/// deliveries, in chunks of events, by direct SQL on `database_url`.
pub async fn fill(database_url: &str, app: &str, endpoints: &[String], deliveries: u64) -> anyhow::Result<Filled> {
    fill_shaped(database_url, app, endpoints, deliveries, LOG).await
}

/// [`fill`], its rows shaped by `shape` (the tasks phase: all `failed`, recent).
pub async fn fill_shaped(
    database_url: &str,
    app: &str,
    endpoints: &[String],
    deliveries: u64,
    shape: Shape,
) -> anyhow::Result<Filled> {
    if endpoints.len() as u64 != ENDPOINTS {
        bail!("a filled log needs {ENDPOINTS} endpoints");
    }
    let events = deliveries.div_ceil(ENDPOINTS).max(1);
    let now = ::fenix::time::now_ms();
    let oldest = now - shape.span_ms;
    let step = shape.span_ms as f64 / events as f64;
    let at = |k: u64| oldest + (k as f64 * step) as i64;
    let start = Instant::now();
    let mut sink = Sink::open(database_url).await?;
    let chunk = 5_000u64;
    let mut deep_id = String::new();
    let deep_index = deliveries / 10; // 10 % from the oldest = 90 % down the newest-first list
    let mut middle_event = String::new();
    let mut written = 0u64;
    let mut last_report = Instant::now();
    let mut k0 = 0;
    while k0 < events {
        let k1 = (k0 + chunk).min(events);
        let evs: Vec<Event> = (k0..k1).map(|k| event(k, at(k))).collect();
        let mut rows: Vec<Row> = Vec::with_capacity(evs.len() * ENDPOINTS as usize);
        for (i, k) in (k0..k1).enumerate() {
            rows.extend(deliveries_of(k, i, evs[i].created_at, now, shape.status));
        }
        rows.truncate((deliveries - written).min(rows.len() as u64) as usize);
        if deep_index >= written && deep_index < written + rows.len() as u64 {
            let mut ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
            ids.sort_unstable();
            deep_id = ids[(deep_index - written) as usize].to_string();
        }
        if (k0..k1).contains(&(events / 2)) {
            middle_event = evs[(events / 2 - k0) as usize].id.clone();
        }
        sink.write(app, endpoints, &evs, &rows).await?;
        written += rows.len() as u64;
        if last_report.elapsed() > Duration::from_secs(5) {
            last_report = Instant::now();
            progress(&format!("fill: {written}/{deliveries} deliveries"));
        }
        k0 = k1;
    }
    sink.finish().await?;
    let secs = start.elapsed().as_secs_f64();
    Ok(Filled { deliveries: written, events, newest_ms: at(events - 1), deep_id, middle_event, secs })
}

/// Where the fill writes: one connection, one transaction on SQLite (made
/// fast: no sync until the end), `COPY` on PostgreSQL.
enum Sink {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl Sink {
    async fn open(url: &str) -> anyhow::Result<Sink> {
        if url.starts_with("sqlite:") {
            let mut c = sqlx::SqliteConnection::connect(url).await.context("opening the SQLite database")?;
            sqlx::query("PRAGMA synchronous = OFF").execute(&mut c).await?;
            sqlx::query("BEGIN IMMEDIATE").execute(&mut c).await?;
            Ok(Sink::Sqlite(c))
        } else {
            let c = sqlx::PgConnection::connect(url).await.context("connecting to the database")?;
            Ok(Sink::Postgres(c))
        }
    }

    async fn write(&mut self, app: &str, endpoints: &[String], evs: &[Event], rows: &[Row]) -> anyhow::Result<()> {
        match self {
            Sink::Sqlite(c) => {
                insert_events(c, app, evs).await?;
                insert_deliveries(c, app, endpoints, evs, rows).await?;
            }
            Sink::Postgres(c) => {
                copy_csv(
                    c,
                    "COPY events (id, app_id, event_type, payload, payload_sha256, delivery_count, created_at) \
                     FROM STDIN WITH (FORMAT csv)",
                    events_csv(app, evs),
                )
                .await?;
                copy_csv(
                    c,
                    "COPY deliveries (id, app_id, event_id, event_type, endpoint_id, status, attempt_count, \
                     budget_start, next_attempt_at, last_attempt_at, created_at, updated_at) \
                     FROM STDIN WITH (FORMAT csv)",
                    deliveries_csv(app, endpoints, evs, rows),
                )
                .await?;
            }
        }
        Ok(())
    }

    /// Commits (SQLite); gathers the planner's statistics (PostgreSQL, as
    /// autovacuum would on a database that grew to this size; Fenix itself
    /// never runs ANALYZE on SQLite, so neither does the bench).
    async fn finish(self) -> anyhow::Result<()> {
        match self {
            Sink::Sqlite(mut c) => {
                sqlx::query("COMMIT").execute(&mut c).await?;
                c.close().await?;
            }
            Sink::Postgres(mut c) => {
                sqlx::query("ANALYZE").execute(&mut c).await?;
                c.close().await?;
            }
        }
        Ok(())
    }
}

/// The events, inserted 1,000 a statement (SQLite).
async fn insert_events(c: &mut sqlx::SqliteConnection, app: &str, evs: &[Event]) -> anyhow::Result<()> {
    for part in evs.chunks(1_000) {
        let mut qb = QueryBuilder::new(
            "INSERT INTO events (id, app_id, event_type, payload, payload_sha256, delivery_count, created_at) ",
        );
        qb.push_values(part, |mut b, e| {
            b.push_bind(e.id.as_str())
                .push_bind(app)
                .push_bind(e.event_type.as_str())
                .push_bind(e.envelope.as_slice())
                .push_bind("-")
                .push_bind(ENDPOINTS as i64)
                .push_bind(e.created_at);
        });
        qb.build().execute(&mut *c).await?;
    }
    Ok(())
}

/// The deliveries of `evs`, inserted 1,000 a statement (SQLite).
async fn insert_deliveries(
    c: &mut sqlx::SqliteConnection,
    app: &str,
    endpoints: &[String],
    evs: &[Event],
    rows: &[Row],
) -> anyhow::Result<()> {
    for part in rows.chunks(1_000) {
        let mut qb = QueryBuilder::new(
            "INSERT INTO deliveries (id, app_id, event_id, event_type, endpoint_id, status, attempt_count, \
             budget_start, next_attempt_at, last_attempt_at, created_at, updated_at) ",
        );
        qb.push_values(part, |mut b, r| {
            let e = &evs[r.event];
            b.push_bind(r.id.as_str())
                .push_bind(app)
                .push_bind(e.id.as_str())
                .push_bind(e.event_type.as_str())
                .push_bind(endpoints[r.endpoint].as_str())
                .push_bind(r.status)
                .push_bind(r.attempts)
                .push_bind(0_i64)
                .push_bind(r.next_at)
                .push_bind(r.last_at)
                .push_bind(r.created_at)
                .push_bind(r.last_at.unwrap_or(r.created_at));
        });
        qb.build().execute(&mut *c).await?;
    }
    Ok(())
}

/// The events as `COPY` CSV (PostgreSQL).
fn events_csv(app: &str, evs: &[Event]) -> String {
    let mut csv = String::with_capacity(evs.len() * 200);
    for e in evs {
        // The envelope as bytea hex, inside a quoted CSV field (it holds commas and quotes).
        let hex: String = e.envelope.iter().map(|b| format!("{b:02x}")).collect();
        csv.push_str(&format!("{},{app},{},\\x{hex},-,{ENDPOINTS},{}\n", e.id, e.event_type, e.created_at));
    }
    csv
}

/// The deliveries of `evs` as `COPY` CSV (PostgreSQL).
fn deliveries_csv(app: &str, endpoints: &[String], evs: &[Event], rows: &[Row]) -> String {
    let mut csv = String::with_capacity(rows.len() * 160);
    let opt = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
    for r in rows {
        let e = &evs[r.event];
        csv.push_str(&format!(
            "{},{app},{},{},{},{},{},0,{},{},{},{}\n",
            r.id,
            e.id,
            e.event_type,
            endpoints[r.endpoint],
            r.status,
            r.attempts,
            opt(r.next_at),
            opt(r.last_at),
            r.created_at,
            r.last_at.unwrap_or(r.created_at)
        ));
    }
    csv
}

/// Sends `csv` through `statement` (a `COPY … FROM STDIN`).
async fn copy_csv(c: &mut sqlx::PgConnection, statement: &str, csv: String) -> anyhow::Result<()> {
    let mut copy = c.copy_in_raw(statement).await?;
    copy.send(csv.into_bytes()).await?;
    copy.finish().await?;
    Ok(())
}
