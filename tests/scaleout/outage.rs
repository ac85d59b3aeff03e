//! PostgreSQL stopped and started again in the middle of a burst: the instances
//! keep running, the API answers `503 database_unavailable` while the database is
//! away (it never accepts what it cannot store), and delivery resumes by itself.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use serde_json::json;

use super::common::{
    bases_of, endpoints_on, private_db, spawn_burst, tally, wait_all_delivered, wait_all_succeeded, FAST_LEASES,
};
use crate::support::{eventually, Fenix, Plan, Receiver};

const EVENTS: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_mid_burst_loses_nothing_and_nobody_crashes() {
    let Some((pg, db)) = private_db().await else { return };
    let started = Instant::now();
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(20))).await;
    let mut fenixes = vec![Fenix::start(&db, &FAST_LEASES).await, Fenix::start(&db, &FAST_LEASES).await];
    let app = fenixes[0].create_app("acme").await;
    let paths = endpoints_on(&fenixes[0], &app, &receiver, 1).await;

    let acked = Arc::new(AtomicUsize::new(0));
    let burst = spawn_burst(bases_of(&fenixes), &fenixes[0].token, &app, EVENTS, 8, acked.clone());
    eventually("a third of the burst arrived", Duration::from_secs(20), || async { receiver.count() >= EVENTS / 3 })
        .await;

    pg.stop().await;
    let (arrived_at_stop, acked_at_stop) = (receiver.count(), acked.load(Ordering::SeqCst));
    // While the database is away: an event is refused with a code, not stored, not a crash.
    let (status, body) = fenixes[0]
        .call("POST", &format!("/v1/apps/{app}/events"), Some(json!({"type": "probe.outage", "data": {}})))
        .await;
    assert_eq!(status, 503, "ingestion while PostgreSQL is down: {body}");
    assert_eq!(body["error"]["code"], "database_unavailable", "{body}");
    let (status, body) = fenixes[1].call("GET", &format!("/v1/apps/{app}/deliveries"), None).await;
    assert_eq!(status, 503, "a read while PostgreSQL is down: {body}");
    assert_eq!(body["error"]["code"], "database_unavailable", "{body}");
    let health = reqwest::get(format!("{}/healthz", fenixes[1].base)).await.expect("healthz");
    assert_eq!(health.status(), 503, "health while PostgreSQL is down");
    // Give the workers time to fail claims and lose leases while the database is away.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for (k, f) in fenixes.iter_mut().enumerate() {
        assert!(
            f.child.try_wait().expect("try_wait").is_none(),
            "instance {k} exited while PostgreSQL was down; its log:\n{}",
            f.logs()
        );
    }
    let arrived_during_outage = receiver.count() - arrived_at_stop;
    pg.start().await;

    let burst = burst.await.expect("burst");
    assert!(burst.unexpected.is_empty(), "unexpected API answers (not 2xx, not 503): {:?}", burst.unexpected);
    assert_eq!(burst.accepted.len(), EVENTS, "every event accepted once the database is back");
    let ids = burst.ids();
    assert_eq!(ids.len(), EVENTS, "a resent event keeps its original id");

    wait_all_delivered(&receiver, &ids, &paths, Duration::from_secs(30)).await;
    wait_all_succeeded(&fenixes[1], &app, EVENTS, Duration::from_secs(20)).await;
    assert_eq!(
        fenixes[0].deliveries(&app, "").await.len(),
        EVENTS,
        "one delivery per accepted event; the event refused with 503 was not stored"
    );
    for (k, f) in fenixes.iter_mut().enumerate() {
        assert!(f.child.try_wait().expect("try_wait").is_none(), "instance {k} still runs");
    }

    let t = tally(&receiver);
    println!(
        "PostgreSQL restarted mid-burst: accepted {} ({acked_at_stop} before the stop; {} answers 503 \
         database_unavailable retried, {} replays of a resent request), requests at the stop {arrived_at_stop}, \
         during the outage {arrived_during_outage}, delivered {} distinct, duplicated {}; {:.1} s",
        ids.len(),
        burst.unavailable,
        burst.replayed,
        t.delivered,
        t.duplicated,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(t.delivered, EVENTS, "every accepted event delivered, nothing else");
}
