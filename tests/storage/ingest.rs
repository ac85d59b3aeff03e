//! Ingestion, the transactional outbox: an event and its deliveries are written
//! together or not at all, and an idempotency key never creates a second event.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use fenix::{
    event_types::EventTypeFilter,
    store::{is_unique_violation, DeliveryFilter},
};

use super::fixtures::{new_event, Fixture, T0};
use crate::support::Backend;

fn all() -> DeliveryFilter {
    DeliveryFilter { limit: 1000, ..Default::default() }
}

async fn an_event_gets_one_pending_delivery_per_active_or_paused_endpoint_that_wants_its_type(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let every = fx.endpoint(&app, &[]).await;
    let booking = fx.endpoint(&app, &["booking.*"]).await;
    let _invoices = fx.endpoint(&app, &["invoice.paid"]).await;
    let paused = fx.endpoint(&app, &[]).await;
    fx.set_state(&paused, fenix::lifecycle::EndpointState::Paused).await;
    let disabled = fx.endpoint(&app, &[]).await;
    fx.set_state(&disabled, fenix::lifecycle::EndpointState::Disabled).await;
    let other_app = fx.app("globex").await;
    let _elsewhere = fx.endpoint(&other_app, &[]).await;

    let ev = new_event(&app, "booking.confirmed", None, T0 + 5);
    let (ingested, made) = fx.ingest(&ev).await.unwrap();
    assert!(ingested.created);
    assert_eq!(ingested.event.id, ev.id);
    assert_eq!(ingested.event.delivery_count, 3);
    assert_eq!(made.len(), 3);

    let deliveries = fx.store.list_deliveries(&app, &all()).await.unwrap();
    let mut endpoints: Vec<&str> = deliveries.iter().map(|d| d.endpoint_id.as_str()).collect();
    endpoints.sort();
    let mut expected = vec![every.as_str(), booking.as_str(), paused.as_str()];
    expected.sort();
    assert_eq!(endpoints, expected, "active and paused endpoints that want the type; never a disabled one");
    for d in &deliveries {
        assert!(made.contains(&d.id));
        assert_eq!((d.event_id.as_str(), d.status.as_str(), d.attempt_count), (ev.id.as_str(), "pending", 0));
        assert_eq!((d.next_attempt_at, d.last_attempt_at, d.created_at), (Some(T0 + 5), None, T0 + 5));
    }
    assert!(fx.store.list_deliveries(&other_app, &all()).await.unwrap().is_empty());

    let stored = fx.store.get_event(&app, &ev.id, true).await.unwrap().expect("event stored");
    assert_eq!(stored.payload.as_deref(), Some(ev.envelope.as_slice()), "the envelope is kept byte for byte");
    assert_eq!((stored.delivery_count, stored.payload_sha256.as_str()), (3, ev.payload_sha256.as_str()));
    let without = fx.store.get_event(&app, &ev.id, false).await.unwrap().unwrap();
    assert_eq!(without.payload, None, "the payload is loaded only when asked for");
}

async fn an_event_nobody_wants_is_stored_without_deliveries(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &["invoice.*"]).await;

    let (ingested, made) = fx.event(&app, "booking.confirmed", T0).await;
    assert!(ingested.created);
    assert_eq!((ingested.event.delivery_count, made.len()), (0, 0));
    assert!(fx.store.get_event(&app, &ingested.event.id, false).await.unwrap().is_some());
    assert!(fx.store.list_deliveries(&app, &all()).await.unwrap().is_empty());
}

async fn a_repeated_idempotency_key_returns_the_original_event_and_creates_no_delivery(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    fx.endpoint(&app, &[]).await;

    let first = new_event(&app, "booking.confirmed", Some("order-42"), T0);
    let (original, made) = fx.ingest(&first).await.unwrap();
    assert!(original.created);
    assert_eq!(made.len(), 2);

    let again = new_event(&app, "booking.cancelled", Some("order-42"), T0 + 1_000);
    let (repeat, made_again) = fx.ingest(&again).await.unwrap();
    assert!(!repeat.created);
    assert_eq!(repeat.event.id, first.id, "the original event, not the new id");
    assert_eq!((repeat.event.event_type.as_str(), repeat.event.delivery_count), ("booking.confirmed", 2));
    assert!(made_again.is_empty(), "no delivery is created");
    assert!(fx.store.get_event(&app, &again.id, false).await.unwrap().is_none());
    assert_eq!(fx.store.list_deliveries(&app, &all()).await.unwrap().len(), 2);

    // The key belongs to the app: another app may use it.
    let other = fx.app("globex").await;
    let (theirs, _) = fx.ingest(&new_event(&other, "booking.confirmed", Some("order-42"), T0)).await.unwrap();
    assert!(theirs.created);
}

