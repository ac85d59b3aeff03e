//! Migrations: they build the schema on an empty database, are idempotent, and
//! several instances starting at once do not trip over each other.

use fenix::ids::{AppId, DeliveryId};
use fenix::store::{DeliveryFilter, Store};

use super::fixtures::{Fixture, Raw, T0};
use crate::support::{Backend, TestDb};

async fn migrations_apply_on_an_empty_database_and_a_second_run_changes_nothing(backend: Backend) {
    let db = TestDb::new(backend).await;
    let store = Store::connect(&db.url, 8).await.expect("connect");
    store.migrate().await.expect("first migrate");
    let raw = Raw::connect(&db).await;
    let applied = raw.count("_sqlx_migrations").await;
    assert!(applied >= 1, "the first run records its migrations");
    for table in ["apps", "endpoints", "endpoint_secrets", "events", "deliveries", "attempts", "admin_tokens", "meta"] {
        assert_eq!(raw.count(table).await, 0, "{table} exists and is empty");
    }
    let fx = Fixture { db, store };
    let app = fx.app("acme").await;

    fx.store.migrate().await.expect("second migrate");
    assert_eq!(raw.count("_sqlx_migrations").await, applied, "nothing new is applied");
    assert!(fx.store.find_app(app.as_str()).await.unwrap().is_some(), "data survives a second migrate");
}

async fn four_instances_migrating_one_fresh_database_at_once_all_succeed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(Store::connect(&db.url, 2).await.expect("connect"));
    }
    if backend == Backend::Sqlite {
        // SQLite has a single instance by design (sqlx takes no migration lock
        // there); one store's clones racing is what can happen in one process.
        let one = stores.swap_remove(0);
        stores = vec![one.clone(), one.clone(), one.clone(), one];
    }
    let results = futures::future::join_all(stores.iter().map(|s| s.migrate())).await;
    for r in &results {
        assert!(r.is_ok(), "every concurrent migrate succeeds: {r:?}");
    }
    let raw = Raw::connect(&db).await;
    let expected = {
        let fresh = Fixture::new(backend).await;
        fresh.raw().await.count("_sqlx_migrations").await
    };
    assert_eq!(raw.count("_sqlx_migrations").await, expected, "each migration is recorded once");
    assert_eq!(raw.count("deliveries").await, 0);
}

/// Migration 0002 moved leases out of `status`: a delivery leased by a worker
/// of the previous version is due again when that lease would have ended.
async fn a_delivery_leased_before_the_lease_upgrade_comes_due_when_its_lease_would_have_ended(backend: Backend) {
    let db = TestDb::new(backend).await;
    let first = db.path("first-migration");
    std::fs::create_dir(&first).unwrap();
    let flavour = if backend == Backend::Sqlite { "sqlite" } else { "postgres" };
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations").join(flavour);
    std::fs::copy(source.join("0001_initial.sql"), first.join("0001_initial.sql")).unwrap();
    let only_first = sqlx::migrate::Migrator::new(first.as_path()).await.expect("read the first migration");
    let store = Store::connect(&db.url, 8).await.expect("connect");
    let raw = Raw::connect(&db).await;
    match &raw {
        Raw::Sqlite(p) => only_first.run(p).await,
        Raw::Postgres(p) => only_first.run(p).await,
    }
    .expect("schema version 1");
    for sql in [
        "INSERT INTO apps (id, name, created_at, updated_at) VALUES ('app_1', 'acme', 0, 0)",
        "INSERT INTO endpoints (id, app_id, url, created_at, updated_at) VALUES ('ep_1', 'app_1', 'https://example.com/h', 0, 0)",
        "INSERT INTO events (id, app_id, event_type, payload_sha256, delivery_count, created_at) \
         VALUES ('evt_1', 'app_1', 'booking.confirmed', 'x', 1, 0)",
    ] {
        raw.exec(sql, &[]).await;
    }
    let lease_end = T0 + 30_000;
    raw.exec(
        "INSERT INTO deliveries (id, app_id, event_id, endpoint_id, status, attempt_count, next_attempt_at, \
         lease_owner, lease_token, created_at, updated_at) \
         VALUES ('dlv_1', 'app_1', 'evt_1', 'ep_1', 'in_flight', 1, $1, 'old-worker', 3, 0, 0)",
        &[lease_end.into()],
    )
    .await;

    store.migrate().await.expect("upgrade");
    let row = store
        .get_delivery(&AppId::from_stored("app_1".into()), &DeliveryId::from_stored("dlv_1".into()))
        .await
        .unwrap()
        .expect("the delivery survives");
    // 0007: the delivery carries its event's type, filled from the event, and is found by it.
    assert_eq!(row.event_type, "booking.confirmed");
    let by_type = DeliveryFilter { event_type: Some("booking.confirmed".into()), limit: 10, ..Default::default() };
    let found = store.list_deliveries(&AppId::from_stored("app_1".into()), &by_type).await.unwrap();
    assert_eq!(found.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["dlv_1"]);
    assert_eq!((row.status.as_str(), row.next_attempt_at, row.attempt_count), ("pending", Some(lease_end), 1));
    assert!(store.claim_due("new-worker", lease_end - 1, lease_end + 60_000, 10).await.unwrap().is_empty());
    let claimed = store.claim_due("new-worker", lease_end, lease_end + 60_000, 10).await.unwrap();
    assert_eq!(claimed.len(), 1, "due when the old lease would have ended");
    assert_eq!((claimed[0].id.as_str(), claimed[0].lease_token, claimed[0].attempt_count), ("dlv_1", 4, 1));
}

crate::on_both_backends!(
    a_delivery_leased_before_the_lease_upgrade_comes_due_when_its_lease_would_have_ended,
    migrations_apply_on_an_empty_database_and_a_second_run_changes_nothing,
    four_instances_migrating_one_fresh_database_at_once_all_succeed,
);
