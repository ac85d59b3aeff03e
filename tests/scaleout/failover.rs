//! PostgreSQL failover: a primary and a synchronous streaming standby on
//! loopback, two instances on a `DATABASE_URL` that lists both hosts with
//! `target_session_attrs=read-write`. The primary is killed mid-burst and the
//! standby promoted: every event answered `2xx` is delivered, the only
//! duplicates are deliveries already sent before the promotion, and both
//! instances take and deliver new events once the standby is promoted. The
//! old primary's address then serves a standby: an instance started on the
//! same URL passes it over and writes to the new primary.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use serde_json::json;

use super::common::{bases_of, endpoints_on, spawn_burst, tally, wait_all_delivered, wait_all_succeeded, FAST_LEASES};
use crate::support::{eventually, postgres::PrivatePostgres, Backend, Fenix, Plan, Receiver, TestDb};

const EVENTS: usize = 300;

/// The primary waits for its standby's flush before a commit returns (set
/// once the standby runs: before, every commit would wait for it).
const SYNCHRONOUS: [&str; 2] =
    ["ALTER SYSTEM SET synchronous_commit = on", "ALTER SYSTEM SET synchronous_standby_names = '*'"];

/// A standby's own settings: once promoted it has no standby of its own, so
/// it must not wait for one (or every commit would hang).
const STANDBY: &str = "synchronous_standby_names = ''";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_primary_and_a_promoted_standby_lose_no_accepted_event() {
    let Some(primary) = PrivatePostgres::start_new_with("wal_level = replica").await else { return };
    let db = primary.test_db().await;
    let name = db.url.rsplit('/').next().expect("database name").to_string();
    let standby = primary.start_standby(None, STANDBY).await;
    let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&primary.admin_url).await.expect("primary");
    for sql in SYNCHRONOUS.into_iter().chain(["SELECT pg_reload_conf()"]) {
        sqlx::query(sql).execute(&mut admin).await.expect(sql);
    }
    eventually("the standby replicates synchronously", Duration::from_secs(30), || async {
        let mut c = <sqlx::PgConnection as sqlx::Connection>::connect(&primary.admin_url).await.expect("primary");
        let states: Vec<String> =
            sqlx::query_scalar("SELECT sync_state FROM pg_stat_replication").fetch_all(&mut c).await.expect("query");
        states == ["sync"]
    })
    .await;
    let url = format!(
        "postgres://fenix@127.0.0.1:{},127.0.0.1:{}/{name}?target_session_attrs=read-write",
        primary.port, standby.port
    );
    let both = TestDb { backend: Backend::Postgres, url, dir: tempfile::tempdir().expect("temp dir") };

    let started = Instant::now();
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(20))).await;
    let mut fenixes = vec![Fenix::start(&both, &FAST_LEASES).await, Fenix::start(&both, &FAST_LEASES).await];
    let app = fenixes[0].create_app("acme").await;
    let paths = endpoints_on(&fenixes[0], &app, &receiver, 1).await;

    let acked = Arc::new(AtomicUsize::new(0));
    let burst = spawn_burst(bases_of(&fenixes), &fenixes[0].token, &app, EVENTS, 8, acked.clone());
    eventually("a third of the burst arrived", Duration::from_secs(30), || async { receiver.count() >= EVENTS / 3 })
        .await;

    drop(admin);
    primary.kill().await;
    let (arrived_at_kill, acked_at_kill) = (receiver.count(), acked.load(Ordering::SeqCst));
    // Between the crash and the promotion nothing can be stored: refused with a code, never accepted.
    let (status, body) = fenixes[0]
        .call("POST", &format!("/v1/apps/{app}/events"), Some(json!({"type": "probe.failover", "data": {}})))
        .await;
    assert_eq!((status, &body["error"]["code"]), (503, &json!("database_unavailable")), "{body}");
    standby.promote().await;
    let promoted_at = Instant::now();

    // Both instances take new events again, from the new primary.
    let mut resumed = Vec::new();
    for (k, f) in fenixes.iter().enumerate() {
        eventually(&format!("instance {k} accepts events after the promotion"), Duration::from_secs(20), || async {
            let probe = json!({"type": "probe.promoted", "data": {"k": k}, "id": format!("after-{k}")});
            matches!(f.call("POST", &format!("/v1/apps/{app}/events"), Some(probe)).await.0, 200 | 202)
        })
        .await;
        resumed.push(promoted_at.elapsed());
    }

    let burst = burst.await.expect("burst");
    assert!(burst.unexpected.is_empty(), "unexpected API answers (not 2xx, not 503): {:?}", burst.unexpected);
    assert_eq!(burst.accepted.len(), EVENTS, "every event accepted, after the promotion if not before");
    let ids = burst.ids();
    assert_eq!(ids.len(), EVENTS, "a resent event keeps its original id");

    wait_all_delivered(&receiver, &ids, &paths, Duration::from_secs(60)).await;
    wait_all_succeeded(&fenixes[1], &app, EVENTS + 2, Duration::from_secs(30)).await;
    for (k, f) in fenixes.iter_mut().enumerate() {
        assert!(f.child.try_wait().expect("try_wait").is_none(), "instance {k} still runs; its log:\n{}", f.logs());
    }
    let t = tally(&receiver);
    let duplicated: Vec<_> = t.arrivals.iter().filter(|(_, at)| at.len() > 1).collect();
    println!(
        "PostgreSQL failover mid-burst: accepted {} ({acked_at_kill} before the kill; {} answers 503 \
         database_unavailable retried, {} replays of a resent request), requests at the kill {arrived_at_kill}, \
         delivered {} distinct, duplicated {} ({} deliveries sent twice); instances resumed {:?} after the \
         promotion; {:.1} s",
        ids.len(),
        burst.unavailable,
        burst.replayed,
        t.delivered,
        t.duplicated,
        duplicated.len(),
        resumed,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(t.delivered, EVENTS + 2, "every accepted event delivered (and the two probes), nothing else");
    for ((event, _), at) in &duplicated {
        let first = at.iter().min().expect("arrivals");
        assert!(
            *first < promoted_at,
            "{event} was sent twice but first after the promotion: a duplicate without a crash"
        );
        assert_eq!(at.len(), 2, "{event}: at most the request in flight at the crash and its retry");
    }

    // The old primary's address comes back as a standby of the new primary.
    let rejoined = standby.start_standby(Some(primary.port), STANDBY).await;
    let third = Fenix::start(&both, &FAST_LEASES).await;
    let (status, body) = third
        .call("POST", &format!("/v1/apps/{app}/events"), Some(json!({"type": "probe.rejoined", "data": {}})))
        .await;
    assert_eq!(status, 202, "an instance started with the standby first in the list writes to the primary: {body}");
    let id = body["id"].as_str().expect("event id").to_string();
    eventually("the event taken past the standby is delivered", Duration::from_secs(20), || async {
        receiver.received().iter().any(|r| r.header("x-fenix-event-id") == id)
    })
    .await;
    drop(rejoined);
}
