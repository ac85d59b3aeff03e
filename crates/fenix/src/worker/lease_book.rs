//! The lease book: which deliveries this instance holds a lease on, keeping
//! those leases alive, and giving them back.
//!
//! A lease is entered when a delivery is claimed and leaves the book when its
//! outcome is recorded ([`LeaseBook::settled`]), when it is handed back to the
//! database (deferred, or the batch could not be prepared), or at the end of a
//! drain, when every lease still held is released so the deliveries are due
//! again at once instead of when their leases expire.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::{
    ids::DeliveryId,
    store::{
        deliveries::{ClaimedDelivery, Outcome},
        Store,
    },
    time::{self, Millis},
};

/// The leases this instance holds.
#[derive(Default)]
pub(super) struct LeaseBook {
    /// Deliveries claimed and being worked on: id → lease token.
    held: Mutex<HashMap<DeliveryId, i64>>,
    /// Leases of claimed jobs that will not start because the worker is
    /// stopping: released together at the end of the drain, not waited for.
    unstarted: Mutex<Vec<(DeliveryId, i64)>>,
    /// Signalled when the last held lease leaves the book.
    emptied: Notify,
}

impl LeaseBook {
    pub(super) fn new() -> LeaseBook {
        LeaseBook::default()
    }

    /// Enters the leases of freshly claimed deliveries.
    pub(super) fn hold(&self, claimed: &[ClaimedDelivery]) {
        let mut held = self.held.lock().expect("leases lock");
        for c in claimed {
            held.insert(c.id.clone(), c.lease_token);
        }
    }

    /// Takes leases out of the book (they were given back to the database).
    pub(super) fn forget(&self, leases: &[(DeliveryId, i64)]) {
        let mut held = self.held.lock().expect("leases lock");
        for (id, _) in leases {
            held.remove(id);
        }
        self.check_empty(&held);
    }

    /// A claimed delivery that will not be sent (the worker is stopping): its
    /// lease is released with the others at the end of the drain.
    pub(super) fn set_aside(&self, id: &DeliveryId, token: i64) {
        let mut held = self.held.lock().expect("leases lock");
        held.remove(id);
        self.unstarted.lock().expect("unstarted lock").push((id.clone(), token));
        self.check_empty(&held);
    }

    /// The outcomes were written (or refused): their leases leave the book.
    /// A lease already renewed under another token stays.
    pub(super) fn settled(&self, outcomes: &[Outcome]) {
        let mut held = self.held.lock().expect("leases lock");
        for o in outcomes {
            if held.get(&o.delivery_id) == Some(&o.lease_token) {
                held.remove(&o.delivery_id);
            }
        }
        self.check_empty(&held);
    }

    fn check_empty(&self, held: &HashMap<DeliveryId, i64>) {
        if held.is_empty() {
            self.emptied.notify_waiters();
        }
    }

    /// Every lease held now.
    pub(super) fn held(&self) -> Vec<(DeliveryId, i64)> {
        self.held.lock().expect("leases lock").iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.held.lock().expect("leases lock").is_empty()
    }

    /// Returns once no lease is held (the recorder settled the last one).
    pub(super) async fn until_empty(&self) {
        loop {
            let emptied = self.emptied.notified();
            tokio::pin!(emptied);
            emptied.as_mut().enable();
            if self.is_empty() {
                return;
            }
            emptied.await;
        }
    }

    /// Gives leases back to the database, each due again at its own time.
    pub(super) async fn defer(&self, store: &Store, deferred: Vec<(DeliveryId, i64, Millis)>) {
        let mut by_time: HashMap<Millis, Vec<(DeliveryId, i64)>> = HashMap::new();
        for (id, token, at) in deferred {
            by_time.entry(at).or_default().push((id, token));
        }
        for (at, leases) in by_time {
            match store.release_leases(&leases, at).await {
                Ok(()) => self.forget(&leases),
                Err(e) => tracing::warn!(error = %e, "could not defer deliveries; their leases will expire"),
            }
        }
    }

