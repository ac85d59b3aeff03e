//! Query plans: the hot queries are served by an index, never by a full scan.
//!
//! The statements are the store's own where it keeps them in constants (the
//! claim, the columns of the delivery and event logs); the rest is written the
//! way `crates/fenix/src/store/` builds it and must be kept in sync with it: the
//! delivery log from `deliveries.rs` (`list_deliveries`, with the filters as
//! its `QueryBuilder` appends them), the attempts from `deliveries.rs`
//! (`list_attempts`), and the event log from `events.rs` (`list_events`).

use fenix::ids::{AppId, DeliveryId, EndpointId, EventId};
use fenix::store::{
    deliveries::delivery_columns,
    events::EVENT_COLUMNS,
    queue::{postgres::CLAIM_POSTGRES, sqlite::CLAIM_SQLITE},
    DeliveryFilter,
};

use super::fixtures::{Arg, Fixture, T0};
use crate::support::Backend;

/// The plan reads through one of `indexes` and never scans a whole table
/// (nor, on SQLite, sorts every match of a newest-first page: without
/// statistics its choice is fixed; PostgreSQL may sort a handful of rows when
/// its statistics say that is cheaper, which is fine).
fn assert_indexed(backend: Backend, what: &str, plan: &[String], indexes: &[&str], sorted_by_index: bool) {
    let text = plan.join("\n");
    match backend {
        Backend::Sqlite => {
            for line in plan {
                let full_scan = line.starts_with("SCAN ") && !line.contains(" USING ");
                assert!(!full_scan, "{what}: full table scan in\n{text}");
                let sorts_all = line.contains("USE TEMP B-TREE FOR ORDER BY");
                assert!(!(sorted_by_index && sorts_all), "{what}: sorts every match in\n{text}");
            }
        }
        Backend::Postgres => assert!(!text.contains("Seq Scan"), "{what}: sequential scan in\n{text}"),
    }
    let names_index = |index: &&str| plan.iter().any(|line| line.split_whitespace().any(|word| word == *index));
    assert!(indexes.iter().any(names_index), "{what}: expected one of {indexes:?} in\n{text}");
}

/// A few thousand rows in a multi-tenant shape: the app under test ("acme":
/// 4 endpoints, 100 events, 400 deliveries) beside bigger ones ("globex": 5
/// endpoints, 600 events, 3,000 deliveries; "initech": 2,000 events nobody
/// subscribed to), so an index on the app pays off against a scan of every
/// app's rows in id order. A third of the deliveries finished with an attempt.
/// Returns (fixture, app, one of its endpoints, one of its events, one finished delivery).
async fn populated(backend: Backend) -> (Fixture, AppId, EndpointId, EventId, DeliveryId) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let mut endpoints = Vec::new();
    for _ in 0..4 {
        endpoints.push(fx.endpoint(&app, &[]).await);
    }
    let globex = fx.app("globex").await;
    for _ in 0..5 {
        fx.endpoint(&globex, &[]).await;
    }
    let initech = fx.app("initech").await;
    let mut finished = Vec::new();
    let mut some_event = None;
    for i in 0..600 {
        let event_type = if i % 2 == 0 { "booking.confirmed" } else { "invoice.paid" };
        let (_, made) = fx.event(&globex, event_type, T0 + i).await;
        if i % 3 == 0 {
            finished.extend(made);
        }
        if i % 6 == 0 {
            let (ing, made) = fx.event(&app, event_type, T0 + i).await;
            if i % 3 == 0 {
                finished.extend(made);
            }
            some_event = Some(ing.event.id);
        }
    }
    for i in 0..2_000 {
        fx.event(&initech, "booking.confirmed", T0 + i).await;
    }
    fx.settle(&finished, "failed", 1, T0 + 10_000).await;
    let failed =
        DeliveryFilter { status: Some(fenix::lifecycle::DeliveryStatus::Failed), limit: 1, ..Default::default() };
    let delivery = fx.store.list_deliveries(&app, &failed).await.unwrap().remove(0).id;
    (fx, app, endpoints[3].clone(), some_event.expect("an event of the app"), delivery)
}

