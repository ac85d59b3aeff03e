//! Wake-ups: the one way to tell workers that due work was just committed.
//!
//! Workers do not poll fast: an idle worker sleeps until the next due time
//! (at most a second) unless woken. After a commit that creates due work, the
//! code that committed calls [`Wake::work_committed`]: it wakes this
//! instance's worker at once and, when other instances share the database
//! (PostgreSQL), sends them `NOTIFY fenix_wake`, which each instance's
//! [`Wake::listen_to_other_instances`] turns into a wake-up of its own worker.
//!
//! Fresh work can also skip the queue: while this instance's worker has
//! nothing due ([`Fresh`]), the ingestion queue inserts new deliveries
//! already leased to it and hands them over after the commit, so an event's
//! first attempt does not wait for a claim (on SQLite, a turn of the one
//! writer: milliseconds under load). Their rows carry the lease like claimed
//! ones, so a process killed before sending them loses nothing: they come
//! due when the lease runs out.
//!
//! Ownership challenges have a wake-up of their own: the call that starts one
//! ([`Wake::challenge_started`]) wakes this instance's challenge sender, so
//! the first request goes at once rather than at its next look (a second).

use std::{
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use tokio::sync::{futures::Notified, mpsc, Notify};

use crate::{
    store::{ClaimedDelivery, FreshLease, Store},
    time::{self, Millis},
};

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
#[derive(Clone)]
pub struct Wake {
    local: Arc<Notify>,
    store: Store,
    fresh: Arc<Fresh>,
    /// Woken when a call on this instance starts an ownership challenge.
    challenges: Arc<Notify>,
}

/// The hand-over of fresh deliveries from the ingestion queue to this
/// instance's worker. Closed (no room) unless a worker runs here and its
/// last look at the queue emptied it: fresh work never jumps a backlog.
#[derive(Default)]
pub struct Fresh {
    /// Set while the worker has nothing due and takes fresh work.
    open: AtomicBool,
    /// How many deliveries the ingestion queue may lease to the worker now.
    room: AtomicUsize,
    /// The worker taking fresh work, if one runs here.
    taker: Mutex<Option<Taker>>,
}

struct Taker {
    owner: String,
    lease: Duration,
    tx: mpsc::UnboundedSender<Vec<ClaimedDelivery>>,
}

impl Wake {
    /// A handle whose cross-instance wake-ups go through `store`.
    pub fn new(store: Store) -> Wake {
        Wake { local: Arc::new(Notify::new()), store, fresh: Arc::default(), challenges: Arc::default() }
    }

    /// The hand-over of fresh deliveries to this instance's worker.
    pub fn fresh(&self) -> &Fresh {
        &self.fresh
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

    /// Tells this instance's challenge sender that a challenge is due now
    /// (committed, and read back by the call that started it).
    pub fn challenge_started(&self) {
        self.challenges.notify_one();
    }

    /// Resolves at the next [`challenge_started`](Self::challenge_started)
    /// (one stored if none is awaited).
    pub fn challenge_notified(&self) -> Notified<'_> {
        self.challenges.notified()
    }

    /// Wakes this instance's worker whenever another instance announces work,
    /// until the process ends (PostgreSQL `LISTEN`; returns at once on SQLite).
    pub async fn listen_to_other_instances(self) {
        self.store.listen_for_work(&self.local).await
    }
}

impl Fresh {
    /// The worker `owner` takes fresh deliveries from now on, leased for
    /// `lease`; they arrive on the returned channel (none while it offers no room).
    pub fn take(&self, owner: &str, lease: Duration) -> mpsc::UnboundedReceiver<Vec<ClaimedDelivery>> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.taker.lock().expect("fresh taker lock") = Some(Taker { owner: owner.to_string(), lease, tx });
        rx
    }

    /// The worker has nothing due and `room` free places: fresh deliveries are welcome.
    pub fn open(&self, room: usize) {
        self.room.store(room, Ordering::Relaxed);
        self.open.store(true, Ordering::Release);
    }

    /// While open, the worker's free places are `room` now (more as attempts finish).
    pub fn refill(&self, room: usize) {
        if self.open.load(Ordering::Acquire) {
            self.room.store(room, Ordering::Relaxed);
        }
    }

    /// The worker claims (or stops): fresh deliveries go to the queue again.
    pub fn close(&self) {
        self.open.store(false, Ordering::Release);
        self.room.store(0, Ordering::Relaxed);
    }

    /// The worker stops taking fresh work: what is sent after this fails to
    /// arrive and is given back by the sender.
    pub fn stop(&self) {
        self.close();
        self.taker.lock().expect("fresh taker lock").take();
    }

    /// For an ingest batch written now: the lease its fresh deliveries may
    /// carry, as many as there is room for (`None`: none, leave them to
    /// claims). One ingestion queue asks at a time; the room shrinks by what
    /// the batch leased when it is handed over.
    pub fn lease(&self, now: Millis) -> Option<FreshLease> {
        let max = self.room.load(Ordering::Relaxed);
        if max == 0 {
            return None;
        }
        let taker = self.taker.lock().expect("fresh taker lock");
        let taker = taker.as_ref()?;
        Some(FreshLease { owner: taker.owner.clone(), lease_until: time::add(now, taker.lease), max })
    }

    /// After the batch committed: hands the deliveries it leased to the
    /// worker, taking their places from the room (the worker sets it afresh,
    /// from what it has in hand, after starting them). `Err` gives the
    /// deliveries back when no worker takes them any more (their leases must
    /// be released).
    pub fn hand_over(&self, leased: Vec<ClaimedDelivery>) -> Result<(), Vec<ClaimedDelivery>> {
        if leased.is_empty() {
            return Ok(());
        }
        let n = leased.len();
        let _ = self.room.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| Some(r.saturating_sub(n)));
        let taker = self.taker.lock().expect("fresh taker lock");
        match taker.as_ref() {
            Some(t) => t.tx.send(leased).map_err(|e| e.0),
            None => Err(leased),
        }
    }
}