    /// Releases every lease still in the book (held or set aside), due at
    /// `now`: the end of a drain. Answers how many there were.
    pub(super) async fn release_all(&self, store: &Store, now: Millis) -> usize {
        let mut leftover: Vec<(DeliveryId, i64)> = self.held.lock().expect("leases lock").drain().collect();
        leftover.append(&mut self.unstarted.lock().expect("unstarted lock"));
        if !leftover.is_empty() {
            if let Err(e) = store.release_leases(&leftover, now).await {
                tracing::warn!(error = %e, count = leftover.len(), "could not release leases; they will expire");
            }
        }
        leftover.len()
    }

    /// Renews the leases held every third of `lease_duration` until
    /// `shutdown`, so a slow receiver never lets a second worker start the
    /// same delivery.
    pub(super) async fn keep_alive(
        self: Arc<Self>,
        store: Store,
        lease_duration: Duration,
        shutdown: CancellationToken,
    ) {
        let every = lease_duration / 3;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = shutdown.cancelled() => return,
            }
            let held = self.held();
            let until = time::add(time::now_ms(), lease_duration);
            if let Err(e) = store.extend_leases(&held, until).await {
                tracing::warn!(error = %e, "could not extend leases");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::DeliveryStatus;

    fn claimed(id: &str, token: i64) -> ClaimedDelivery {
        ClaimedDelivery {
            id: dlv(id),
            app_id: crate::ids::AppId::from_stored("app".into()),
            event_id: crate::ids::EventId::from_stored("evt".into()),
            endpoint_id: crate::ids::EndpointId::from_stored("ep".into()),
            attempt_count: 0,
            budget_start: 0,
            lease_token: token,
            lane_seq: None,
        }
    }

    fn dlv(id: &str) -> DeliveryId {
        DeliveryId::from_stored(id.into())
    }

    fn outcome_of(c: &ClaimedDelivery) -> Outcome {
        super::super::job::settled(c, DeliveryStatus::Skipped)
    }

    fn sorted(mut v: Vec<(DeliveryId, i64)>) -> Vec<(DeliveryId, i64)> {
        v.sort();
        v
    }

    #[tokio::test]
    async fn a_lease_leaves_the_book_when_its_outcome_is_settled_under_the_same_token() {
        let book = LeaseBook::new();
        let (a, b) = (claimed("a", 1), claimed("b", 2));
        book.hold(&[a.clone(), b.clone()]);
        assert_eq!(sorted(book.held()), [(dlv("a"), 1), (dlv("b"), 2)]);
        // `b` was claimed again under a newer token meanwhile: the older outcome does not settle it.
        book.hold(&[claimed("b", 3)]);
        book.settled(&[outcome_of(&a), outcome_of(&b)]);
        assert_eq!(book.held(), [(dlv("b"), 3)]);
        book.settled(&[outcome_of(&claimed("b", 3))]);
        assert!(book.is_empty());
        book.until_empty().await;
    }

    #[tokio::test]
    async fn waiting_for_an_empty_book_ends_when_the_last_lease_leaves() {
        let book = Arc::new(LeaseBook::new());
        let a = claimed("a", 1);
        book.hold(std::slice::from_ref(&a));
        let waiter = tokio::spawn({
            let book = book.clone();
            async move { book.until_empty().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "a lease is still held");
        book.settled(&[outcome_of(&a)]);
        waiter.await.expect("the wait ends");
    }

    #[test]
    fn leases_set_aside_or_forgotten_leave_the_held_set() {
        let book = LeaseBook::new();
        book.hold(&[claimed("a", 1), claimed("b", 2), claimed("c", 3)]);
        book.set_aside(&dlv("a"), 1);
        book.forget(&[(dlv("b"), 2)]);
        assert_eq!(book.held(), [(dlv("c"), 3)]);
        assert_eq!(*book.unstarted.lock().unwrap(), [(dlv("a"), 1)]);
    }
}
