//! The claimed jobs each app has in the worker's hands, and what the next
//! claim may take so that every app with work due gets its share.
//!
//! The claim walks the due index oldest first. Alone, that is first come,
//! first served across apps: one app with a backlog of slow deliveries
//! filled the worker's hands (attempts in flight plus one claim batch
//! ahead) and another app's deliveries were not even claimed until that
//! backlog had drained. So the worker counts its jobs per app, and:
//!
//! - while several apps have jobs in hand, an app holding its share of the
//!   worker's slots (`FENIX_WORKER_CONCURRENCY` divided by those apps) or
//!   more is left out of the next claim;
//! - an app none of whose last claimed jobs could start (its endpoints or
//!   hosts at their limits: all deferred) is left out until one of its
//!   attempts ends, or [`BUSY_FOR`] at most; claiming its older rows again
//!   and again would only defer them again while another app's newer rows
//!   wait behind them;
//! - when the hands are nearly full, a small claim still looks for apps
//!   under the share a newcomer would leave (the slots divided by one more
//!   app than hold some): the hands may then hold up to one claim batch
//!   more than usual, for those apps only.
//!
//! Such a *fair* claim ([`Claim::Fair`]) does not walk the due index, which
//! would step over the left-out apps' whole backlog: it visits the apps
//! with pending deliveries one index seek each (`Store::apps_with_pending`,
//! round-robin from where the last one stopped) and takes each one's
//! earliest due rows (`Store::claim_due_of_app`). An app alone takes every
//! slot, as before; the shares only bind while others have work.

use std::{
    collections::{HashMap, HashSet},
    sync::Mutex,
    time::{Duration, Instant},
};

/// Longest an app whose claimed jobs were all deferred is left out of
/// claims, when none of its attempts ends meanwhile.
const BUSY_FOR: Duration = Duration::from_secs(1);

/// What the next claim may take.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Claim {
    /// The oldest due deliveries, whoever's they are.
    Oldest { limit: usize },
    /// Due deliveries of apps not in `exclude`, a share of `limit` each.
    Fair { limit: usize, exclude: HashSet<String> },
    /// Nothing now: the hands are full and shared fairly.
    Wait,
}

/// Jobs in hand per app.
#[derive(Default)]
pub(super) struct Hands {
    per_app: Mutex<HashMap<String, usize>>,
    /// Apps whose last claimed jobs were all deferred, until when.
    busy: Mutex<HashMap<String, Instant>>,
}

impl Hands {
    pub(super) fn add(&self, app: &str) {
        let mut map = self.per_app.lock().expect("hands lock");
        match map.get_mut(app) {
            Some(n) => *n += 1,
            None => {
                map.insert(app.to_string(), 1);
            }
        }
    }

    pub(super) fn remove(&self, app: &str) {
        let mut map = self.per_app.lock().expect("hands lock");
        if let Some(n) = map.get_mut(app) {
            *n -= 1;
            if *n == 0 {
                map.remove(app);
            }
        }
    }

    /// None of `app`'s jobs of the last claim could start (the first due
    /// again after `after`): leave it out of claims until one of its
    /// attempts ends, or for [`BUSY_FOR`] (longer when its jobs are due later).
    pub(super) fn busy(&self, app: &str, after: Duration, now: Instant) {
        self.busy.lock().expect("busy lock").insert(app.to_string(), now + after.max(BUSY_FOR));
    }

    /// An attempt of `app` ended: its slots may take more again.
    pub(super) fn attempted(&self, app: &str) {
        let mut busy = self.busy.lock().expect("busy lock");
        if !busy.is_empty() {
            busy.remove(app);
        }
    }

    /// Jobs in hand per app, now.
    pub(super) fn snapshot(&self) -> HashMap<String, usize> {
        self.per_app.lock().expect("hands lock").clone()
    }

    /// The next claim for a worker with `slots` attempt slots claiming
    /// `batch` at a time, `outstanding` jobs in hand in all.
    pub(super) fn plan(&self, outstanding: usize, slots: usize, batch: usize, now: Instant) -> Claim {
        let busy: HashSet<String> = {
            let mut busy = self.busy.lock().expect("busy lock");
            busy.retain(|_, until| *until > now);
            busy.keys().cloned().collect()
        };
        plan(&self.per_app.lock().expect("hands lock"), &busy, outstanding, slots, batch)
    }
}

