use super::*;

/// A job as the gate sees it.
#[derive(Debug, PartialEq)]
pub(in crate::worker::gate) struct Probe {
    pub(in crate::worker::gate) name: &'static str,
    pub(in crate::worker::gate) app: &'static str,
    pub(in crate::worker::gate) endpoint: &'static str,
    pub(in crate::worker::gate) host: Option<Arc<str>>,
    pub(in crate::worker::gate) rate: Option<i64>,
}

impl Gated for Probe {
    fn app_id(&self) -> &str {
        self.app
    }

    fn endpoint_id(&self) -> &str {
        self.endpoint
    }

    fn host(&self) -> Option<&Arc<str>> {
        self.host.as_ref()
    }

    fn rate_limit_per_sec(&self) -> Option<i64> {
        self.rate
    }
}

pub(in crate::worker::gate) fn probe(name: &'static str, endpoint: &'static str, host: &str) -> Probe {
    Probe { name, app: "app", endpoint, host: Some(Arc::from(host)), rate: None }
}

/// What the gate did with a job, by name.
#[derive(Debug, PartialEq)]
pub(in crate::worker::gate) enum Seen {
    Run(&'static str, Duration),
    Queued,
    Defer(&'static str, Duration),
}

pub(in crate::worker::gate) fn admit(gate: &Gate<Probe>, job: Probe, now: Instant, held: &mut Vec<Slots>) -> Seen {
    match gate.admit(job, now) {
        Admission::Run { job, slots, wait } => {
            held.push(slots);
            Seen::Run(job.name, wait)
        }
        Admission::Queued => Seen::Queued,
        Admission::Defer { job, after } => Seen::Defer(job.name, after),
    }
}

#[test]
fn the_gate_runs_up_to_the_endpoint_concurrency_queues_twice_that_and_defers_the_rest() {
    let gate = Gate::new(Scope::Process, 2, 64);
    let now = Instant::now();
    let mut held = Vec::new();
    let names = ["a", "b", "c", "d", "e", "f", "g"];
    let seen: Vec<Seen> = names.iter().map(|n| admit(&gate, probe(n, "ep1", "h"), now, &mut held)).collect();
    assert_eq!(
        seen,
        [
            Seen::Run("a", Duration::ZERO),
            Seen::Run("b", Duration::ZERO),
            Seen::Queued,
            Seen::Queued,
            Seen::Queued,
            Seen::Queued,
            Seen::Defer("g", BUSY_RETRY),
        ]
    );
    assert_eq!(
        admit(&gate, probe("x", "ep2", "h"), now, &mut held),
        Seen::Run("x", Duration::ZERO),
        "another endpoint is not held back by a busy one"
    );
    let queued: Vec<&str> = gate.take_waiting().iter().map(|p| p.name).collect();
    assert_eq!(queued, ["c", "d", "e", "f"]);
}

#[test]
fn a_finished_job_hands_its_slots_to_the_next_queued_one_and_frees_them_when_none_is_left() {
    let gate = Gate::new(Scope::Process, 1, 64);
    let now = Instant::now();
    let mut held = Vec::new();
    assert_eq!(admit(&gate, probe("a", "ep", "h"), now, &mut held), Seen::Run("a", Duration::ZERO));
    assert_eq!(admit(&gate, probe("b", "ep", "h"), now, &mut held), Seen::Queued);
    assert_eq!(admit(&gate, probe("c", "ep", "h"), now, &mut held), Seen::Queued);
    let mut slots = held.pop().unwrap();
    let mut order = Vec::new();
    while let Some((turn, kept)) = gate.next("ep", slots, now) {
        match turn {
            Turn::Run { job, wait } => order.push((job.name, wait)),
            Turn::Defer { job, .. } => panic!("{} deferred", job.name),
        }
        slots = kept;
    }
    assert_eq!(order, [("b", Duration::ZERO), ("c", Duration::ZERO)], "queued jobs run in order");
    // The queue was empty: the slot was given back, so the next job runs at once.
    assert_eq!(admit(&gate, probe("d", "ep", "h"), now, &mut held), Seen::Run("d", Duration::ZERO));
}

#[test]
fn a_shrunken_limit_admits_fewer_lets_running_jobs_finish_and_never_strands_the_queue() {
    let gate = Gate::new(Scope::Process, 16, 64).adaptive_from(1);
    let now = Instant::now();
    let mut held = Vec::new();
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
    let seen: Vec<Seen> = names.iter().map(|n| admit(&gate, probe(n, "ep", "h"), now, &mut held)).collect();
    assert_eq!(held.len(), adaptive::INITIAL, "a new endpoint starts at the initial limit, not the maximum");
    assert_eq!(seen[adaptive::INITIAL..], [Seen::Queued, Seen::Queued]);
    // The receiver answers 503: the limit halves, to 5.
    let overload = Observation { started: now, latency: Duration::from_millis(5), signal: Signal::Overload };
    gate.observe(&probe("a", "ep", "h"), overload, now);
    assert_eq!(admit(&gate, probe("m", "ep", "h"), now, &mut held), Seen::Queued, "10 in flight, limit 5");
    // Finishing tasks over the limit give their slots back instead of taking the queue...
    let mut ran = Vec::new();
    for _ in 0..5 {
        assert!(gate.next("ep", held.pop().unwrap(), now).is_none(), "over the limit: the slot goes back");
    }
    // ...the one within it takes the next queued job, and the last one drains the queue.
    let mut slots = held.pop().unwrap();
    while let Some((turn, kept)) = gate.next("ep", slots, now) {
        let Turn::Run { job, .. } = turn else { panic!("deferred") };
        ran.push(job.name);
        slots = kept;
    }
    assert_eq!(ran, ["k", "l", "m"], "the queue drained behind the running jobs");
    assert_eq!(gate.in_flight("ep"), 4, "the other four still run");
    held.clear();
    // Idle: its learnt limit is pruned with its slots.
    gate.prune_idle(now);
    assert!(gate.limits.lock().unwrap().is_empty());
}

#[test]
fn an_endpoint_with_a_rate_limit_is_paced_by_it_not_by_the_adaptive_limit() {
    let gate = Gate::new(Scope::Process, 16, 64).adaptive_from(1);
    let now = Instant::now();
    let mut held = Vec::new();
    let paced = |name| Probe { name, app: "app", endpoint: "ep", host: Some(Arc::from("h")), rate: Some(1000) };
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
    for name in names {
        assert!(
            matches!(admit(&gate, paced(name), now, &mut held), Seen::Run(..)),
            "{name} waits for its send time only"
        );
    }
    assert_eq!(held.len(), 12, "past the initial adaptive limit of {}", adaptive::INITIAL);
}

#[test]
fn the_host_limit_spans_endpoints_and_a_job_without_a_host_needs_no_slot() {
    let gate = Gate::new(Scope::Process, 8, 2);
    let now = Instant::now();
    let mut held = Vec::new();
    assert_eq!(admit(&gate, probe("a", "ep1", "h"), now, &mut held), Seen::Run("a", Duration::ZERO));
    let b = Probe { app: "other app", ..probe("b", "ep2", "h") };
    assert_eq!(admit(&gate, b, now, &mut held), Seen::Run("b", Duration::ZERO));
    assert_eq!(admit(&gate, probe("c", "ep3", "h"), now, &mut held), Seen::Defer("c", BUSY_RETRY));
    assert_eq!(admit(&gate, probe("d", "ep3", "other"), now, &mut held), Seen::Run("d", Duration::ZERO));
    let refused = Probe { name: "e", app: "app", endpoint: "ep4", host: None, rate: None };
    assert_eq!(admit(&gate, refused, now, &mut held), Seen::Run("e", Duration::ZERO));
    // The deferred job freed its endpoint slot: ep3 is not left busy.
    drop(held.remove(0));
    assert_eq!(admit(&gate, probe("f", "ep3", "h"), now, &mut held), Seen::Run("f", Duration::ZERO));
}

#[test]
fn a_hosts_last_slots_are_kept_from_an_app_with_slow_answers_for_another_app() {
    let gate = Gate::new(Scope::Process, 64, 32);
    let now = Instant::now();
    let mut held = Vec::new();
    let slow = |name, endpoint| Probe { app: "slow app", ..probe(name, endpoint, "shared.example") };
    let mut ran = 0;
    for (i, name) in ["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"].iter().enumerate() {
        for endpoint in ["ep1", "ep2", "ep3", "ep4", "ep5"] {
            let _ = i;
            if matches!(admit(&gate, slow(name, endpoint), now, &mut held), Seen::Run(..)) {
                ran += 1;
            }
        }
    }
    assert_eq!(ran, 32 - host_reserve(32), "the slow app's receivers hold all but the reserve");
    let other = Probe { app: "other app", ..probe("o", "ep9", "shared.example") };
    assert_eq!(admit(&gate, other, now, &mut held), Seen::Run("o", Duration::ZERO), "another app starts at once");
    // Known to answer fast, an app may take the reserve too.
    let fast_job = Probe { app: "fast app", ..probe("f", "ep8", "h2") };
    let first = admit(&gate, Probe { app: "fast app", ..probe("f0", "ep8", "h2") }, now, &mut held);
    assert!(matches!(first, Seen::Run(..)));
    let fast = Observation { started: now, latency: Duration::from_millis(3), signal: Signal::Success };
    gate.observe(&fast_job, fast, now);
    let mut fast_ran = 1;
    for endpoint in ["f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8"] {
        for _ in 0..4 {
            let job = Probe { app: "fast app", ..probe("f", endpoint, "h2") };
            if matches!(admit(&gate, job, now, &mut held), Seen::Run(..)) {
                fast_ran += 1;
            }
        }
    }
    assert_eq!(fast_ran, 32, "a fast app alone uses every slot of its host");
}

#[test]
fn a_queued_job_whose_host_changed_to_a_busy_one_is_deferred_and_the_slots_kept() {
    let gate = Gate::new(Scope::Process, 1, 1);
    let now = Instant::now();
    let mut held = Vec::new();
    assert_eq!(admit(&gate, probe("a", "ep", "h1"), now, &mut held), Seen::Run("a", Duration::ZERO));
    assert_eq!(admit(&gate, probe("x", "other", "h2"), now, &mut held), Seen::Run("x", Duration::ZERO));
    // The endpoint's URL moved to h2 after `a` was claimed.
    assert_eq!(admit(&gate, probe("b", "ep", "h2"), now, &mut held), Seen::Queued);
    assert_eq!(admit(&gate, probe("c", "ep", "h1"), now, &mut held), Seen::Queued);
    let slots = held.remove(0);
    let Some((Turn::Defer { job, after }, slots)) = gate.next("ep", slots, now) else {
        panic!("b must be deferred: h2 is busy")
    };
    assert_eq!((job.name, after), ("b", BUSY_RETRY));
    // h1's slot was given up for h2 and is taken again for c.
    let Some((Turn::Run { job, .. }, slots)) = gate.next("ep", slots, now) else { panic!("c must run") };
    assert_eq!(job.name, "c");
    assert!(gate.next("ep", slots, now).is_none());
}

#[test]
fn pacing_spaces_sends_by_the_rate_limit_and_defers_a_wait_too_long_to_sleep_through() {
    let gate = Gate::new(Scope::Process, 8, 64);
    let now = Instant::now();
    let mut held = Vec::new();
    let paced = |name| Probe { name, app: "app", endpoint: "ep", host: Some(Arc::from("h")), rate: Some(10) };
    let ms = Duration::from_millis;
    let seen: Vec<Seen> = ["a", "b", "c", "d", "e"].iter().map(|n| admit(&gate, paced(n), now, &mut held)).collect();
    assert_eq!(
        seen,
        [
            Seen::Run("a", ms(0)),
            Seen::Run("b", ms(100)),
            Seen::Run("c", ms(200)),
            Seen::Defer("d", ms(300)),
            // A deferred job does not take the pacing slot: the next one is told the same.
            Seen::Defer("e", ms(300)),
        ]
    );
    assert_eq!(admit(&gate, paced("f"), now + ms(300), &mut held), Seen::Run("f", ms(0)));
    assert_eq!(admit(&gate, probe("g", "ep", "h"), now, &mut held), Seen::Run("g", ms(0)), "no rate limit, no pacing");
}

#[test]
fn idle_endpoints_and_hosts_are_pruned_and_busy_or_awaited_ones_kept() {
    let gate = Gate::new(Scope::Process, 1, 64);
    let now = Instant::now();
    let mut held = Vec::new();
    admit(&gate, probe("a", "busy", "h1"), now, &mut held);
    admit(&gate, probe("b", "busy", "h1"), now, &mut held);
    admit(&gate, probe("c", "idle", "h2"), now, &mut held);
    drop(held.pop());
    gate.prune_idle(now);
    let mut endpoints: Vec<String> = gate.per_endpoint.lock().unwrap().keys().cloned().collect();
    endpoints.sort();
    assert_eq!(endpoints, ["busy"]);
    assert_eq!(gate.per_host.lock().unwrap().keys().collect::<Vec<_>>(), ["h1"]);
}

#[test]
fn idle_pools_are_pruned_and_busy_awaited_or_leased_ones_kept() {
    let mut map: HashMap<String, Pool> =
        ["idle", "busy", "awaited", "leased"].iter().map(|k| (k.to_string(), Pool::new(2))).collect();
    let permit = map["busy"].sem.clone().try_acquire_owned().unwrap();
    prune_pools(&mut map, |k, _| k == "awaited" || k == "leased");
    let mut left: Vec<_> = map.keys().cloned().collect();
    left.sort();
    assert_eq!(left, ["awaited", "busy", "leased"]);
    drop(permit);
    prune_pools(&mut map, |_, _| false);
    assert!(map.is_empty(), "every slot free and nothing waiting: all pruned");
}

#[test]
fn pacing_slots_in_the_past_or_used_up_are_pruned() {
    let now = Instant::now();
    let later = now + Duration::from_secs(1);
    let mut map = HashMap::from([
        ("past".to_string(), Pace { next: now - Duration::from_millis(1), until: None }),
        ("now".to_string(), Pace { next: now, until: None }),
        ("future".to_string(), Pace { next: later, until: None }),
        ("used up".to_string(), Pace { next: later, until: Some(now) }),
        ("run ahead".to_string(), Pace { next: later, until: Some(later + Duration::from_secs(1)) }),
    ]);
    prune_pacing(&mut map, now);
    let mut left: Vec<_> = map.keys().cloned().collect();
    left.sort();
    assert_eq!(left, ["future", "run ahead"]);
}
