//! Recording outcomes: an attempt that happened is always kept; the delivery row
//! changes only for the worker that still holds its lease.

use fenix::ids::{AppId, DeliveryId};
use fenix::store::ClaimedDelivery;

use super::fixtures::{attempt_for, outcome, Fixture, T0};
use crate::support::Backend;

/// One app, one endpoint, one event due at `T0`; returns (app, delivery).
async fn one_delivery(fx: &Fixture) -> (AppId, DeliveryId) {
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let (_, made) = fx.event(&app, "booking.confirmed", T0).await;
    (app, made[0].clone())
}

async fn claim_one(fx: &Fixture, owner: &str, now: i64, lease_until: i64) -> ClaimedDelivery {
    let mut claimed = fx.store.claim_due(owner, now, lease_until, 10).await.unwrap();
    assert_eq!(claimed.len(), 1, "one delivery is due at {now}");
    claimed.remove(0)
}

async fn an_outcome_under_the_current_lease_writes_the_attempt_and_updates_the_delivery(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (app, id) = one_delivery(&fx).await;

    // First attempt fails: a retry is scheduled.
    let c = claim_one(&fx, "w1", T0, T0 + 30_000).await;
    let first = attempt_for(&c, 1, T0 + 1);
    let mut retry = outcome(&c, "pending", 1, Some(first.clone()));
    retry.next_attempt_at = Some(T0 + 60_000);
    assert_eq!(fx.store.record_outcomes(&[retry], T0 + 20).await.unwrap(), 0, "nothing lost");
    let row = fx.store.get_delivery(&app, &id).await.unwrap().unwrap();
    assert_eq!((row.status.as_str(), row.attempt_count), ("pending", 1));
    assert_eq!((row.next_attempt_at, row.last_attempt_at, row.updated_at), (Some(T0 + 60_000), Some(T0 + 1), T0 + 20));
    let free = fx.raw().await.int("SELECT COUNT(*) FROM deliveries WHERE lease_owner IS NULL", &[]).await;
    assert_eq!(free, Some(1), "the lease is given up");
    assert!(
        fx.store.claim_due("w1", T0 + 59_999, T0 + 90_000, 10).await.unwrap().is_empty(),
        "not due before the retry"
    );

    // Second attempt succeeds.
    let c = claim_one(&fx, "w1", T0 + 60_000, T0 + 90_000).await;
    assert_eq!(c.attempt_count, 1);
    let mut second = attempt_for(&c, 2, T0 + 60_001);
    second.response_status = Some(204);
    (second.error, second.response_excerpt) = (None, None);
    assert_eq!(
        fx.store.record_outcomes(&[outcome(&c, "succeeded", 2, Some(second.clone()))], T0 + 60_010).await.unwrap(),
        0
    );
    let row = fx.store.get_delivery(&app, &id).await.unwrap().unwrap();
    assert_eq!((row.status.as_str(), row.attempt_count, row.next_attempt_at), ("succeeded", 2, None));
    assert_eq!(row.last_attempt_at, Some(T0 + 60_001));

    let attempts = fx.store.list_attempts(&id).await.unwrap();
    assert_eq!(attempts.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(), [first.id.as_str(), second.id.as_str()]);
    let a = &attempts[0];
    assert_eq!((a.attempt_number, a.started_at, a.duration_ms, a.response_status), (1, T0 + 1, 12, Some(500)));
    assert_eq!(
        (a.error.as_deref(), a.response_excerpt.as_deref(), a.signed_with.as_str()),
        (Some("http_status"), Some("boom"), "[1]")
    );
    assert_eq!((attempts[1].response_status, attempts[1].error.as_deref()), (Some(204), None));
    assert!(
        fx.store.claim_due("w1", T0 + 999_999, T0 + 1_999_999, 10).await.unwrap().is_empty(),
        "succeeded: never due"
    );
}

