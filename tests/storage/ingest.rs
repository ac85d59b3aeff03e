//! Ingestion, the transactional outbox: an event and its deliveries are written
//! together or not at all, and an idempotency key never creates a second event.

use fenix::ids::EventId;
use fenix::{
    ingest::Ingestor,
    store::{queue::Whole, DeliveryFilter, FreshLease},
    wake::Wake,
};

use super::fixtures::{ingest_on, new_event, Fixture, T0};
use crate::support::Backend;

fn all() -> DeliveryFilter {
    DeliveryFilter { limit: 1000, ..Default::default() }
}

async fn an_event_gets_one_pending_delivery_per_endpoint_that_wants_its_type_whatever_its_state(backend: Backend) {
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
    assert_eq!(ingested.event.delivery_count, 4);
    assert_eq!(made.len(), 4);

    let deliveries = fx.store.list_deliveries(&app, &all()).await.unwrap();
    let mut endpoints: Vec<&str> = deliveries.iter().map(|d| d.endpoint_id.as_str()).collect();
    endpoints.sort();
    let mut expected = vec![every.as_str(), booking.as_str(), paused.as_str(), disabled.as_str()];
    expected.sort();
    // A paused or disabled endpoint's delivery is skipped when due, so a resume with replay can send it.
    assert_eq!(endpoints, expected, "every endpoint that wants the type, paused and disabled ones too");
    for d in &deliveries {
        assert!(made.contains(&d.id));
        assert_eq!((d.event_id.as_str(), d.status.as_str(), d.attempt_count), (ev.id.as_str(), "pending", 0));
        assert_eq!((d.next_attempt_at, d.last_attempt_at, d.created_at), (Some(T0 + 5), None, T0 + 5));
    }
    assert!(fx.store.list_deliveries(&other_app, &all()).await.unwrap().is_empty());

    let stored = fx.store.get_event(&app, &ev.id, true).await.unwrap().expect("event stored");
    assert_eq!(stored.payload.as_deref(), Some(ev.envelope.as_slice()), "the envelope is kept byte for byte");
    assert_eq!((stored.delivery_count, stored.payload_sha256.as_str()), (4, ev.payload_sha256.as_str()));
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
    for round in 0..5 {
        let key = format!("key-{round}");
        let a = new_event(&app, "booking.confirmed", Some(&key), T0 + round);
        let b = new_event(&app, "booking.confirmed", Some(&key), T0 + round);
        let (store_a, store_b) = (fx.store.clone(), second.clone());
        let (ra, rb) = tokio::join!(
            tokio::spawn(async move { (ingest_on(&store_a, &a).await, a.id) }),
            tokio::spawn(async move { (ingest_on(&store_b, &b).await, b.id) }),
        );
        let results: Vec<_> = [ra.unwrap(), rb.unwrap()]
            .into_iter()
            .map(|(r, id)| (r.unwrap_or_else(|e| panic!("round {round}: an ingest failed: {e}")).0, id))
            .collect();
        let winners: Vec<&EventId> = results.iter().filter(|(r, _)| r.created).map(|(_, id)| id).collect();
        assert_eq!(winners.len(), 1, "exactly one call creates the event (round {round})");
        let winner = winners[0];
        for (ingested, _) in &results {
            assert_eq!(&ingested.event.id, winner, "both answer with the one event");
            assert_eq!(ingested.event.delivery_count, 3);
        }
        let f = DeliveryFilter { event_id: Some(winner.clone()), ..all() };
        assert_eq!(fx.store.list_deliveries(&app, &f).await.unwrap().len(), 3, "one set of deliveries");
    }
    let raw = fx.raw().await;
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (5, 15), "nothing else was written");
}

