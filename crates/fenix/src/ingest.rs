//! The ingestion queue: concurrent API requests hand their events to one task
//! that writes them in group-committed batches ([`Store::ingest_batch`]) and
//! answers each request after its batch committed. Under load this turns many
//! small transactions into a few larger ones; alone, an event is written at once.

use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::{
    event_types::EventTypeFilter,
    ids,
    store::{
        events::{Ingested, NewEvent},
        HeldWriter, Store,
    },
};

/// Events written per transaction at most.
const MAX_BATCH: usize = 256;
/// How long the write connection is kept at most before it goes back to the pool.
const HOLD_FOR: Duration = Duration::from_millis(5);

struct Job {
    event: NewEvent,
    reply: oneshot::Sender<sqlx::Result<Ingested>>,
}

/// Handle to the ingestion task.
#[derive(Clone)]
pub struct Ingestor {
    tx: mpsc::Sender<Job>,
}

fn matches(filter_json: &str, event_type: &str) -> bool {
    EventTypeFilter::from_json(filter_json).matches(event_type)
}

fn new_delivery_id() -> String {
    ids::new_id("dlv")
}

impl Ingestor {
    /// Starts the task that writes batches to `store`.
    pub fn start(store: Store) -> Ingestor {
        let (tx, rx) = mpsc::channel(MAX_BATCH * 8);
        tokio::spawn(run(store, rx));
        Ingestor { tx }
    }

    /// Stores one event with its deliveries; returns after the commit.
    pub async fn ingest(&self, event: NewEvent) -> sqlx::Result<Ingested> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(Job { event, reply }).await.map_err(|_| sqlx::Error::PoolClosed)?;
        answer.await.map_err(|_| sqlx::Error::PoolClosed)?
    }
}

async fn run(store: Store, mut rx: mpsc::Receiver<Job>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    // The write connection is kept while requests are already waiting for the
    // next batch, for HOLD_FOR at most; it goes back to the pool as soon as the
    // queue is empty, so that on SQLite the worker (one writer for both) never
    // waits behind an idle ingestion queue.
    let mut held: Option<(HeldWriter, Instant)> = None;
    loop {
        if rx.is_empty() || held.as_ref().is_some_and(|(_, since)| since.elapsed() > HOLD_FOR) {
            held = None;
        }
        if rx.recv_many(&mut jobs, MAX_BATCH).await == 0 {
            return;
        }
        // The events move into the batch (no copy of their envelopes); the replies wait.
        let (events, replies): (Vec<NewEvent>, Vec<_>) = jobs.drain(..).map(|j| (j.event, j.reply)).unzip();
        let written = async {
            if held.is_none() {
                held = Some((store.hold_writer().await?, Instant::now()));
            }
            let (writer, _) = held.as_mut().expect("taken just above");
            store.ingest_batch(writer, &events, matches, new_delivery_id).await
        }
        .await;
        match written {
            Ok(results) => {
                for (reply, result) in replies.into_iter().zip(results) {
                    let _ = reply.send(Ok(result));
                }
            }
            Err(e) => {
                // Give the connection back (the pool replaces it if it is broken
                // or still inside a transaction); the paths below use the pool.
                held = None;
                write_one_by_one(&store, events, replies, e).await;
            }
        }
    }
}

/// A batch failed and stored nothing: each event alone, so one cannot fail the others.
async fn write_one_by_one(
    store: &Store,
    events: Vec<NewEvent>,
    replies: Vec<oneshot::Sender<sqlx::Result<Ingested>>>,
    e: sqlx::Error,
) {
    if replies.len() == 1 {
        let ev = &events[0];
        let answer = if crate::store::is_unavailable(&e) {
            // The database is away: answer now (503) rather than wait again.
            Err(e)
        } else {
            // One event alone: the single-event path handles key races with other instances.
            store.ingest_event(ev, |f| matches(f, &ev.event_type), new_delivery_id).await.map_err(|_| e)
        };
        if let Some(reply) = replies.into_iter().next() {
            let _ = reply.send(answer);
        }
        return;
    }
    // Something in the batch failed (e.g. a key raced with another instance).
    for (ev, reply) in events.iter().zip(replies) {
        let r = store.ingest_event(ev, |f| matches(f, &ev.event_type), new_delivery_id).await;
        let _ = reply.send(r);
    }
}
