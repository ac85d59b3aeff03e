//! Dispatching claimed jobs: per-endpoint concurrency slots, a short local
//! queue behind a busy endpoint, rate-limit pacing, and giving work back.

use std::{collections::HashMap, sync::Arc, time::Duration};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{schedule::Next, Job, Worker, MAX_PACING_SLEEP};
use crate::{
    ids,
    time::{self, Millis},
};

impl Worker {
    pub(super) fn endpoint_semaphore(&self, endpoint_id: &str) -> Arc<Semaphore> {
        let mut map = self.per_endpoint.lock().expect("endpoint semaphores lock");
        if let Some(sem) = map.get(endpoint_id) {
            return sem.clone();
        }
        let sem = Arc::new(Semaphore::new(self.state.settings.endpoint_concurrency));
        map.insert(endpoint_id.to_string(), sem.clone());
        sem
    }

    /// How long the endpoint's rate limit makes this job wait; the slot is
    /// taken only when the wait is short enough to sleep through.
    pub(super) fn pace(&self, job: &Job) -> Duration {
        let Some(rate) = job.rate_limit_per_sec.filter(|r| *r > 0) else { return Duration::ZERO };
        let mut pacing = self.pacing.lock().expect("pacing lock");
        let now = tokio::time::Instant::now();
        let next = pacing.entry(job.claimed.endpoint_id.clone()).or_insert(now);
        let slot = (*next).max(now);
        let wait = slot - now;
        if wait <= MAX_PACING_SLEEP {
            *next = slot + Duration::from_secs_f64(1.0 / rate as f64);
        }
        wait
    }

    /// Queues a job behind its endpoint's running attempts; gives it back when the queue is full.
    pub(super) fn enqueue(&self, job: Job) -> Result<(), Box<Job>> {
        let cap = self.state.settings.endpoint_concurrency * 2;
        let mut waiting = self.waiting.lock().expect("waiting lock");
        let queue = waiting.entry(job.claimed.endpoint_id.clone()).or_default();
        if queue.len() >= cap {
            return Err(Box::new(job));
        }
        queue.push_back(job);
        self.outstanding.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// The next queued job of an endpoint, if any.
    pub(super) fn dequeue(&self, endpoint_id: &str) -> Option<Job> {
        let mut waiting = self.waiting.lock().expect("waiting lock");
        let queue = waiting.get_mut(endpoint_id)?;
        let job = queue.pop_front();
        if queue.is_empty() {
            waiting.remove(endpoint_id);
        }
        job
    }

    /// Gives leases back, each due again at its own time.
    pub(super) async fn defer(&self, deferred: Vec<(String, i64, Millis)>) {
        let mut by_time: HashMap<Millis, Vec<(String, i64)>> = HashMap::new();
        for (id, token, at) in deferred {
            by_time.entry(at).or_default().push((id, token));
        }
        for (at, leases) in by_time {
            match self.store().release_leases(&leases, at).await {
                Ok(()) => self.forget(&leases),
                Err(e) => tracing::warn!(error = %e, "could not defer deliveries; their leases will expire"),
            }
        }
    }

    /// Takes a global slot, sends the job and reports its outcome, then the
    /// jobs queued behind the same endpoint, one after the other.
    pub(super) async fn execute(self: Arc<Self>, job: Job, endpoint_permit: OwnedSemaphorePermit, wait: Duration) {
        let permit = self.global.clone().acquire_owned().await.expect("semaphore never closed");
        if self.stopping.load(std::sync::atomic::Ordering::Relaxed) {
            self.set_aside(&job);
            return;
        }
        let endpoint_id = job.claimed.endpoint_id.clone();
        let mut next = Some((job, wait));
        while let Some((job, wait)) = next.take() {
            self.execute_one(job, wait).await;
            self.finished_one();
            // Keep both slots for the next job queued behind this endpoint, if any
            // (none once the worker is stopping: queued leases are given back).
            while !self.stopping.load(std::sync::atomic::Ordering::Relaxed) {
                let Some(j) = self.dequeue(&endpoint_id) else { break };
                let w = self.pace(&j);
                if w > MAX_PACING_SLEEP {
                    let at = time::now_ms() + w.as_millis() as i64;
                    self.defer(vec![(j.claimed.id.clone(), j.claimed.lease_token, at)]).await;
                    self.finished_one();
                    continue;
                }
                next = Some((j, w));
                break;
            }
        }
        drop(endpoint_permit);
        drop(permit);
    }

    /// One claimed job is done with (sent, given back or dropped at shutdown):
    /// room for the claimer.
    fn finished_one(&self) {
        self.outstanding.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        self.progress.notify_one();
    }

    /// Sends one job and reports its outcome.
    pub(super) async fn execute_one(&self, job: Job, wait: Duration) {
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        let outcome = self.attempt(&job).await;
        if outcome.1 == Next::Gone {
            let reason = "the receiver answered 410 Gone";
            match self
                .store()
                .set_endpoint_state(&job.claimed.endpoint_id, "disabled", reason, &ids::new_id("esc"), time::now_ms())
                .await
            {
                Ok(true) => {
                    tracing::warn!(endpoint_id = %job.claimed.endpoint_id, "endpoint disabled: {reason}");
                    crate::operator::endpoint_disabled(
                        &self.state,
                        &job.claimed.app_id,
                        &job.claimed.endpoint_id,
                        reason,
                    )
                    .await;
                }
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "could not disable endpoint after 410"),
            }
        }
        let _ = self.results.send(outcome.0);
    }
}
