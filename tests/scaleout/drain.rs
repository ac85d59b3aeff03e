//! SIGTERM drains: the instance stops claiming, lets its running attempts
//! finish, writes their outcomes, gives back any lease still held and exits 0;
//! a new instance then delivers the rest.

use std::time::{Duration, Instant};

use super::common::{endpoints_on, private_db, statuses_in_db, tally, wait_all_delivered, wait_all_succeeded};
use crate::support::{eventually, fenix::base_env, Backend, Fenix, Plan, Receiver, TestDb};

const EVENTS: usize = 60;

async fn sigterm_drains(db: TestDb) {
    let started = Instant::now();
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(500))).await;
    // At most 16 attempts at once, so the backlog stays unclaimed when SIGTERM comes.
    let env = [("FENIX_LEASE_DURATION", "3s"), ("FENIX_ATTEMPT_TIMEOUT", "2s"), ("FENIX_WORKER_CONCURRENCY", "16")];
    // The whole backlog is stored first, by an API-only process, so it is all due when the worker starts.
    let mut full_env = base_env(&db);
    full_env.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut ingestion = Fenix::spawn(full_env, db.path("api-only.log"), &["serve", "--api-only"]).await;
    let app = ingestion.create_app("acme").await;
    let paths = endpoints_on(&ingestion, &app, &receiver, 1).await;
    let mut ids = std::collections::BTreeSet::new();
    for i in 0..EVENTS {
        let e = ingestion.send_event(&app, serde_json::json!({"type": "drain.item", "data": {"i": i}})).await;
        ids.insert(e["id"].as_str().expect("id").to_string());
    }
    assert!(ingestion.terminate().await.success(), "the API-only process stops cleanly");

    let mut fenix = Fenix::start(&db, &env).await;
    eventually("attempts are in flight", Duration::from_secs(10), || async { receiver.count() >= 8 }).await;

    let at_signal = receiver.count();
    let signalled = Instant::now();
    let status = fenix.terminate().await;
    let drain_time = signalled.elapsed();
    assert!(status.success(), "exit status after SIGTERM: {status:?}; log:\n{}", fenix.logs());
    let at_exit = receiver.count();
    let statuses = statuses_in_db(&db.url).await;
    assert_eq!(statuses.get("in_flight"), None, "nothing left leased after the drain: {statuses:?}");
    let succeeded_at_exit = statuses.get("succeeded").copied().unwrap_or(0) as usize;
    assert_eq!(succeeded_at_exit, at_exit, "every request sent before the exit has its outcome written: {statuses:?}");
    assert!(
        statuses.get("pending").copied().unwrap_or(0) > 0,
        "the test needs a backlog left for the next instance: {statuses:?}"
    );

    let next = Fenix::start(&db, &env).await;
    wait_all_delivered(&receiver, &ids, &paths, Duration::from_secs(30)).await;
    wait_all_succeeded(&next, &app, EVENTS, Duration::from_secs(10)).await;
    let t = tally(&receiver);
    println!(
        "SIGTERM drain ({:?}): accepted {EVENTS}, requests at the signal {at_signal}, at the exit {at_exit} \
         (drained in {:.2} s, exit {status}), statuses at exit {statuses:?}; after a new instance: delivered {} \
         distinct, duplicated {}; {:.1} s",
        db.backend,
        drain_time.as_secs_f64(),
        t.delivered,
        t.duplicated,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(t.delivered, EVENTS, "every accepted event delivered");
    assert_eq!(t.duplicated, 0, "a graceful stop sends nothing twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_and_exits_zero_with_nothing_leased_on_sqlite() {
    sigterm_drains(TestDb::new(Backend::Sqlite).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_and_exits_zero_with_nothing_leased_on_postgres() {
    let Some((_pg, db)) = private_db().await else { return };
    sigterm_drains(db).await;
}
