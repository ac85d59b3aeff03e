//! The worker's attempt slots (`FENIX_WORKER_CONCURRENCY`), shared fairly
//! among apps.
//!
//! A plain semaphore hands slots out first come, first served: one app whose
//! receivers hold every request for seconds took every slot, and another
//! app's deliveries waited behind its whole backlog. Here each app waits in
//! its own queue, and a freed slot goes to the waiting app that holds the
//! fewest slots (max-min fairness), so an app's slots are charged for as
//! long as its receivers keep them: an app with slow receivers holds many
//! and is served last. An app alone may take every slot; but of the last
//! [`reserve`] ones, an app whose receivers are slow (their recent answers
//! took more than [`FAST_ENOUGH`], or none came yet) gets one only if it
//! holds none. So an app that arrives while other apps' slow receivers fill
//! the worker starts at once instead of waiting for a slow request to end
//! (an attempt in flight is never interrupted), however many slow apps
//! share the rest; once its first answers came fast, it may use the reserve
//! like any slot; and an app with fast receivers, which gives its slots
//! back within milliseconds, wastes none.
//!
//! Pure bookkeeping under one lock; a [`FairPermit`] gives its slot back,
//! to the next app in line, when dropped.

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::sync::oneshot;

/// The last free slots, kept from apps with slow receivers that already
/// hold some (see the module's doc): a sixteenth of the slots, at least one
/// (none of a single slot).
pub(super) fn reserve(total: usize) -> usize {
    (total / 16).max(1).min(total.saturating_sub(1))
}

/// An app whose answers come within this gives its slots back about as
/// fast: nobody needs a reserve against it.
pub(super) const FAST_ENOUGH: Duration = Duration::from_millis(250);

/// One app's hold on a pool of slots (the worker's, or a host's).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Share {
    pub(super) held: usize,
    /// Its recent answer time (a moving average); `None` until one came.
    latency: Option<Duration>,
}

impl Share {
    /// Learns one answer time.
    pub(super) fn observe(&mut self, latency: Duration) {
        self.latency = Some(self.latency.map_or(latency, |l| (l * 7 + latency) / 8));
    }

    /// Whether this app may take one of a pool's last, reserved free slots:
    /// its answers come fast, or it holds none of the pool (an arriving app).
    pub(super) fn may_take_reserved(&self) -> bool {
        self.held == 0 || self.answers_fast()
    }

    /// Whether its recent answers came within [`FAST_ENOUGH`].
    pub(super) fn answers_fast(&self) -> bool {
        self.latency.is_some_and(|l| l <= FAST_ENOUGH)
    }
}

/// One app's slots and the tasks waiting for one.
#[derive(Default)]
struct AppSlots {
    share: Share,
    waiting: VecDeque<oneshot::Sender<()>>,
}

struct Inner {
    free: usize,
    apps: HashMap<Arc<str>, AppSlots>,
}

/// Attempt slots shared fairly among apps.
pub(super) struct FairSlots {
    total: usize,
    inner: Mutex<Inner>,
}

/// One slot held by one app; dropping it hands it on.
pub(super) struct FairPermit {
    slots: Arc<FairSlots>,
    app: Arc<str>,
}

impl Drop for FairPermit {
    fn drop(&mut self) {
        self.slots.give_back(&self.app);
    }
}

/// A task's place in its app's queue. Dropped before its slot came (the
/// task was cancelled), it leaves the queue; dropped just after, it gives the
/// slot back.
struct Waiting {
    rx: Option<oneshot::Receiver<()>>,
    slots: Arc<FairSlots>,
    app: Arc<str>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else { return };
        // Closed, a later grant fails and goes on to the next task.
        rx.close();
        if rx.try_recv().is_ok() {
            self.slots.give_back(&self.app);
        }
    }
}

/// How many slots each app holds, and how many tasks wait for one, now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AppLoad {
    pub(crate) held: usize,
    pub(crate) waiting: usize,
}

impl FairSlots {
    pub(super) fn new(total: usize) -> Arc<FairSlots> {
        let total = total.max(1);
        Arc::new(FairSlots { total, inner: Mutex::new(Inner { free: total, apps: HashMap::new() }) })
    }

