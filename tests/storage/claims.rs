//! Claiming due deliveries under a lease: only what is due, earliest first, one
//! holder at a time, and back to the pool when a lease runs out or is released.

use fenix::ids::DeliveryId;
use std::collections::HashSet;

use fenix::store::{ClaimedDelivery, Store};

use super::fixtures::{Fixture, T0};
use crate::support::Backend;

fn ids(claimed: &[ClaimedDelivery]) -> HashSet<DeliveryId> {
    claimed.iter().map(|c| c.id.clone()).collect()
}

/// An app with one endpoint and one event (so one delivery) due at each of `times`;
/// returns the delivery ids in the order of `times`.
async fn due_at(fx: &Fixture, times: &[i64]) -> Vec<DeliveryId> {
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let mut out = Vec::new();
    for &t in times {
        let (_, made) = fx.event(&app, "booking.confirmed", t).await;
        out.extend(made);
    }
    out
}

async fn a_claim_takes_only_due_deliveries_earliest_first_up_to_the_limit(backend: Backend) {
    let fx = Fixture::new(backend).await;
    // Made out of due order, so neither insertion order nor id order gives the answer.
    let d = due_at(&fx, &[T0 + 30, T0 + 10, T0 + 5_000, T0 + 20, T0 + 100]).await;
    let (d30, d10, future, d20, d100) = (&d[0], &d[1], &d[2], &d[3], &d[4]);

    let first = fx.store.claim_due("w1", T0 + 100, T0 + 60_000, 2).await.unwrap();
    assert_eq!(ids(&first), HashSet::from([d10.clone(), d20.clone()]), "the two that came due first");
    let second = fx.store.claim_due("w1", T0 + 100, T0 + 60_000, 10).await.unwrap();
    assert_eq!(ids(&second), HashSet::from([d30.clone(), d100.clone()]), "due at or before now, nothing later");
    assert!(!ids(&second).contains(future));
}

async fn a_claimed_delivery_is_in_flight_with_its_lease_and_is_not_claimed_twice(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let d = due_at(&fx, &[T0, T0 + 1]).await;
    let lease_until = T0 + 30_000;

    let claimed = fx.store.claim_due("w1", T0 + 10, lease_until, 10).await.unwrap();
    assert_eq!(ids(&claimed), d.iter().cloned().collect());
    for c in &claimed {
        assert_eq!((c.attempt_count, c.budget_start, c.lease_token), (0, 0, 1));
        let row = fx.store.get_delivery(&c.app_id, &c.id).await.unwrap().unwrap();
        assert_eq!((row.status.as_str(), row.next_attempt_at), ("in_flight", Some(lease_until)));
        assert_eq!((row.updated_at, row.attempt_count), (T0 + 10, 0));
    }
    let owners = fx.raw().await.int("SELECT COUNT(*) FROM deliveries WHERE lease_owner = 'w1'", &[]).await;
    assert_eq!(owners, Some(2));

    assert!(fx.store.claim_due("w2", T0 + 10, lease_until, 10).await.unwrap().is_empty(), "same time: nothing");
    assert!(fx.store.claim_due("w2", lease_until - 1, lease_until + 30_000, 10).await.unwrap().is_empty());
}

async fn an_expired_lease_makes_the_delivery_claimable_again_with_a_higher_token(backend: Backend) {
    let fx = Fixture::new(backend).await;
    due_at(&fx, &[T0, T0 + 1, T0 + 2]).await;
    let lease_until = T0 + 30_000;
    let first = fx.store.claim_due("w1", T0 + 10, lease_until, 10).await.unwrap();
    assert_eq!(first.len(), 3);

    // The first worker died: at the lease's end another one takes the same rows.
    let again = fx.store.claim_due("w2", lease_until, lease_until + 30_000, 10).await.unwrap();
    assert_eq!(ids(&again), ids(&first));
    for c in &again {
        let before = first.iter().find(|f| f.id == c.id).unwrap();
        assert!(c.lease_token > before.lease_token, "a new lease token: {} > {}", c.lease_token, before.lease_token);
        assert_eq!(c.attempt_count, 0, "a lost lease is not an attempt");
    }
    let owners = fx.raw().await.int("SELECT COUNT(*) FROM deliveries WHERE lease_owner = 'w2'", &[]).await;
    assert_eq!(owners, Some(3));
}

