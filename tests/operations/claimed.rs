//! An operator's action reaches the deliveries a worker already holds:
//! behind a receiver that answers after 2 s, with a backlog claimed into
//! the workers' hands, no request starts more than a second after the
//! answer to a pause, a URL change or the app's deletion (requests already
//! on the wire finish). On PostgreSQL the action goes through one instance
//! while two instances' workers hold the backlog.

use std::time::{Duration, Instant};

use serde_json::json;

use super::common::{ep_path, id_of};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

const SLOW: Duration = Duration::from_secs(2);
/// The contract (docs/operations.md#pause-and-resume).
const WITHIN: Duration = Duration::from_secs(1);

/// The instances and a slow receiver with a backlog of 300 events claimed
/// into the workers' hands; answers (fenix instances, receiver, app, endpoint).
async fn backlog_behind_a_slow_receiver(backend: Backend, db: &TestDb) -> (Vec<Fenix>, Receiver, String, String) {
    let settings = [("FENIX_ATTEMPT_TIMEOUT", "10s"), ("FENIX_LEASE_DURATION", "30s")];
    let mut instances = vec![Fenix::start(db, &settings).await];
    if backend == Backend::Postgres {
        instances.push(Fenix::start(db, &settings).await);
    }
    let receiver = Receiver::http(|_| Plan::ok().after(SLOW)).await;
    let fenix = &instances[0];
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let events: Vec<_> = (0..300).map(|i| json!({"type": "booking.confirmed", "data": {"i": i}})).collect();
    let (status, out) =
        fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": events}))).await;
    assert_eq!(status, 202, "{out}");
    eventually("the workers are sending", Duration::from_secs(30), || async { receiver.count() >= 5 }).await;
    (instances, receiver, app, ep)
}

/// Requests that arrived at `receiver` later than `WITHIN` after `answered`.
fn started_after(receiver: &Receiver, answered: Instant) -> usize {
    receiver.received().iter().filter(|r| r.at > answered + WITHIN).count()
}

async fn no_request_starts_a_second_after_a_pause(backend: Backend) {
    let db = TestDb::new(backend).await;
    let (instances, receiver, app, ep) = backlog_behind_a_slow_receiver(backend, &db).await;
    let fenix = instances.last().expect("an instance");
    let (status, paused) = fenix.call("POST", &ep_path(&app, &ep, "/pause"), None).await;
    let answered = Instant::now();
    assert_eq!(status, 200, "{paused}");
    // Long enough for the held backlog to have gone out under the old state.
    tokio::time::sleep(SLOW * 3).await;
    let late = started_after(&receiver, answered);
    println!("{backend:?}: {} requests in all, {late} started more than {WITHIN:?} after the pause", receiver.count());
    assert_eq!(late, 0, "requests started after the pause took effect");
}

async fn no_request_goes_to_the_old_url_a_second_after_it_changed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let (instances, old, app, ep) = backlog_behind_a_slow_receiver(backend, &db).await;
    let new = Receiver::http(|_| Plan::ok()).await;
    let fenix = instances.last().expect("an instance");
    let (status, moved) =
        fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep}"), Some(json!({"url": new.url}))).await;
    let answered = Instant::now();
    assert_eq!(status, 200, "{moved}");
    eventually("the waiting deliveries go to the new URL", Duration::from_secs(60), || async { new.count() >= 100 })
        .await;
    let late = started_after(&old, answered);
    println!(
        "{backend:?}: {} requests to the old URL, {late} of them more than {WITHIN:?} after the change",
        old.count()
    );
    assert_eq!(late, 0, "requests went to the old URL after the change took effect");
}

async fn no_payload_leaves_a_second_after_its_app_was_deleted(backend: Backend) {
    let db = TestDb::new(backend).await;
    let (instances, receiver, app, _ep) = backlog_behind_a_slow_receiver(backend, &db).await;
    let fenix = instances.last().expect("an instance");
    let (status, out) = fenix.call("DELETE", &format!("/v1/apps/{app}"), None).await;
    let answered = Instant::now();
    assert_eq!(status, 202, "{out}");
    tokio::time::sleep(SLOW * 3).await;
    let late = started_after(&receiver, answered);
    println!(
        "{backend:?}: {} requests in all, {late} started more than {WITHIN:?} after the deletion",
        receiver.count()
    );
    assert_eq!(late, 0, "a deleted app's payloads were sent after its deletion took effect");
}

crate::on_both_backends!(
    no_request_starts_a_second_after_a_pause,
    no_request_goes_to_the_old_url_a_second_after_it_changed,
    no_payload_leaves_a_second_after_its_app_was_deleted,
);
