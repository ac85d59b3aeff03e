//! The gate's side of limits shared by every instance on one PostgreSQL
//! ([`Scope::Shared`]): what a claimed batch is short of (slots, then send
//! times for the jobs that can run), taking the database's grants into the
//! pools and pacing, and giving idle slots back for the renewal. With
//! [`Scope::Process`] every one of these does nothing.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use tokio::time::Instant;

use super::{interval_of, pool_of, run_length, Gate, Gated, Pace, Pool, Scope, ASK_AGAIN_AFTER, MAX_PACING_SLEEP};
use crate::store::limits::{SendRun, SlotAsk, SlotHolding, SlotKind};

/// What one endpoint's jobs in a claimed batch want.
struct EndpointDemand<'a> {
    /// Its jobs; for a rate-limited endpoint, at most the send times of one
    /// run (it asks no slots it cannot use).
    jobs: usize,
    rate: Option<i64>,
    host: Option<&'a str>,
}

/// What a claimed batch wants, per endpoint.
struct Demand<'a> {
    per_endpoint: HashMap<&'a str, EndpointDemand<'a>>,
}

impl<'a> Demand<'a> {
    fn of<J: Gated + 'a>(jobs: impl IntoIterator<Item = &'a J>) -> Demand<'a> {
        let mut per_endpoint: HashMap<&str, EndpointDemand<'a>> = HashMap::new();
        for job in jobs {
            let rate = job.rate_limit_per_sec().filter(|r| *r > 0);
            let host = job.host().map(|h| &**h);
            let want = per_endpoint.entry(job.endpoint_id()).or_insert(EndpointDemand { jobs: 0, rate, host });
            if rate.is_none_or(|rate| want.jobs < run_length(interval_of(rate))) {
                want.jobs += 1;
            }
        }
        Demand { per_endpoint }
    }

    /// Jobs per destination host, over its endpoints.
    fn per_host(&self) -> HashMap<&'a str, usize> {
        let mut per_host = HashMap::new();
        for want in self.per_endpoint.values() {
            if let Some(host) = want.host {
                *per_host.entry(host).or_default() += want.jobs;
            }
        }
        per_host
    }
}

