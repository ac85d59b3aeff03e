//! A batch of outcomes that contains one the database refuses: the refused one
//! is isolated and written in a smaller form, every other one as it is. Before,
//! the whole batch failed and was retried forever, and nothing more was recorded.

use fenix::ids::AppId;
use fenix::store::{
    outcomes::{Degraded, NOT_STORED_DETAIL},
    ClaimedDelivery, Outcome,
};

use super::fixtures::{attempt_for, outcome, Fixture, T0};
use crate::support::Backend;

/// One app, one endpoint, `n` events due at `T0`, all claimed; with the app id.
async fn claimed(fx: &Fixture, n: usize) -> (AppId, Vec<ClaimedDelivery>) {
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    for k in 0..n {
        fx.event(&app, "booking.confirmed", T0 + k as i64).await;
    }
    let claimed = fx.store.claim_due("w1", T0 + 1_000, T0 + 60_000, 100).await.unwrap();
    assert_eq!(claimed.len(), n);
    (app, claimed)
}

/// A success outcome per claimed delivery, each with its own attempt.
fn successes(claimed: &[ClaimedDelivery]) -> Vec<Outcome> {
    claimed
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut a = attempt_for(c, 1, T0 + 2_000 + k as i64);
            (a.response_status, a.error, a.response_excerpt) = (Some(200), None, Some("ok".into()));
            outcome(c, "succeeded", 1, Some(a))
        })
        .collect()
}

async fn every_status(fx: &Fixture, app: &AppId, claimed: &[ClaimedDelivery]) -> Vec<fenix::lifecycle::DeliveryStatus> {
    let mut out = Vec::new();
    for c in claimed {
        out.push(fx.store.get_delivery(app, &c.id).await.unwrap().unwrap().status);
    }
    out
}

async fn a_refused_attempt_row_is_isolated_and_every_other_outcome_is_recorded(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (app, claimed) = claimed(&fx, 9).await;
    let mut outcomes = successes(&claimed);
    // Both databases refuse a second attempt row with the same id.
    let taken = outcomes[2].attempt.as_ref().unwrap().id.clone();
    outcomes[6].attempt.as_mut().unwrap().id = taken;

    let recorded = fx.store.record_outcomes_isolating(&outcomes, T0 + 3_000).await;
    assert!(recorded.unavailable.is_none() && recorded.unwritten.is_empty());
    assert_eq!(recorded.applied.len(), 9, "every delivery row carries its outcome");
    assert_eq!(recorded.degraded, vec![(claimed[6].id.clone(), Degraded::WithoutAttempt)]);
    assert!(every_status(&fx, &app, &claimed).await.iter().all(|s| *s == fenix::lifecycle::DeliveryStatus::Succeeded));
    for (k, c) in claimed.iter().enumerate() {
        let attempts = fx.store.list_attempts(&c.id).await.unwrap();
        assert_eq!(attempts.len(), usize::from(k != 6), "delivery {k}: its attempt row, except the refused one");
    }
}

async fn a_response_the_database_cannot_store_is_recorded_without_it(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (app, claimed) = claimed(&fx, 5).await;
    let mut outcomes = successes(&claimed);
    // PostgreSQL refuses NUL in text (SQLite stores it): what a binary answer
    // once produced. The worker no longer writes such text; this is the net below.
    outcomes[3].attempt.as_mut().unwrap().response_excerpt = Some("bin\0ary".into());

    let recorded = fx.store.record_outcomes_isolating(&outcomes, T0 + 3_000).await;
    assert!(recorded.unavailable.is_none() && recorded.unwritten.is_empty(), "{:?}", recorded.unavailable);
    assert_eq!(recorded.applied.len(), 5);
    assert!(every_status(&fx, &app, &claimed).await.iter().all(|s| *s == fenix::lifecycle::DeliveryStatus::Succeeded));
    let stored = fx.store.list_attempts(&claimed[3].id).await.unwrap();
    assert_eq!(stored.len(), 1);
    match backend {
        Backend::Postgres => {
            assert_eq!(recorded.degraded, vec![(claimed[3].id.clone(), Degraded::WithoutResponse)]);
            assert_eq!(stored[0].response_excerpt, None);
            assert_eq!(stored[0].error_detail.as_deref(), Some(NOT_STORED_DETAIL));
            assert_eq!(stored[0].response_status, Some(200), "the rest of the attempt is kept");
        }
        Backend::Sqlite => assert!(recorded.degraded.is_empty()),
    }
    for k in [0, 1, 2, 4] {
        let a = fx.store.list_attempts(&claimed[k].id).await.unwrap();
        assert_eq!(a[0].response_excerpt.as_deref(), Some("ok"), "delivery {k} recorded as it was");
    }
}

crate::on_both_backends!(
    a_refused_attempt_row_is_isolated_and_every_other_outcome_is_recorded,
    a_response_the_database_cannot_store_is_recorded_without_it,
);
