//! API tokens in the store: a token issued before scoped tokens is an admin
//! token after the upgrade, the schema admits only the two kinds, an expired
//! token is listed but never authenticates, an app's tokens go with it, and
//! the last working admin token cannot be deleted, even by two deletes at once.

use fenix::ids::{AppId, TokenId};
use fenix::{
    access::{Access, Principal},
    store::{
        tokens::{NewToken, TokenDeletion},
        Store,
    },
    time::Millis,
};

use super::fixtures::{id_at, Fixture, Raw, T0};
use crate::support::{Backend, TestDb};

fn token(principal: Principal, sha256: &str, expires_at: Option<Millis>) -> NewToken {
    let id = TokenId::from_stored(id_at("tok", T0));
    NewToken { id, name: "t".into(), sha256: sha256.into(), principal, expires_at, created_at: T0 }
}

fn read_of(app_id: &AppId) -> Principal {
    Principal::App { app_id: app_id.clone(), access: Access::Read }
}

async fn a_token_issued_before_scoped_tokens_is_an_admin_token_after_the_upgrade(backend: Backend) {
    let db = TestDb::new(backend).await;
    let older = db.path("before-scoped-tokens");
    std::fs::create_dir(&older).unwrap();
    let flavour = if backend == Backend::Sqlite { "sqlite" } else { "postgres" };
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations").join(flavour);
    for file in std::fs::read_dir(&source).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()) {
        if file.as_str() < "0005" {
            std::fs::copy(source.join(&file), older.join(&file)).unwrap();
        }
    }
    let migrator = sqlx::migrate::Migrator::new(older.as_path()).await.expect("read the older migrations");
    let store = Store::connect(&db.url, 8).await.expect("connect");
    let raw = Raw::connect(&db).await;
    match &raw {
        Raw::Sqlite(p) => migrator.run(p).await,
        Raw::Postgres(p) => migrator.run(p).await,
    }
    .expect("the schema before scoped tokens");
    raw.exec("INSERT INTO admin_tokens (id, name, token_sha256, created_at) VALUES ('tok_1', 'ops', 'hash-1', 5)", &[])
        .await;

    store.migrate().await.expect("upgrade");
    let found = store.find_live_token("hash-1", T0).await.unwrap().expect("the old token still works");
    assert_eq!((found.principal, found.expires_at, found.name.as_str()), (Principal::Admin, None, "ops"));
    assert_eq!(store.count_admin_tokens().await.unwrap(), 1);
}

async fn the_schema_admits_admin_tokens_without_an_app_and_app_tokens_with_one(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let raw = fx.raw().await;
    for (app_id, access) in
        [(Some(app.as_str()), "admin"), (None, "read"), (None, "manage"), (Some(app.as_str()), "write")]
    {
        let sql = "INSERT INTO admin_tokens (id, name, token_sha256, app_id, access, created_at) \
                   VALUES ('tok_x', 'x', 'hash-x', $1, $2, 0)";
        let refused = match &raw {
            Raw::Sqlite(p) => sqlx::query(sql).bind(app_id).bind(access).execute(p).await.is_err(),
            Raw::Postgres(p) => sqlx::query(sql).bind(app_id).bind(access).execute(p).await.is_err(),
        };
        assert!(refused, "{app_id:?} with access {access} was stored");
    }
    fx.store.insert_token(&token(read_of(&app), "hash-read", None)).await.expect("an app token");
    fx.store.insert_token(&token(Principal::Admin, "hash-admin", None)).await.expect("an admin token");
}

async fn an_expired_token_is_listed_but_never_found(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.store.insert_token(&token(read_of(&app), "hash-1", Some(T0))).await.unwrap();
    let found = fx.store.find_live_token("hash-1", T0 - 1).await.unwrap().expect("live a millisecond before");
    assert_eq!(found.principal, read_of(&app));
    assert!(fx.store.find_live_token("hash-1", T0).await.unwrap().is_none(), "expired at its expiry");
    let listed = fx.store.list_tokens(None, 10).await.unwrap();
    assert_eq!((listed.len(), listed[0].expires_at), (1, Some(T0)));
    assert!(fx.store.find_live_token("hash-unknown", T0 - 1).await.unwrap().is_none());
}

async fn an_apps_tokens_are_deleted_with_it(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.store.insert_token(&token(read_of(&app), "hash-1", None)).await.unwrap();
    fx.store.insert_token(&token(Principal::Admin, "hash-admin", None)).await.unwrap();
    assert!(fx.store.delete_app(&app).await.unwrap());
    assert!(fx.store.find_live_token("hash-1", T0).await.unwrap().is_none());
    let left = fx.store.list_tokens(None, 10).await.unwrap();
    assert_eq!(left.iter().map(|t| &t.principal).collect::<Vec<_>>(), [&Principal::Admin]);
}

async fn the_last_working_admin_token_cannot_be_deleted(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let live = token(Principal::Admin, "hash-live", None);
    let expired = token(Principal::Admin, "hash-expired", Some(T0));
    let scoped = token(read_of(&app), "hash-app", None);
    for t in [&live, &expired, &scoped] {
        fx.store.insert_token(t).await.unwrap();
    }
    let now = T0 + 1;
    let delete = |id: TokenId| {
        let store = fx.store.clone();
        async move { store.delete_token_keeping_an_admin(&id, now).await.unwrap() }
    };
    assert_eq!(delete(live.id.clone()).await, TokenDeletion::LastAdmin, "an expired admin token does not count");
    assert_eq!(delete(scoped.id.clone()).await, TokenDeletion::Deleted);
    assert_eq!(delete(expired.id.clone()).await, TokenDeletion::Deleted, "an expired one may go");
    assert_eq!(delete(expired.id.clone()).await, TokenDeletion::NotFound);
    assert!(fx.store.find_live_token("hash-live", now).await.unwrap().is_some(), "the refused delete kept it");

    // Two deletes of the last two admin tokens at once, from two instances: one is refused.
    let other = fx.second_store().await;
    for round in 0..10 {
        let second = token(Principal::Admin, &format!("hash-second-{round}"), None);
        fx.store.insert_token(&second).await.unwrap();
        let left = fx.store.list_tokens(None, 10).await.unwrap();
        let [a, b] = [&left[0].id, &left[1].id];
        let (x, y) =
            tokio::join!(fx.store.delete_token_keeping_an_admin(a, now), other.delete_token_keeping_an_admin(b, now));
        let mut outcomes = [x.unwrap(), y.unwrap()];
        outcomes.sort_by_key(|o| *o == TokenDeletion::LastAdmin);
        assert_eq!(outcomes, [TokenDeletion::Deleted, TokenDeletion::LastAdmin], "round {round}");
        assert_eq!(fx.store.count_admin_tokens().await.unwrap(), 1);
    }
}

crate::on_both_backends!(
    a_token_issued_before_scoped_tokens_is_an_admin_token_after_the_upgrade,
    the_schema_admits_admin_tokens_without_an_app_and_app_tokens_with_one,
    an_expired_token_is_listed_but_never_found,
    an_apps_tokens_are_deleted_with_it,
    the_last_working_admin_token_cannot_be_deleted,
);