impl<J: Gated> Gate<J> {
    /// The slots to ask the database for before `jobs` (a claimed batch) are
    /// admitted: for each limit short of slots, the difference (within the
    /// limit, not again soon after a refusal). Once they are granted,
    /// [`Gate::send_times_wanted`] says which send times to ask for. Nothing
    /// with [`Scope::Process`].
    pub(in crate::worker) fn slots_wanted<'a>(
        &self,
        jobs: impl IntoIterator<Item = &'a J>,
        now: Instant,
    ) -> Vec<SlotAsk>
    where
        J: 'a,
    {
        if self.scope == Scope::Process {
            return Vec::new();
        }
        let demand = Demand::of(jobs);
        let mut asks = Vec::new();
        // Never more slots than the endpoint's adaptive limit lets this instance use.
        // (An endpoint with a rate limit is paced by it instead: see `Gate::limit_for`.)
        let mine_most: HashMap<&str, usize> = demand
            .per_endpoint
            .iter()
            .map(|(id, want)| (*id, if want.rate.is_some() { self.endpoint_concurrency } else { self.limit_of(id) }))
            .collect();
        {
            let mut map = self.per_endpoint.lock().expect("endpoint slots lock");
            for (id, want) in &demand.per_endpoint {
                let pool = pool_of(&mut map, id, 0);
                let in_flight = pool.capacity.saturating_sub(pool.sem.available_permits());
                let want = want.jobs.min(mine_most[id].saturating_sub(in_flight));
                asks.extend(ask(SlotKind::Endpoint, id, pool, want, self.endpoint_concurrency, now));
            }
        }
        let mut map = self.per_host.lock().expect("host slots lock");
        for (host, jobs) in demand.per_host() {
            let pool = pool_of(&mut map, host, 0);
            // A busy host is asked for with headroom (as many again as held):
            // its slots then grow geometrically instead of one ask per claimed
            // batch; what stays idle goes back at the next renewal.
            let short = jobs.saturating_sub(pool.sem.available_permits());
            let jobs = if short > 0 { jobs + pool.capacity } else { jobs };
            asks.extend(ask(SlotKind::Host, host, pool, jobs, self.host_concurrency, now));
        }
        asks
    }

    /// For each rate-limited endpoint of `jobs` out of send times, the length
    /// (µs) of a run to ask for: as many times as the batch has jobs for it
    /// that can get a slot now (a time taken for a job that then waits for a
    /// slot would be lost), at most [`MAX_PACING_SLEEP`]'s worth. Nothing
    /// with [`Scope::Process`].
    pub(in crate::worker) fn send_times_wanted<'a>(
        &self,
        jobs: impl IntoIterator<Item = &'a J>,
        now: Instant,
    ) -> Vec<(String, i64)>
    where
        J: 'a,
    {
        if self.scope == Scope::Process {
            return Vec::new();
        }
        let free = |map: &Mutex<HashMap<String, Pool>>, key: &str| {
            map.lock().expect("slots lock").get(key).map_or(0, |p| p.sem.available_permits())
        };
        let mut wanted = Vec::new();
        for (id, want) in Demand::of(jobs).per_endpoint {
            let Some(rate) = want.rate else { continue };
            let host_free = want.host.map_or(usize::MAX, |h| free(&self.per_host, h));
            let count = want.jobs.min(free(&self.per_endpoint, id)).min(host_free);
            let pacing = self.pacing.lock().expect("pacing lock");
            // Out of send times, and the next free one close enough for the database to grant.
            let out = pacing
                .get(id)
                .and_then(|p| p.until.map(|until| (p.next.max(now), until)))
                .is_none_or(|(next, until)| next >= until && until <= now + MAX_PACING_SLEEP);
            if count > 0 && out {
                wanted.push((id.to_string(), count as i64 * interval_of(rate).as_micros() as i64));
            }
        }
        wanted
    }

    /// The database's answer to `asks`: this process now holds `held[i]`
    /// slots of `asks[i]`'s limit (at least what it held when asking).
    pub(in crate::worker) fn granted_slots(&self, asks: &[SlotAsk], held: &[i64], now: Instant) {
        for (ask, held) in asks.iter().zip(held) {
            let map = match ask.kind {
                SlotKind::Endpoint => &self.per_endpoint,
                SlotKind::Host => &self.per_host,
            };
            let mut map = map.lock().expect("slots lock");
            let pool = pool_of(&mut map, &ask.key, 0);
            let more = usize::try_from(*held - ask.mine).unwrap_or(0);
            if more == 0 {
                pool.refused_at = Some(now);
                continue;
            }
            pool.capacity += more;
            pool.sem.add_permits(more);
            pool.refused_at = None;
        }
    }

    /// The database's answer to a [`Gate::send_times_wanted`] ask, received at
    /// `now`: each endpoint's run of send times (or, refused, when its next
    /// free one is). `asked` is the ask, for the runs' lengths.
    pub(in crate::worker) fn granted_send_times(&self, asked: &[(String, i64)], runs: &[SendRun], now: Instant) {
        let mut pacing = self.pacing.lock().expect("pacing lock");
        for run in runs {
            let Some((_, span_us)) = asked.iter().find(|(id, _)| *id == run.endpoint_id) else { continue };
            let start = now + Duration::from_micros(run.starts_in_us.max(0) as u64);
            let until = match run.granted {
                true => start + Duration::from_micros((*span_us).max(0) as u64),
                false => start,
            };
            pacing.insert(run.endpoint_id.clone(), Pace { next: start, until: Some(until) });
        }
    }

    /// Gives back the slots nobody here uses (they return to the other
    /// instances when the renewal drops them) and lists those still held,
    /// for the lease renewal. Empty with [`Scope::Process`].
    pub(in crate::worker) fn holdings(&self) -> Vec<SlotHolding> {
        if self.scope == Scope::Process {
            return Vec::new();
        }
        let mut held = Vec::new();
        for (kind, map) in [(SlotKind::Endpoint, &self.per_endpoint), (SlotKind::Host, &self.per_host)] {
            let mut map = map.lock().expect("slots lock");
            for (key, pool) in map.iter_mut() {
                let mut idle = pool.sem.available_permits();
                // A busy host keeps its reserve for other apps: given back,
                // the slots would go to the instance asking for more, the one
                // busy app's, and another app's job here would find none.
                if kind == SlotKind::Host && idle < pool.capacity {
                    idle = idle.saturating_sub(super::host_reserve(pool.capacity));
                }
                if idle > 0 {
                    if let Ok(permits) = pool.sem.try_acquire_many(idle as u32) {
                        permits.forget();
                        pool.capacity -= idle;
                    }
                }
                if pool.capacity > 0 {
                    held.push(SlotHolding { kind, key: key.clone(), slots: pool.capacity as i64 });
                }
            }
        }
        held
    }
}