    /// Waits for a slot for `app`: at once when one is free to it and no app
    /// with fewer slots waits, else when [`FairSlots::give_back`] picks it.
    pub(super) async fn acquire(self: &Arc<Self>, app: &Arc<str>) -> FairPermit {
        let rx = {
            let mut inner = self.inner.lock().expect("fair slots lock");
            let nobody_waits = inner.apps.values().all(|a| a.waiting.is_empty());
            if nobody_waits && self.may_take(&inner, app) {
                Self::take(&mut inner, app);
                return FairPermit { slots: self.clone(), app: app.clone() };
            }
            let (tx, rx) = oneshot::channel();
            inner.apps.entry(app.clone()).or_default().waiting.push_back(tx);
            self.dispatch(&mut inner);
            rx
        };
        let mut waiting = Waiting { rx: Some(rx), slots: self.clone(), app: app.clone() };
        // A sender is only ever used (the slot counted as ours first) or
        // dropped with the slots, which this future keeps alive.
        let _ = waiting.rx.as_mut().expect("set above").await;
        waiting.rx = None;
        FairPermit { slots: self.clone(), app: app.clone() }
    }

    /// Slots held and tasks waiting, per app (for metrics).
    pub(crate) fn loads(&self) -> HashMap<Arc<str>, AppLoad> {
        let inner = self.inner.lock().expect("fair slots lock");
        inner
            .apps
            .iter()
            .filter(|(_, a)| a.share.held > 0 || !a.waiting.is_empty())
            .map(|(app, a)| (app.clone(), AppLoad { held: a.share.held, waiting: a.waiting.len() }))
            .collect()
    }

    /// Learns how long one of `app`'s attempts took (its slot still held).
    pub(super) fn observe(&self, app: &Arc<str>, latency: Duration) {
        if let Some(a) = self.inner.lock().expect("fair slots lock").apps.get_mut(app) {
            a.share.observe(latency);
        }
    }

    fn give_back(&self, app: &Arc<str>) {
        let mut inner = self.inner.lock().expect("fair slots lock");
        inner.free += 1;
        if let Some(a) = inner.apps.get_mut(app) {
            // Kept at none held: how fast its answers come is remembered
            // between its deliveries (until `prune`).
            a.share.held = a.share.held.saturating_sub(1);
        }
        self.dispatch(&mut inner);
    }

    /// Forgets apps holding no slot and waiting for none.
    pub(super) fn prune(&self) {
        self.inner.lock().expect("fair slots lock").apps.retain(|_, a| a.share.held > 0 || !a.waiting.is_empty());
    }

    /// Whether `app` may take a free slot now: beyond the reserve anyone
    /// may; the reserve as [`Share::may_take_reserved`] says.
    fn may_take(&self, inner: &Inner, app: &Arc<str>) -> bool {
        if inner.free == 0 {
            return false;
        }
        if inner.free > reserve(self.total) {
            return true;
        }
        inner.apps.get(app).is_none_or(|a| a.share.may_take_reserved())
    }

    fn take(inner: &mut Inner, app: &Arc<str>) {
        inner.free -= 1;
        inner.apps.entry(app.clone()).or_default().share.held += 1;
    }