async fn an_extended_lease_holds_only_for_its_current_token(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let d = due_at(&fx, &[T0, T0 + 1]).await;
    let claimed = fx.store.claim_due("w1", T0 + 10, T0 + 1_000, 10).await.unwrap();
    let (a, b) = (claimed.iter().find(|c| c.id == d[0]).unwrap(), claimed.iter().find(|c| c.id == d[1]).unwrap());

    // `b` is extended with a stale token (as by a worker that lost it): no effect.
    let leases = vec![(a.id.clone(), a.lease_token), (b.id.clone(), b.lease_token - 1)];
    fx.store.extend_leases(&leases, T0 + 50_000).await.unwrap();
    fx.store.extend_leases(&[], T0 + 99_000).await.unwrap();
    let row_a = fx.store.get_delivery(&a.app_id, &a.id).await.unwrap().unwrap();
    let row_b = fx.store.get_delivery(&b.app_id, &b.id).await.unwrap().unwrap();
    assert_eq!((row_a.next_attempt_at, row_b.next_attempt_at), (Some(T0 + 50_000), Some(T0 + 1_000)));

    let at_old_expiry = fx.store.claim_due("w2", T0 + 1_000, T0 + 2_000, 10).await.unwrap();
    assert_eq!(ids(&at_old_expiry), HashSet::from([b.id.clone()]), "only the lease that was not extended expired");
}

async fn a_released_lease_is_due_again_at_once_without_counting_an_attempt(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let d = due_at(&fx, &[T0, T0 + 1]).await;
    let claimed = fx.store.claim_due("w1", T0 + 10, T0 + 60_000, 10).await.unwrap();
    let (a, b) = (claimed.iter().find(|c| c.id == d[0]).unwrap(), claimed.iter().find(|c| c.id == d[1]).unwrap());

    let leases = vec![(a.id.clone(), a.lease_token), (b.id.clone(), b.lease_token + 7)];
    fx.store.release_leases(&leases, T0 + 20).await.unwrap();
    let row_a = fx.store.get_delivery(&a.app_id, &a.id).await.unwrap().unwrap();
    assert_eq!((row_a.status.as_str(), row_a.next_attempt_at, row_a.attempt_count), ("pending", Some(T0 + 20), 0));
    let row_b = fx.store.get_delivery(&b.app_id, &b.id).await.unwrap().unwrap();
    assert_eq!((row_b.status.as_str(), row_b.next_attempt_at), ("in_flight", Some(T0 + 60_000)), "wrong token: kept");
    let owner: Option<i64> = fx.raw().await.int("SELECT COUNT(*) FROM deliveries WHERE lease_owner IS NULL", &[]).await;
    assert_eq!(owner, Some(1));

    let reclaimed = fx.store.claim_due("w2", T0 + 20, T0 + 60_000, 10).await.unwrap();
    assert_eq!(ids(&reclaimed), HashSet::from([a.id.clone()]));
    assert!(reclaimed[0].lease_token > a.lease_token);
}

async fn next_due_at_is_the_earliest_time_of_a_delivery_nobody_holds(backend: Backend) {
    let fx = Fixture::new(backend).await;
    assert_eq!(fx.store.next_due_at().await.unwrap(), None, "an empty queue has no next time");
    let d = due_at(&fx, &[T0 + 500, T0 + 100, T0 + 300]).await;
    assert_eq!(fx.store.next_due_at().await.unwrap(), Some(T0 + 100));

    // A leased delivery is not waited for (its worker has it); the one after it is.
    let claimed = fx.store.claim_due("w1", T0 + 100, T0 + 400, 1).await.unwrap();
    assert_eq!(ids(&claimed), HashSet::from([d[1].clone()]));
    assert_eq!(fx.store.next_due_at().await.unwrap(), Some(T0 + 300));
    let claimed = fx.store.claim_due("w1", T0 + 300, T0 + 10_000, 1).await.unwrap();
    assert_eq!(fx.store.next_due_at().await.unwrap(), Some(T0 + 500));

    // Finished deliveries are never due. Settling at T0 + 500 also took back the
    // lease that ran out at T0 + 400 (given back, due at once).
    fx.settle(&[d[0].clone()], "failed", 5, T0 + 500).await;
    assert_eq!(fx.store.next_due_at().await.unwrap(), Some(T0 + 500));
    fx.settle(&[d[1].clone()], "skipped", 0, T0 + 500).await;
    assert_eq!(fx.store.next_due_at().await.unwrap(), None, "only a leased delivery is left");
    // A lease given back is due at the time it was given back for.
    let leases: Vec<(DeliveryId, i64)> = claimed.iter().map(|c| (c.id.clone(), c.lease_token)).collect();
    fx.store.release_leases(&leases, T0 + 600).await.unwrap();
    assert_eq!(fx.store.next_due_at().await.unwrap(), Some(T0 + 600));
    fx.settle(&[d[2].clone()], "skipped", 0, T0 + 600).await;
    assert_eq!(fx.store.next_due_at().await.unwrap(), None);
}