async fn the_delivery_log_queries_use_an_index(backend: Backend) {
    let (fx, app, endpoint, event, _) = populated(backend).await;
    let raw = fx.raw().await;
    assert_eq!(raw.count("deliveries").await, 3_400);

    // `list_deliveries`: the base, then each filter in the order the builder appends it.
    // `$1`: the time the statuses are shown at (a scheduled delivery's).
    let base = format!("SELECT {} FROM deliveries WHERE app_id = $2 AND id < $3", delivery_columns());
    let page = |filter: &str, limit: &str| format!("{base}{filter} ORDER BY id DESC LIMIT {limit}");
    let (now, app, cursor, limit): (Arg, Arg, Arg, Arg) = (T0.into(), (&app).into(), "~".into(), 50.into());
    let pending = fenix::lifecycle::DeliveryStatus::Pending.shown_condition("$1").expect("shown by a condition");
    let cases: [(&str, String, Vec<Arg>, &[&str]); 5] = [
        // The app under test holds 12 % of the rows: PostgreSQL may then walk the
        // primary key from the cursor and keep the app's rows (its cost model
        // prefers that to random reads through `deliveries_by_app` since the
        // table is half-filled pages, migration 0004): ~8 rows read per row kept,
        // in page order. A small tenant makes it take the app's index.
        (
            "the whole log",
            page("", "$4"),
            vec![now.clone(), app.clone(), cursor.clone(), limit.clone()],
            &["deliveries_by_app", "deliveries_pkey"],
        ),
        (
            "by status",
            page(" AND status = $4", "$5"),
            vec![now.clone(), app.clone(), cursor.clone(), "failed".into(), limit.clone()],
            &["deliveries_by_app_status"],
        ),
        (
            "by endpoint",
            page(" AND endpoint_id = $4", "$5"),
            vec![now.clone(), app.clone(), cursor.clone(), (&endpoint).into(), limit.clone()],
            &["deliveries_by_endpoint"],
        ),
        (
            "by event",
            page(" AND event_id = $4", "$5"),
            vec![now.clone(), app.clone(), cursor.clone(), (&event).into(), limit.clone()],
            &["deliveries_by_event"],
        ),
        // `pending` as `list_deliveries` asks for it (not leased, not scheduled). Only pending rows are
        // in `deliveries_due`, so walking it is bounded by the backlog; PostgreSQL
        // weighs that against the app's share and may take either.
        (
            "by status and time",
            page(&format!(" AND {pending} AND created_at >= $4 AND created_at < $5"), "$6"),
            vec![now, app, cursor, T0.into(), (T0 + 100).into(), limit],
            &["deliveries_by_app_status", "deliveries_by_app", "deliveries_due"],
        ),
    ];
    for (what, sql, args, indexes) in cases {
        // One event has a handful of deliveries: sorting those is fine.
        let sorted_by_index = what != "by event";
        assert_indexed(backend, what, &raw.plan(&sql, &args).await, indexes, sorted_by_index);
    }
}

async fn the_event_log_and_attempt_queries_use_an_index(backend: Backend) {
    let (fx, app, _, _, delivery) = populated(backend).await;
    let raw = fx.raw().await;
    assert_eq!(raw.count("events").await, 2_700);

    // `list_events`, without and with the type filter.
    let base = format!("SELECT {EVENT_COLUMNS} FROM events WHERE app_id = $1 AND id < $2");
    let all = format!("{base} ORDER BY id DESC LIMIT $3");
    let plan = raw.plan(&all, &[(&app).into(), "~".into(), 50.into()]).await;
    assert_indexed(backend, "events", &plan, &["events_by_app"], true);
    let typed = format!("{base} AND event_type = $3 ORDER BY id DESC LIMIT $4");
    let plan = raw.plan(&typed, &[(&app).into(), "~".into(), "invoice.paid".into(), 50.into()]).await;
    assert_indexed(backend, "events by type", &plan, &["events_by_app_type"], true);

    // `list_attempts`.
    let attempts = "SELECT id, delivery_id, endpoint_id, attempt_number, started_at, duration_ms, response_status, \
                    response_excerpt, error, error_detail, signed_with FROM attempts WHERE delivery_id = $1 \
                    ORDER BY attempt_number, started_at";
    assert!(raw.count("attempts").await >= 1_000);
    // The index finds one delivery's few attempts; ordering those is cheap.
    let plan = raw.plan(attempts, &[(&delivery).into()]).await;
    assert_indexed(backend, "attempts of a delivery", &plan, &["attempts_by_delivery"], false);
}

async fn the_claim_query_uses_the_due_index(backend: Backend) {
    let (fx, ..) = populated(backend).await;
    let raw = fx.raw().await;
    let sql = match backend {
        Backend::Sqlite => CLAIM_SQLITE.as_str(),
        Backend::Postgres => CLAIM_POSTGRES.as_str(),
    };
    let args = [(T0 + 70_000).into(), "w1".into(), (T0 + 10_000).into(), 100.into()];
    assert_indexed(backend, "claim", &raw.plan(sql, &args).await, &["deliveries_due"], true);
}

crate::on_both_backends!(
    the_delivery_log_queries_use_an_index,
    the_event_log_and_attempt_queries_use_an_index,
    the_claim_query_uses_the_due_index,
);