fn plan(
    hands: &HashMap<String, usize>,
    busy: &HashSet<String>,
    outstanding: usize,
    slots: usize,
    batch: usize,
) -> Claim {
    let (slots, batch) = (slots.max(1), batch.max(1));
    let ahead = slots + batch;
    let free = ahead.saturating_sub(outstanding);
    let over = |share: usize| -> HashSet<String> {
        let over = hands.iter().filter(|(_, n)| **n >= share.max(1)).map(|(app, _)| app.clone());
        over.chain(busy.iter().cloned()).collect()
    };
    if outstanding == 0 || free >= (batch / 4).max(1) {
        let limit = free.min(batch).max(1);
        let exclude = if hands.len() < 2 { busy.clone() } else { over(slots / hands.len()) };
        return if exclude.is_empty() { Claim::Oldest { limit } } else { Claim::Fair { limit, exclude } };
    }
    if outstanding < ahead + batch {
        let exclude = over(slots / (hands.len() + 1));
        if !exclude.is_empty() {
            let limit = (ahead + batch - outstanding).min((batch / 4).max(1));
            return Claim::Fair { limit, exclude };
        }
    }
    Claim::Wait
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hands(of: &[(&str, usize)]) -> HashMap<String, usize> {
        of.iter().map(|(a, n)| (a.to_string(), *n)).collect()
    }

    fn apps(names: &[&str]) -> HashSet<String> {
        names.iter().map(|a| a.to_string()).collect()
    }

    fn plan_of(of: &[(&str, usize)], outstanding: usize) -> Claim {
        plan(&hands(of), &HashSet::new(), outstanding, 512, 256)
    }

    #[test]
    fn an_app_alone_is_claimed_for_oldest_first_up_to_the_full_hands() {
        assert_eq!(plan_of(&[], 0), Claim::Oldest { limit: 256 });
        assert_eq!(plan_of(&[("a", 600)], 600), Claim::Oldest { limit: 168 });
    }

    #[test]
    fn an_app_holding_its_share_is_left_out_while_another_has_jobs_in_hand() {
        assert_eq!(plan_of(&[("a", 300), ("b", 2)], 302), Claim::Fair { limit: 256, exclude: apps(&["a"]) });
    }

    #[test]
    fn full_hands_still_look_for_apps_under_a_newcomers_share() {
        // a fills the hands alone: a small claim looks for anyone else.
        assert_eq!(plan_of(&[("a", 768)], 768), Claim::Fair { limit: 64, exclude: apps(&["a"]) });
        // Two slow apps filled them: the third finds room beside them.
        assert_eq!(plan_of(&[("a", 512), ("b", 256)], 768), Claim::Fair { limit: 64, exclude: apps(&["a", "b"]) });
        // Up to one batch beyond the usual hands, no more.
        assert_eq!(plan_of(&[("a", 1024)], 1024), Claim::Wait);
    }

    #[test]
    fn an_app_whose_last_jobs_were_all_deferred_is_left_out_until_one_of_its_attempts_ends() {
        let h = Hands::default();
        h.add("a");
        let now = Instant::now();
        h.busy("a", Duration::from_millis(200), now);
        assert_eq!(h.plan(1, 512, 256, now), Claim::Fair { limit: 256, exclude: apps(&["a"]) });
        let later = now + Duration::from_millis(500);
        assert_eq!(
            h.plan(1, 512, 256, later),
            Claim::Fair { limit: 256, exclude: apps(&["a"]) },
            "none of its attempts ended"
        );
        assert_eq!(h.plan(1, 512, 256, now + BUSY_FOR), Claim::Oldest { limit: 256 });
        h.busy("a", Duration::from_millis(200), now);
        h.attempted("a");
        assert_eq!(h.plan(1, 512, 256, now), Claim::Oldest { limit: 256 }, "an attempt ended: its slots take more");
    }

    #[test]
    fn counts_per_app_come_and_go() {
        let h = Hands::default();
        h.add("a");
        h.add("a");
        h.add("b");
        h.remove("a");
        h.remove("b");
        assert_eq!(h.snapshot(), hands(&[("a", 1)]));
    }
}
