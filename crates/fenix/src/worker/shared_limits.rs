//! The worker's side of limits shared with the other instances (PostgreSQL):
//! asking the database for what a claimed batch is short of before the gate
//! admits it, renewing the slots held while this instance lives, and giving
//! them back when it stops. The gate decides; this module only carries its
//! asks to `store::limits` and the answers back.
//!
//! A failed ask grants nothing: the jobs it was for are deferred by the gate
//! (limits fail closed). A failed renewal is retried at the next beat; the
//! slots' leases outlive two missed beats.

use std::time::Duration;

use tokio::{sync::Mutex, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{
    gate::{Gate, Gated, Scope, MAX_PACING_SLEEP},
    job::Job,
};
use crate::{store::Store, time};

/// Longest time between two renewals: idle slots go back to the other
/// instances at least this often, whatever the lease duration.
const MOST_BETWEEN_BEATS: Duration = Duration::from_secs(1);

/// The slots this instance leases, under one owner name.
pub(super) struct SharedLimits {
    /// `lease_owner` of this process plus a random part: two processes with
    /// the same host name and pid (containers) never share slot rows.
    owner: String,
    /// Grants and renewals take turns: a renewal writes the holding it read,
    /// which a grant running meanwhile would make stale.
    turn: Mutex<()>,
}

impl SharedLimits {
    pub(super) fn new(owner: &str) -> SharedLimits {
        SharedLimits { owner: format!("{owner}:{}", ulid::Ulid::new()), turn: Mutex::new(()) }
    }

    /// Asks the database, at most once per kind of limit, for the slots and
    /// send times `jobs` are short of, and hands the answers to the gate.
    /// Nothing with a process-wide gate, nor when the gate holds enough.
    pub(super) async fn reserve(&self, gate: &Gate<Job>, store: &Store, jobs: &[&Job], lease: Duration) {
        if gate.scope() == Scope::Process {
            return;
        }
        let asks = gate.slots_wanted(jobs.iter().copied(), Instant::now());
        if !asks.is_empty() {
            let _turn = self.turn.lock().await;
            let now = time::now_ms();
            match store.lease_slots(&self.owner, &asks, now, time::add(now, lease)).await {
                Ok(held) => gate.granted_slots(&asks, &held, Instant::now()),
                Err(e) => tracing::warn!(error = %e, "could not lease concurrency slots; deferring"),
            }
        }
        // After the slots: send times only for jobs that can run now.
        let runs = gate.send_times_wanted(jobs.iter().copied(), Instant::now());
        if !runs.is_empty() {
            let horizon = MAX_PACING_SLEEP.as_micros() as i64;
            match store.take_send_times(&runs, horizon).await {
                Ok(taken) => gate.granted_send_times(&runs, &taken, Instant::now()),
                Err(e) => tracing::warn!(error = %e, "could not take send times; deferring"),
            }
        }
    }

    /// Every third of `lease` (at most every [`MOST_BETWEEN_BEATS`]), gives idle slots back and renews the rest,
    /// until `shutdown`; then gives every slot back.
    pub(super) async fn keep_alive<J: Gated>(
        &self,
        gate: &Gate<J>,
        store: &Store,
        lease: Duration,
        shutdown: CancellationToken,
    ) {
        if gate.scope() == Scope::Process {
            return;
        }
        loop {
            tokio::select! {
                _ = tokio::time::sleep((lease / 3).min(MOST_BETWEEN_BEATS)) => {}
                _ = shutdown.cancelled() => return,
            }
            let _turn = self.turn.lock().await;
            let held = gate.holdings();
            if let Err(e) = store.renew_slots(&self.owner, &held, time::add(time::now_ms(), lease)).await {
                tracing::warn!(error = %e, "could not renew concurrency slots");
            }
        }
    }

    /// Gives back every slot (the worker stopped).
    pub(super) async fn release(&self, store: &Store) {
        if let Err(e) = store.release_slots(&self.owner).await {
            tracing::warn!(error = %e, "could not give back concurrency slots; their leases will expire");
        }
    }
}
