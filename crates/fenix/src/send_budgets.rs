//! Bounded side effects of tenant actions: every call that makes Fenix send
//! a request on a tenant's say-so (an ownership challenge, a test event, a
//! replay) spends from budgets per endpoint and per app, and is refused with
//! `429` and `Retry-After` once they are spent.
//!
//! Events a producer sends are the product, and the fair share of the worker
//! bounds them; these calls are different: each one is cheap to make and
//! makes Fenix post to a URL, signed and with the endpoint's custom headers,
//! so without a bound a tenant could point Fenix at someone else's service
//! (an ownership challenge goes to a URL that never said it wants anything).
//!
//! Each [`Rule`] is a GCRA bucket: `burst` calls at once, then one more every
//! `every`. The buckets live in the database (`store::send_budgets`), so a
//! restart refills nothing and every instance on one PostgreSQL spends the
//! same ones. Per-app rules are what make deleting and re-creating an
//! endpoint, or changing its URL back and forth, no way to a fresh budget.
//! docs/security.md lists the limits.

use std::time::Duration;

use crate::{
    ids::{AppId, EndpointId},
    store::{send_budgets::BudgetTake, Store},
    time::{self, Millis},
};

/// A tenant action that makes Fenix send requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new ownership challenge: an endpoint created or moved to a new URL
    /// while proof is required, or `POST …/verify`.
    Challenge,
    /// `POST …/endpoints/{ep}/test`.
    TestEvent,
    /// `POST …/endpoints/{ep}/replay`, and `resume` with `replay_skipped`.
    EndpointReplay,
    /// `POST …/deliveries/{dlv}/replay`.
    DeliveryReplay,
}

/// What a rule counts per.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    App,
    Endpoint,
}

/// One bucket of an action: `burst` at once, then one every `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Names the bucket in its key; stable (a new name is a fresh bucket).
    pub name: &'static str,
    pub per: Per,
    pub burst: i64,
    pub every: Duration,
}

const fn rule(name: &'static str, per: Per, burst: i64, every_secs: u64) -> Rule {
    Rule { name, per, burst, every: Duration::from_secs(every_secs) }
}

/// Ownership challenges. A challenge is up to 11 requests (its retry
/// schedule) to a URL nobody proved. Per endpoint: 3 at once, then one a
/// minute (the cooldown); and 10 in all, one more every 2 h 24 min (so at
/// most 20 in any day). Per app: 50 at once, then one a minute, whichever
/// endpoints they are for (deleted ones included).
const CHALLENGE: [Rule; 3] =
    [rule("app", Per::App, 50, 60), rule("cooldown", Per::Endpoint, 3, 60), rule("day", Per::Endpoint, 10, 8_640)];
/// Test events: each is one delivery (with its retries) to the endpoint.
const TEST_EVENT: [Rule; 2] = [rule("app", Per::App, 60, 1), rule("endpoint", Per::Endpoint, 10, 6)];
/// Endpoint replays: each re-sends every failed or skipped delivery in its window.
const ENDPOINT_REPLAY: [Rule; 2] = [rule("app", Per::App, 20, 15), rule("endpoint", Per::Endpoint, 5, 60)];
/// Replays of one delivery.
const DELIVERY_REPLAY: [Rule; 2] = [rule("app", Per::App, 300, 1), rule("endpoint", Per::Endpoint, 60, 1)];

impl Action {
    /// Stable text: the first part of every bucket key of the action.
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Challenge => "challenge",
            Action::TestEvent => "test_event",
            Action::EndpointReplay => "endpoint_replay",
            Action::DeliveryReplay => "delivery_replay",
        }
    }

    /// The action's buckets, per-app ones first (the order every take uses).
    pub const fn rules(self) -> &'static [Rule] {
        match self {
            Action::Challenge => &CHALLENGE,
            Action::TestEvent => &TEST_EVENT,
            Action::EndpointReplay => &ENDPOINT_REPLAY,
            Action::DeliveryReplay => &DELIVERY_REPLAY,
        }
    }

    /// What the action is, for the refusal's message.
    fn what(self) -> &'static str {
        match self {
            Action::Challenge => "ownership challenges",
            Action::TestEvent => "test events",
            Action::EndpointReplay => "endpoint replays",
            Action::DeliveryReplay => "delivery replays",
        }
    }
}

/// An action refused because a budget is spent: retry after `retry_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverBudget {
    pub action: Action,
    pub retry_after: Duration,
}

impl OverBudget {
    /// For people: what is spent and when to come back.
    pub fn message(&self) -> String {
        format!(
            "too many {} for this endpoint or app: Fenix sends only so many requests on a tenant's say-so \
             (see docs/security.md); retry in {} s",
            self.action.what(),
            retry_seconds(self.retry_after)
        )
    }
}

/// Whole seconds for `Retry-After`, rounded up, at least 1.
pub fn retry_seconds(d: Duration) -> u64 {
    d.as_millis().div_ceil(1000).max(1) as u64
}

/// The buckets one `action` on `endpoint_id` of `app_id` takes from.
pub fn takes(action: Action, app_id: &AppId, endpoint_id: &EndpointId) -> Vec<BudgetTake> {
    action
        .rules()
        .iter()
        .map(|r| {
            let id = match r.per {
                Per::App => app_id.as_str(),
                Per::Endpoint => endpoint_id.as_str(),
            };
            BudgetTake {
                key: format!("{}/{}/{id}", action.as_str(), r.name),
                burst: r.burst,
                interval_ms: time::millis(r.every),
            }
        })
        .collect()
}

/// Spends one `action` on `endpoint_id` of `app_id` at `now`, or refuses it
/// (spending nothing) when a budget is empty.
pub async fn take(
    store: &Store,
    action: Action,
    app_id: &AppId,
    endpoint_id: &EndpointId,
    now: Millis,
) -> crate::store::Result<Result<(), OverBudget>> {
    Ok(store.take_budgets(&takes(action, app_id, endpoint_id), now).await?.map_err(|at| OverBudget {
        action,
        retry_after: Duration::from_millis(u64::try_from(at.saturating_sub(now)).unwrap_or(0)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_counts_per_app_first_and_per_endpoint_too() {
        for action in [Action::Challenge, Action::TestEvent, Action::EndpointReplay, Action::DeliveryReplay] {
            let rules = action.rules();
            assert_eq!(rules[0].per, Per::App, "{action:?}: apps first, the one order of every take");
            assert!(rules.iter().any(|r| r.per == Per::Endpoint), "{action:?}");
            assert!(rules.iter().all(|r| r.burst >= 1 && !r.every.is_zero()), "{action:?}");
        }
    }

    #[test]
    fn keys_name_the_action_the_rule_and_whom_it_counts() {
        let keys: Vec<String> =
            takes(Action::Challenge, &AppId::from_stored("app_1".into()), &EndpointId::from_stored("ep_1".into()))
                .into_iter()
                .map(|t| t.key)
                .collect();
        assert_eq!(keys, ["challenge/app/app_1", "challenge/cooldown/ep_1", "challenge/day/ep_1"]);
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        assert_eq!(retry_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_seconds(Duration::from_millis(0)), 1);
        assert_eq!(retry_seconds(Duration::from_millis(59_001)), 60);
    }
}