async fn two_concurrent_ingests_with_one_key_create_one_event_and_one_set_of_deliveries(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    for _ in 0..3 {
        fx.endpoint(&app, &[]).await;
    }
    // PostgreSQL: two instances; SQLite (one instance by design): two requests of one.
    let second = match backend {
        Backend::Postgres => fx.second_store().await,
        Backend::Sqlite => fx.store.clone(),
    };

    let mut raced = 0;
    for round in 0..5 {
        let key = format!("key-{round}");
        let a = new_event(&app, "booking.confirmed", Some(&key), T0 + round);
        let b = new_event(&app, "booking.confirmed", Some(&key), T0 + round);
        // Each ingest lingers inside its transaction, so the other one finds no
        // committed event up front and meets it at the unique index: the race.
        let fanned_out = Arc::new(AtomicUsize::new(0));
        let slow = {
            let fanned_out = fanned_out.clone();
            move |filter: &str| {
                fanned_out.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                EventTypeFilter::from_json(filter).matches("booking.confirmed")
            }
        };
        let (store_a, store_b, slow_b) = (fx.store.clone(), second.clone(), slow.clone());
        let (ra, rb) = tokio::join!(
            tokio::spawn(async move { (store_a.ingest_event(&a, slow, || fenix::ids::new_id("dlv")).await, a.id) }),
            tokio::spawn(async move { (store_b.ingest_event(&b, slow_b, || fenix::ids::new_id("dlv")).await, b.id) }),
        );
        let results = [ra.unwrap(), rb.unwrap()];
        let results: Vec<_> = results
            .into_iter()
            .map(|(r, id)| (r.unwrap_or_else(|e| panic!("round {round}: an ingest failed: {e}")), id))
            .collect();
        let winners: Vec<&String> = results.iter().filter(|(r, _)| r.created).map(|(_, id)| id).collect();
        assert_eq!(winners.len(), 1, "exactly one call creates the event (round {round})");
        let winner = winners[0];
        for (ingested, _) in &results {
            assert_eq!(&ingested.event.id, winner, "both answer with the one event");
            assert_eq!(ingested.event.delivery_count, 3);
        }
        let f = DeliveryFilter { event_id: Some(winner.clone()), ..all() };
        assert_eq!(fx.store.list_deliveries(&app, &f).await.unwrap().len(), 3, "one set of deliveries");
        // Both calls fanned out: the loser got past its up-front key lookup.
        if fanned_out.load(Ordering::SeqCst) == 6 {
            raced += 1;
        }
    }
    assert!(raced > 0, "no round reached the unique index; the race path was not exercised");
    let raw = fx.raw().await;
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (5, 15), "nothing else was written");
}

async fn a_failure_inside_the_ingest_transaction_leaves_no_partial_rows(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    fx.endpoint(&app, &[]).await;
    let (first, first_deliveries) = fx.event(&app, "booking.confirmed", T0).await;
    let raw = fx.raw().await;

    // The event row goes in, then a delivery id collides: all of it rolls back.
    let doomed = new_event(&app, "booking.confirmed", Some("doomed"), T0 + 1);
    let taken = first_deliveries[0].clone();
    let err = fx.store.ingest_event(&doomed, |_| true, || taken.clone()).await.expect_err("delivery id collides");
    assert!(is_unique_violation(&err), "{err:?}");
    assert!(fx.store.get_event(&app, &doomed.id, false).await.unwrap().is_none(), "no event without its deliveries");
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (1, 2));

    // The key of the failed ingest was not taken.
    let retry = new_event(&app, "booking.confirmed", Some("doomed"), T0 + 2);
    let (retried, made) = fx.ingest(&retry).await.unwrap();
    assert!(retried.created);
    assert_eq!(made.len(), 2);

    // A duplicate event id fails and leaves the first event as it was.
    let mut dup = new_event(&app, "invoice.paid", None, T0 + 3);
    dup.id = first.event.id.clone();
    let err = fx.ingest(&dup).await.expect_err("event id is taken");
    assert!(is_unique_violation(&err), "{err:?}");
    let kept = fx.store.get_event(&app, &first.event.id, false).await.unwrap().unwrap();
    assert_eq!((kept.event_type.as_str(), kept.delivery_count), ("booking.confirmed", 2));
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (2, 4));
}

crate::on_both_backends!(
    an_event_gets_one_pending_delivery_per_active_or_paused_endpoint_that_wants_its_type,
    an_event_nobody_wants_is_stored_without_deliveries,
    a_repeated_idempotency_key_returns_the_original_event_and_creates_no_delivery,
    two_concurrent_ingests_with_one_key_create_one_event_and_one_set_of_deliveries,
    a_failure_inside_the_ingest_transaction_leaves_no_partial_rows,
);
