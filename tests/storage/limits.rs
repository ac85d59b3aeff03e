//! What one tenant or one careless client must not be able to do to the store:
//! overshoot the endpoint limit with concurrent creates, fan one event out
//! past its limit, make concurrent rotations collide, or make a refused value
//! look like an outage.

use fenix::store::endpoints::NewEndpoint;

use super::fixtures::{endpoint_row, new_event, Fixture, T0};
use crate::support::Backend;

async fn concurrent_rotations_of_one_secret_each_get_their_own_version(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;

    let rotations: Vec<_> = (0..10)
        .map(|i| {
            let store = fx.store.clone();
            let ep = ep.clone();
            tokio::spawn(async move {
                store.rotate_secret(&ep, |v| format!("sealed-v{v}").into_bytes(), T0 + i, T0 + 86_400_000, 5).await
            })
        })
        .collect();
    let mut versions = Vec::new();
    for r in rotations {
        versions.push(r.await.unwrap().expect("every rotation succeeds"));
    }
    versions.sort();
    assert_eq!(versions, (2..=11).collect::<Vec<i64>>(), "one version each, none taken twice");

    let live = fx.store.live_secrets(&ep, T0 + 100).await.unwrap();
    let live_versions: Vec<i64> = live.iter().map(|s| s.version).collect();
    assert_eq!(live_versions, [11, 10, 9, 8, 7, 6], "the newest current, at most 5 older ones");
    assert_eq!(live[0].sealed, b"sealed-v11");
    assert_eq!(live[0].expires_at, None, "exactly one current secret");
    assert!(live[1..].iter().all(|s| s.expires_at.is_some()));
}

async fn rotating_the_secret_of_an_endpoint_that_is_gone_is_not_found(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;
    assert!(fx.store.delete_endpoint(&app, &ep).await.unwrap());
    let err = fx.store.rotate_secret(&ep, |_| b"s".to_vec(), T0, T0, 5).await.expect_err("gone");
    assert!(matches!(err, fenix::store::Error::NotFound), "{err}");
}

async fn concurrent_creates_cannot_overshoot_the_endpoint_limit(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let other = fx.app("globex").await;

    let creates: Vec<_> = (0..10)
        .map(|_| {
            let store = fx.store.clone();
            let row = endpoint_row(&app, &[]);
            tokio::spawn(async move {
                store
                    .insert_endpoint_within(&NewEndpoint { row, sealed_secret: b"s".to_vec(), public_key: None }, 3)
                    .await
            })
        })
        .collect();
    let mut created = 0;
    for c in creates {
        created += usize::from(c.await.unwrap().expect("no error, only a refusal"));
    }
    assert_eq!(created, 3);
    assert_eq!(fx.store.list_endpoints(&app, None, 100).await.unwrap().len(), 3);
    let row = endpoint_row(&other, &[]);
    assert!(
        fx.store
            .insert_endpoint_within(&NewEndpoint { row, sealed_secret: b"s".to_vec(), public_key: None }, 3)
            .await
            .unwrap(),
        "the limit is per app"
    );
}

async fn an_event_matching_more_endpoints_than_its_fanout_is_refused_whole(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    for _ in 0..3 {
        fx.endpoint(&app, &["booking.*"]).await;
    }
    fx.endpoint(&app, &["invoice.paid"]).await;

    let mut ev = new_event(&app, "booking.confirmed", Some("k1"), T0);
    ev.max_fanout = 2;
    let (refused, _) = fx.ingest(&ev).await.unwrap();
    assert!(refused.fanout_refused && !refused.created);
    assert_eq!(refused.event.delivery_count, 3, "says how many endpoints matched");
    let stored = fx.store.list_events(&app, &Default::default()).await.unwrap();
    assert!(stored.is_empty(), "nothing stored: {stored:?}");

    let mut ev = new_event(&app, "invoice.paid", Some("k2"), T0);
    ev.max_fanout = 2;
    let (ok, _) = fx.ingest(&ev).await.unwrap();
    assert!(ok.created && !ok.fanout_refused);
    assert_eq!(ok.event.delivery_count, 1);
}

/// SQLite stores a NUL in text; PostgreSQL refuses it (SQLSTATE 22021). The
/// refusal is the request's fault, never "database unavailable, retry later".
async fn a_value_the_database_refuses_is_not_an_outage(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let row = fenix::store::apps::AppRow {
        id: fenix::ids::AppId::new_at(T0),
        uid: None,
        name: "nul\0here".into(),
        created_at: T0,
        updated_at: T0,
    };
    match fx.store.insert_app(&row).await {
        Ok(()) => assert_eq!(backend, Backend::Sqlite, "only SQLite stores a NUL in text"),
        Err(e) => {
            assert!(!e.is_unavailable(), "a refused value is not an outage: {e}");
            assert!(e.is_data_error(), "{e}");
            let answer = fenix::api::ApiError::from(e);
            assert_eq!((answer.status.as_u16(), answer.code.as_str()), (422, "unstorable_value"));
        }
    }
}

crate::on_both_backends!(
    concurrent_rotations_of_one_secret_each_get_their_own_version,
    rotating_the_secret_of_an_endpoint_that_is_gone_is_not_found,
    concurrent_creates_cannot_overshoot_the_endpoint_limit,
    an_event_matching_more_endpoints_than_its_fanout_is_refused_whole,
    a_value_the_database_refuses_is_not_an_outage,
);
