//! Limits that hold across instances on one PostgreSQL: an endpoint's rate
//! limit and its and its host's concurrency limits are the whole cluster's,
//! not each instance's; a killed instance's slots come back after their
//! lease; and a slow endpoint leaves the fast ones their throughput.
//!
//! Every figure is measured where a receiver would see it: arrival times and
//! requests in flight at the receiver.

use std::{
    sync::{atomic::AtomicUsize, Arc},
    time::{Duration, Instant},
};

use serde_json::json;

use super::common::{bases_of, private_db, spawn_burst, FAST_LEASES, NORMAL_LEASES};
use crate::support::{eventually, Fenix, Plan, Receiver};

/// The rate limit under test, and how long its rate is measured.
const RATE: usize = 50;
const WINDOW: Duration = Duration::from_secs(10);

/// Starts `n` instances on `db` with the given settings on top of `base`.
async fn instances(db: &crate::support::TestDb, n: usize, base: &[(&str, &str)], extra: &[(&str, &str)]) -> Vec<Fenix> {
    let env: Vec<(&str, &str)> = base.iter().chain(extra).copied().collect();
    let mut fenixes = Vec::new();
    for _ in 0..n {
        fenixes.push(Fenix::start(db, &env).await);
    }
    fenixes
}

/// Sends `n` events to `app` over every instance; answers their ids.
async fn send(fenixes: &[Fenix], app: &str, n: usize) -> std::collections::BTreeSet<String> {
    let burst = spawn_burst(bases_of(fenixes), &fenixes[0].token, app, n, 8, Arc::new(AtomicUsize::new(0)))
        .await
        .expect("burst");
    assert!(burst.unexpected.is_empty(), "unexpected API answers: {:?}", burst.unexpected);
    assert_eq!(burst.accepted.len(), n, "every event accepted");
    burst.ids()
}

/// Arrival times at `receiver`, sorted.
fn arrivals(receiver: &Receiver) -> Vec<Instant> {
    let mut at: Vec<Instant> = receiver.received().iter().map(|r| r.at).collect();
    at.sort();
    at
}

