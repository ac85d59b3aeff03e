//! Replay: only failed or skipped deliveries go back to the queue, with a fresh
//! attempt budget and their original event; purged payloads cannot be replayed.

use fenix::ids::{AppId, DeliveryId, EndpointId};
use fenix::{
    lifecycle::DeliveryStatus,
    store::{
        queue::Whole,
        replay::{ReplayRefusal, ReplayScope},
        Store,
    },
};

use super::fixtures::{new_event, Fixture, Raw, T0};
use crate::support::Backend;

/// When every fixture delivery below has come due.
const LATER: i64 = T0 + 1_000_000;

/// One delivery per event for `endpoint_id`'s app, made at `T0 + i * 1000` for each `i` in `range`.
async fn deliveries(fx: &Fixture, app: &AppId, event_type: &str, range: std::ops::Range<i64>) -> Vec<DeliveryId> {
    let mut out = Vec::new();
    for i in range {
        let (_, made) = fx.event(app, event_type, T0 + i * 1_000).await;
        out.extend(made);
    }
    out
}

/// (status, attempt_count, budget_start) of a delivery, read beside the store.
async fn status_of(raw: &Raw, id: &DeliveryId) -> (String, i64, i64) {
    let status = raw.text("SELECT status FROM deliveries WHERE id = $1", &[id.into()]).await.expect("delivery");
    let attempts = raw.int("SELECT attempt_count FROM deliveries WHERE id = $1", &[id.into()]).await.unwrap();
    let budget = raw.int("SELECT budget_start FROM deliveries WHERE id = $1", &[id.into()]).await.unwrap();
    (status, attempts, budget)
}

async fn a_failed_or_skipped_delivery_is_replayed_with_a_fresh_budget(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &["booking.*"]).await;
    let d = deliveries(&fx, &app, "booking.confirmed", 0..2).await;
    fx.settle(&d[..1], "failed", 5, LATER).await;
    fx.settle(&d[1..], "skipped", 2, LATER).await;
    let raw = fx.raw().await;

    for (id, attempts) in [(&d[0], 5), (&d[1], 2)] {
        assert_eq!(fx.store.replay_delivery(&app, id, LATER + 10).await.unwrap(), Ok(()));
        assert_eq!(status_of(&raw, id).await, ("pending".into(), attempts, attempts), "budget starts at the count");
        let row = fx.store.get_delivery(&app, id).await.unwrap().unwrap();
        assert_eq!(row.next_attempt_at, Some(LATER + 10), "due at once");
    }
    let claimed = fx.store.claim_due("w1", LATER + 10, LATER + 20_000, 10).await.unwrap();
    assert_eq!(claimed.len(), 2);
    for c in &claimed {
        assert_eq!(c.attempt_count, c.budget_start);
        let event = fx.store.get_delivery(&app, &c.id).await.unwrap().unwrap().event_id;
        assert_eq!(c.event_id, event, "the original event is sent again");
    }
}

async fn a_succeeded_pending_or_in_flight_delivery_is_not_replayable(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let d = deliveries(&fx, &app, "booking.confirmed", 0..3).await;
    fx.settle(&d[..1], "succeeded", 1, LATER).await;
    let raw = fx.raw().await;

    let refused = fx.store.replay_delivery(&app, &d[0], LATER + 1).await.unwrap();
    assert_eq!(refused, Err(ReplayRefusal::NotReplayable(fenix::lifecycle::DeliveryStatus::Succeeded)));
    assert_eq!(status_of(&raw, &d[0]).await, ("succeeded".into(), 1, 0));
    let refused = fx.store.replay_delivery(&app, &d[1], LATER + 1).await.unwrap();
    assert_eq!(refused, Err(ReplayRefusal::NotReplayable(fenix::lifecycle::DeliveryStatus::Pending)));
    let in_flight = fx.store.claim_due("w1", LATER + 1, LATER + 60_000, 1).await.unwrap();
    let refused = fx.store.replay_delivery(&app, &in_flight[0].id, LATER + 2).await.unwrap();
    assert_eq!(refused, Err(ReplayRefusal::NotReplayable(fenix::lifecycle::DeliveryStatus::InFlight)));

    assert_eq!(
        fx.store.replay_delivery(&app, &DeliveryId::from_stored("dlv_nope".into()), LATER).await.unwrap(),
        Err(ReplayRefusal::NotFound)
    );
    let other = fx.app("globex").await;
    assert_eq!(
        fx.store.replay_delivery(&other, &d[0], LATER).await.unwrap(),
        Err(ReplayRefusal::NotFound),
        "scoped to its app"
    );
}

async fn a_delivery_whose_payload_was_purged_cannot_be_replayed(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let d = deliveries(&fx, &app, "booking.confirmed", 0..1).await;
    fx.settle(&d, "failed", 5, LATER).await;
    let raw = fx.raw().await;
    let purged = raw.exec("UPDATE events SET payload = NULL WHERE app_id = $1", &[(&app).into()]).await;
    assert_eq!(purged, 1);

    let refused = fx.store.replay_delivery(&app, &d[0], LATER + 1).await.unwrap();
    assert_eq!(refused, Err(ReplayRefusal::PayloadExpired));
    assert_eq!(status_of(&raw, &d[0]).await, ("failed".into(), 5, 0), "left as it was");
}

