//! A fair share of the delivery engine for every app, as tenants see it:
//! one app whose sixty receivers hold every request for 8 s (half of them
//! answering 404, half 200), with a backlog of thousands of deliveries,
//! keeps another app's events from nothing. Its receiver gets each of them
//! long before any of the slow app's requests could have ended: what it
//! waited for was not a slow request, but at most a claim. On PostgreSQL,
//! two instances share the work.
//!
//! Every receiver is on 127.0.0.1, so the apps also share one destination
//! host and its limit, as two apps whose customers use the same chat
//! service's incoming webhooks do.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// How long the slow app's receivers hold each request.
const SLOW_ANSWER: Duration = Duration::from_secs(8);

async fn one_apps_slow_endpoints_keep_no_other_app_waiting(backend: Backend) {
    // Default concurrency settings: 60 endpoints, 100 events (6,000 deliveries).
    slow_apps_beside_a_neighbour(backend, 1, 60, 100, &[]).await;
}

async fn three_apps_slow_endpoints_keep_no_other_app_waiting(backend: Backend) {
    // Three slow apps of 40 endpoints each share the worker and the host.
    slow_apps_beside_a_neighbour(backend, 3, 40, 50, &[]).await;
}

async fn with_16_worker_slots_one_apps_two_slow_endpoints_keep_no_other_app_waiting(backend: Backend) {
    // 2 endpoints starting at 10 attempts each want more than the 16 slots.
    slow_apps_beside_a_neighbour(backend, 1, 2, 60, &[("FENIX_WORKER_CONCURRENCY", "16")]).await;
}

/// `hogs` slow apps, each with `endpoints` receivers answering after
/// [`SLOW_ANSWER`] and `events` events to each, then a neighbour's 20
/// events one every 100 ms.
async fn slow_apps_beside_a_neighbour(
    backend: Backend,
    hogs: usize,
    endpoints: usize,
    events: usize,
    extra: &[(&str, &str)],
) {
    let db = TestDb::new(backend).await;
    // Attempts may last as long as the slow answers.
    let mut settings = vec![("FENIX_ATTEMPT_TIMEOUT", "30s"), ("FENIX_LEASE_DURATION", "60s")];
    settings.extend_from_slice(extra);
    let first = Fenix::start(&db, &settings).await;
    let second = match backend {
        Backend::Postgres => Some(Fenix::start(&db, &settings).await),
        Backend::Sqlite => None,
    };
    let slow = Receiver::http(|i| if i % 2 == 0 { Plan::status(404) } else { Plan::ok() }.after(SLOW_ANSWER)).await;
    let fast = Receiver::http(|_| Plan::ok()).await;

    let mut slow_apps = Vec::new();
    for h in 0..hogs {
        let hog = first.create_app(&format!("hog-{h}")).await;
        for i in 0..endpoints {
            first.create_endpoint(&hog, json!({"url": format!("{}/slow/{h}/{i}", slow.url)})).await;
        }
        slow_apps.push(hog);
    }
    let neighbour = first.create_app("neighbour").await;
    first.create_endpoint(&neighbour, json!({"url": fast.url})).await;

    let events: Vec<_> = (0..events).map(|i| json!({"type": "booking.confirmed", "data": {"n": i}})).collect();
    for hog in &slow_apps {
        let body = Some(json!({"events": events}));
        let (status, out) = first.call("POST", &format!("/v1/apps/{hog}/events/batch"), body).await;
        assert_eq!(status, 202, "{out}");
    }
    let busy = (hogs * endpoints * 5).min(100);
    eventually("the slow app's receivers are busy", Duration::from_secs(30), || async { slow.count() >= busy }).await;

    // The neighbour sends 20 events, one every 100 ms, through both instances.
    let mut sent_at = Vec::new();
    for i in 0..20 {
        let api = match (&second, i % 2) {
            (Some(second), 1) => second,
            _ => &first,
        };
        sent_at.push(Instant::now());
        api.send_event(&neighbour, json!({"type": "booking.confirmed", "data": {"i": i}})).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eventually("the neighbour's events arrived", Duration::from_secs(60), || async { fast.count() >= 20 }).await;

    let mut waits = Vec::new();
    for got in fast.received() {
        let i = got.json()["data"]["i"].as_u64().expect("the event's index") as usize;
        waits.push(got.at.saturating_duration_since(sent_at[i]));
    }
    waits.sort();
    let slowest = *waits.last().expect("20 arrivals");
    println!(
        "{backend:?}: the neighbour's events arrived after {:?} (median) to {slowest:?} (slowest), \
         the slow app's receivers holding {} requests at once",
        waits[waits.len() / 2],
        slow.max_concurrent()
    );
    assert_eq!(fast.count(), 20, "each of the neighbour's events once");
    // Without a fair share they waited for the slow app's requests to end
    // (8 s, or its whole backlog): a quarter of that is a claim or two.
    assert!(slowest < SLOW_ANSWER / 4, "a neighbour's event waited {slowest:?} behind the slow app");
    // The slow app's receivers answer slowly: their limit shrank to what that justifies.
    let held = slow.max_concurrent();
    // (Each instance learns its own limit, starting at 10 per endpoint.)
    let instances = 1 + usize::from(second.is_some());
    assert!(held <= hogs * endpoints * 10 * instances, "{held} requests at once held by the slow receivers");
}

crate::on_both_backends!(
    one_apps_slow_endpoints_keep_no_other_app_waiting,
    three_apps_slow_endpoints_keep_no_other_app_waiting,
    with_16_worker_slots_one_apps_two_slow_endpoints_keep_no_other_app_waiting,
);
