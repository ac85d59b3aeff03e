//! What the scale-out scenarios share: a private PostgreSQL per test, a burst
//! of events spread over several instances' APIs, and the receiver's tally of
//! what arrived (delivered, duplicated).

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use serde_json::{json, Value};

use crate::support::{eventually, postgres::PrivatePostgres, Fenix, Receiver, TestDb};

/// Short leases so a dead instance's work comes back within the test.
pub const FAST_LEASES: [(&str, &str); 2] = [("FENIX_LEASE_DURATION", "2s"), ("FENIX_ATTEMPT_TIMEOUT", "1s")];

/// Leases as in normal operation (no crash expected): long enough that a test
/// machine starved of CPU by parallel tests never lets one expire under a
/// running instance, which is what "no double sends without a crash" means.
pub const NORMAL_LEASES: [(&str, &str); 2] = [("FENIX_LEASE_DURATION", "15s"), ("FENIX_ATTEMPT_TIMEOUT", "5s")];

/// A private PostgreSQL server and a fresh database on it; `None` (after a
/// printed note) where PostgreSQL binaries are missing outside CI.
pub async fn private_db() -> Option<(PrivatePostgres, TestDb)> {
    let pg = PrivatePostgres::start_new().await?;
    let db = pg.test_db().await;
    Some((pg, db))
}

/// What the producer saw while sending a burst.
#[derive(Debug, Default)]
pub struct Burst {
    /// Event index → the event id the API answered with (2xx).
    pub accepted: BTreeMap<usize, String>,
    /// Answers `503 database_unavailable` (each retried with the same key).
    pub unavailable: usize,
    /// Requests that got no answer (instance gone); retried elsewhere.
    pub connection_errors: usize,
    /// 200 answers: a retried request whose first try had been stored.
    pub replayed: usize,
    /// Any other answer: (index, status, body). Expected to stay empty.
    pub unexpected: Vec<(usize, u16, String)>,
}

impl Burst {
    /// The accepted event ids.
    pub fn ids(&self) -> BTreeSet<String> {
        self.accepted.values().cloned().collect()
    }
}