/// What to ask the database for `key`'s limit, if anything: the slots
/// `demand` jobs need beyond the free ones, within `limit`.
fn ask(kind: SlotKind, key: &str, pool: &Pool, demand: usize, limit: usize, now: Instant) -> Option<SlotAsk> {
    let short = demand.saturating_sub(pool.sem.available_permits()).min(limit.saturating_sub(pool.capacity));
    let refused_lately = pool.refused_at.is_some_and(|at| now < at + ASK_AGAIN_AFTER);
    (short > 0 && !refused_lately).then(|| SlotAsk {
        kind,
        key: key.to_string(),
        want: short as i64,
        limit: limit as i64,
        mine: pool.capacity as i64,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::worker::gate::{tests::*, BUSY_RETRY, PACED_RETRY};

    fn grant_all(gate: &Gate<Probe>, jobs: &[&Probe], now: Instant) {
        let asks = gate.slots_wanted(jobs.iter().copied(), now);
        let held: Vec<i64> = asks.iter().map(|a| a.mine + a.want).collect();
        gate.granted_slots(&asks, &held, now);
    }

    #[test]
    fn a_shared_gate_runs_only_on_slots_the_database_granted_and_gives_idle_ones_back() {
        let gate = Gate::new(Scope::Shared, 4, 64);
        let now = Instant::now();
        let mut held = Vec::new();
        assert_eq!(
            admit(&gate, probe("early", "ep", "h"), now, &mut held),
            Seen::Defer("early", BUSY_RETRY),
            "no slot granted yet: deferred, not queued behind nobody"
        );
        let (a, b, c) = (probe("a", "ep", "h"), probe("b", "ep", "h"), probe("c", "ep", "h"));
        let asks = gate.slots_wanted([&a, &b, &c], now);
        let mut wanted: Vec<(SlotKind, &str, i64, i64, i64)> =
            asks.iter().map(|a| (a.kind, a.key.as_str(), a.want, a.limit, a.mine)).collect();
        wanted.sort();
        assert_eq!(wanted, [(SlotKind::Endpoint, "ep", 3, 4, 0), (SlotKind::Host, "h", 3, 64, 0)]);
        // Other instances hold two of the endpoint's four slots.
        let held_now: Vec<i64> = asks.iter().map(|a| if a.kind == SlotKind::Endpoint { 2 } else { 3 }).collect();
        gate.granted_slots(&asks, &held_now, now);
        assert_eq!(admit(&gate, a, now, &mut held), Seen::Run("a", Duration::ZERO));
        assert_eq!(admit(&gate, b, now, &mut held), Seen::Run("b", Duration::ZERO));
        assert_eq!(admit(&gate, c, now, &mut held), Seen::Queued, "queued behind a slot held here");
        let mut holdings = gate.holdings();
        holdings.sort_by_key(|h| h.kind);
        let holdings: Vec<(SlotKind, &str, i64)> = holdings.iter().map(|h| (h.kind, h.key.as_str(), h.slots)).collect();
        assert_eq!(holdings, [(SlotKind::Endpoint, "ep", 2), (SlotKind::Host, "h", 2)], "the idle host slot went back");
        held.clear();
        drop(gate.take_waiting());
        assert!(gate.holdings().is_empty(), "nothing runs: every slot goes back");
    }

    #[test]
    fn a_limit_the_database_refused_is_not_asked_again_at_once() {
        let gate: Gate<Probe> = Gate::new(Scope::Shared, 4, 64);
        let now = Instant::now();
        let a = probe("a", "ep", "h");
        let asks = gate.slots_wanted([&a], now);
        let none: Vec<i64> = asks.iter().map(|a| a.mine).collect();
        gate.granted_slots(&asks, &none, now);
        assert!(gate.slots_wanted([&a], now + Duration::from_millis(10)).is_empty());
        assert_eq!(gate.slots_wanted([&a], now + ASK_AGAIN_AFTER).len(), 2, "asked again later");
    }

    #[test]
    fn a_shared_rate_limit_sends_on_the_run_taken_and_defers_past_it() {
        let gate = Gate::new(Scope::Shared, 8, 64);
        let now = Instant::now();
        let mut held = Vec::new();
        let ms = Duration::from_millis;
        let paced = |name| Probe { name, app: "app", endpoint: "ep", host: Some(Arc::from("h")), rate: Some(10) };
        let jobs = [paced("a"), paced("b"), paced("c")];
        let refs: Vec<&Probe> = jobs.iter().collect();
        assert!(gate.send_times_wanted(refs.iter().copied(), now).is_empty(), "no slot, no send time asked");
        grant_all(&gate, &refs, now);
        // 10/s: a run holds 250 ms' worth, two send times.
        let runs = gate.send_times_wanted(refs.iter().copied(), now);
        assert_eq!(runs, [("ep".to_string(), 200_000)]);
        let run = SendRun { endpoint_id: "ep".into(), starts_in_us: 50_000, granted: true };
        gate.granted_send_times(&runs, &[run], now);
        assert!(gate.send_times_wanted(refs.iter().copied(), now).is_empty(), "the run is not used up");
        let [a, b, c] = jobs;
        assert_eq!(admit(&gate, a, now, &mut held), Seen::Run("a", ms(50)));
        assert_eq!(admit(&gate, b, now, &mut held), Seen::Run("b", ms(150)));
        assert_eq!(
            admit(&gate, c, now, &mut held),
            Seen::Defer("c", PACED_RETRY),
            "two slots were asked for two send times; past them, asked again once the database can grant"
        );
        held.remove(0);
        // Others took the times up to 600 ms ahead: asked again 250 ms before that.
        let refused = SendRun { endpoint_id: "ep".into(), starts_in_us: 600_000, granted: false };
        gate.granted_send_times(&runs, &[refused], now);
        assert_eq!(admit(&gate, paced("d"), now, &mut held), Seen::Defer("d", ms(350)));
    }
}
