//! The request a delivery to an endpoint with a transformation sends: made
//! once by the script (`transform`), stored, and sent as stored on every
//! attempt, so the receiver gets the same bytes each time (signed anew).
//!
//! The first attempt runs the script and stores its request before sending
//! (`store::transformed::RequestWriter`, several deliveries' per transaction): a crash between the two finds the
//! stored one on the next attempt, so nothing relies on the script being
//! deterministic. If another worker stored one first (a lease that ran out),
//! that one is sent. Later attempts read the stored one; one that finds none
//! (every attempt so far failed to transform) runs the script again.
//! Endpoints without a transformation never come here.

use std::sync::Arc;

use super::{refused, AttemptResult};
use crate::worker::job::Job;
use crate::{
    error_class::ErrorClass,
    state::SharedState,
    store::transformed::NewRequest,
    transform::{request::Webhook, Cancelled, Transformed},
};

/// What the transformation decided for this attempt.
pub(super) enum Prepared {
    /// Send this request.
    Send(Transformed),
    /// The script cancelled the delivery: it is skipped.
    Cancelled,
    /// No request: the attempt fails with this result.
    Failed(AttemptResult),
}

/// The reason a cancelled delivery shows.
pub const CANCELLED: &str = "transformation_cancelled";

fn failed(reason: impl Into<String>) -> Prepared {
    Prepared::Failed(refused(ErrorClass::TransformationFailed, reason.into()))
}

/// The request `job` sends to `url` (the endpoint's, checked), with
/// `script` its endpoint's transformation; the run must start by `start_by`.
pub(super) async fn prepare(
    state: &SharedState,
    job: &Job,
    script: &Arc<str>,
    url: &url::Url,
    start_by: std::time::Instant,
) -> Prepared {
    let c = &job.claimed;
    if c.attempt_count > 0 {
        match stored(state, job).await {
            Ok(Some(t)) => return Prepared::Send(t),
            Ok(None) => {}
            Err(p) => return p,
        }
    }
    let webhook = Webhook { url, headers: &job.policy.script_headers, payload: &job.envelope };
    // The endpoint's own sandbox: its top level ran once, its globals are its own.
    let keeper: Arc<str> = Arc::from(c.endpoint_id.as_str());
    let made = match state.transforms.run(script.clone(), Some(keeper), &webhook, start_by).await {
        Ok(Ok(t)) => t,
        Ok(Err(Cancelled)) => {
            if let Err(e) = state.store.record_skip_reason(&c.id, c.lease_token, CANCELLED).await {
                tracing::warn!(delivery_id = %c.id, error = %e, "the reason of a cancelled delivery was not stored");
            }
            return Prepared::Cancelled;
        }
        // The reason names a limit, a class and line or a refused part, never the event's data.
        Err(f) => return failed(format!("the transformation failed: {}", f.reason)),
    };
    let request = NewRequest { id: c.id.clone(), head: made.head_json(), body: made.body.clone() };
    match state.transformed_requests.store(request).await {
        Ok(true) => Prepared::Send(made),
        Ok(false) => match stored(state, job).await {
            Ok(Some(t)) => Prepared::Send(t),
            Ok(None) => failed("the transformed request could not be stored: the delivery is gone"),
            Err(p) => p,
        },
        Err(e) => {
            tracing::warn!(delivery_id = %c.id, error = %e, "a transformed request could not be stored");
            failed("the transformed request could not be stored (database); it is tried again")
        }
    }
}

/// The request stored for `job`'s delivery.
async fn stored(state: &SharedState, job: &Job) -> Result<Option<Transformed>, Prepared> {
    let c = &job.claimed;
    match state.store.transformed_request(&c.id).await {
        Ok(None) => Ok(None),
        Ok(Some(s)) => match Transformed::from_stored(&s.transformed_request, s.transformed_body) {
            Some(t) => Ok(Some(t)),
            None => Err(failed("the stored transformed request cannot be read")),
        },
        Err(e) => {
            tracing::warn!(delivery_id = %c.id, error = %e, "a stored transformed request could not be read");
            Err(failed("the stored transformed request could not be read (database); it is tried again"))
        }
    }
}
