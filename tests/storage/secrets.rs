//! Endpoints and their signing secrets: version 1 on insert, rotation with an
//! overlap, a cap on old secrets, retirement.

use fenix::ids::{AppId, EndpointId};
use fenix::store::{endpoints::SecretRow, Store};

use super::fixtures::{Fixture, T0};
use crate::support::Backend;

fn versions(secrets: &[SecretRow]) -> Vec<i64> {
    secrets.iter().map(|s| s.version).collect()
}

/// Every stored secret of one endpoint, newest first (live or not).
async fn stored(store: &Store, endpoint_id: &EndpointId) -> Vec<SecretRow> {
    let mut all: Vec<SecretRow> =
        store.all_secrets().await.unwrap().into_iter().filter(|s| &s.endpoint_id == endpoint_id).collect();
    all.sort_by_key(|s| -s.version);
    all
}

fn sealed(version: i64) -> Vec<u8> {
    format!("sealed-v{version}").into_bytes()
}

async fn a_new_endpoint_has_its_first_secret_as_version_one(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &["booking.*"]).await;

    let row = fx.store.get_endpoint(&app, &ep).await.unwrap().expect("endpoint");
    assert_eq!((row.state.as_str(), row.spec.event_types.patterns()), ("active", &["booking.*".to_string()][..]));
    assert!(
        fx.store.get_endpoint(&AppId::from_stored("app_other".into()), &ep).await.unwrap().is_none(),
        "scoped to its app"
    );
    let live = fx.store.live_secrets(&ep, T0).await.unwrap();
    assert_eq!(versions(&live), [1]);
    assert_eq!(live[0].sealed, b"sealed-v1");
    assert_eq!(live[0].expires_at, None, "the current secret never expires by itself");
}

async fn a_rotated_secret_becomes_current_and_the_old_one_signs_until_it_expires(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;

    let v = fx.store.rotate_secret(&ep, sealed, T0 + 1_000, T0 + 10_000, 5).await.unwrap();
    assert_eq!(v, 2);
    let live = fx.store.live_secrets(&ep, T0 + 9_999).await.unwrap();
    assert_eq!(versions(&live), [2, 1], "current first, the old one still signs before it expires");
    assert_eq!(live[0].sealed, b"sealed-v2");
    assert_eq!((live[0].expires_at, live[1].expires_at), (None, Some(T0 + 10_000)));
    assert_eq!(versions(&fx.store.live_secrets(&ep, T0 + 10_000).await.unwrap()), [2], "expired at its time");
    assert_eq!(versions(&fx.store.live_secrets(&ep, T0 + 50_000).await.unwrap()), [2]);
}

async fn rotating_after_the_overlap_deletes_retired_secrets(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;

    fx.store.rotate_secret(&ep, sealed, T0, T0 + 10_000, 5).await.unwrap();
    let v = fx.store.rotate_secret(&ep, sealed, T0 + 20_000, T0 + 30_000, 5).await.unwrap();
    assert_eq!(v, 3);
    let all = stored(&fx.store, &ep).await;
    assert_eq!(versions(&all), [3, 2], "version 1 expired before this rotation and is gone");
    assert_eq!(all[1].expires_at, Some(T0 + 30_000));
}

async fn rotating_again_during_an_overlap_keeps_at_most_max_old_secrets(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;

    for i in 1..=5 {
        fx.store.rotate_secret(&ep, sealed, T0 + i, T0 + 86_400_000, 2).await.unwrap();
    }
    let all = stored(&fx.store, &ep).await;
    assert_eq!(versions(&all), [6, 5, 4], "the current secret and at most two old ones");
    assert_eq!(versions(&fx.store.live_secrets(&ep, T0 + 10).await.unwrap()), [6, 5, 4]);
    assert!(all[1..].iter().all(|s| s.expires_at == Some(T0 + 86_400_000)));
}

async fn a_rotation_never_extends_an_earlier_expiry(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;

    fx.store.rotate_secret(&ep, sealed, T0, T0 + 5_000, 5).await.unwrap();
    fx.store.rotate_secret(&ep, sealed, T0 + 1_000, T0 + 60_000, 5).await.unwrap();
    let live = fx.store.live_secrets(&ep, T0 + 2_000).await.unwrap();
    assert_eq!(versions(&live), [3, 2, 1]);
    assert_eq!(live.iter().map(|s| s.expires_at).collect::<Vec<_>>(), [None, Some(T0 + 60_000), Some(T0 + 5_000)]);
}

async fn a_rotation_without_overlap_retires_the_old_secret_at_once(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;

    fx.store.rotate_secret(&ep, sealed, T0, T0, 5).await.unwrap();
    assert_eq!(versions(&fx.store.live_secrets(&ep, T0).await.unwrap()), [2]);
    assert_eq!(versions(&stored(&fx.store, &ep).await), [2]);
}

async fn deleting_an_endpoint_deletes_its_secrets(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;
    let other = fx.endpoint(&app, &[]).await;
    fx.store.rotate_secret(&ep, sealed, T0, T0 + 1_000, 5).await.unwrap();

    assert!(fx.store.delete_endpoint(&app, &ep).await.unwrap());
    assert!(!fx.store.delete_endpoint(&app, &ep).await.unwrap(), "already gone");
    assert!(stored(&fx.store, &ep).await.is_empty());
    assert_eq!(versions(&stored(&fx.store, &other).await), [1]);
}

crate::on_both_backends!(
    a_new_endpoint_has_its_first_secret_as_version_one,
    a_rotated_secret_becomes_current_and_the_old_one_signs_until_it_expires,
    rotating_after_the_overlap_deletes_retired_secrets,
    rotating_again_during_an_overlap_keeps_at_most_max_old_secrets,
    a_rotation_never_extends_an_earlier_expiry,
    a_rotation_without_overlap_retires_the_old_secret_at_once,
    deleting_an_endpoint_deletes_its_secrets,
);