async fn a_rate_limit_holds_across(n: usize) {
    let Some((_pg, db)) = private_db().await else { return };
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let fenixes = instances(&db, n, &NORMAL_LEASES, &[]).await;
    let app = fenixes[0].create_app("acme").await;
    fenixes[0].create_endpoint(&app, json!({"url": receiver.url, "rate_limit_per_sec": RATE})).await;

    // A backlog well beyond the window: the limit, not the producer, sets the pace.
    let events = RATE * (WINDOW.as_secs() as usize + 4);
    send(&fenixes, &app, events).await;
    let skip = RATE; // the first second: ingestion still under way
                     // Until the window is over, or (far above the limit) the backlog is all sent.
    eventually("the window's requests arrived", WINDOW + Duration::from_secs(30), || async {
        let at = arrivals(&receiver);
        at.len() >= events || (at.len() > skip && at.last().is_some_and(|last| *last >= at[skip] + WINDOW))
    })
    .await;
    let at = arrivals(&receiver);
    let start = at[skip];
    let in_window = at.iter().filter(|t| **t >= start && **t < start + WINDOW).count();
    let per_sec = in_window as f64 / WINDOW.as_secs_f64();
    // The busiest single second anywhere, for the report.
    let busiest = at.iter().map(|t| at.iter().filter(|u| **u >= *t && **u < *t + Duration::from_secs(1)).count()).max();
    println!(
        "rate limit {RATE}/s over {n} instances: {in_window} requests in {WINDOW:?} ({per_sec:.1}/s), busiest second \
         {busiest:?}, {} requests so far",
        at.len()
    );
    let (low, high) = (RATE as f64 * 0.9, RATE as f64 * 1.1);
    assert!(per_sec <= high, "{per_sec:.1}/s arrived at a limit of {RATE}/s over {n} instances (more than 10 % above)");
    assert!(per_sec >= low, "only {per_sec:.1}/s arrived at a limit of {RATE}/s over {n} instances (10 % below)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_of_50_per_second_holds_within_10_percent_across_two_instances() {
    a_rate_limit_holds_across(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_of_50_per_second_holds_within_10_percent_across_three_instances() {
    a_rate_limit_holds_across(3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_and_host_concurrency_limits_hold_across_three_instances() {
    let Some((_pg, db)) = private_db().await else { return };
    let one = Receiver::http(|_| Plan::ok().after(Duration::from_millis(150))).await;
    let shared_host = Receiver::http(|_| Plan::ok().after(Duration::from_millis(150))).await;
    let limits = [("FENIX_ENDPOINT_CONCURRENCY", "3"), ("FENIX_HOST_CONCURRENCY", "5")];
    let fenixes = instances(&db, 3, &NORMAL_LEASES, &limits).await;
    // One endpoint alone on `one`, limited to 3 at a time. Four on the
    // other receiver; every receiver is 127.0.0.1, one host: 5 at a time over
    // all five endpoints, so `shared_host` gets at most 5 - what `one` holds.
    let lone = fenixes[0].create_app("lone").await;
    fenixes[0].create_endpoint(&lone, json!({"url": one.url})).await;
    let many = fenixes[0].create_app("many").await;
    for k in 0..4 {
        fenixes[0].create_endpoint(&many, json!({"url": format!("{}/{k}", shared_host.url)})).await;
    }
    let (lone_events, many_events) = (60, 30);
    let (a, b) = tokio::join!(send(&fenixes, &lone, lone_events), send(&fenixes, &many, many_events));
    eventually("every request arrived", Duration::from_secs(60), || async {
        one.count() >= a.len() && shared_host.count() >= b.len() * 4
    })
    .await;
    let (endpoint_most, host_most) = (one.max_concurrent(), shared_host.max_concurrent());
    println!("3 instances: the lone endpoint had at most {endpoint_most} in flight (limit 3), the host's other four {host_most} (limit 5)");
    assert!(endpoint_most <= 3, "{endpoint_most} requests in flight at once to an endpoint limited to 3");
    assert!(host_most <= 5, "{host_most} requests in flight at once to a host limited to 5");
    assert!(endpoint_most >= 2, "the limit is used, not starved: at most {endpoint_most} in flight");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slots_of_a_killed_instance_come_back_after_their_lease() {
    let Some((_pg, db)) = private_db().await else { return };
    let answer = Duration::from_millis(600);
    let receiver = Receiver::http(move |_| Plan::ok().after(answer)).await;
    let mut fenixes = instances(&db, 2, &FAST_LEASES, &[("FENIX_ENDPOINT_CONCURRENCY", "2")]).await;
    let app = fenixes[0].create_app("acme").await;
    fenixes[0].create_endpoint(&app, json!({"url": receiver.url})).await;
    let ids = send(&fenixes[..1], &app, 40).await;
    eventually("a few requests arrived", Duration::from_secs(20), || async { receiver.count() >= 4 }).await;
    fenixes[1].kill9();
    let killed_at = Instant::now();
    eventually("every event delivered by the survivor", Duration::from_secs(60), || async {
        let got: std::collections::BTreeSet<String> =
            receiver.received().iter().map(|r| r.header("x-fenix-event-id").to_string()).collect();
        ids.iter().all(|id| got.contains(id))
    })
    .await;
    // Once the dead instance's leases (2 s) are over, the survivor sends two at
    // a time again: two requests in the receiver's hands at once.
    let after: Vec<Instant> =
        arrivals(&receiver).into_iter().filter(|t| *t > killed_at + Duration::from_secs(3)).collect();
    let paired = after.windows(2).any(|w| w[1] - w[0] < answer / 2);
    println!(
        "SIGKILL with slots held: {} requests, at most {} in flight, {} after the leases ended",
        receiver.count(),
        receiver.max_concurrent(),
        after.len()
    );
    assert!(receiver.max_concurrent() <= 2, "{} in flight at once with a limit of 2", receiver.max_concurrent());
    assert!(paired, "after the dead instance's leases ended, the survivor never had two requests in flight");
}

/// Fast endpoints' deliveries per second (first request sent to last arrival).
async fn fast_throughput(fenixes: &[Fenix], uid: &str, with_slow: bool, events: usize) -> f64 {
    let fast = Receiver::http(|_| Plan::ok()).await;
    let slow = Receiver::http(|_| Plan::ok().after(Duration::from_secs(2))).await;
    let app = fenixes[0].create_app(uid).await;
    for k in 0..9 {
        fenixes[0].create_endpoint(&app, json!({"url": format!("{}/{k}", fast.url)})).await;
    }
    if with_slow {
        fenixes[0].create_endpoint(&app, json!({"url": slow.url})).await;
    }
    let started = Instant::now();
    send(fenixes, &app, events).await;
    eventually("every fast delivery arrived", Duration::from_secs(120), || async { fast.count() >= events * 9 }).await;
    let last = arrivals(&fast).last().copied().expect("arrivals");
    let rate = (events * 9) as f64 / (last - started).as_secs_f64();
    println!(
        "9 fast endpoints{}: {} deliveries at {rate:.0}/s (the slow one got {})",
        if with_slow { " and 1 answering in 2 s" } else { "" },
        events * 9,
        slow.count()
    );
    rate
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_endpoint_leaves_nine_fast_ones_their_throughput_across_two_instances() {
    let Some((_pg, db)) = private_db().await else { return };
    let fenixes = instances(&db, 2, &NORMAL_LEASES, &[]).await;
    let events = 150;
    let alone = fast_throughput(&fenixes, "alone", false, events).await;
    let beside_slow = fast_throughput(&fenixes, "beside-slow", true, events).await;
    // Generous (a quarter): a loaded 2-core machine varies a lot between two
    // runs (0.40 seen under CI); a slow
    // endpoint taking the slots or the claims of the others would cut the
    // fast ones to a trickle (a delivery per 2 s per slot it held).
    assert!(
        beside_slow >= alone * 0.25,
        "the fast endpoints fell from {alone:.0}/s to {beside_slow:.0}/s beside a slow one"
    );
}
