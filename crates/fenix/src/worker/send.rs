//! One attempt of one job: the destination check, signing, the request, and
//! the outcome the schedule decides.

use super::{attempt, schedule, schedule::Next, Job, Worker};
use crate::{
    ids,
    store::deliveries::{AttemptRecord, Outcome},
    time,
};

impl Worker {
    /// Builds, signs and sends one attempt; decides what comes next.
    pub(super) async fn attempt(&self, job: &Job) -> (Outcome, Next) {
        let c = &job.claimed;
        let attempt_id = ids::new_id("att");
        let started_at = time::now_ms();
        let timestamp = started_at / 1000;
        let keys: Vec<&str> = job.secrets.iter().map(|(_, s)| s.expose()).collect();
        let versions: Vec<i64> = job.secrets.iter().map(|(v, _)| *v).collect();
        let signature = fenix_signing::signature_header(job.scheme, &keys, &c.event_id, timestamp, &job.envelope);
        let refused = |error: &'static str, detail: String| attempt::AttemptResult {
            facts: Default::default(),
            excerpt: None,
            error: Some(error),
            detail: Some(detail),
            duration_ms: 0,
        };
        let result = match (self.check_destination(&job.url).await, signature) {
            (Err(e), _) => refused(e.attempt_error(), e.to_string()),
            (Ok(_), _) if keys.is_empty() => refused("no_secret", "the endpoint has no usable signing secret".into()),
            (Ok(_), Err(e)) => refused("signing", e.to_string()),
            (Ok(url), Ok(signature)) => {
                let headers = attempt::WireHeaders {
                    event_id: &c.event_id,
                    event_type: &job.event_type,
                    attempt_id: &attempt_id,
                    timestamp,
                    scheme: job.scheme,
                    signature: &signature,
                }
                .to_map();
                let req = attempt::Request { url: url.clone(), headers, body: job.envelope.clone() };
                attempt::send(&self.client, req, self.state.settings.attempt_timeout).await
            }
        };
        self.state.metrics.attempt(result.error, result.duration_ms);
        if self.state.operator_app_id.as_deref() != Some(c.app_id.as_str()) {
            self.state.alerts.attempt(&c.endpoint_id, &c.app_id, result.error.is_none(), started_at);
        }
        let finished = time::now_ms();
        let n_in_budget = u32::try_from(c.attempt_count - c.budget_start + 1).unwrap_or(u32::MAX);
        let next = schedule::next_step(&result.facts, n_in_budget, &self.state.settings.retry_schedule, finished);
        if next == Next::Succeeded && c.budget_start == 0 {
            self.state.metrics.first_success(finished - job.event_created_at);
        }
        let (status, next_attempt_at) = match next {
            Next::Succeeded => ("succeeded", None),
            Next::RetryAt(t) => ("pending", Some(t)),
            Next::Failed | Next::Gone => ("failed", None),
        };
        tracing::debug!(
            delivery_id = %c.id,
            attempt_id = %attempt_id,
            endpoint_id = %c.endpoint_id,
            status = result.facts.status,
            error = result.error,
            outcome = status,
            "attempt finished"
        );
        let record = AttemptRecord {
            id: attempt_id,
            delivery_id: c.id.clone(),
            endpoint_id: c.endpoint_id.clone(),
            attempt_number: c.attempt_count + 1,
            started_at,
            duration_ms: result.duration_ms,
            response_status: result.facts.status.map(i64::from),
            // Both come from the network: made storable on both backends.
            response_excerpt: result.excerpt.map(|e| attempt::storable_text(&e).into_owned()),
            error: result.error.map(str::to_string),
            error_detail: result.detail.map(|d| attempt::storable_detail(&d)),
            signed_with: serde_json::to_string(&versions).expect("numbers serialize"),
        };
        let outcome = Outcome {
            delivery_id: c.id.clone(),
            endpoint_id: c.endpoint_id.clone(),
            app_id: c.app_id.clone(),
            event_id: c.event_id.clone(),
            lease_token: c.lease_token,
            attempt: Some(record),
            status,
            attempt_count: c.attempt_count + 1,
            next_attempt_at,
            last_attempt_at: Some(started_at),
        };
        (outcome, next)
    }

    /// The destination policy, again, before every attempt: the URL rules (their
    /// verdict for this batch), and for a host name a fresh resolution with
    /// every address checked; answers the URL to send to. The HTTP client's resolver checks again whenever
    /// it opens a connection; this check also covers a pooled connection,
    /// which would not resolve again.
    pub(super) async fn check_destination<'u>(
        &self,
        checked: &'u Result<url::Url, fenix_destination::DestinationError>,
    ) -> Result<&'u url::Url, fenix_destination::DestinationError> {
        let url = checked.as_ref().map_err(Clone::clone)?;
        if let Some(url::Host::Domain(host)) = url.host() {
            self.state.destinations.resolve_checked(host).await?;
        }
        Ok(url)
    }
}
