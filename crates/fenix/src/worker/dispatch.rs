//! Dispatching claimed jobs: per-endpoint concurrency slots, a short local
//! queue behind a busy endpoint, rate-limit pacing, and giving work back.

use std::{collections::HashMap, sync::Arc, time::Duration};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{schedule::Next, Admission, Job, Worker, BUSY_ENDPOINT_RETRY_MS, MAX_PACING_SLEEP};
use crate::{
    ids,
    lifecycle::EndpointState,
    time::{self, Millis},
};

/// The semaphore of `key` in `map`, made with `permits` on first use.
fn semaphore_of(map: &mut HashMap<String, Arc<Semaphore>>, key: &str, permits: usize) -> Arc<Semaphore> {
    if let Some(sem) = map.get(key) {
        return sem.clone();
    }
    let sem = Arc::new(Semaphore::new(permits));
    map.insert(key.to_string(), sem.clone());
    sem
}

impl Worker {
    pub(super) fn endpoint_semaphore(&self, endpoint_id: &str) -> Arc<Semaphore> {
        let mut map = self.per_endpoint.lock().expect("endpoint semaphores lock");
        semaphore_of(&mut map, endpoint_id, self.state.settings.endpoint_concurrency)
    }

    /// A slot of the destination host's limit, if one is free (a job without
    /// a host makes no request and needs none).
    pub(super) fn host_permit(&self, host: Option<&str>) -> Result<Option<OwnedSemaphorePermit>, ()> {
        let Some(host) = host else { return Ok(None) };
        let sem = semaphore_of(
            &mut self.per_host.lock().expect("host semaphores lock"),
            host,
            self.state.settings.host_concurrency,
        );
        sem.try_acquire_owned().map(Some).map_err(|_| ())
    }

