//! A delivery's transformed request (migration 0022): what its endpoint's
//! transformation made, stored before the first request is sent so that
//! every attempt sends the same bytes; and the reason a cancelled delivery
//! was skipped. Only deliveries of endpoints with a transformation ever
//! touch these columns: the delivery path of every other endpoint reads and
//! writes none of them.

use tokio::sync::{mpsc, oneshot};

use std::collections::HashSet;

use super::{sql::Built, Error, Result, Store};
use crate::ids::{AppId, DeliveryId};

/// Requests stored per transaction by the [`RequestWriter`].
const BATCH: usize = 256;

/// The stored request: its head (`transform::Transformed` without the body,
/// as JSON) and its body.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredRequest {
    pub transformed_request: String,
    pub transformed_body: Vec<u8>,
}

impl Store {
    /// The request stored for delivery `id`, if any.
    pub async fn transformed_request(&self, id: &DeliveryId) -> Result<Option<StoredRequest>> {
        let sql = "SELECT transformed_request, transformed_body FROM deliveries \
             WHERE id = $1 AND transformed_request IS NOT NULL AND transformed_body IS NOT NULL";
        self.reads().fetch_optional(sql, &[id.into()]).await
    }

    /// The request stored for delivery `id` of app `app_id` (the delivery log).
    pub async fn transformed_request_of(&self, app_id: &AppId, id: &DeliveryId) -> Result<Option<StoredRequest>> {
        let sql = "SELECT transformed_request, transformed_body FROM deliveries \
             WHERE id = $1 AND app_id = $2 AND transformed_request IS NOT NULL AND transformed_body IS NOT NULL";
        self.reads().fetch_optional(sql, &[id.into(), app_id.into()]).await
    }

    /// Stores the request each of `requests` (at most [`BATCH`]) sends, in
    /// one statement, unless one is stored already (another worker's, whose
    /// lease ran out after it wrote): false for that one then, and the caller
    /// sends the stored one (with its condition on an erased payload).
    pub async fn store_transformed_requests(&self, requests: &[NewRequest]) -> Result<Vec<bool>> {
        let mut q = Built::new(
            "UPDATE deliveries SET transformed_request = v.column2, transformed_body = v.column3, \
             skip_reason = NULL FROM (VALUES ",
        );
        for (i, r) in requests.iter().enumerate() {
            if i > 0 {
                q.push(", ");
            }
            q.push("(").bind(&r.id).push(", ").bind(r.head.as_str()).push(", ").bind(r.body.as_slice()).push(")");
        }
        q.push(
            ") AS v WHERE deliveries.id = v.column1 AND deliveries.transformed_request IS NULL \
             AND COALESCE(deliveries.skip_reason, '') <> 'payload_erased' RETURNING deliveries.id",
        );
        let stored: HashSet<String> = self.writes().scalar_all(&q.sql, &q.values).await?.into_iter().collect();
        Ok(requests.iter().map(|r| stored.contains(r.id.as_str())).collect())
    }

    /// Records why delivery `id` is about to be skipped (its transformation
    /// cancelled it), while lease `lease_token` holds; its outcome follows.
    pub async fn record_skip_reason(&self, id: &DeliveryId, lease_token: i64, reason: &str) -> Result<()> {
        let sql = "UPDATE deliveries SET skip_reason = $3 WHERE id = $1 AND lease_token = $2";
        self.writes().execute(sql, &[id.into(), lease_token.into(), reason.into()]).await?;
        Ok(())
    }
}

/// A request to store: the delivery's, its head and its body.
pub struct NewRequest {
    pub id: DeliveryId,
    pub head: String,
    pub body: Vec<u8>,
}

/// Stores the worker's transformed requests as they come, those waiting
/// together in one transaction: one write per delivery would queue every
/// transformed delivery behind SQLite's one writer.
#[derive(Clone)]
pub struct RequestWriter {
    tx: mpsc::Sender<(NewRequest, oneshot::Sender<Result<bool>>)>,
}

impl RequestWriter {
    /// Starts the writer's task; it ends when every handle is dropped.
    pub fn start(store: Store) -> RequestWriter {
        let (tx, rx) = mpsc::channel(BATCH * 4);
        tokio::spawn(write_requests(store, rx));
        RequestWriter { tx }
    }

    /// Stores `request` as [`Store::store_transformed_requests`] does, answered after the commit.
    pub async fn store(&self, request: NewRequest) -> Result<bool> {
        let (reply, answer) = oneshot::channel();
        self.tx.send((request, reply)).await.map_err(|_| Error::Stopped)?;
        answer.await.map_err(|_| Error::Stopped)?
    }
}

async fn write_requests(store: Store, mut rx: mpsc::Receiver<(NewRequest, oneshot::Sender<Result<bool>>)>) {
    let mut waiting = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut waiting, BATCH).await > 0 {
        let (requests, replies): (Vec<NewRequest>, Vec<_>) = waiting.drain(..).unzip();
        match store.store_transformed_requests(&requests).await {
            Ok(stored) => {
                for (reply, stored) in replies.into_iter().zip(stored) {
                    let _ = reply.send(Ok(stored));
                }
            }
            // Each on its own, so that each gets its own answer.
            Err(_) => {
                for (r, reply) in requests.iter().zip(replies) {
                    let one = store.store_transformed_requests(std::slice::from_ref(r)).await;
                    let _ = reply.send(one.map(|stored| stored.first().copied().unwrap_or(false)));
                }
            }
        }
    }
}
