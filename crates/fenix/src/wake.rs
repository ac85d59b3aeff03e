//! Wake-ups: the one way to tell workers that due work was just committed.
//!
//! Workers do not poll fast: an idle worker sleeps until the next due time
//! (at most a second) unless woken. After a commit that creates due work, the
//! code that committed calls [`Wake::work_committed`]: it wakes this
//! instance's worker at once and, when other instances share the database
//! (PostgreSQL), sends them `NOTIFY fenix_wake`, which each instance's
//! [`Wake::listen_to_other_instances`] turns into a wake-up of its own worker.

use std::sync::Arc;

use tokio::sync::{futures::Notified, Notify};

use crate::store::Store;

/// Who must hear that work was committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// This instance's worker only: the work is its own (a retry its recorder
    /// just scheduled), or the commit itself carried the `NOTIFY` to the
    /// others (an ingest batch on PostgreSQL, delivered exactly at commit).
    ThisInstance,
    /// Every instance's worker (a replay).
    AllInstances,
}

/// The wake-up handle shared by everything that commits work and the worker
/// that waits for it; cheap to clone.
#[derive(Clone, Debug)]
pub struct Wake {
    local: Arc<Notify>,
    store: Store,
}

impl Wake {
    /// A handle whose cross-instance wake-ups go through `store`.
    pub fn new(store: Store) -> Wake {
        Wake { local: Arc::new(Notify::new()), store }
    }

    /// Announces due work committed just now to the workers `reach` names.
    pub async fn work_committed(&self, reach: Reach) {
        self.local.notify_one();
        if reach == Reach::AllInstances {
            self.store.notify_other_instances().await;
        }
    }

    /// Resolves at the next announcement (one stored if none is awaited).
    pub fn notified(&self) -> Notified<'_> {
        self.local.notified()
    }

    /// Wakes this instance's worker whenever another instance announces work,
    /// until the process ends (PostgreSQL `LISTEN`; returns at once on SQLite).
    pub async fn listen_to_other_instances(self) {
        self.store.listen_for_work(&self.local).await
    }
}