    /// Drops the map entries of endpoints and hosts that are idle: no attempt
    /// running (nobody else holds their semaphore, so all its permits are
    /// free), no job waiting, pacing slot in the past, reloaded secrets stale.
    /// Without this, every endpoint ever sent to stayed in memory.
    pub(super) fn prune_idle(&self) {
        let waiting: std::collections::HashSet<String> = {
            let mut waiting = self.waiting.lock().expect("waiting lock");
            waiting.retain(|_, q| !q.is_empty());
            waiting.keys().cloned().collect()
        };
        prune_semaphores(&mut self.per_endpoint.lock().expect("endpoint semaphores lock"), |id| waiting.contains(id));
        prune_semaphores(&mut self.per_host.lock().expect("host semaphores lock"), |_| false);
        prune_pacing(&mut self.pacing.lock().expect("pacing lock"), tokio::time::Instant::now());
        let now = time::now_ms();
        self.fresh_secrets
            .lock()
            .expect("secrets lock")
            .retain(|_, (at, _)| now - *at <= super::send::SECRETS_FRESH_MS);
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

    /// An endpoint slot for `job`, or a place in the queue behind the
    /// endpoint's running attempts, or the job back when that queue is full.
    /// Taking the slot and queueing happen under the queue's lock, as do taking
    /// the next queued job and giving the slot back ([`Worker::next_or_release`]):
    /// otherwise a job queued just as the last running attempt found the queue
    /// empty would wait, its lease renewed, until another delivery to that
    /// endpoint came along.
    pub(super) fn admit(&self, job: Job) -> Admission {
        let sem = self.endpoint_semaphore(&job.claimed.endpoint_id);
        let cap = self.state.settings.endpoint_concurrency * 2;
        let mut waiting = self.waiting.lock().expect("waiting lock");
        if let Ok(permit) = sem.try_acquire_owned() {
            return Admission::Run(Box::new(job), permit);
        }
        let queue = waiting.entry(job.claimed.endpoint_id.clone()).or_default();
        if queue.len() >= cap {
            return Admission::Full(Box::new(job));
        }
        queue.push_back(job);
        self.outstanding.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Admission::Queued
    }

    /// The next queued job of an endpoint, keeping its slot; when none is
    /// queued, the slot is given back under the same lock [`Worker::admit`] queues under.
    pub(super) fn next_or_release(
        &self,
        endpoint_id: &str,
        permit: OwnedSemaphorePermit,
    ) -> Option<(Job, OwnedSemaphorePermit)> {
        let mut waiting = self.waiting.lock().expect("waiting lock");
        let job = waiting.get_mut(endpoint_id).and_then(|q| q.pop_front());
        if waiting.get(endpoint_id).is_some_and(|q| q.is_empty()) {
            waiting.remove(endpoint_id);
        }
        match job {
            Some(job) => Some((job, permit)),
            None => {
                drop(permit);
                None
            }
        }
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
    pub(super) async fn execute(
        self: Arc<Self>,
        job: Job,
        mut endpoint_permit: OwnedSemaphorePermit,
        mut host_permit: Option<OwnedSemaphorePermit>,
        wait: Duration,
    ) {
        let permit = self.global.clone().acquire_owned().await.expect("semaphore never closed");
        if self.stopping.load(std::sync::atomic::Ordering::Relaxed) {
            self.set_aside(&job);
            return;
        }
        let endpoint_id = job.claimed.endpoint_id.clone();
        let mut host = job.host.clone();
        let mut next = Some((job, wait));
        while let Some((job, wait)) = next.take() {
            self.execute_one(job, wait).await;
            self.finished_one();
            // Keep both slots for the next job queued behind this endpoint, if any
            // (none once the worker is stopping: queued leases are given back).
            loop {
                if self.stopping.load(std::sync::atomic::Ordering::Relaxed) {
                    drop(endpoint_permit);
                    drop(host_permit);
                    drop(permit);
                    return;
                }
                let Some((j, p)) = self.next_or_release(&endpoint_id, endpoint_permit) else {
                    drop(host_permit);
                    drop(permit);
                    return;
                };
                endpoint_permit = p;
                // Same endpoint, so normally the same host, whose slot this task
                // holds; the endpoint's URL may have changed since, though.
                if j.host != host {
                    drop(host_permit.take());
                    match self.host_permit(j.host.as_deref()) {
                        Ok(p) => (host_permit, host) = (p, j.host.clone()),
                        Err(()) => {
                            let at = time::now_ms() + BUSY_ENDPOINT_RETRY_MS;
                            self.defer(vec![(j.claimed.id.clone(), j.claimed.lease_token, at)]).await;
                            self.finished_one();
                            host = None;
                            continue;
                        }
                    }
                }
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
        unreachable!("the loop above returns once no job is left")
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
                .set_endpoint_state(
                    &job.claimed.endpoint_id,
                    EndpointState::Disabled,
                    reason,
                    &ids::new_id("esc"),
                    time::now_ms(),
                )
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

/// Drops semaphores nobody holds (no permit out: each permit keeps a handle)
/// unless `keep` says the key still has work waiting. Runs under the map's
/// lock, the only place handles are handed out, so none can appear meanwhile.
fn prune_semaphores(map: &mut HashMap<String, Arc<Semaphore>>, keep: impl Fn(&str) -> bool) {
    map.retain(|key, sem| Arc::strong_count(sem) > 1 || keep(key));
}

/// Drops pacing slots already in the past: the same as having none.
fn prune_pacing(map: &mut HashMap<String, tokio::time::Instant>, now: tokio::time::Instant) {
    map.retain(|_, next| *next > now);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_semaphores_are_pruned_and_busy_or_awaited_ones_kept() {
        let mut map: HashMap<String, Arc<Semaphore>> =
            ["idle", "busy", "awaited"].iter().map(|k| (k.to_string(), Arc::new(Semaphore::new(2)))).collect();
        let permit = map["busy"].clone().try_acquire_owned().unwrap();
        prune_semaphores(&mut map, |k| k == "awaited");
        let mut left: Vec<_> = map.keys().cloned().collect();
        left.sort();
        assert_eq!(left, ["awaited", "busy"]);
        drop(permit);
        prune_semaphores(&mut map, |_| false);
        assert!(map.is_empty(), "every slot free and nothing waiting: all pruned");
    }

    #[test]
    fn pacing_slots_in_the_past_are_pruned() {
        let now = tokio::time::Instant::now();
        let mut map = HashMap::from([
            ("past".to_string(), now - Duration::from_millis(1)),
            ("now".to_string(), now),
            ("future".to_string(), now + Duration::from_secs(1)),
        ]);
        prune_pacing(&mut map, now);
        assert_eq!(map.keys().collect::<Vec<_>>(), ["future"]);
    }
}
