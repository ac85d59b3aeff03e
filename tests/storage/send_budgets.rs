//! Budgets of tenant-triggered requests (`send_budgets`): a bucket gives its
//! burst and then one unit per interval, a refused take spends nothing, the
//! buckets of one action are per app as well as per endpoint, and two
//! instances on one database never spend a unit twice.

use fenix::ids::{AppId, EndpointId};
use std::time::Duration;

use fenix::{
    send_budgets::{self, Action},
    store::{send_budgets::BudgetTake, Store},
};

use super::fixtures::{Fixture, T0};
use crate::support::Backend;

/// Ids from literals (the budgets key on their text only).
fn app(text: &str) -> AppId {
    AppId::from_stored(text.into())
}

fn ep_id(text: &str) -> EndpointId {
    EndpointId::from_stored(text.into())
}

fn bucket(key: &str, burst: i64, interval_ms: i64) -> BudgetTake {
    BudgetTake { key: key.into(), burst, interval_ms }
}

async fn take(store: &Store, takes: &[BudgetTake], now: i64) -> Result<(), i64> {
    store.take_budgets(takes, now).await.expect("take")
}

async fn a_bucket_gives_its_burst_then_one_unit_per_interval(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let b = [bucket("test/k", 3, 1_000)];
    for _ in 0..3 {
        assert_eq!(take(&fx.store, &b, T0).await, Ok(()));
    }
    assert_eq!(take(&fx.store, &b, T0).await, Err(T0 + 1_000), "empty: the next unit comes one interval on");
    assert_eq!(take(&fx.store, &b, T0 + 999).await, Err(T0 + 1_000));
    assert_eq!(take(&fx.store, &b, T0 + 1_000).await, Ok(()));
    assert_eq!(take(&fx.store, &b, T0 + 1_000).await, Err(T0 + 2_000));
    // Left alone, it fills up to its burst and no further.
    for _ in 0..3 {
        assert_eq!(take(&fx.store, &b, T0 + 60_000).await, Ok(()));
    }
    assert!(take(&fx.store, &b, T0 + 60_000).await.is_err());
}

async fn a_refused_take_spends_nothing_from_the_other_buckets(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (wide, narrow) = (bucket("test/wide", 5, 1_000), bucket("test/narrow", 1, 60_000));
    let both = [wide.clone(), narrow.clone()];
    assert_eq!(take(&fx.store, &both, T0).await, Ok(()));
    assert_eq!(take(&fx.store, &both, T0).await, Err(T0 + 60_000), "the latest bucket says when");
    assert_eq!(take(&fx.store, &both, T0).await, Err(T0 + 60_000));
    for _ in 0..4 {
        assert_eq!(take(&fx.store, std::slice::from_ref(&wide), T0).await, Ok(()), "the refusals took nothing");
    }
    assert_eq!(take(&fx.store, &[wide], T0).await, Err(T0 + 1_000));
}

async fn two_instances_taking_at_once_never_spend_a_unit_twice(backend: Backend) {
    let fx = Fixture::new(backend).await;
    // SQLite is one instance by design: its clones race within one process.
    let other = if backend == Backend::Postgres { fx.second_store().await } else { fx.store.clone() };
    let takes: Vec<_> = (0..24)
        .map(|i| {
            let store = if i % 2 == 0 { fx.store.clone() } else { other.clone() };
            tokio::spawn(async move {
                store.take_budgets(&[bucket("test/app", 50, 1_000), bucket("test/ep", 5, 60_000)], T0).await
            })
        })
        .collect();
    let mut granted = 0;
    for t in takes {
        if t.await.unwrap().expect("no error, only refusals").is_ok() {
            granted += 1;
        }
    }
    assert_eq!(granted, 5, "exactly the burst, over both instances");
}

async fn challenges_count_per_app_so_new_endpoints_get_no_fresh_budget(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app_burst = Action::Challenge.rules()[0].burst;
    for i in 0..app_burst {
        let ep = format!("ep_{i}");
        let taken = send_budgets::take(&fx.store, Action::Challenge, &app("app_1"), &ep_id(&ep), T0).await.unwrap();
        assert!(taken.is_ok(), "challenge {i} for its own endpoint");
    }
    let refused = send_budgets::take(&fx.store, Action::Challenge, &app("app_1"), &ep_id("ep_new"), T0)
        .await
        .unwrap()
        .unwrap_err();
    assert!(refused.retry_after <= Duration::from_secs(60), "{refused:?}");
    let other_app =
        send_budgets::take(&fx.store, Action::Challenge, &app("app_2"), &ep_id("ep_new"), T0).await.unwrap();
    assert!(other_app.is_ok(), "another app's budget is its own");
}

async fn one_endpoint_gets_a_few_challenges_at_once_then_a_cooldown_then_a_daily_cap(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let at = |s: i64| T0 + s * 1_000;
    let (app_1, ep_1) = (app("app_1"), ep_id("ep_1"));
    let take = |now| send_budgets::take(&fx.store, Action::Challenge, &app_1, &ep_1, now);
    for _ in 0..3 {
        assert!(take(at(0)).await.unwrap().is_ok());
    }
    let cooldown = take(at(1)).await.unwrap().unwrap_err();
    assert_eq!(cooldown.retry_after, Duration::from_secs(59), "{cooldown:?}");
    // One a minute from then on, ten in all ...
    for minute in 1..=7 {
        assert!(take(at(60 * minute)).await.unwrap().is_ok(), "minute {minute}");
    }
    // ... and then the daily budget, not the cooldown, is what waits.
    let day = take(at(60 * 9)).await.unwrap().unwrap_err();
    assert!(day.retry_after > Duration::from_secs(3_600), "{day:?}");
    assert_eq!(day.action, Action::Challenge);
}

async fn purging_forgets_full_buckets_only(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (spent, fresh) = (bucket("test/spent", 1, 60_000), bucket("test/fresh", 1, 1_000));
    take(&fx.store, &[spent.clone(), fresh.clone()], T0).await.unwrap();
    assert_eq!(fx.store.purge_spent_budgets(T0 + 2_000).await.unwrap(), 1, "only the bucket full again");
    assert_eq!(take(&fx.store, &[spent], T0 + 2_000).await, Err(T0 + 60_000), "the spent one is still spent");
    assert_eq!(take(&fx.store, &[fresh], T0 + 2_000).await, Ok(()));
}

crate::on_both_backends!(
    a_bucket_gives_its_burst_then_one_unit_per_interval,
    a_refused_take_spends_nothing_from_the_other_buckets,
    two_instances_taking_at_once_never_spend_a_unit_twice,
    challenges_count_per_app_so_new_endpoints_get_no_fresh_budget,
    one_endpoint_gets_a_few_challenges_at_once_then_a_cooldown_then_a_daily_cap,
    purging_forgets_full_buckets_only,
);