/// Runs `rounds` rounds of two claimers racing for `due` due rows; checks that
/// no delivery is handed to both and that together they took every one.
async fn race_two_claimers(fx: &Fixture, a: &Store, b: &Store, rounds: i64, due: usize) {
    let app = fx.app("race").await;
    let raw = fx.raw().await;
    let mut endpoints = Vec::new();
    for _ in 0..(due / 20) {
        endpoints.push(fx.endpoint(&app, &[]).await);
    }
    for round in 0..rounds {
        let at = T0 + round * 1_000_000;
        let mut made = HashSet::new();
        for e in 0..20 {
            let (_, d) = fx.event(&app, "booking.confirmed", at + e).await;
            made.extend(d);
        }
        assert_eq!(made.len(), due);
        let now = at + 100;
        let take = (due as i64 * 3) / 5; // each may take 60%: together more than all
        let (ca, cb) =
            tokio::join!(a.claim_due("a", now, now + 60_000, take), b.claim_due("b", now, now + 60_000, take));
        let (ca, cb) = (ids(&ca.unwrap()), ids(&cb.unwrap()));
        assert!(ca.is_disjoint(&cb), "round {round}: {} deliveries claimed twice", ca.intersection(&cb).count());
        let both: HashSet<DeliveryId> = ca.union(&cb).cloned().collect();
        assert_eq!(both, made, "round {round}: together they claimed every due delivery ({} + {})", ca.len(), cb.len());
        // Finish the round so its rows are not due in the next one.
        let finished = raw
            .exec("UPDATE deliveries SET status = 'succeeded', lease_until = NULL WHERE lease_until IS NOT NULL", &[])
            .await;
        assert_eq!(finished, due as u64);
    }
}

async fn two_concurrent_claimers_never_get_the_same_delivery(backend: Backend) {
    let fx = Fixture::new(backend).await;
    match backend {
        // Several instances share one PostgreSQL database: two stores, SKIP LOCKED.
        Backend::Postgres => {
            let (a, b) = (fx.second_store().await, fx.second_store().await);
            race_two_claimers(&fx, &a, &b, 20, 200).await;
        }
        // SQLite serves one instance: two claimers of that instance share its writer.
        Backend::Sqlite => {
            let (a, b) = (fx.store.clone(), fx.store.clone());
            race_two_claimers(&fx, &a, &b, 20, 200).await;
        }
    }
}

/// The fair claim's two reads: the apps with pending deliveries, round from
/// a cursor, and one app's earliest due deliveries without the others'.
async fn a_claim_for_one_app_takes_only_its_due_deliveries_and_apps_with_pending_go_round(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (hog, neighbour, idle) = (fx.app("hog").await, fx.app("neighbour").await, fx.app("idle").await);
    let mut hogs = Vec::new();
    fx.endpoint(&hog, &[]).await;
    for t in [T0, T0 + 1, T0 + 2] {
        hogs.extend(fx.event(&hog, "booking.confirmed", t).await.1);
    }
    fx.endpoint(&neighbour, &[]).await;
    let (_, now_due) = fx.event(&neighbour, "booking.confirmed", T0 + 3).await;
    let (_, later) = fx.event(&neighbour, "booking.confirmed", T0 + 5_000).await;

    let mut pending = fx.store.apps_with_pending("", 10).await.unwrap();
    let mut expected = vec![hog.clone(), neighbour.clone()];
    expected.sort();
    assert_eq!(pending, expected, "apps with pending deliveries in id order; {idle} has none");
    let (first, second) = (&expected[0], &expected[1]);
    pending = fx.store.apps_with_pending(first.as_str(), 10).await.unwrap();
    assert_eq!(pending, [second.clone(), first.clone()], "from the cursor on, then round");
    assert_eq!(
        fx.store.apps_with_pending(first.as_str(), 1).await.unwrap(),
        std::slice::from_ref(second),
        "at most as many as asked"
    );

    let claimed = fx.store.claim_due_of_app("w1", T0 + 10, T0 + 60_000, 10, &neighbour).await.unwrap();
    assert_eq!(ids(&claimed), ids_of(&now_due), "the neighbour's due delivery only, not the hog's older ones");
    assert!(!ids(&claimed).contains(&later[0]));
    let claimed = fx.store.claim_due_of_app("w1", T0 + 10, T0 + 60_000, 2, &hog).await.unwrap();
    assert_eq!(ids(&claimed), ids_of(&hogs[..2]), "earliest first, up to the limit");
    assert!(fx.store.claim_due_of_app("w2", T0 + 10, T0 + 60_000, 10, &neighbour).await.unwrap().is_empty());
}

fn ids_of(ids: &[DeliveryId]) -> HashSet<DeliveryId> {
    ids.iter().cloned().collect()
}

crate::on_both_backends!(
    a_claim_for_one_app_takes_only_its_due_deliveries_and_apps_with_pending_go_round,
    a_claim_takes_only_due_deliveries_earliest_first_up_to_the_limit,
    a_claimed_delivery_is_in_flight_with_its_lease_and_is_not_claimed_twice,
    an_expired_lease_makes_the_delivery_claimable_again_with_a_higher_token,
    an_extended_lease_holds_only_for_its_current_token,
    a_released_lease_is_due_again_at_once_without_counting_an_attempt,
    next_due_at_is_the_earliest_time_of_a_delivery_nobody_holds,
    two_concurrent_claimers_never_get_the_same_delivery,
);
