//! Adaptive per-endpoint concurrency as receivers see it: one answering 503
//! (or timing out) gets fewer requests at once than the old fixed limit of 32 (and fewer
//! still once the first ones failed), one answering fast gets more than 32
//! at once when the maximum allows; with the minimum equal to the maximum
//! the old fixed limit is back.
//!
//! Requests in flight are read at the receiver: its most at once, and, for
//! a receiver answering after a fixed delay, how many arrived within that
//! delay before each request (all still being answered then).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// Sends `n` events in batches of at most 1000 (a backlog made quickly).
async fn backlog(fenix: &Fenix, app: &str, n: usize) {
    let mut sent = 0;
    while sent < n {
        let take = (n - sent).min(1000);
        let events: Vec<_> =
            (sent..sent + take).map(|i| json!({"type": "booking.confirmed", "data": {"n": i}})).collect();
        let (status, out) =
            fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": events}))).await;
        assert_eq!(status, 202, "{out}");
        sent += take;
    }
}

/// For each request from the `skip`-th on (by arrival), the requests that
/// arrived within `answer` before it: all were still being answered then.
fn most_in_flight_after(receiver: &Receiver, skip: usize, answer: Duration) -> usize {
    let mut at: Vec<Instant> = receiver.received().iter().map(|r| r.at).collect();
    at.sort();
    (skip..at.len()).map(|i| at[..=i].iter().filter(|t| **t + answer > at[i]).count()).max().unwrap_or(0)
}

async fn a_receiver_answering_503_gets_fewer_requests_at_once_than_the_old_fixed_32(backend: Backend) {
    const EVENTS: usize = 60;
    let answer = Duration::from_millis(100);
    let db = TestDb::new(backend).await;
    // The defaults: between 1 and 64 at once per endpoint.
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(move |_| Plan::status(503).after(answer)).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    backlog(&fenix, &app, EVENTS).await;
    eventually("every event's first attempt arrived", Duration::from_secs(90), || async { receiver.count() >= EVENTS })
        .await;
    let (most, later) = (receiver.max_concurrent(), most_in_flight_after(&receiver, 20, answer));
    println!("a receiver answering 503: at most {most} requests at once, {later} after the first 20");
    assert!(most <= 16, "{most} requests at once to a receiver answering 503 (the fixed limit was 32)");
    assert!(later <= 3, "after the first failures, still {later} requests at once to a receiver answering 503");
}

async fn a_fast_receiver_gets_more_than_32_requests_at_once_when_the_maximum_allows(backend: Backend) {
    const EVENTS: usize = 3000;
    let db = TestDb::new(backend).await;
    let limits = [("FENIX_ENDPOINT_CONCURRENCY", "128"), ("FENIX_HOST_CONCURRENCY", "128")];
    let fenix = Fenix::start(&db, &limits).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(50))).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let started = Instant::now();
    backlog(&fenix, &app, EVENTS).await;
    eventually("every event arrived", Duration::from_secs(180), || async { receiver.count() >= EVENTS }).await;
    let most = receiver.max_concurrent();
    println!("a receiver answering in 50 ms: {EVENTS} events in {:?}, at most {most} at once", started.elapsed());
    assert_eq!(receiver.count(), EVENTS, "each event sent once");
    assert!(most > 32, "a fast receiver got at most {most} requests at once (the fixed limit was 32)");
    assert!(most <= 128, "{most} requests at once past the maximum of 128");
}

async fn a_receiver_that_times_out_gets_fewer_requests_at_once_after_the_first_timeouts(backend: Backend) {
    const EVENTS: usize = 30;
    let timeout = Duration::from_millis(300);
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_ATTEMPT_TIMEOUT", "300ms")]).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_secs(2))).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    backlog(&fenix, &app, EVENTS).await;
    eventually("every event's first attempt arrived", Duration::from_secs(90), || async { receiver.count() >= EVENTS })
        .await;
    // An attempt is in flight from its arrival until it times out: requests
    // arriving within the timeout of each other overlapped.
    let (first, later) = (most_in_flight_after(&receiver, 0, timeout), most_in_flight_after(&receiver, 20, timeout));
    println!("a receiver that times out: at most {first} requests at once, {later} after the first 20");
    assert!(first <= 16, "{first} requests at once to a receiver that times out (the fixed limit was 32)");
    assert!(later <= 3, "after the first timeouts, still {later} requests at once to a receiver that times out");
}

crate::on_both_backends!(
    a_receiver_answering_503_gets_fewer_requests_at_once_than_the_old_fixed_32,
    a_receiver_that_times_out_gets_fewer_requests_at_once_after_the_first_timeouts,
    a_fast_receiver_gets_more_than_32_requests_at_once_when_the_maximum_allows,
    a_receiver_answering_slowly_gets_fewer_requests_at_once_after_its_first_answers,
);

/// `FENIX_ENDPOINT_CONCURRENCY_MIN` equal to the maximum: the fixed limit of
/// before, used in full whatever the receiver answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_minimum_equal_to_the_maximum_the_limit_is_fixed_as_before() {
    const EVENTS: usize = 64;
    let db = TestDb::new(Backend::Sqlite).await;
    let fixed = [("FENIX_ENDPOINT_CONCURRENCY", "32"), ("FENIX_ENDPOINT_CONCURRENCY_MIN", "32")];
    let fenix = Fenix::start(&db, &fixed).await;
    let receiver = Receiver::http(|_| Plan::status(503).after(Duration::from_millis(300))).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    backlog(&fenix, &app, EVENTS).await;
    eventually("every event's first attempt arrived", Duration::from_secs(60), || async { receiver.count() >= EVENTS })
        .await;
    let most = receiver.max_concurrent();
    println!("fixed limit of 32, a receiver answering 503: at most {most} requests at once");
    assert!(most <= 32, "{most} requests at once past the fixed limit of 32");
    assert!(most > 16, "only {most} requests at once: the fixed limit was not used in full");
}

/// A receiver that holds every request for 3 s (answering 200 in the end)
/// is not healthy: after its first answers it gets what that latency
/// justifies (ten one-second answers' worth: 3 at once), not the initial 10
/// or more, which it kept before.
async fn a_receiver_answering_slowly_gets_fewer_requests_at_once_after_its_first_answers(backend: Backend) {
    const EVENTS: usize = 22;
    let answer = Duration::from_secs(3);
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_ATTEMPT_TIMEOUT", "10s"), ("FENIX_LEASE_DURATION", "30s")]).await;
    let receiver = Receiver::http(move |_| Plan::ok().after(answer)).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    backlog(&fenix, &app, EVENTS).await;
    eventually("every event arrived", Duration::from_secs(90), || async { receiver.count() >= EVENTS }).await;
    let (first, later) = (receiver.max_concurrent(), most_in_flight_after(&receiver, 12, answer));
    println!("a receiver answering in 3 s: at most {first} requests at once, {later} after the first 12");
    assert!(first <= 10, "{first} requests at once before any answer (the initial limit is 10)");
    assert!(later <= 4, "after its first slow answers, still {later} requests at once to a receiver answering in 3 s");
}
