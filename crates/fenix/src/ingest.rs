//! The ingestion queue: concurrent API requests hand their events to one task
//! that writes them in group-committed batches ([`Store::ingest_batch`]) and
//! answers each request after its batch committed. Under load this turns many
//! small transactions into a few larger ones; alone, an event is written at once.

use tokio::sync::{mpsc, oneshot};

use crate::{
    event_types::EventTypeFilter,
    ids,
    store::{
        events::{Ingested, NewEvent},
        Store,
    },
};

/// Events written per transaction at most.
const MAX_BATCH: usize = 256;

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
    while rx.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        // The events move into the batch (no copy of their envelopes); the replies wait.
        let (events, replies): (Vec<NewEvent>, Vec<_>) = jobs.drain(..).map(|j| (j.event, j.reply)).unzip();
        match store.ingest_batch(&events, matches, new_delivery_id).await {
            Ok(results) => {
                for (reply, result) in replies.into_iter().zip(results) {
                    let _ = reply.send(Ok(result));
                }
            }
            Err(e) if replies.len() == 1 => {
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
            }
            Err(_) => {
                // Something in the batch failed (e.g. a key raced with another instance):
                // nothing was stored; write each event on its own so one cannot fail the others.
                for (ev, reply) in events.iter().zip(replies) {
                    let r = store.ingest_event(ev, |f| matches(f, &ev.event_type), new_delivery_id).await;
                    let _ = reply.send(r);
                }
            }
        }
    }
}
