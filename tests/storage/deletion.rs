//! Deleting an endpoint or an app takes its whole log with it (deliveries and
//! their attempts), and an ingestion racing an endpoint's deletion leaves no
//! delivery behind for it. On PostgreSQL deliveries have no per-row foreign
//! keys (migration 0014), so this is the store's own doing.

use fenix::ids::{AppId, EndpointId};
use std::time::Duration;

use super::fixtures::{attempt_for, ingest_on, new_event, outcome, Fixture, T0};
use crate::support::{db::postgres_available, eventually, Backend};

async fn count_where(fx: &Fixture, table: &str, column: &str, value: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE {column} = $1");
    fx.raw().await.int(&sql, &[value.into()]).await.unwrap_or(0)
}

/// Two endpoints, three events, every delivery attempted once.
async fn app_with_a_log(fx: &Fixture) -> (AppId, EndpointId, EndpointId) {
    let app = fx.app("acme").await;
    let (a, b) = (fx.endpoint(&app, &[]).await, fx.endpoint(&app, &[]).await);
    for i in 0..3 {
        fx.event(&app, "booking.confirmed", T0 + i).await;
    }
    let claimed = fx.store.claim_due("w1", T0 + 10, T0 + 60_000, 100).await.unwrap();
    assert_eq!(claimed.len(), 6);
    let outcomes: Vec<_> =
        claimed.iter().map(|c| outcome(c, "succeeded", 1, Some(attempt_for(c, 1, T0 + 20)))).collect();
    assert_eq!(fx.store.record_outcomes(&outcomes, T0 + 30).await.unwrap(), 0);
    (app, a, b)
}

async fn deleting_an_endpoint_deletes_its_deliveries_and_their_attempts(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (app, gone, kept) = app_with_a_log(&fx).await;

    assert!(fx.store.delete_endpoint(&app, &gone).await.unwrap());
    assert_eq!(count_where(&fx, "deliveries", "endpoint_id", gone.as_str()).await, 0);
    assert_eq!(count_where(&fx, "attempts", "endpoint_id", gone.as_str()).await, 0);
    assert_eq!(count_where(&fx, "deliveries", "endpoint_id", kept.as_str()).await, 3, "the other endpoint's log stays");
    assert_eq!(count_where(&fx, "attempts", "endpoint_id", kept.as_str()).await, 3);
    assert_eq!(fx.raw().await.count("events").await, 3, "the events stay");
    assert!(!fx.store.delete_endpoint(&app, &gone).await.unwrap(), "already gone");
}

async fn deleting_an_app_deletes_its_events_deliveries_and_attempts_only(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (app, _, _) = app_with_a_log(&fx).await;
    let other = fx.app("globex").await;
    let other_ep = fx.endpoint(&other, &[]).await;
    fx.event(&other, "booking.confirmed", T0).await;

    assert!(fx.store.delete_app(&app).await.unwrap());
    let raw = fx.raw().await;
    assert_eq!(raw.count("deliveries").await, 1, "only the other app's delivery is left");
    assert_eq!(count_where(&fx, "deliveries", "endpoint_id", other_ep.as_str()).await, 1);
    assert_eq!(raw.count("attempts").await, 0);
    assert_eq!(raw.count("events").await, 1);
    assert_eq!(count_where(&fx, "deliveries", "app_id", app.as_str()).await, 0);
}

/// PostgreSQL, two instances: an endpoint is being deleted (its row deleted,
/// not committed yet) while an ingestion that read it fans out to it. The
/// ingestion waits for the deletion, stores the event with its delivery to
/// the endpoint that is left, and none to the deleted one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ingestion_racing_an_endpoint_deletion_leaves_no_delivery_for_it() {
    if !postgres_available() {
        return;
    }
    let fx = Fixture::new(Backend::Postgres).await;
    let app = fx.app("acme").await;
    let (gone, kept) = (fx.endpoint(&app, &[]).await, fx.endpoint(&app, &[]).await);

    let pool = sqlx::PgPool::connect(&fx.db.url).await.unwrap();
    let mut deleting = pool.begin().await.unwrap();
    sqlx::query("DELETE FROM endpoints WHERE id = $1").bind(&gone).execute(&mut *deleting).await.unwrap();

    let ev = new_event(&app, "booking.confirmed", None, T0);
    let store = fx.second_store().await;
    let ingest = tokio::spawn(async move { ingest_on(&store, &ev).await });
    // The ingestion reads both endpoints (the deletion is not committed) and
    // then waits on the deleted row's lock.
    eventually("the ingestion waits on the endpoint's row lock", Duration::from_secs(10), || {
        let pool = pool.clone();
        async move {
            let waiting: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            waiting > 0
        }
    })
    .await;
    assert!(!ingest.is_finished(), "the ingestion waits for the deletion to commit or roll back");
    deleting.commit().await.unwrap();

    let (ingested, made) = ingest.await.unwrap().expect("the ingestion succeeds");
    assert!(ingested.created);
    assert_eq!(made.len(), 1);
    assert_eq!(count_where(&fx, "deliveries", "endpoint_id", kept.as_str()).await, 1);
    assert_eq!(
        count_where(&fx, "deliveries", "endpoint_id", gone.as_str()).await,
        0,
        "no delivery to a deleted endpoint"
    );
}

crate::on_both_backends!(
    deleting_an_endpoint_deletes_its_deliveries_and_their_attempts,
    deleting_an_app_deletes_its_events_deliveries_and_attempts_only,
);
