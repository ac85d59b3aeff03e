//! One attempt of one job: the destination check, signing, the request, and
//! the outcome the schedule decides.

use std::sync::Arc;

use super::{attempt, schedule, schedule::Next, Job, LiveSecret, Secrets, Worker};
use crate::{
    ids,
    store::deliveries::{AttemptRecord, Outcome},
    time::{self, Millis},
};

/// Secrets loaded longer ago than this are loaded again before signing: a
/// rotation without overlap retires the old secret at once, and a job may wait
/// in its endpoint's queue well after its batch was claimed.
pub(super) const SECRETS_FRESH_MS: Millis = 1_000;

impl Worker {
    /// Builds, signs and sends one attempt; decides what comes next.
    pub(super) async fn attempt(&self, job: &Job) -> (Outcome, Next) {
        let c = &job.claimed;
        let attempt_id = ids::new_id("att");
        let started_at = time::now_ms();
        let started = std::time::Instant::now();
        let timeout = self.state.settings.attempt_timeout;
        // One time limit over the whole attempt: the destination re-check (a
        // fresh DNS resolution, which a hostile name server can hold), signing,
        // the request and the excerpt. The duration counts all of it.
        let mut versions: Vec<i64> = Vec::new();
        let timed = tokio::time::timeout(timeout, self.check_sign_send(job, &attempt_id, &mut versions)).await;
        let mut result = timed.unwrap_or_else(|_| attempt::timed_out(timeout));
        result.duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
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
        let (status, next_attempt_at) = (next.status(), next.retry_at());
        tracing::debug!(
            delivery_id = %c.id,
            attempt_id = %attempt_id,
            endpoint_id = %c.endpoint_id,
            status = result.facts.status,
            error = result.error,
            outcome = status.as_str(),
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

    /// The destination check, then signing with the secrets live now, then the request.
    async fn check_sign_send(&self, job: &Job, attempt_id: &str, versions: &mut Vec<i64>) -> attempt::AttemptResult {
        let url = match self.check_destination(&job.url).await {
            Ok(url) => url,
            Err(e) => return attempt::refused(e.attempt_error(), e.to_string()),
        };
        let now = time::now_ms();
        let secrets = self.secrets_for(job, now).await;
        let live: Vec<&LiveSecret> = secrets.iter().filter(|s| s.is_live(now)).collect();
        if live.is_empty() {
            return attempt::refused("no_secret", "the endpoint has no usable signing secret".into());
        }
        let keys: Vec<&str> = live.iter().map(|s| s.secret.expose()).collect();
        let timestamp = now / 1000;
        let c = &job.claimed;
        let signature = match fenix_signing::signature_header(job.scheme, &keys, &c.event_id, timestamp, &job.envelope)
        {
            Ok(signature) => signature,
            Err(e) => return attempt::refused("signing", e.to_string()),
        };
        *versions = live.iter().map(|s| s.version).collect();
        let headers = attempt::WireHeaders {
            event_id: &c.event_id,
            event_type: &job.event_type,
            attempt_id,
            timestamp,
            scheme: job.scheme,
            signature: &signature,
        }
        .to_map();
        attempt::send(&self.client, attempt::Request { url: url.clone(), headers, body: job.envelope.clone() }).await
    }

    /// The endpoint's secrets as of at most [`SECRETS_FRESH_MS`] ago: the job's
    /// own (loaded at claim) while they are that fresh, else loaded again (once
    /// per endpoint and interval, shared by its queued jobs). If they cannot be
    /// loaded, the job's are used, still filtered by their expiry.
    async fn secrets_for(&self, job: &Job, now: Millis) -> Secrets {
        if now - job.loaded_at <= SECRETS_FRESH_MS {
            return job.secrets.clone();
        }
        let endpoint_id = &job.claimed.endpoint_id;
        if let Some((at, secrets)) = self.fresh_secrets.lock().expect("secrets lock").get(endpoint_id) {
            if now - *at <= SECRETS_FRESH_MS {
                return secrets.clone();
            }
        }
        match self.store().live_secrets(endpoint_id, now).await {
            Ok(rows) => {
                let secrets = Arc::new(self.open_secrets(endpoint_id, Some(&rows)));
                self.fresh_secrets.lock().expect("secrets lock").insert(endpoint_id.clone(), (now, secrets.clone()));
                secrets
            }
            Err(e) => {
                tracing::warn!(endpoint_id = %endpoint_id, error = %e, "could not reload signing secrets; using those loaded at claim");
                job.secrets.clone()
            }
        }
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
