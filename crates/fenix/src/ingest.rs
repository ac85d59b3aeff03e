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
        let events: Vec<NewEvent> = jobs.iter().map(|j| clone_event(&j.event)).collect();
        match store.ingest_batch(&events, matches, new_delivery_id).await {
            Ok(results) => {
                for (job, result) in jobs.drain(..).zip(results) {
                    let _ = job.reply.send(Ok(result));
                }
            }
            Err(e) if jobs.len() == 1 && crate::store::is_unavailable(&e) => {
                // The database is away: answer now (503) rather than wait again.
                if let Some(job) = jobs.pop() {
                    let _ = job.reply.send(Err(e));
                }
            }
            Err(e) if jobs.len() == 1 => {
                if let Some(job) = jobs.pop() {
                    // One event alone: the single-event path handles key races with other instances.
                    let retry =
                        store.ingest_event(&job.event, |f| matches(f, &job.event.event_type), new_delivery_id).await;
                    let _ = job.reply.send(retry.map_err(|_| e));
                }
            }
            Err(_) => {
                // Something in the batch failed (e.g. a key raced with another instance):
                // nothing was stored; write each event on its own so one cannot fail the others.
                for job in jobs.drain(..) {
                    let r =
                        store.ingest_event(&job.event, |f| matches(f, &job.event.event_type), new_delivery_id).await;
                    let _ = job.reply.send(r);
                }
            }
        }
        jobs.clear();
    }
}

fn clone_event(e: &NewEvent) -> NewEvent {
    NewEvent {
        id: e.id.clone(),
        app_id: e.app_id.clone(),
        event_type: e.event_type.clone(),
        idempotency_key: e.idempotency_key.clone(),
        envelope: e.envelope.clone(),
        payload_sha256: e.payload_sha256.clone(),
        created_at: e.created_at,
    }
}