async fn an_endpoint_replay_runs_in_bounded_batches_and_a_second_run_requeues_nothing(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &["booking.*"]).await;
    let _other = fx.endpoint(&app, &["invoice.*"]).await;
    let failed = deliveries(&fx, &app, "booking.confirmed", 0..7).await;
    let skipped = deliveries(&fx, &app, "booking.confirmed", 7..9).await;
    let succeeded = deliveries(&fx, &app, "booking.confirmed", 9..10).await;
    let theirs = deliveries(&fx, &app, "invoice.paid", 10..12).await;
    fx.settle(&failed, "failed", 5, LATER).await;
    fx.settle(&skipped, "skipped", 1, LATER).await;
    fx.settle(&succeeded, "succeeded", 1, LATER).await;
    fx.settle(&theirs, "failed", 5, LATER).await;
    let raw = fx.raw().await;

    let scope = ReplayScope {
        endpoint_id: &ep,
        statuses: &fenix::lifecycle::DeliveryStatus::REPLAYABLE,
        since: None,
        until: None,
    };
    let (mut batches, mut after) = (Vec::new(), String::new());
    loop {
        let batch = fx.store.replay_endpoint_batch(&scope, LATER + 1, &after, 4).await.unwrap();
        batches.push(batch.requeued);
        match batch.next {
            Some(next) => after = next,
            None => break,
        }
    }
    assert_eq!(batches, [4, 4, 1], "nine deliveries in batches of at most four");
    for id in failed.iter().chain(&skipped) {
        let (status, attempts, budget) = status_of(&raw, id).await;
        assert_eq!((status.as_str(), budget), ("pending", attempts));
    }
    assert_eq!(status_of(&raw, &succeeded[0]).await.0, "succeeded", "a succeeded delivery is never replayed");
    for id in &theirs {
        assert_eq!(status_of(&raw, id).await.0, "failed", "another endpoint's deliveries stay");
    }

    assert_eq!(fx.store.replay_endpoint(&scope, LATER + 2, 4).await.unwrap(), 0, "already re-queued");
    assert_eq!(fx.store.claim_due("w1", LATER + 2, LATER + 60_000, 100).await.unwrap().len(), 9);
}

async fn an_endpoint_replay_honours_its_status_and_time_window(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;
    let failed = deliveries(&fx, &app, "booking.confirmed", 0..6).await;
    let skipped = deliveries(&fx, &app, "booking.confirmed", 6..8).await;
    fx.settle(&failed, "failed", 5, LATER).await;
    fx.settle(&skipped, "skipped", 0, LATER).await;
    let raw = fx.raw().await;

    let only_skipped = ReplayScope {
        endpoint_id: &ep,
        statuses: &[fenix::lifecycle::DeliveryStatus::Skipped],
        since: None,
        until: None,
    };
    assert_eq!(fx.store.replay_endpoint(&only_skipped, LATER + 1, 100).await.unwrap(), 2);
    for id in &failed {
        assert_eq!(status_of(&raw, id).await.0, "failed");
    }

    // Created at T0+2s, T0+3s, T0+4s: since is inclusive, until exclusive.
    let window = ReplayScope {
        endpoint_id: &ep,
        statuses: &[fenix::lifecycle::DeliveryStatus::Failed],
        since: Some(T0 + 2_000),
        until: Some(T0 + 5_000),
    };
    assert_eq!(fx.store.replay_endpoint(&window, LATER + 2, 100).await.unwrap(), 3);
    let states: Vec<String> =
        futures::future::join_all(failed.iter().map(|id| status_of(&raw, id))).await.into_iter().map(|s| s.0).collect();
    assert_eq!(states, ["failed", "failed", "pending", "pending", "pending", "failed"]);

    // A purged payload is left out, and counted.
    raw.exec(
        "UPDATE events SET payload = NULL WHERE id = (SELECT event_id FROM deliveries WHERE id = $1)",
        &[(&failed[0]).into()],
    )
    .await;
    let rest = ReplayScope {
        endpoint_id: &ep,
        statuses: &[fenix::lifecycle::DeliveryStatus::Failed],
        since: None,
        until: None,
    };
    assert_eq!(fx.store.count_expired_replays(&rest).await.unwrap(), 1);
    assert_eq!(fx.store.replay_endpoint(&rest, LATER + 3, 100).await.unwrap(), 2);
    assert_eq!(status_of(&raw, &failed[0]).await.0, "failed");
}

