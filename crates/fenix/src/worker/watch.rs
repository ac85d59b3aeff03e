//! What the worker knows of its endpoints now, for the jobs it already holds.
//!
//! A job is prepared under its endpoint's state and URL as the claim read
//! them; it may then wait in its endpoint's queue, for a worker slot, or
//! behind the jobs a task sends one after the other, for seconds behind a
//! slow receiver. An operator who pauses or disables the endpoint, changes
//! its URL, or deletes it (or its app) must not see requests start under the
//! old state long after the answer. So every [`WATCH_EVERY`] the worker reads
//! the state and URL of the endpoints it holds jobs for (one query, whichever
//! instance made the change), and before each attempt a job is checked
//! against that reading ([`Watch::still_holds`]): one whose endpoint no
//! longer sends, moved, or is gone is not sent but given back, due at once;
//! the next claim prepares it again under the new state (a paused
//! endpoint's delivery is then `skipped`, a moved one goes to the new URL, a
//! deleted one is gone). The same reading asks which of the deliveries held
//! are no longer `pending` (their event was cancelled since the claim): those
//! are not sent either. A request already on the wire is let finish and
//! recorded as such.

use std::{
    collections::{HashMap, HashSet},
    sync::Mutex,
    time::Duration,
};

use super::job::Job;
use crate::{lifecycle::EndpointState, time::Millis};

/// How often the endpoints of the jobs in hand are read again: a change is
/// seen by every instance's worker within this (plus one query).
pub(super) const WATCH_EVERY: Duration = Duration::from_millis(250);

/// An endpoint as last read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Now {
    pub(super) url: String,
    pub(super) state: EndpointState,
}

/// The last reading of the endpoints the worker holds jobs for.
#[derive(Default)]
pub(super) struct Watch {
    inner: Mutex<Reading>,
}

#[derive(Default)]
struct Reading {
    /// When the reading started (jobs prepared from a later context are
    /// newer than it, and trusted).
    at: Millis,
    /// endpoint id → what it is now; `None`: deleted.
    endpoints: HashMap<String, Option<Now>>,
    /// Ids of deliveries held whose rows were no longer `pending` (cancelled).
    ended: HashSet<String>,
}

impl Watch {
    /// Takes a reading started at `at` of the endpoints `asked` for, of which
    /// `found` still exist, and of the deliveries held, of which `ended` are
    /// no longer `pending`.
    pub(super) fn read(&self, at: Millis, asked: &[String], found: Vec<(String, Now)>, ended: Vec<String>) {
        let mut endpoints: HashMap<String, Option<Now>> = asked.iter().map(|id| (id.clone(), None)).collect();
        for (id, now) in found {
            endpoints.insert(id, Some(now));
        }
        *self.inner.lock().expect("watch lock") = Reading { at, endpoints, ended: ended.into_iter().collect() };
    }

    /// Whether `job` may still be sent: its delivery was not seen ended
    /// (cancelled) by the last reading, and its endpoint, as last read, still
    /// sends, to the URL the job was prepared for. A job prepared after the reading started, or for
    /// an endpoint not read yet, holds.
    pub(super) fn still_holds(&self, job: &Job) -> bool {
        let reading = self.inner.lock().expect("watch lock");
        if reading.ended.contains(job.claimed.id.as_str()) {
            return false;
        }
        if job.loaded_at >= reading.at {
            return true;
        }
        match reading.endpoints.get(job.claimed.endpoint_id.as_str()) {
            None => true,
            Some(None) => false,
            Some(Some(now)) => now.state.sends() && now.url == *job.prepared_for,
        }
    }
}
