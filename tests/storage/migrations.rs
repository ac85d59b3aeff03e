//! Migrations: they build the schema on an empty database, are idempotent, and
//! several instances starting at once do not trip over each other.

use fenix::store::Store;

use crate::fixtures::{Fixture, Raw};
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
    assert!(fx.store.find_app(&app).await.unwrap().is_some(), "data survives a second migrate");
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

crate::on_both_backends!(
    migrations_apply_on_an_empty_database_and_a_second_run_changes_nothing,
    four_instances_migrating_one_fresh_database_at_once_all_succeed,
);
