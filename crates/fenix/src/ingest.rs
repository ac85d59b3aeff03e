//! Intake: every event, whether a producer sent it through the API or it is
//! Fenix's own operator event, is built here once ([`new_event`]: id,
//! envelope, digest) and written by one writer, the ingestion queue
//! ([`Ingestor`]): concurrent callers hand their events to one task that
//! writes them in group-committed batches ([`Store::ingest_batch`]), answers
//! each caller after its batch committed, and announces the new work
//! ([`Wake`]). Under load this turns many small transactions into a few larger
//! ones; alone, an event is written at once.

use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};

use crate::{
    envelope::build_envelope,
    event_types::EventType,
    ids,
    store::{
        events::{Ingested, NewEvent},
        queue::Whole,
        ClaimedDelivery, FreshLease, HeldWriter, Store,
    },
    time,
    wake::{Reach, Wake},
};

/// Events written per transaction at most.
const MAX_BATCH: usize = 256;
/// How long the write connection is kept at most before it goes back to the
/// pool, where writers run side by side (PostgreSQL: the worker has its own pool).
const HOLD_FOR: Duration = Duration::from_millis(5);

/// How long the ingestion queue keeps its write connection while requests
/// follow each other: [`HOLD_FOR`] where writes run side by side; not at all
/// on SQLite, whose one writer is also the worker's, so a claim never waits
/// behind the next batches (keeping it 5 ms put 5–7 ms between an event's
/// `202` and its delivery at 5,000 events/s; giving it back costs nothing
/// measurable there, see docs/benchmarks.md).
fn hold_for(store: &Store) -> Duration {
    if store.concurrent_writes() {
        HOLD_FOR
    } else {
        Duration::ZERO
    }
}

/// A new event of `app_id`, created now: a fresh id, the envelope every
/// attempt will send (built once) and its digest. `max_fanout`: most
/// deliveries it may fan out to, else it is refused whole.
pub fn new_event(
    app_id: ids::AppId,
    event_type: &EventType,
    data: &RawValue,
    idempotency_key: Option<String>,
    max_fanout: usize,
) -> NewEvent {
    new_event_as(ids::EventId::new(), time::now_ms(), app_id, event_type, data, idempotency_key, max_fanout)
}

/// [`new_event`] with its id and creation time given: a batch's events take a
/// block of consecutive ids made at one moment ([`ids::EventId::new_block`]).
pub fn new_event_as(
    id: ids::EventId,
    created_at: time::Millis,
    app_id: ids::AppId,
    event_type: &EventType,
    data: &RawValue,
    idempotency_key: Option<String>,
    max_fanout: usize,
) -> NewEvent {
    let envelope = build_envelope(id.as_str(), event_type, created_at, data);
    NewEvent {
        payload_sha256: hex::encode(Sha256::digest(&envelope)),
        id,
        app_id,
        event_type: event_type.as_str().to_string(),
        idempotency_key,
        envelope,
        created_at,
        max_fanout,
        only_endpoint: None,
        ordering_key: None,
        channels: Vec::new(),
        tags: Vec::new(),
        deliver_at: None,
        trace_context: None,
    }
}

struct Job {
    event: NewEvent,
    reply: oneshot::Sender<crate::store::Result<Ingested>>,
}

/// Handle to the ingestion task.
#[derive(Clone)]
pub struct Ingestor {
    tx: mpsc::Sender<Job>,
}

impl Ingestor {
    /// Starts the task that writes batches to `store` and announces their work on `wake`.
    pub fn start(store: Store, wake: Wake) -> Ingestor {
        let (tx, rx) = mpsc::channel(MAX_BATCH * 8);
        tokio::spawn(run(store, wake, rx));
        Ingestor { tx }
    }

    /// Stores one event with its deliveries; returns after the commit.
    pub async fn ingest(&self, event: NewEvent) -> crate::store::Result<Ingested> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(Job { event, reply }).await.map_err(|_| crate::store::Error::Stopped)?;
        answer.await.map_err(|_| crate::store::Error::Stopped)?
    }
}