/// `n` deliveries to one endpoint of a new app, all `skipped` (as a paused
/// endpoint's are), made by one batch.
async fn skipped_deliveries(fx: &Fixture, n: usize) -> (AppId, EndpointId) {
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;
    let events: Vec<_> = (0..n).map(|_| new_event(&app, "booking.confirmed", None, T0)).collect();
    let mut writer = fx.store.hold_writer().await.unwrap();
    fx.store.ingest_batch(&mut writer, &events, Whole::AllOrNothing, None).await.unwrap();
    drop(writer);
    fx.raw().await.exec("UPDATE deliveries SET status = 'skipped' WHERE endpoint_id = $1", &[(&ep).into()]).await;
    (app, ep)
}

/// The second store of a test: another instance on PostgreSQL (SQLite: another
/// handle on the same file, its writes still one at a time).
async fn two_stores(fx: &Fixture) -> [Store; 2] {
    [fx.store.clone(), fx.second_store().await]
}

/// Eight replays of one failed delivery at once, across two instances: one
/// re-queues it and answers so; the seven others change nothing and are
/// refused as not replayable (they find it pending), never a second `Ok`.
async fn concurrent_replays_of_one_delivery_requeue_it_once(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let app = fx.app("acme").await;
    fx.endpoint(&app, &[]).await;
    let d = deliveries(&fx, &app, "booking.confirmed", 0..1).await;
    fx.settle(&d, "failed", 5, LATER).await;
    let stores = two_stores(&fx).await;

    let replays: Vec<_> = (0..8)
        .map(|i| {
            let (store, app, id) = (stores[i % 2].clone(), app.clone(), d[0].clone());
            tokio::spawn(async move { store.replay_delivery(&app, &id, LATER + 10).await.unwrap() })
        })
        .collect();
    let mut answers = Vec::new();
    for r in replays {
        answers.push(r.await.unwrap());
    }
    assert_eq!(answers.iter().filter(|a| a.is_ok()).count(), 1, "one re-queue, one Ok: {answers:?}");
    for refused in answers.iter().filter_map(|a| a.as_ref().err()) {
        assert_eq!(refused, &ReplayRefusal::NotReplayable(DeliveryStatus::Pending));
    }
    assert_eq!(status_of(&fx.raw().await, &d[0]).await.0, "pending");
}

/// Four replays of one endpoint at once, across two instances: the counts
/// they answer add up to the deliveries re-queued, each counted once.
async fn concurrent_endpoint_replays_count_each_requeue_once(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (_, ep) = skipped_deliveries(&fx, 1_500).await;
    let stores = two_stores(&fx).await;

    let replays: Vec<_> = (0..4)
        .map(|i| {
            let (store, ep) = (stores[i % 2].clone(), ep.clone());
            tokio::spawn(async move {
                let scope =
                    ReplayScope { endpoint_id: &ep, statuses: &DeliveryStatus::REPLAYABLE, since: None, until: None };
                store.replay_endpoint(&scope, LATER, 100).await.unwrap()
            })
        })
        .collect();
    let mut total = 0;
    for r in replays {
        total += r.await.unwrap();
    }
    assert_eq!(total, 1_500, "every delivery re-queued, and counted by one replay only");
    let raw = fx.raw().await;
    let pending = "SELECT COUNT(*) FROM deliveries WHERE endpoint_id = $1 AND status = 'pending'";
    assert_eq!(raw.int(pending, &[(&ep).into()]).await, Some(1_500));
}

/// A paused endpoint's worker skips the deliveries a replay re-queues as
/// they come due, while the replay goes on: the replay never meets them again
/// (its batches move on in id order), so it counts each delivery once: it
/// used to re-queue them round after round, answering more than existed.
async fn a_replay_counts_a_delivery_skipped_again_meanwhile_once(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (_, ep) = skipped_deliveries(&fx, 30).await;
    let scope = ReplayScope { endpoint_id: &ep, statuses: &DeliveryStatus::REPLAYABLE, since: None, until: None };
    let raw = fx.raw().await;

    let (mut total, mut after) = (0, String::new());
    loop {
        let batch = fx.store.replay_endpoint_batch(&scope, LATER, &after, 10).await.unwrap();
        total += batch.requeued;
        // The paused endpoint's worker: what was re-queued is skipped again.
        raw.exec("UPDATE deliveries SET status = 'skipped' WHERE endpoint_id = $1", &[(&ep).into()]).await;
        match batch.next {
            Some(next) => after = next,
            None => break,
        }
    }
    assert_eq!(total, 30, "30 deliveries, each re-queued once");
}

crate::on_both_backends!(
    concurrent_replays_of_one_delivery_requeue_it_once,
    concurrent_endpoint_replays_count_each_requeue_once,
    a_replay_counts_a_delivery_skipped_again_meanwhile_once,
    a_failed_or_skipped_delivery_is_replayed_with_a_fresh_budget,
    a_succeeded_pending_or_in_flight_delivery_is_not_replayable,
    a_delivery_whose_payload_was_purged_cannot_be_replayed,
    an_endpoint_replay_runs_in_bounded_batches_and_a_second_run_requeues_nothing,
    an_endpoint_replay_honours_its_status_and_time_window,
);