/// Another instance stores the key between the batch's key lookup and its
/// write: the batch answers that instance's event and writes nothing of its own.
/// The other instance's transaction is held open until the batch waits on it
/// (PostgreSQL: on the key's unique index; SQLite: for the write lock, so the
/// batch reads the key after that commit).
async fn a_key_stored_by_another_instance_while_a_batch_is_written_answers_that_instance_s_event(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let theirs = new_event(&app, "booking.confirmed", Some("order-7"), T0);
    let ours = new_event(&app, "booking.cancelled", Some("order-7"), T0 + 1);
    let insert = "INSERT INTO events (id, app_id, event_type, idempotency_key, payload, payload_sha256, \
                  delivery_count, created_at) VALUES ($1, $2, $3, $4, $5, $6, 0, $7)";
    let store = fx.store.clone();
    let ours_id = ours.id.clone();
    let answer = match backend {
        Backend::Postgres => {
            let other = sqlx::PgPool::connect(&fx.db.url).await.unwrap();
            let mut tx = other.begin().await.unwrap();
            sqlx::query(insert)
                .bind(&theirs.id)
                .bind(&app)
                .bind(&theirs.event_type)
                .bind(&theirs.idempotency_key)
                .bind(&theirs.envelope)
                .bind(&theirs.payload_sha256)
                .bind(theirs.created_at)
                .execute(&mut *tx)
                .await
                .unwrap();
            let batch = tokio::spawn(async move { ingest_on(&store, &ours).await });
            // Polled: the batch's insert waits on the key held by the open transaction.
            loop {
                let waiting: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
                )
                .fetch_one(&other)
                .await
                .unwrap();
                if waiting > 0 {
                    break;
                }
                tokio::task::yield_now().await;
            }
            tx.commit().await.unwrap();
            batch.await.unwrap().unwrap()
        }
        Backend::Sqlite => {
            let other = sqlx::SqlitePool::connect(&fx.db.url).await.unwrap();
            let mut tx = other.begin_with("BEGIN IMMEDIATE").await.unwrap();
            sqlx::query(insert)
                .bind(&theirs.id)
                .bind(&app)
                .bind(&theirs.event_type)
                .bind(&theirs.idempotency_key)
                .bind(&theirs.envelope)
                .bind(&theirs.payload_sha256)
                .bind(theirs.created_at)
                .execute(&mut *tx)
                .await
                .unwrap();
            let batch = tokio::spawn(async move { ingest_on(&store, &ours).await });
            tx.commit().await.unwrap();
            batch.await.unwrap().unwrap()
        }
    };
    let (ingested, made) = answer;
    assert!(!ingested.created && !ingested.fanout_refused);
    assert_eq!(ingested.event.id, theirs.id, "the other instance's event");
    assert_eq!(ingested.event.event_type, "booking.confirmed");
    assert!(made.is_empty());
    assert!(fx.store.get_event(&app, &ours_id, false).await.unwrap().is_none(), "ours is not stored");
    let raw = fx.raw().await;
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (1, 0), "nothing of ours was written");
}

async fn an_event_s_trace_context_is_stored_with_it_and_read_with_its_claimed_deliveries(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    fx.endpoint(&app, &[]).await;
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let mut traced = new_event(&app, "booking.confirmed", None, T0);
    traced.trace_context = Some(traceparent.into());
    let untraced = new_event(&app, "booking.confirmed", None, T0);
    fx.ingest(&traced).await.unwrap();
    fx.ingest(&untraced).await.unwrap();

    let claimed = fx.store.claim_due("w", T0, T0 + 60_000, 100).await.unwrap();
    assert_eq!(claimed.len(), 4);
    let ctx = fx.store.batch_context(&claimed, T0).await.unwrap();
    assert_eq!(ctx.trace_contexts.get(&traced.id).map(String::as_str), Some(traceparent));
    assert_eq!(ctx.trace_contexts.get(&untraced.id), None, "an event ingested with tracing off has none");
}