async fn run(store: Store, wake: Wake, mut rx: mpsc::Receiver<Job>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    // The write connection is kept while requests are already waiting for the
    // next batch, for `hold_for` at most; it goes back to the pool as soon as the
    // queue is empty, so that on SQLite the worker (one writer for both) never
    // waits behind an idle ingestion queue.
    let mut held: Option<(HeldWriter, Instant)> = None;
    let hold = hold_for(&store);
    loop {
        if rx.is_empty() || held.as_ref().is_some_and(|(_, since)| since.elapsed() >= hold) {
            held = None;
        }
        if rx.recv_many(&mut jobs, MAX_BATCH).await == 0 {
            return;
        }
        // The events move into the batch (no copy of their envelopes); the replies wait.
        let (events, replies): (Vec<NewEvent>, Vec<_>) = jobs.drain(..).map(|j| (j.event, j.reply)).unzip();
        // While this instance's worker has nothing due, fresh deliveries go
        // to it leased, without waiting for a claim.
        let fresh = wake.fresh().lease(time::now_ms());
        let written = write(&store, &mut held, &events, fresh.as_ref()).await;
        let (results, leased) = match written {
            Ok((results, leased)) => (results.into_iter().map(Ok).collect(), leased),
            Err(e) => {
                // Give the connection back (the pool replaces it if it is broken
                // or still inside a transaction); each event is retried alone.
                held = None;
                (one_by_one(&store, &events, e).await, Vec::new())
            }
        };
        let handed = leased.len();
        if let Err(orphans) = wake.fresh().hand_over(leased) {
            // The worker stopped meanwhile: due again now, for any instance.
            held = None;
            give_back(&store, &orphans).await;
        }
        // Wake the worker for what it was not handed. (On PostgreSQL the
        // batch's statement carried the NOTIFY to the other instances.)
        let made: i64 = results.iter().flatten().filter(|i| i.created).map(|i| i.event.delivery_count).sum();
        if usize::try_from(made).unwrap_or(usize::MAX) > handed {
            wake.work_committed(Reach::ThisInstance).await;
        }
        for (reply, result) in replies.into_iter().zip(results) {
            let _ = reply.send(result);
        }
    }
}

/// Releases the leases of fresh deliveries no worker took (they are due now).
async fn give_back(store: &Store, orphans: &[ClaimedDelivery]) {
    let leases: Vec<(crate::ids::DeliveryId, i64)> = orphans.iter().map(|c| (c.id.clone(), c.lease_token)).collect();
    if let Err(e) = store.release_leases(&leases, time::now_ms()).await {
        // Not lost: they come due when their leases run out.
        tracing::warn!(error = %e, deliveries = leases.len(), "giving back fresh deliveries failed");
    }
}

/// Writes `events` as one batch on the held writer, taking one if none is
/// held; with `fresh`, leasing some of its deliveries to this instance's worker.
async fn write(
    store: &Store,
    held: &mut Option<(HeldWriter, Instant)>,
    events: &[NewEvent],
    fresh: Option<&FreshLease>,
) -> crate::store::Result<(Vec<Ingested>, Vec<ClaimedDelivery>)> {
    if held.is_none() {
        *held = Some((store.hold_writer().await?, Instant::now()));
    }
    let (writer, _) = held.as_mut().expect("taken just above");
    store.ingest_batch(writer, events, Whole::EachOnItsOwn, fresh).await
}

/// A batch failed and stored nothing: each event alone, through the same batch
/// writer (on a fresh connection each), so one event cannot fail the others.
/// An event that was alone already gets its error as the answer.
async fn one_by_one(store: &Store, events: &[NewEvent], e: crate::store::Error) -> Vec<crate::store::Result<Ingested>> {
    if events.len() == 1 {
        return vec![Err(e)];
    }
    let mut answers = Vec::with_capacity(events.len());
    for ev in events {
        let mut held = None;
        let answer = write(store, &mut held, std::slice::from_ref(ev), None).await;
        answers.push(answer.map(|(mut one, _)| one.remove(0)));
    }
    answers
}
