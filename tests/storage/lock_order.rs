//! The store's one lock order (the app's row, then its endpoints', then
//! events and deliveries: `store`'s module doc) under writes that race: an
//! app deleted while its events are ingested, an endpoint created while its
//! app is deleted. On PostgreSQL these run on two stores, as two instances
//! would; a deletion never fails and nothing is left half-stored.

use fenix::ids::AppId;
use std::time::Duration;

use fenix::store::{queue::Whole, NewEndpoint, Store};

use super::fixtures::{endpoint_row, new_event, Fixture, T0};
use crate::support::{db::postgres_available, eventually, Backend};

async fn count_of_app(fx: &Fixture, table: &str, app: &AppId) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE app_id = $1");
    fx.raw().await.int(&sql, &[app.into()]).await.unwrap_or(0)
}

/// Whether some session of this database waits for a lock.
async fn someone_waits_for_a_lock(pool: &sqlx::PgPool) -> bool {
    let waiting: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    waiting > 0
}

/// True when `e` is how a write under an app deleted meanwhile fails: its
/// foreign key to the app (ingestion), or the app's row not found (an endpoint's creation).
fn app_gone(e: &fenix::store::Error) -> bool {
    matches!(e, fenix::store::Error::NotFound | fenix::store::Error::ForeignKeyViolation(_))
}

/// Ingests batches of `size` events for `app` on `store`, each stored whole
/// or not at all, until one fails; answers how many were stored and the error.
async fn stream_batches(store: Store, app: AppId, size: usize) -> (usize, fenix::store::Error) {
    let mut stored = 0;
    for round in 0.. {
        let events: Vec<_> = (0..size).map(|_| new_event(&app, "booking.confirmed", None, T0 + round)).collect();
        let mut writer = match store.hold_writer().await {
            Ok(w) => w,
            Err(e) => return (stored, e),
        };
        match store.ingest_batch(&mut writer, &events, Whole::AllOrNothing, None).await {
            Ok(_) => stored += 1,
            Err(e) => return (stored, e),
        }
    }
    unreachable!()
}

/// PostgreSQL, two instances: the app's row is locked as its deletion locks
/// it (its `DELETE` takes the row first), and an ingestion of its events
/// starts. The ingestion waits for the app's row before it locks any of the
/// endpoints it fans out to, so the deletion's cascade to those endpoints
/// goes through at once (it used to wait for the ingestion's endpoint locks
/// while the ingestion waited for the app's row: `deadlock detected`). Then
/// the ingestion finds the app gone and stores nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ingestion_waiting_for_an_app_being_deleted_holds_none_of_its_endpoints() {
    if !postgres_available() {
        return;
    }
    let fx = Fixture::new(Backend::Postgres).await;
    let app = fx.app("acme").await;
    for _ in 0..3 {
        fx.endpoint(&app, &[]).await;
    }
    let pool = sqlx::PgPool::connect(&fx.db.url).await.unwrap();
    let mut deleting = pool.begin().await.unwrap();
    // Should the deletion wait in a cycle, it is the one PostgreSQL finds and
    // aborts (not the ingestion, whose retry would hide the deadlock).
    sqlx::query("SET LOCAL deadlock_timeout = '50ms'").execute(&mut *deleting).await.unwrap();
    sqlx::query("SELECT id FROM apps WHERE id = $1 FOR UPDATE").bind(&app).execute(&mut *deleting).await.unwrap();

    let store = fx.second_store().await;
    let events: Vec<_> = (0..50).map(|i| new_event(&app, "booking.confirmed", None, T0 + i)).collect();
    let ingest = tokio::spawn(async move {
        let mut writer = store.hold_writer().await.unwrap();
        store.ingest_batch(&mut writer, &events, Whole::AllOrNothing, None).await.map(|_| ())
    });
    eventually("the ingestion waits for the app's row", Duration::from_secs(10), || {
        let pool = pool.clone();
        async move { someone_waits_for_a_lock(&pool).await }
    })
    .await;

    let delete = sqlx::query("DELETE FROM apps WHERE id = $1").bind(&app).execute(&mut *deleting);
    let deleted = tokio::time::timeout(Duration::from_secs(5), delete)
        .await
        .expect("the deletion waits for nothing the ingestion holds")
        .expect("no deadlock");
    assert_eq!(deleted.rows_affected(), 1);
    deleting.commit().await.unwrap();

    let err = ingest.await.unwrap().expect_err("the app is gone");
    assert!(app_gone(&err), "answered as the app gone, not as an internal error: {err}");
    assert_eq!(count_of_app(&fx, "events", &app).await, 0);
    assert_eq!(count_of_app(&fx, "deliveries", &app).await, 0);
}

