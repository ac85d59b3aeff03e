//! Apps: insert, find by id or uid, list newest first, a taken uid.

use fenix::store::apps::AppRow;

use super::fixtures::{id_at, Fixture, T0};
use crate::support::Backend;

fn app_row(uid: Option<&str>, at: i64) -> AppRow {
    AppRow {
        id: fenix::ids::AppId::new_at(at),
        uid: uid.map(Into::into),
        name: format!("app made at {at}"),
        created_at: at,
        updated_at: at,
    }
}

async fn an_app_is_found_by_its_id_and_by_its_uid(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = app_row(Some("acme"), T0);
    fx.store.insert_app(&app).await.unwrap();

    let by_id = fx.store.find_app(app.id.as_str()).await.unwrap().expect("found by id");
    let by_uid = fx.store.find_app("acme").await.unwrap().expect("found by uid");
    assert_eq!(
        (by_id.id.as_str(), by_id.uid.as_deref(), by_id.name.as_str()),
        (app.id.as_str(), Some("acme"), app.name.as_str())
    );
    assert_eq!(by_uid.id, app.id);
    assert_eq!(by_uid.created_at, T0);
    assert!(fx.store.find_app("nobody").await.unwrap().is_none());
    assert!(fx.store.find_app(&id_at("app", T0)).await.unwrap().is_none());
}

async fn apps_are_listed_newest_first_and_a_cursor_continues_without_gaps(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let mut made = Vec::new();
    for i in 0..7 {
        let uid = format!("uid-{i}");
        let app = app_row((i % 2 == 0).then_some(uid.as_str()), T0 + i * 1000);
        fx.store.insert_app(&app).await.unwrap();
        made.push(app.id);
    }
    made.reverse();

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = fx.store.list_apps(cursor.as_deref(), 3).await.unwrap();
        assert!(page.len() <= 3);
        seen.extend(page.iter().map(|a| a.id.clone()));
        if page.len() < 3 {
            break;
        }
        cursor = page.last().map(|a| a.id.to_string());
    }
    assert_eq!(seen, made, "newest first, every app exactly once");
}

async fn a_taken_uid_is_reported_as_a_unique_violation(backend: Backend) {
    let fx = Fixture::new(backend).await;
    fx.store.insert_app(&app_row(Some("acme"), T0)).await.unwrap();
    let err = fx.store.insert_app(&app_row(Some("acme"), T0 + 1)).await.expect_err("uid is taken");
    assert!(err.is_unique_violation(), "{err:?}");
    // Apps without a uid never collide.
    fx.store.insert_app(&app_row(None, T0 + 2)).await.unwrap();
    fx.store.insert_app(&app_row(None, T0 + 3)).await.unwrap();
    assert_eq!(fx.store.list_apps(None, 10).await.unwrap().len(), 3);
}

crate::on_both_backends!(
    an_app_is_found_by_its_id_and_by_its_uid,
    apps_are_listed_newest_first_and_a_cursor_continues_without_gaps,
    a_taken_uid_is_reported_as_a_unique_violation,
);