async fn a_batch_that_fails_stores_none_of_its_events(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    fx.endpoint(&app, &[]).await;
    let (first, _) = fx.event(&app, "booking.confirmed", T0).await;
    let raw = fx.raw().await;

    // The second event reuses a stored event's id: the first one, with its
    // deliveries and its key, is not stored either.
    let doomed = new_event(&app, "booking.confirmed", Some("doomed"), T0 + 1);
    let mut dup = new_event(&app, "invoice.paid", None, T0 + 2);
    dup.id = first.event.id.clone();
    let mut writer = fx.store.hold_writer().await.unwrap();
    let err = fx
        .store
        .ingest_batch(&mut writer, &[doomed, dup], fenix::store::queue::Whole::EachOnItsOwn, None)
        .await
        .expect_err("event id is taken");
    drop(writer);
    assert!(err.is_unique_violation(), "{err:?}");
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (1, 2));
    let kept = fx.store.get_event(&app, &first.event.id, false).await.unwrap().unwrap();
    assert_eq!((kept.event_type.as_str(), kept.delivery_count), ("booking.confirmed", 2));

    // The key of the failed batch was not taken.
    let retry = new_event(&app, "booking.confirmed", Some("doomed"), T0 + 3);
    let (retried, made) = fx.ingest(&retry).await.unwrap();
    assert!(retried.created);
    assert_eq!(made.len(), 2);
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (2, 4));
}

/// The ingestion queue: an event the database refuses is answered with its
/// error, and the events written beside it (in its batch or not) are stored
/// and announced to the worker.
async fn the_ingestion_queue_stores_the_other_events_when_one_is_refused_and_announces_the_work(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let (first, _) = fx.event(&app, "booking.confirmed", T0).await;
    let wake = Wake::new(fx.store.clone());
    let ingestor = Ingestor::start(fx.store.clone(), wake.clone());

    let mut dup = new_event(&app, "invoice.paid", None, T0 + 1);
    dup.id = first.event.id.clone();
    let good: Vec<_> = (0..4).map(|i| new_event(&app, "booking.confirmed", None, T0 + 2 + i)).collect();
    let ids: Vec<EventId> = good.iter().map(|e| e.id.clone()).collect();
    let mut calls = vec![tokio::spawn({
        let ingestor = ingestor.clone();
        async move { ingestor.ingest(dup).await }
    })];
    for ev in good {
        let ingestor = ingestor.clone();
        calls.push(tokio::spawn(async move { ingestor.ingest(ev).await }));
    }
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap());
    }
    let err = answers.remove(0).expect_err("the event id is taken");
    assert!(err.is_unique_violation(), "{err:?}");
    for (answer, id) in answers.into_iter().zip(&ids) {
        let ingested = answer.expect("stored");
        assert!(ingested.created);
        assert_eq!((&ingested.event.id, ingested.event.delivery_count), (id, 1));
        assert!(fx.store.get_event(&app, id, false).await.unwrap().is_some());
    }
    let raw = fx.raw().await;
    assert_eq!((raw.count("events").await, raw.count("deliveries").await), (5, 5));
    // The work was announced: a wake-up is waiting for the worker.
    let announced = tokio::select! {
        biased;
        _ = wake.notified() => true,
        _ = std::future::ready(()) => false,
    };
    assert!(announced, "the ingestion queue announces the deliveries it wrote");
}

