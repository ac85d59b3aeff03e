//! One of two instances killed with SIGKILL in the middle of a burst: the other
//! takes over its leased work once the leases expire, and nothing accepted is
//! lost. The only duplicates allowed are requests the dead instance had in
//! flight when it died.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use super::common::{
    bases_of, endpoints_on, private_db, spawn_burst, tally, wait_all_delivered, wait_all_succeeded, FAST_LEASES,
};
use crate::support::{eventually, Fenix, Plan, Receiver};

const EVENTS: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_one_instance_mid_burst_loses_nothing() {
    let Some((_pg, db)) = private_db().await else { return };
    let started = Instant::now();
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(30))).await;
    let mut fenixes = vec![Fenix::start(&db, &FAST_LEASES).await, Fenix::start(&db, &FAST_LEASES).await];
    let app = fenixes[0].create_app("acme").await;
    let paths = endpoints_on(&fenixes[0], &app, &receiver, 1).await;

    let bases = bases_of(&fenixes);
    let acked = Arc::new(AtomicUsize::new(0));
    let burst = spawn_burst(bases.clone(), &fenixes[0].token, &app, EVENTS, 8, acked.clone());

    eventually("a third of the burst arrived", Duration::from_secs(20), || async { receiver.count() >= EVENTS / 3 })
        .await;
    // Producers stop choosing the victim; requests it was answering are retried on the survivor.
    bases.lock().unwrap().retain(|b| *b != fenixes[1].base);
    fenixes[1].kill9();
    let killed_at = Instant::now();
    let (arrived_at_kill, acked_at_kill) = (receiver.count(), acked.load(Ordering::SeqCst));

    let burst = burst.await.expect("burst");
    assert!(burst.unexpected.is_empty(), "unexpected API answers: {:?}", burst.unexpected);
    assert_eq!(burst.accepted.len(), EVENTS, "every event accepted (by the survivor after the kill)");
    let ids = burst.ids();
    assert_eq!(ids.len(), EVENTS, "a resent event keeps its original id");

    let survivor = &mut fenixes[0];
    wait_all_delivered(&receiver, &ids, &paths, Duration::from_secs(30)).await;
    wait_all_succeeded(&*survivor, &app, EVENTS, Duration::from_secs(20)).await;
    assert_eq!(survivor.deliveries(&app, "").await.len(), EVENTS, "one delivery per event, none extra");
    assert!(survivor.child.try_wait().expect("try_wait").is_none(), "the survivor still runs");

    let t = tally(&receiver);
    // A request of the dead instance may still be read by the receiver just after
    // the kill (it was in the socket already); allow a moment for that.
    let in_flight_window = killed_at + Duration::from_secs(1);
    let duplicated_pairs: Vec<_> = t.arrivals.iter().filter(|(_, at)| at.len() > 1).collect();
    println!(
        "SIGKILL of 1 of 2 instances: accepted {} ({acked_at_kill} before the kill, {} replays of a resent request, \
         {} connection errors retried), requests at the kill {arrived_at_kill}, delivered {} distinct, duplicated {} \
         ({} deliveries sent twice); {:.1} s",
        ids.len(),
        burst.replayed,
        burst.connection_errors,
        t.delivered,
        t.duplicated,
        duplicated_pairs.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(t.delivered, EVENTS, "every accepted event delivered, nothing else");
    for ((event, _), at) in &duplicated_pairs {
        let first = at.iter().min().expect("arrivals");
        assert!(
            *first <= in_flight_window,
            "{event} was sent twice but its first request came after the kill: a duplicate without a crash"
        );
        assert_eq!(at.len(), 2, "{event}: at most the dead instance's request and the survivor's");
    }
}
