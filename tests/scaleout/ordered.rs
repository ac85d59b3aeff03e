//! Ordered delivery with two instances on one PostgreSQL, one killed with
//! SIGKILL while its lanes are moving: the survivor takes each lane on from
//! its head once the dead instance's lease expires, never from a later
//! delivery. The receiver may see the dead instance's last request of a lane
//! again (its outcome was lost), but only right after itself, never after a
//! later event of its lane.

use std::{collections::BTreeMap, time::Duration};

use serde_json::json;

use super::common::{private_db, wait_all_succeeded, FAST_LEASES};
use crate::support::{eventually, Fenix, Plan, Receiver};

const EVENTS: i64 = 120;
const KEYS: i64 = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_holds_per_key_across_two_instances_and_a_sigkill() {
    let Some((_pg, db)) = private_db().await else { return };
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(40))).await;
    let mut fenixes = [Fenix::start(&db, &FAST_LEASES).await, Fenix::start(&db, &FAST_LEASES).await];
    let app = fenixes[0].create_app("acme").await;
    fenixes[0].create_endpoint(&app, json!({"url": receiver.url, "ordered": true})).await;

    // One producer, one event after the other, taking turns between the two
    // instances: the order of acceptance is the order of `n`.
    for n in 0..EVENTS {
        let key = format!("k{}", n % KEYS);
        let body = json!({"type": "booking.confirmed", "ordering_key": key, "data": {"n": n, "key": key}});
        fenixes[(n % 2) as usize].send_event(&app, body).await;
    }
    eventually("a third of the events arrived", Duration::from_secs(30), || async {
        receiver.count() >= (EVENTS / 3) as usize
    })
    .await;
    fenixes[1].kill9();

    wait_all_succeeded(&fenixes[0], &app, EVENTS as usize, Duration::from_secs(60)).await;
    let mut per_key: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for r in receiver.received() {
        let v = r.json();
        per_key
            .entry(v["data"]["key"].as_str().unwrap().to_string())
            .or_default()
            .push(v["data"]["n"].as_i64().unwrap());
    }
    let mut duplicates = 0;
    for (key, got) in &per_key {
        let mut folded: Vec<i64> = Vec::new();
        for n in got {
            if folded.last() == Some(n) {
                duplicates += 1;
            } else {
                folded.push(*n);
            }
        }
        let k: i64 = key[1..].parse().unwrap();
        let expected: Vec<i64> = (0..EVENTS).filter(|n| n % KEYS == k).collect();
        assert_eq!(folded, expected, "key {key} in order, a repeat only right after itself: {got:?}");
    }
    println!("ordered, SIGKILL of 1 of 2 instances: {EVENTS} events in {KEYS} lanes, {duplicates} redelivered");
    assert!(duplicates <= KEYS as usize, "at most the dead instance's request in flight per lane");
    // One request at a time per lane, over both instances; a redelivered
    // request may overlap its own first copy (a lease that ran out under a
    // request slowed by a loaded machine, as FAST_LEASES allow), never another event.
    assert!(
        receiver.max_concurrent() <= KEYS as usize + duplicates,
        "one request at a time per lane, over both instances (max {}, {duplicates} redelivered)",
        receiver.max_concurrent()
    );
}
