//! Everything that follows a recorded outcome, in one place: the metrics, the
//! operator alerts and tallies, disabling an endpoint that answered 410 Gone
//! (with its operator event), and the wake-up for a retry just scheduled.
//!
//! Called by the recorder once a batch is committed. An attempt's own figures
//! (attempt counts and durations, failure streaks, a 410) count whether or not
//! the delivery's lease still held: the attempt happened, and its row is kept
//! either way. What a delivery's new status means (finished, dead-lettered, a
//! retry due) counts only where the row changed.

use std::collections::HashSet;

use crate::error_class::ErrorClass;
use crate::{
    ids,
    lifecycle::{DeliveryStatus, EndpointState},
    state::SharedState,
    store::deliveries::Outcome,
    time,
};

/// What an attempt showed, for the reactions.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Notes {
    /// The attempt's error class; `None` on success or without an attempt.
    pub(super) error: Option<ErrorClass>,
    /// From the event's creation to this success, for a success within the
    /// first attempt budget (not after a replay).
    pub(super) first_success_ms: Option<i64>,
    /// The receiver answered 410 Gone.
    pub(super) gone: bool,
    /// What the attempt spent before its request, on Fenix's own work (the
    /// endpoint's transformation and the storing of its request): not the
    /// receiver's latency, which the gates learn from.
    pub(super) prepared: std::time::Duration,
}

/// Reacts to a written batch: `notes[i]` belongs to `outcomes[i]`; `applied`
/// holds the deliveries whose row changed.
pub(super) async fn after_recorded(
    state: &SharedState,
    outcomes: &[Outcome],
    notes: &[Notes],
    applied: &HashSet<crate::ids::DeliveryId>,
) {
    let now = time::now_ms();
    let mut retry_scheduled = false;
    let mut lane_moved = false;
    let mut gone = false;
    for (o, n) in outcomes.iter().zip(notes) {
        // The operator app's own deliveries raise no operator alerts.
        let alerting = state.operator_app_id.as_ref() != Some(&o.app_id);
        if let Some(a) = &o.attempt {
            state.metrics.attempt(n.error.map(ErrorClass::as_str), a.duration_ms);
            if alerting {
                state.alerts.attempt(o.endpoint_id.as_str(), o.app_id.as_str(), n.error.is_none(), a.started_at);
            }
        }
        if let Some(latency) = n.first_success_ms {
            state.metrics.first_success(latency);
        }
        gone |= n.gone;
        if !applied.contains(&o.delivery_id) {
            continue;
        }
        state.metrics.finished(o.app_id.as_str(), o.status);
        if o.status == DeliveryStatus::Failed && o.attempt.is_some() && alerting {
            state.alerts.dead_lettered(o.endpoint_id.as_str(), o.app_id.as_str(), o.delivery_id.as_str(), now);
        }
        retry_scheduled |= o.status == DeliveryStatus::Pending;
        // The head of an ordered lane is done: the next one of its lane is due already.
        lane_moved |= o.in_lane && o.status != DeliveryStatus::Pending;
    }
    // A retry just scheduled may come due before the worker's next look at the queue.
    if retry_scheduled || lane_moved {
        state.wake.work_committed(crate::wake::Reach::ThisInstance).await;
    }
    if gone {
        for (o, _) in outcomes.iter().zip(notes).filter(|(_, n)| n.gone) {
            disable_gone(state, o).await;
        }
    }
}

/// The receiver answered 410 Gone: its endpoint is disabled, and the operator hears of it.
async fn disable_gone(state: &SharedState, o: &Outcome) {
    let reason = "the receiver answered 410 Gone";
    let disabled = state
        .store
        .set_endpoint_state(
            &o.endpoint_id,
            EndpointState::Disabled,
            reason,
            &ids::StateChangeId::new().into_string(),
            time::now_ms(),
        )
        .await;
    match disabled {
        Ok(true) => {
            tracing::warn!(endpoint_id = %o.endpoint_id, "endpoint disabled: {reason}");
            crate::operator::endpoint_disabled(state, &o.app_id, &o.endpoint_id, reason).await;
        }
        Ok(false) => {}
        Err(e) => tracing::warn!(error = %e, "could not disable endpoint after 410"),
    }
}
