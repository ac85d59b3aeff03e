//! Ordered lanes in the queue: a claim takes only the head of each lane, the
//! next one once the head is final, and on PostgreSQL a claim that took a
//! row behind a replayed one (two claims racing a replay) gives it back.

use fenix::ids::{AppId, DeliveryId, EndpointId};
use fenix::store::ClaimedDelivery;
use sqlx::Connection;

use super::fixtures::{new_event, outcome, Fixture, T0};
use crate::support::Backend;

/// An app with one ordered endpoint; returns (app, endpoint).
async fn ordered(fx: &Fixture) -> (AppId, EndpointId) {
    let app = fx.app("acme").await;
    let ep = fx.endpoint(&app, &[]).await;
    fx.raw().await.exec("UPDATE endpoints SET ordered = TRUE WHERE id = $1", &[(&ep).into()]).await;
    (app, ep)
}

/// Ingests one event with `key` at `at`; answers its delivery's id.
async fn send(fx: &Fixture, app: &AppId, key: Option<&str>, at: i64) -> DeliveryId {
    let mut ev = new_event(app, "booking.confirmed", None, at);
    ev.ordering_key = key.map(Into::into);
    let (_, made) = fx.ingest(&ev).await.expect("ingest");
    assert_eq!(made.len(), 1);
    made[0].clone()
}

fn ids(claimed: &[ClaimedDelivery]) -> Vec<DeliveryId> {
    let mut v: Vec<DeliveryId> = claimed.iter().map(|c| c.id.clone()).collect();
    v.sort();
    v
}

async fn a_claim_takes_only_the_head_of_each_lane_and_the_next_once_it_is_final(backend: Backend) {
    let fx = Fixture::new(backend).await;
    let (app, _) = ordered(&fx).await;
    // Made at falling times: the lane follows the order of acceptance, not the event's clock.
    let a1 = send(&fx, &app, None, T0 + 30).await;
    let a2 = send(&fx, &app, None, T0 + 20).await;
    let k1 = send(&fx, &app, Some("k"), T0 + 10).await;
    let k2 = send(&fx, &app, Some("k"), T0).await;

    let first = fx.store.claim_due("w1", T0 + 100, T0 + 60_000, 100).await.unwrap();
    let mut heads = vec![a1.clone(), k1.clone()];
    heads.sort();
    assert_eq!(ids(&first), heads, "one head per lane");
    assert!(first.iter().all(|c| c.lane_seq.is_some()));
    assert!(fx.store.claim_due("w2", T0 + 100, T0 + 60_000, 100).await.unwrap().is_empty(), "lanes busy");

    // The keyless head succeeds, the keyed one is retried later: only a2 comes next.
    let a1c = first.iter().find(|c| c.id == a1).unwrap();
    let k1c = first.iter().find(|c| c.id == k1).unwrap();
    let mut retry = outcome(k1c, "pending", 1, None);
    retry.next_attempt_at = Some(T0 + 5_000);
    fx.store.record_outcomes(&[outcome(a1c, "succeeded", 1, None), retry], T0 + 200).await.unwrap();
    let next = fx.store.claim_due("w1", T0 + 300, T0 + 60_000, 100).await.unwrap();
    assert_eq!(ids(&next), vec![a2.clone()], "k2 waits for k1's retry");
    let later = fx.store.claim_due("w1", T0 + 5_000, T0 + 60_000, 100).await.unwrap();
    assert_eq!(ids(&later), vec![k1.clone()], "the retry of the head, never k2");
    let _ = k2;
}

crate::on_both_backends!(a_claim_takes_only_the_head_of_each_lane_and_the_next_once_it_is_final);

/// Two PostgreSQL claims around a replay: one whose snapshot predates the
/// replay takes the old head's successor; the other, not seeing that lease
/// yet, takes the replayed row. `FOR UPDATE SKIP LOCKED` cannot prevent it
/// (they lock different rows); the re-check after the commit gives the later
/// row back, so only the replayed one is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_claim_behind_a_replayed_delivery_gives_its_row_back() {
    if !crate::support::db::postgres_available() {
        return;
    }
    let fx = Fixture::new(Backend::Postgres).await;
    let (app, _) = ordered(&fx).await;
    let x1 = send(&fx, &app, None, T0).await;
    let x2 = send(&fx, &app, None, T0 + 1).await;
    fx.settle(std::slice::from_ref(&x1), "failed", 5, T0 + 10).await;

    // The stale claimer: its claim of x2 is not committed yet.
    let mut stale = sqlx::PgConnection::connect(&fx.db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut stale).await.unwrap();
    let taken: Vec<ClaimedDelivery> = sqlx::query_as(fenix::store::queue::postgres::CLAIM_POSTGRES.as_str())
        .bind(T0 + 60_000)
        .bind("stale")
        .bind(T0 + 20)
        .bind(10_i64)
        .fetch_all(&mut stale)
        .await
        .unwrap();
    assert_eq!(ids(&taken), vec![x2.clone()], "x1 is a dead letter of a `continue` lane: x2 is the head");

    // x1 is replayed; another claimer takes it, not seeing the uncommitted lease on x2.
    assert_eq!(fx.store.replay_delivery(&app, &x1, T0 + 30).await.unwrap(), Ok(()));
    let fresh = fx.store.claim_due("w2", T0 + 40, T0 + 60_000, 10).await.unwrap();
    assert_eq!(ids(&fresh), vec![x1.clone()]);
    sqlx::query("COMMIT").execute(&mut stale).await.unwrap();
    let leased = fx.raw().await.int("SELECT COUNT(*) FROM deliveries WHERE lease_owner IS NOT NULL", &[]).await;
    assert_eq!(leased, Some(2), "two rows of one lane are leased at once: the race is real");

    // The stale claimer's re-check after its commit gives x2 back; x1 is kept.
    let kept = fx.store.keep_lane_heads(taken, T0 + 50).await.unwrap();
    assert!(kept.is_empty(), "x2 is behind the replayed x1: {kept:?}");
    let still = fx.store.keep_lane_heads(fresh, T0 + 50).await.unwrap();
    assert_eq!(ids(&still), vec![x1.clone()]);
    let owner = fx.raw().await.text("SELECT lease_owner FROM deliveries WHERE id = $1", &[(&x2).into()]).await;
    assert_eq!(owner, None, "x2's lease is released");
}
