//! Several instances on one PostgreSQL split one burst: every accepted event
//! is delivered to every endpoint exactly once, and every instance did part of
//! the sending.

use std::{
    sync::{atomic::AtomicUsize, Arc},
    time::{Duration, Instant},
};

use super::common::{
    attempts_made, bases_of, endpoints_on, private_db, spawn_burst, tally, wait_all_delivered, wait_all_succeeded,
    NORMAL_LEASES,
};
use crate::support::{Fenix, Plan, Receiver};

const EVENTS: usize = 300;

async fn instances_deliver_a_burst_once_each(instances: usize, endpoints: usize) {
    let Some((_pg, db)) = private_db().await else { return };
    let started = Instant::now();
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(3))).await;
    let mut fenixes = Vec::new();
    for _ in 0..instances {
        fenixes.push(Fenix::start(&db, &NORMAL_LEASES).await);
    }
    let app = fenixes[0].create_app("acme").await;
    let paths = endpoints_on(&fenixes[0], &app, &receiver, endpoints).await;

    let burst = spawn_burst(bases_of(&fenixes), &fenixes[0].token, &app, EVENTS, 8, Arc::new(AtomicUsize::new(0)))
        .await
        .expect("burst");
    assert!(burst.unexpected.is_empty(), "unexpected API answers: {:?}", burst.unexpected);
    assert_eq!(burst.accepted.len(), EVENTS, "every event accepted");
    let ids = burst.ids();
    assert_eq!(ids.len(), EVENTS, "one event id per event");

    wait_all_delivered(&receiver, &ids, &paths, Duration::from_secs(30)).await;
    // Ask the last instance: the log is the database's, not one instance's.
    wait_all_succeeded(&fenixes[instances - 1], &app, EVENTS * endpoints, Duration::from_secs(20)).await;
    let log = fenixes[instances - 1].deliveries(&app, "").await;
    assert_eq!(log.len(), EVENTS * endpoints, "one delivery per event and endpoint");
    let retried: Vec<_> = log.iter().filter(|d| d["attempt_count"] != 1).collect();
    assert!(retried.is_empty(), "deliveries attempted more than once: {retried:?}");

    let t = tally(&receiver);
    let mut per_instance = Vec::new();
    for f in &fenixes {
        per_instance.push(attempts_made(f).await);
    }
    println!(
        "{instances} instances, {endpoints} endpoint(s): accepted {}, delivered {} distinct events \
         ({} event×endpoint pairs, {} requests), duplicated {}; attempts per instance {per_instance:?}; {:.1} s",
        ids.len(),
        t.delivered,
        t.pairs,
        t.requests,
        t.duplicated,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(t.delivered, EVENTS, "every accepted event delivered, nothing else");
    assert_eq!(t.pairs, EVENTS * endpoints, "every endpoint got every event");
    assert_eq!(t.duplicated, 0, "no delivery attempted twice");
    assert_eq!(per_instance.iter().sum::<u64>(), (EVENTS * endpoints) as u64, "one attempt per delivery in all");
    assert!(per_instance.iter().all(|n| *n > 0), "every instance sent part of the burst: {per_instance:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_deliver_a_burst_once_each() {
    instances_deliver_a_burst_once_each(2, 2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_deliver_a_burst_once_each() {
    instances_deliver_a_burst_once_each(3, 3).await;
}