/// An app is deleted, many times over, while batches of its events stream in
/// (another instance on PostgreSQL) and an endpoint is created for it. The
/// deletion always succeeds; every write racing it either happened whole
/// before it (and went with the app) or fails as "app gone"; nothing of the
/// app is left.
async fn an_app_deleted_while_batches_stream_in_is_deleted_whole_every_time(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let other = fx.second_store().await;
    let rounds = if backend == Backend::Postgres { 8 } else { 3 };
    for round in 0..rounds {
        let app = fx.app(&format!("acme-{round}")).await;
        for _ in 0..3 {
            fx.endpoint(&app, &[]).await;
        }
        let streaming = tokio::spawn(stream_batches(other.clone(), app.clone(), 500));
        let creating = {
            let store = other.clone();
            let row = endpoint_row(&app, &[]);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(40)).await;
                store.insert_endpoint(&NewEndpoint { row, sealed_secret: b"s".to_vec(), public_key: None }).await
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let deleted = fx.store.delete_app(&app).await;
        assert!(deleted.expect("deleting an app never fails under ingestion"), "round {round}: the app was there");

        let (_, err) = streaming.await.unwrap();
        assert!(app_gone(&err), "round {round}: a batch racing the deletion fails as the app gone: {err}");
        if let Err(e) = creating.await.unwrap() {
            assert!(app_gone(&e), "round {round}: the creation racing the deletion fails as the app gone: {e}");
        }
        for table in ["events", "endpoints", "deliveries"] {
            assert_eq!(count_of_app(&fx, table, &app).await, 0, "round {round}: no {table} of the app are left");
        }
    }
    other.close().await;
}

/// PostgreSQL, two instances: an endpoint's creation waits for its app's
/// deletion, then finds the app gone and stores nothing (it used to go on and
/// fail on the foreign key, an internal error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_created_while_its_app_is_deleted_finds_the_app_gone() {
    if !postgres_available() {
        return;
    }
    let fx = Fixture::new(Backend::Postgres).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let pool = sqlx::PgPool::connect(&fx.db.url).await.unwrap();
    let mut deleting = pool.begin().await.unwrap();
    sqlx::query("DELETE FROM apps WHERE id = $1").bind(&app).execute(&mut *deleting).await.unwrap();

    let store = fx.second_store().await;
    let row = endpoint_row(&app, &[]);
    let create = tokio::spawn(async move {
        store.insert_endpoint_within(&NewEndpoint { row, sealed_secret: b"s".to_vec(), public_key: None }, 10).await
    });
    eventually("the creation waits for the app's row", Duration::from_secs(10), || {
        let pool = pool.clone();
        async move { someone_waits_for_a_lock(&pool).await }
    })
    .await;
    deleting.commit().await.unwrap();

    let err = create.await.unwrap().expect_err("the app is gone");
    assert!(matches!(err, fenix::store::Error::NotFound), "{err}");
    assert_eq!(fx.raw().await.count("endpoints").await, 0);
}

async fn an_endpoint_created_for_a_deleted_app_finds_the_app_gone(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    assert!(fx.store.delete_app(&app).await.unwrap());
    let row = endpoint_row(&app, &[]);
    let err = fx
        .store
        .insert_endpoint_within(&NewEndpoint { row, sealed_secret: b"s".to_vec(), public_key: None }, 10)
        .await
        .expect_err("the app is gone");
    assert!(matches!(err, fenix::store::Error::NotFound), "{err}");
    assert_eq!(fx.raw().await.count("endpoints").await, 0);
}

crate::on_both_backends!(
    an_app_deleted_while_batches_stream_in_is_deleted_whole_every_time,
    an_endpoint_created_for_a_deleted_app_finds_the_app_gone,
);