/// Sends `n` events (`data: {"i": i}`, producer key `burst-i`) from `senders`
/// concurrent producers, spread round-robin over the instances in `bases`. A
/// request that gets no answer or `503` is retried with the same key (on the
/// next instance), as a producer would; `accepted` counts 2xx answers as they come.
pub fn spawn_burst(
    bases: Arc<Mutex<Vec<String>>>,
    token: &str,
    app: &str,
    n: usize,
    senders: usize,
    accepted: Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<Burst> {
    let (token, app) = (token.to_string(), app.to_string());
    tokio::spawn(async move {
        let shares: Vec<_> = (0..senders)
            .map(|k| {
                tokio::spawn(send_share(k, senders, n, bases.clone(), token.clone(), app.clone(), accepted.clone()))
            })
            .collect();
        let mut all = Burst::default();
        for s in shares {
            let part = s.await.expect("sender task");
            all.accepted.extend(part.accepted);
            all.unavailable += part.unavailable;
            all.connection_errors += part.connection_errors;
            all.replayed += part.replayed;
            all.unexpected.extend(part.unexpected);
        }
        all
    })
}

async fn send_share(
    first: usize,
    step: usize,
    n: usize,
    bases: Arc<Mutex<Vec<String>>>,
    token: String,
    app: String,
    accepted: Arc<AtomicUsize>,
) -> Burst {
    let http = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().expect("client");
    let mut out = Burst::default();
    for i in (first..n).step_by(step) {
        let body = json!({"type": "burst.item", "data": {"i": i}, "id": format!("burst-{i}")});
        let deadline = Instant::now() + Duration::from_secs(60);
        for try_no in 0.. {
            assert!(Instant::now() < deadline, "event {i} not accepted within 60 s: {out:?}");
            let base = {
                let b = bases.lock().unwrap();
                b[(i + try_no) % b.len()].clone()
            };
            let resp = http.post(format!("{base}/v1/apps/{app}/events")).bearer_auth(&token).json(&body).send().await;
            let resp = match resp {
                Ok(r) => r,
                Err(_) => {
                    out.connection_errors += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            if status == 202 || status == 200 {
                let answer: Value = serde_json::from_str(&text).expect("event JSON");
                out.accepted.insert(i, answer["id"].as_str().expect("event id").to_string());
                out.replayed += usize::from(status == 200);
                accepted.fetch_add(1, Ordering::SeqCst);
                break;
            }
            let code =
                serde_json::from_str::<Value>(&text).ok().and_then(|v| v["error"]["code"].as_str().map(String::from));
            if status == 503 && code.as_deref() == Some("database_unavailable") {
                out.unavailable += 1;
            } else {
                out.unexpected.push((i, status, text));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    out
}

/// What the receiver got, by (event id, request path): several endpoints on one
/// receiver differ by path.
pub struct Tally {
    pub requests: usize,
    /// Distinct event ids received.
    pub delivered: usize,
    /// Distinct (event, endpoint) pairs received.
    pub pairs: usize,
    /// Requests beyond one per (event, endpoint).
    pub duplicated: usize,
    /// Arrival times per (event id, path).
    pub arrivals: HashMap<(String, String), Vec<Instant>>,
}

/// Counts what `receiver` got so far.
pub fn tally(receiver: &Receiver) -> Tally {
    let mut arrivals: HashMap<(String, String), Vec<Instant>> = HashMap::new();
    let received = receiver.received();
    for r in &received {
        arrivals.entry((r.header("x-fenix-event-id").to_string(), r.path.clone())).or_default().push(r.at);
    }
    let delivered = arrivals.keys().map(|(e, _)| e.as_str()).collect::<BTreeSet<_>>().len();
    Tally {
        requests: received.len(),
        delivered,
        pairs: arrivals.len(),
        duplicated: received.len() - arrivals.len(),
        arrivals,
    }
}

/// Waits until every accepted event reached every endpoint path.
pub async fn wait_all_delivered(receiver: &Receiver, ids: &BTreeSet<String>, paths: &[String], timeout: Duration) {
    eventually(&format!("{} events reached {} endpoint(s)", ids.len(), paths.len()), timeout, || async {
        let got: BTreeSet<(String, String)> =
            receiver.received().iter().map(|r| (r.header("x-fenix-event-id").to_string(), r.path.clone())).collect();
        ids.iter().all(|id| paths.iter().all(|p| got.contains(&(id.clone(), p.clone()))))
    })
    .await;
}

/// Waits until the delivery log shows `expected` succeeded deliveries.
pub async fn wait_all_succeeded(fenix: &Fenix, app: &str, expected: usize, timeout: Duration) {
    eventually(&format!("{expected} deliveries succeeded"), timeout, || async {
        fenix.deliveries(app, "status=succeeded").await.len() == expected
    })
    .await;
}

/// One series' value in Prometheus text: the line `series value`, where
/// `series` is the name with its labels as written (`name{app_id="…"}`).
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find(|l| l.split(' ').next() == Some(series)).and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// Attempts this instance made, from its own `/metrics` (`fenix_attempts_total`).
pub async fn attempts_made(fenix: &Fenix) -> u64 {
    let resp = fenix.request("GET", "/metrics").send().await.expect("metrics request");
    assert_eq!(resp.status(), 200, "GET /metrics");
    let text = resp.text().await.expect("metrics body");
    let sum = |prefix: &str| -> Option<u64> {
        let values: Vec<f64> = text
            .lines()
            .filter(|l| l.starts_with(prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() as u64)
    };
    // `fenix_attempts_total{outcome,error}`; older builds labelled attempts per endpoint.
    sum("fenix_attempts_total{").or_else(|| sum("fenix_endpoint_attempts_total{")).unwrap_or(0)
}

/// Delivery counts by status, read from the database itself.
pub async fn statuses_in_db(url: &str) -> BTreeMap<String, i64> {
    // A leased row is `pending` with `lease_until` set: counted as `in_flight`, as the API shows it.
    const SQL: &str =
        "SELECT CASE WHEN lease_until IS NOT NULL AND status = 'pending' THEN 'in_flight' ELSE status END, \
                       COUNT(*) FROM deliveries GROUP BY 1";
    let rows: Vec<(String, i64)> = if url.starts_with("postgres") {
        let mut c = <sqlx::PgConnection as sqlx::Connection>::connect(url).await.expect("connect PostgreSQL");
        sqlx::query_as(SQL).fetch_all(&mut c).await.expect("count deliveries")
    } else {
        let mut c = <sqlx::SqliteConnection as sqlx::Connection>::connect(url).await.expect("open SQLite");
        sqlx::query_as(SQL).fetch_all(&mut c).await.expect("count deliveries")
    };
    rows.into_iter().collect()
}

/// Registers `count` endpoints on `receiver` (paths `/hook/0`, `/hook/1`, …); returns the paths.
pub async fn endpoints_on(fenix: &Fenix, app: &str, receiver: &Receiver, count: usize) -> Vec<String> {
    let mut paths = Vec::new();
    for k in 0..count {
        let url = format!("{}/{k}", receiver.url);
        fenix.create_endpoint(app, json!({"url": url})).await;
        paths.push(format!("/hook/{k}"));
    }
    paths
}

/// The instances' API addresses, shared with the burst's senders.
pub fn bases_of(instances: &[Fenix]) -> Arc<Mutex<Vec<String>>> {
    Arc::new(Mutex::new(instances.iter().map(|f| f.base.clone()).collect()))
}