/// A batch written with a fresh lease: up to `max` deliveries of unordered
/// endpoints are stored leased to the worker named (shown `in_flight`) and
/// answered as claimed; no claim takes them until the lease runs out.
async fn fresh_deliveries_are_stored_leased_to_the_idle_worker_and_answered_as_claimed(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let plain = [fx.endpoint(&app, &[]).await, fx.endpoint(&app, &[]).await];
    let lane = fx.endpoint(&app, &[]).await;
    fx.raw().await.exec("UPDATE endpoints SET ordered = TRUE WHERE id = $1", &[(&lane).into()]).await;
    let events: Vec<_> = (0..2).map(|n| new_event(&app, "booking.confirmed", None, T0 + n)).collect();
    let fresh = FreshLease { owner: "idle-worker".into(), lease_until: T0 + 30_000, max: 3 };

    let mut writer = fx.store.hold_writer().await.unwrap();
    let (answers, claimed) =
        fx.store.ingest_batch(&mut writer, &events, Whole::EachOnItsOwn, Some(&fresh)).await.unwrap();
    drop(writer);
    assert!(answers.iter().all(|a| a.created && a.event.delivery_count == 3));
    // Three of the four unordered deliveries (the most asked for); none of the ordered lane.
    assert_eq!(claimed.len(), 3, "{claimed:?}");
    assert!(claimed.iter().all(|c| plain.contains(&c.endpoint_id) && c.attempt_count == 0 && c.lane_seq.is_none()));
    let rows = fx.store.list_deliveries(&app, &all()).await.unwrap();
    for d in &rows {
        let leased = claimed.iter().any(|c| c.id == d.id);
        assert_eq!(d.status.as_str(), if leased { "in_flight" } else { "pending" }, "{d:?}");
    }
    let raw = fx.raw().await;
    let owners = raw.int("SELECT COUNT(*) FROM deliveries WHERE lease_owner = 'idle-worker'", &[]).await;
    assert_eq!(owners, Some(3));

    // A claim before the lease ends takes the other two (the unleased plain one and the lane's head).
    let other = fx.store.claim_due("other", T0 + 100, T0 + 60_000, 100).await.unwrap();
    assert_eq!(other.len(), 2, "{other:?}");
    assert!(other.iter().all(|o| claimed.iter().all(|c| c.id != o.id)));
    // The worker died: its deliveries come due when the lease runs out, under a new token.
    let later = fx.store.claim_due("other", T0 + 30_000, T0 + 90_000, 100).await.unwrap();
    let mut taken: Vec<&str> = later.iter().map(|c| c.id.as_str()).collect();
    let mut leased: Vec<&str> = claimed.iter().map(|c| c.id.as_str()).collect();
    taken.sort();
    leased.sort();
    assert_eq!(taken, leased);
    assert!(later.iter().all(|l| claimed.iter().any(|c| c.id == l.id && l.lease_token > c.lease_token)));
}

crate::on_both_backends!(
    fresh_deliveries_are_stored_leased_to_the_idle_worker_and_answered_as_claimed,
    an_event_gets_one_pending_delivery_per_endpoint_that_wants_its_type_whatever_its_state,
    an_event_nobody_wants_is_stored_without_deliveries,
    a_repeated_idempotency_key_returns_the_original_event_and_creates_no_delivery,
    two_concurrent_ingests_with_one_key_create_one_event_and_one_set_of_deliveries,
    a_key_stored_by_another_instance_while_a_batch_is_written_answers_that_instance_s_event,
    a_batch_that_fails_stores_none_of_its_events,
    an_event_s_trace_context_is_stored_with_it_and_read_with_its_claimed_deliveries,
    the_ingestion_queue_stores_the_other_events_when_one_is_refused_and_announces_the_work,
);

/// SQLite only: the WAL is copied back into the database file by the store's
/// checkpointer, long before the writer would do it itself in a commit.
#[tokio::test]
async fn sqlite_s_wal_is_checkpointed_beside_the_writer() {
    let fx = Fixture::new(Backend::Sqlite).await;
    let file = fx.db.dir.path().join("fenix.db");
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let wal = fx.db.dir.path().join("fenix.db-wal");
    let before = std::fs::metadata(&file).unwrap().len();
    for n in 0..40 {
        let (ingested, _) = fx.event(&app, "t.x", T0 + n).await;
        assert!(ingested.created);
    }
    // A few dozen pages in the WAL: far below the writer's own checkpoint limit.
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    crate::support::eventually("the events reach the database file", std::time::Duration::from_secs(10), || async {
        std::fs::metadata(&file).unwrap().len() > before
    })
    .await;
}