async fn an_outcome_after_a_lost_lease_keeps_the_attempt_but_leaves_the_delivery_alone(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (app, id) = one_delivery(&fx).await;
    let slow = claim_one(&fx, "slow", T0, T0 + 1_000).await;
    // The slow worker's lease ran out; another worker took the delivery over.
    let fast = claim_one(&fx, "fast", T0 + 1_000, T0 + 31_000).await;
    assert!(fast.lease_token > slow.lease_token);

    let late = outcome(&slow, "succeeded", 1, Some(attempt_for(&slow, 1, T0 + 500)));
    assert_eq!(fx.store.record_outcomes(&[late], T0 + 1_500).await.unwrap(), 1, "the stale outcome is counted as lost");
    let row = fx.store.get_delivery(&app, &id).await.unwrap().unwrap();
    assert_eq!((row.status.as_str(), row.attempt_count, row.next_attempt_at), ("in_flight", 0, Some(T0 + 31_000)));
    assert_eq!(row.last_attempt_at, None);
    assert_eq!(fx.store.list_attempts(&id).await.unwrap().len(), 1, "the request did happen: its attempt is logged");

    // The current holder's outcome, in a batch beside another stale one, still lands.
    let mut failed = outcome(&fast, "failed", 1, Some(attempt_for(&fast, 1, T0 + 1_200)));
    failed.next_attempt_at = None;
    let stale_again = outcome(&slow, "pending", 1, None);
    assert_eq!(fx.store.record_outcomes(&[stale_again, failed], T0 + 2_000).await.unwrap(), 1);
    let row = fx.store.get_delivery(&app, &id).await.unwrap().unwrap();
    assert_eq!((row.status.as_str(), row.attempt_count, row.last_attempt_at), ("failed", 1, Some(T0 + 1_200)));
    assert_eq!(fx.store.list_attempts(&id).await.unwrap().len(), 2);

    // Once finished, even the right token cannot write twice.
    let replayed = outcome(&fast, "succeeded", 2, None);
    assert_eq!(fx.store.record_outcomes(&[replayed], T0 + 3_000).await.unwrap(), 1);
    assert_eq!(
        fx.store.get_delivery(&app, &id).await.unwrap().unwrap().status,
        fenix::lifecycle::DeliveryStatus::Failed
    );
}

async fn an_attempt_for_a_deleted_delivery_does_not_fail_the_batch(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let gone = fx.endpoint(&app, &[]).await;
    let kept = fx.endpoint(&app, &[]).await;
    fx.event(&app, "booking.confirmed", T0).await;
    let claimed = fx.store.claim_due("w1", T0, T0 + 30_000, 10).await.unwrap();
    assert_eq!(claimed.len(), 2);

    // While the requests are out, the operator deletes one endpoint (and its deliveries).
    assert!(fx.store.delete_endpoint(&app, &gone).await.unwrap());
    let outcomes: Vec<_> =
        claimed.iter().map(|c| outcome(c, "succeeded", 1, Some(attempt_for(c, 1, T0 + 10)))).collect();
    assert_eq!(fx.store.record_outcomes(&outcomes, T0 + 20).await.unwrap(), 1, "only the deleted one is lost");

    let survivor = claimed.iter().find(|c| c.endpoint_id == kept).unwrap();
    let row = fx.store.get_delivery(&app, &survivor.id).await.unwrap().unwrap();
    assert_eq!(row.status, fenix::lifecycle::DeliveryStatus::Succeeded);
    assert_eq!(fx.store.list_attempts(&survivor.id).await.unwrap().len(), 1);
    assert_eq!(fx.raw().await.count("attempts").await, 1, "no orphan attempt");
    assert_eq!(fx.store.record_outcomes(&[], T0 + 30).await.unwrap(), 0, "an empty batch is fine");
}

async fn extending_leases_while_their_outcomes_are_written_does_not_deadlock(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    for i in 0..1_000 {
        fx.event(&app, "booking.confirmed", T0 + i).await;
    }
    let claimed = fx.store.claim_due("w1", T0 + 1_000, T0 + 30_000, 5_000).await.unwrap();
    assert_eq!(claimed.len(), 1_000);

    // The worker keeps its leases in a map (no order) and its outcomes in
    // arrival order: here one goes down the ids while the other goes up.
    let mut leases: Vec<(DeliveryId, i64)> = claimed.iter().map(|c| (c.id.clone(), c.lease_token)).collect();
    leases.sort_unstable_by(|a, b| b.cmp(a));
    let other = fx.second_store().await;
    for round in 0..2 {
        let mut outcomes: Vec<_> =
            claimed.iter().map(|c| outcome(c, "succeeded", 1, Some(attempt_for(c, 1, T0 + 2_000)))).collect();
        outcomes.sort_unstable_by(|a, b| a.delivery_id.cmp(&b.delivery_id));
        let (extended, recorded) = tokio::join!(
            fx.store.extend_leases(&leases, T0 + 60_000 + round),
            other.record_outcomes(&outcomes, T0 + 3_000 + round),
        );
        extended.expect("extending the leases failed");
        let lost = recorded.expect("recording the outcomes failed");
        assert_eq!(lost, if round == 0 { 0 } else { 1_000 }, "round {round}: outcomes whose lease was gone");
    }
    let succeeded =
        fx.raw().await.int("SELECT COUNT(*) FROM deliveries WHERE status = 'succeeded'", &[]).await.unwrap();
    assert_eq!(succeeded, 1_000);
}

crate::on_both_backends!(
    extending_leases_while_their_outcomes_are_written_does_not_deadlock,
    an_outcome_under_the_current_lease_writes_the_attempt_and_updates_the_delivery,
    an_outcome_after_a_lost_lease_keeps_the_attempt_but_leaves_the_delivery_alone,
    an_attempt_for_a_deleted_delivery_does_not_fail_the_batch,
);