    /// Hands free slots to waiting tasks: each to the waiting app holding
    /// the fewest of those that may take one.
    fn dispatch(&self, inner: &mut Inner) {
        while inner.free > 0 {
            let next = inner
                .apps
                .iter()
                .filter(|(app, a)| !a.waiting.is_empty() && self.may_take(inner, app))
                .min_by_key(|(_, a)| a.share.held)
                .map(|(app, _)| app.clone());
            let Some(app) = next else { return };
            let tx = inner.apps.get_mut(&app).and_then(|a| a.waiting.pop_front()).expect("a waiting task");
            Self::take(inner, &app);
            if tx.send(()).is_err() {
                // Its task is gone (the worker stopped): the slot goes on.
                inner.free += 1;
                if let Some(a) = inner.apps.get_mut(&app) {
                    a.share.held -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(name: &str) -> Arc<str> {
        Arc::from(name)
    }

    #[tokio::test]
    async fn an_app_alone_takes_every_slot_but_the_reserve_which_an_arriving_app_gets_at_once() {
        let slots = FairSlots::new(32);
        let (a, b) = (app("a"), app("b"));
        let mut held = Vec::new();
        for _ in 0..32 - reserve(32) {
            held.push(slots.acquire(&a).await);
        }
        let more = tokio::spawn({
            let (slots, a) = (slots.clone(), a.clone());
            async move { slots.acquire(&a).await }
        });
        tokio::task::yield_now().await;
        assert!(!more.is_finished(), "the reserve is kept from an app not yet known to be fast");
        let b_permit = tokio::time::timeout(std::time::Duration::from_secs(5), slots.acquire(&b)).await;
        assert!(b_permit.is_ok(), "an arriving app starts at once");
        assert_eq!(slots.loads()[&a], AppLoad { held: 32 - reserve(32), waiting: 1 });
        drop(held.pop());
        tokio::task::yield_now().await;
        assert!(!more.is_finished(), "a holds its share: the freed slot is kept in reserve");
        drop(held.pop());
        let permit = tokio::time::timeout(std::time::Duration::from_secs(5), more).await;
        assert!(permit.is_ok(), "a slot beyond the reserve goes to the waiting task");
    }

    #[tokio::test]
    async fn an_app_alone_whose_receivers_answer_fast_may_take_every_slot() {
        let slots = FairSlots::new(32);
        let a = app("a");
        let mut held = vec![slots.acquire(&a).await];
        slots.observe(&a, Duration::from_millis(3));
        for _ in 1..32 {
            let permit = tokio::time::timeout(Duration::from_secs(5), slots.acquire(&a)).await;
            held.push(permit.expect("fast answers: no reserve is kept from it"));
        }
        slots.observe(&a, Duration::from_secs(8));
        slots.observe(&a, Duration::from_secs(8));
        drop(held.pop());
        let waiting = tokio::spawn({
            let (slots, a) = (slots.clone(), a.clone());
            async move { slots.acquire(&a).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "slow answers now: the freed slot is kept in reserve");
    }

    #[tokio::test]
    async fn however_many_slow_apps_fill_the_slots_an_arriving_app_starts_at_once() {
        let slots = FairSlots::new(32);
        let mut held = Vec::new();
        for (name, n) in [("a", 20), ("b", 10)] {
            for _ in 0..n {
                held.push(slots.acquire(&app(name)).await);
            }
        }
        // b (slow, holding some) is kept off the reserve...
        let b_more = tokio::spawn({
            let slots = slots.clone();
            async move { slots.acquire(&app("b")).await }
        });
        tokio::task::yield_now().await;
        assert!(!b_more.is_finished(), "a slow app holding slots does not take the reserve");
        // ...which every arriving app finds.
        for newcomer in ["c", "d"] {
            let permit = tokio::time::timeout(Duration::from_secs(5), slots.acquire(&app(newcomer))).await;
            held.push(permit.expect("an arriving app starts at once"));
        }
    }

    #[tokio::test]
    async fn a_freed_slot_goes_to_the_waiting_app_holding_the_fewest() {
        let slots = FairSlots::new(4);
        let (a, b) = (app("a"), app("b"));
        let mut a_held = Vec::new();
        for _ in 0..3 {
            a_held.push(slots.acquire(&a).await);
        }
        let _b1 = slots.acquire(&b).await;
        // Both answer fast: the reserve is no matter here, only the order.
        slots.observe(&a, Duration::from_millis(2));
        slots.observe(&b, Duration::from_millis(2));
        // Full: a waits first, then b.
        let a_next = tokio::spawn({
            let (slots, a) = (slots.clone(), a.clone());
            async move { slots.acquire(&a).await }
        });
        tokio::task::yield_now().await;
        let b_next = tokio::spawn({
            let (slots, b) = (slots.clone(), b.clone());
            async move { slots.acquire(&b).await }
        });
        tokio::task::yield_now().await;
        drop(a_held.pop());
        let _b2 = tokio::time::timeout(std::time::Duration::from_secs(5), b_next).await.expect("b first").unwrap();
        assert!(!a_next.is_finished(), "a holds more slots: b is served first though it came later");
        assert_eq!(slots.loads()[&b].held, 2);
        drop(a_held.pop());
        tokio::time::timeout(std::time::Duration::from_secs(5), a_next).await.expect("then a").unwrap();
    }

    #[tokio::test]
    async fn slots_of_apps_gone_idle_are_forgotten() {
        let slots = FairSlots::new(2);
        let permit = slots.acquire(&app("a")).await;
        drop(permit);
        assert!(slots.loads().is_empty(), "no slot held, none waited for");
        assert_eq!(slots.inner.lock().unwrap().apps.len(), 1, "its answer times are kept until pruned");
        slots.prune();
        assert!(slots.inner.lock().unwrap().apps.is_empty());
    }
}
