//! Schema checks off the async runtime, each within a time budget.
//!
//! A check is CPU work that cannot be interrupted once it runs, and its cost
//! is an admin's schema times a producer's payload. Run on the runtime, one
//! slow check stalls every request that shares its thread (`/healthz`
//! included); run without bound, a few take every thread. So:
//!
//! - checks run on blocking threads, at most `FENIX_SCHEMA_CONCURRENCY` at
//!   once ([`Checks::run`] waits for a slot; a request that cannot get one
//!   in time is answered `503`, as any overload);
//! - a request's checks run in order in one slot, each within
//!   `FENIX_SCHEMA_BUDGET`, all of them within `FENIX_SCHEMA_REQUEST_BUDGET`
//!   (a batch of 40 slow events gets one request's budget, not 40). Over
//!   either, the event is refused `schema_too_costly` at once and the rest
//!   of the batch is not checked;
//! - the check that went over keeps its thread until it ends (nothing can
//!   stop it), and meanwhile its type is quarantined: further events of the
//!   type are refused at once instead of taking another slot. The type is
//!   flagged for the operator: a warning in the log naming it (never the
//!   payload) and `fenix_schema_too_costly_total{event_type=…}`.
//!
//! Schemas whose cost can grow exponentially are refused when written
//! (`cost.rs`); the budget bounds what that cannot see.

use std::{
    collections::HashMap,
    fmt::Write as _,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use serde_json::value::RawValue;
use tokio::sync::{oneshot, Semaphore};

use super::{CompiledType, OverBudget, Refusal};

/// One event's data to check against its type's schema.
pub struct Check {
    /// The event's place in its request (0 for a single event).
    pub index: usize,
    pub compiled: Arc<CompiledType>,
    pub data: Box<RawValue>,
    /// Where `data` sits in the request, for the errors' paths (`/data`).
    pub base: String,
}

/// What a request's checks come to: the checks back, or the first refusal with its event's index.
type Outcome = Result<Vec<Check>, (usize, Refusal)>;

/// A slot of an app's share and one of the instance's, held while its checks run.
type Slot = (tokio::sync::OwnedSemaphorePermit, tokio::sync::OwnedSemaphorePermit);

/// What a passed deadline means for the request waiting on its checks.
enum Overtime {
    /// The next check started meanwhile: it has its own budget.
    NextCheck,
    /// The check at `index` went over its budget (or the request's, `whole_request`).
    Over { index: usize, name: String, whole_request: bool },
    /// The job ended just now: its answer was sent.
    Finished,
}

/// The budgets and the slots of schema checks, one per instance (in the state).
pub struct Checks {
    slots: Arc<Semaphore>,
    /// Slots one app may hold at once: half of them (at least one), so that
    /// another app's checks always find one while an app's run long.
    share: usize,
    shares: Mutex<HashMap<String, Arc<Semaphore>>>,
    per_event: Duration,
    per_request: Duration,
    flags: Arc<Mutex<HashMap<String, Flag>>>,
    /// Checks run since start (`fenix_schema_checks_total`).
    done: Arc<AtomicU64>,
}

/// What the operator sees of one event type's checks that went over budget.
#[derive(Default)]
struct Flag {
    /// Checks still running past their budget (each holding a slot).
    running_over: usize,
    /// Events refused `schema_too_costly` since start.
    refused: u64,
}

/// Where a request's checks are, shared between the thread running them and
/// the request waiting for them.
struct Progress {
    /// The check running (its position in the request's list) and since when.
    at: usize,
    since: Instant,
    /// The request gave up: stop after the running check.
    cancelled: bool,
    /// The running check's type was counted as running over budget.
    over: Option<String>,
    /// A check is running (set as it starts, cleared as it ends, under this
    /// lock): the request counts a check as running over only while it
    /// runs, so the count it adds is always taken off again.
    running: bool,
    /// The blocking job ended (its answer was sent first).
    finished: bool,
}

impl Checks {
    /// `at_once` checks at most, each within `per_event`, a request's all
    /// within `per_request` (the settings hold it no shorter than `per_event`).
    pub fn new(at_once: usize, per_event: Duration, per_request: Duration) -> Checks {
        Checks {
            slots: Arc::new(Semaphore::new(at_once.max(1))),
            share: at_once.div_ceil(2).max(1),
            shares: Default::default(),
            per_event,
            per_request,
            flags: Default::default(),
            done: Default::default(),
        }
    }

    /// Checks `checks` (events of `app`) in order, off the runtime and within
    /// the budgets; gives them back when every one passes, else the first
    /// refusal with its event's index.
    pub async fn run(&self, app: &str, checks: Vec<Check>) -> Outcome {
        if checks.is_empty() {
            return Ok(checks);
        }
        if let Some(c) = checks.iter().find(|c| self.quarantined(c.compiled.name())) {
            return Err((c.index, self.refused_at_once(c.compiled.name())));
        }
        let Some(slot) = self.take_slot(app).await else { return Err((checks[0].index, Refusal::Busy)) };
        let names: Vec<(usize, String)> = checks.iter().map(|c| (c.index, c.compiled.name().to_string())).collect();
        let progress = Arc::new(Mutex::new(Progress {
            at: 0,
            since: Instant::now(),
            cancelled: false,
            over: None,
            running: false,
            finished: false,
        }));
        let answer = self.start(checks, slot, progress.clone());
        self.wait(answer, &progress, &names).await
    }

    /// A slot of `app`'s share and of the instance's, waited for within the request's budget.
    async fn take_slot(&self, app: &str) -> Option<Slot> {
        let share = self.share_of(app);
        let slots = self.slots.clone();
        let slot = async move {
            let share = share.acquire_owned().await.expect("a share semaphore is never closed");
            let slot = slots.acquire_owned().await.expect("the schema-check semaphore is never closed");
            (share, slot)
        };
        tokio::time::timeout(self.per_request, slot).await.ok()
    }

    /// Runs the checks on a blocking thread holding `slot`; the answer comes on the channel.
    fn start(&self, checks: Vec<Check>, slot: Slot, job_progress: Arc<Mutex<Progress>>) -> oneshot::Receiver<Outcome> {
        let (reply, answer) = oneshot::channel();
        let (flags, done) = (self.flags.clone(), self.done.clone());
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            // Dropped last: uncounts what was counted while no check ran
            // (the job had not started, or was between two checks).
            let _finished = Finished(&job_progress, &flags);
            let _ = reply.send(check_all(checks, &job_progress, &flags, &done));
        });
        answer
    }

    /// Waits for the job's answer, each check within its budget and all of
    /// them within the request's; over either, the event is refused at once.
    async fn wait(
        &self,
        mut answer: oneshot::Receiver<Outcome>,
        progress: &Mutex<Progress>,
        names: &[(usize, String)],
    ) -> Outcome {
        let started = Instant::now();
        loop {
            let (at, since) = {
                let p = progress.lock().expect("progress lock");
                (p.at, p.since)
            };
            let deadline = (since + self.per_event).min(started + self.per_request);
            match tokio::time::timeout_at(deadline.into(), &mut answer).await {
                Ok(Ok(result)) => return result,
                Ok(Err(_)) => {
                    tracing::error!(event_type = names[at].1, "a schema check ended without an answer (panicked)");
                    return Err((names[at].0, Refusal::Failed));
                }
                // Decided under the progress lock, awaited without it.
                Err(_) => match self.overtime(progress, names, (at, since), started) {
                    Overtime::NextCheck => continue,
                    Overtime::Over { index, name, whole_request } => {
                        return Err((index, self.went_over(name, whole_request)))
                    }
                    // The job ended just now: its answer was sent.
                    Overtime::Finished => {
                        return match (&mut answer).await {
                            Ok(result) => result,
                            Err(_) => Err((names[at].0, Refusal::Failed)),
                        }
                    }
                },
            }
        }
    }

    /// What a deadline passed for the check `at` (started `since`) means,
    /// decided under the progress lock.
    fn overtime(
        &self,
        progress: &Mutex<Progress>,
        names: &[(usize, String)],
        (at, since): (usize, Instant),
        started: Instant,
    ) -> Overtime {
        let mut p = progress.lock().expect("progress lock");
        if p.at != at && Instant::now() < started + self.per_request {
            return Overtime::NextCheck; // the next check started meanwhile: its own budget
        }
        if p.finished {
            return Overtime::Finished;
        }
        // Running, not started yet (a starved pool), or between two checks:
        // over budget either way. Counted under the lock the check's end (or
        // the job's) takes, so it is taken off again however the two interleave.
        p.cancelled = true;
        let (index, name) = names[p.at].clone();
        self.flags.lock().expect("flags lock").entry(name.clone()).or_default().running_over += 1;
        p.over = Some(name.clone());
        Overtime::Over { index, name, whole_request: since + self.per_event > started + self.per_request }
    }

    /// The semaphore of `app`'s share of the slots (idle ones forgotten now and then).
    fn share_of(&self, app: &str) -> Arc<Semaphore> {
        let mut shares = self.shares.lock().expect("shares lock");
        if shares.len() >= 10_000 {
            shares.retain(|_, s| Arc::strong_count(s) > 1);
        }
        shares.entry(app.to_string()).or_insert_with(|| Arc::new(Semaphore::new(self.share))).clone()
    }

    fn quarantined(&self, name: &str) -> bool {
        self.flags.lock().expect("flags lock").get(name).is_some_and(|f| f.running_over > 0)
    }

    fn refused_at_once(&self, name: &str) -> Refusal {
        let mut flags = self.flags.lock().expect("flags lock");
        flags.entry(name.to_string()).or_default().refused += 1;
        Refusal::TooCostly { event_type: name.to_string(), why: OverBudget::Quarantined }
    }

    /// The running check of `name` is over budget (already counted as
    /// running over: the job uncounts it when it ends): flagged, logged.
    fn went_over(&self, name: String, whole_request: bool) -> Refusal {
        let budget = if whole_request { self.per_request } else { self.per_event };
        self.flags.lock().expect("flags lock").entry(name.clone()).or_default().refused += 1;
        tracing::warn!(
            event_type = name,
            budget_ms = budget.as_millis() as u64,
            whole_request,
            "schema check went over its budget: event refused (schema_too_costly); further events of the type \
             are refused at once while the check still runs (see docs/operations.md)"
        );
        let why = if whole_request { OverBudget::Request(budget) } else { OverBudget::Event(budget) };
        Refusal::TooCostly { event_type: name, why }
    }

    /// `fenix_schema_checks_total`; `fenix_schema_too_costly_total` and
    /// `fenix_schema_checks_running_over`, per flagged type.
    pub fn render_metrics(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP fenix_schema_checks_total Events checked against their type's schema (started).\n\
             # TYPE fenix_schema_checks_total counter\nfenix_schema_checks_total {}",
            self.done.load(Ordering::Relaxed)
        );
        let flags = self.flags.lock().expect("flags lock");
        let mut rows: Vec<_> = flags.iter().map(|(name, f)| (name.as_str(), f.refused, f.running_over)).collect();
        rows.sort();
        let _ = writeln!(
            out,
            "# HELP fenix_schema_too_costly_total Events refused because checking them against their type's schema \
             went over the validation budget, per event type.\n# TYPE fenix_schema_too_costly_total counter"
        );
        for (name, refused, _) in &rows {
            let _ = writeln!(out, "fenix_schema_too_costly_total{{event_type=\"{}\"}} {refused}", label(name));
        }
        let _ = writeln!(
            out,
            "# HELP fenix_schema_checks_running_over Schema checks still running past their budget (each holds a \
             check slot), per event type.\n# TYPE fenix_schema_checks_running_over gauge"
        );
        for (name, _, running) in &rows {
            let _ = writeln!(out, "fenix_schema_checks_running_over{{event_type=\"{}\"}} {running}", label(name));
        }
    }
}

/// An event type as a label value (its characters need no escaping but `\` and `"` never hurt to).
fn label(name: &str) -> String {
    name.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Marks the blocking job ended and uncounts a check counted as running
/// over while none ran (see [`Progress::running`]).
struct Finished<'a>(&'a Mutex<Progress>, &'a Mutex<HashMap<String, Flag>>);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        let Ok(mut p) = self.0.lock() else { return };
        p.finished = true;
        if let Some(name) = p.over.take() {
            if let Some(f) = self.1.lock().expect("flags lock").get_mut(&name) {
                f.running_over = f.running_over.saturating_sub(1);
            }
        }
    }
}

/// The blocking side: each check in turn, stopping at the first refusal or
/// when the request gave up.
fn check_all(
    checks: Vec<Check>,
    progress: &Mutex<Progress>,
    flags: &Mutex<HashMap<String, Flag>>,
    done: &AtomicU64,
) -> Result<Vec<Check>, (usize, Refusal)> {
    /// Marks the check ended and uncounts it if it ran over, however it
    /// ends, under the progress lock (see [`Progress::running`]).
    struct Over<'a>(&'a Mutex<Progress>, &'a Mutex<HashMap<String, Flag>>);
    impl Drop for Over<'_> {
        fn drop(&mut self) {
            let Ok(mut p) = self.0.lock() else { return };
            p.running = false;
            if let Some(name) = p.over.take() {
                if let Some(f) = self.1.lock().expect("flags lock").get_mut(&name) {
                    f.running_over = f.running_over.saturating_sub(1);
                }
            }
        }
    }
    for (at, check) in checks.iter().enumerate() {
        {
            let mut p = progress.lock().expect("progress lock");
            if p.cancelled {
                break;
            }
            (p.at, p.since, p.running) = (at, Instant::now(), true);
        }
        // From here on the check counts as running, until this guard drops.
        let _over = Over(progress, flags);
        let name = check.compiled.name();
        if let Some(flag) = flags.lock().expect("flags lock").get_mut(name).filter(|f| f.running_over > 0) {
            flag.refused += 1;
            let refusal = Refusal::TooCostly { event_type: name.to_string(), why: OverBudget::Quarantined };
            return Err((check.index, refusal));
        }
        done.fetch_add(1, Ordering::Relaxed);
        check.compiled.check(&check.data, &check.base).map_err(|r| (check.index, r))?;
    }
    Ok(checks)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::catalogue::compile;

    fn typed(name: &str, schema: Value) -> Arc<CompiledType> {
        Arc::new(CompiledType {
            deprecated: false,
            name: name.into(),
            revision: 1,
            validator: Some(compile(&schema).unwrap()),
        })
    }

    /// Cheap per value, costly over many keys: every key is tried against
    /// every pattern. Far over the tests' budgets of tens of milliseconds, yet
    /// done in a second or two even in a debug build on a loaded machine
    /// (the tests wait for it to end).
    fn slow_type() -> Arc<CompiledType> {
        let patterns: serde_json::Map<String, Value> =
            (0..5000).map(|i| (format!("^p{i}_[a-z]+$"), json!({"type": "integer"}))).collect();
        typed("order.slow", json!({"type": "object", "patternProperties": patterns}))
    }

    fn many_keys() -> Box<RawValue> {
        let keys: serde_json::Map<String, Value> = (0..8_000).map(|i| (format!("key{i}"), json!(i))).collect();
        RawValue::from_string(Value::Object(keys).to_string()).unwrap()
    }

    fn check(index: usize, compiled: &Arc<CompiledType>, data: Box<RawValue>) -> Check {
        Check { index, compiled: compiled.clone(), data, base: format!("/events/{index}/data") }
    }

    fn small() -> Box<RawValue> {
        RawValue::from_string(r#"{"amount":1}"#.into()).unwrap()
    }

    fn running_over(checks: &Checks) -> String {
        let mut text = String::new();
        checks.render_metrics(&mut text);
        text
    }

    /// Runs the slow check for `app` until one is refused over its budget
    /// while it really runs (holding its slot): on a loaded machine the
    /// blocking pool may start the job only after its budget passed, and a
    /// job cancelled before it started gives its slot straight back.
    async fn hold_a_slot_with_the_slow_check(checks: &Checks, app: &str, slow: &Arc<CompiledType>) {
        for _ in 0..50 {
            let before = checks.done.load(Ordering::Relaxed);
            assert!(checks.run(app, vec![check(0, slow, many_keys())]).await.is_err());
            let deadline = Instant::now() + Duration::from_secs(10);
            while checks.done.load(Ordering::Relaxed) == before
                && running_over(checks).contains("running_over{event_type=\"order.slow\"} 1")
                && Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            if checks.done.load(Ordering::Relaxed) > before
                && running_over(checks).contains("running_over{event_type=\"order.slow\"} 1")
            {
                return;
            }
            until_no_check_runs_over(checks).await;
        }
        panic!("the slow check never started within its budget in 50 tries");
    }

    async fn until_no_check_runs_over(checks: &Checks) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while running_over(checks).contains("running_over{event_type=\"order.slow\"} 1") {
            assert!(Instant::now() < deadline, "the slow check never ended");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_over_its_budget_is_refused_while_it_still_runs_and_its_type_is_quarantined_meanwhile() {
        let checks = Checks::new(2, Duration::from_millis(50), Duration::from_secs(10));
        let (slow, fast) = (slow_type(), typed("order.fast", json!({"type": "object"})));
        let (i, refused) = checks.run("app_1", vec![check(0, &slow, many_keys())]).await.err().unwrap();
        assert!(matches!((i, &refused), (0, Refusal::TooCostly { .. })), "{refused:?}");
        assert_eq!(refused.status(), 422);
        assert!(refused.message().contains("`order.slow`") && refused.message().contains("50 ms"), "{refused:?}");
        // Answered before the check ended: it still holds its slot, and its type is refused at once.
        let metrics = running_over(&checks);
        assert!(metrics.contains("fenix_schema_checks_running_over{event_type=\"order.slow\"} 1"), "{metrics}");
        let (_, meanwhile) = checks.run("app_1", vec![check(0, &slow, small())]).await.err().unwrap();
        assert!(matches!(meanwhile, Refusal::TooCostly { why: OverBudget::Quarantined, .. }), "{meanwhile:?}");
        // Other types are checked as usual.
        assert!(checks.run("app_1", vec![check(0, &fast, small())]).await.is_ok());
        // Once the slow check ended, its type's small events pass again; the count stays.
        until_no_check_runs_over(&checks).await;
        assert!(checks.run("app_1", vec![check(0, &slow, small())]).await.is_ok());
        assert!(running_over(&checks).contains("fenix_schema_too_costly_total{event_type=\"order.slow\"} 2"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_ending_just_as_its_budget_runs_out_never_leaves_its_type_quarantined() {
        // Checks about as long as their budget: the budget's end and the
        // check's end race each other, hundreds of times.
        let checks = Checks::new(4, Duration::from_micros(200), Duration::from_secs(10));
        let patterns: serde_json::Map<String, Value> =
            (0..200).map(|i| (format!("^p{i}_[a-z]+$"), json!({"type": "integer"}))).collect();
        let racy = typed("order.racy", json!({"type": "object", "patternProperties": patterns}));
        let keys: serde_json::Map<String, Value> = (0..100).map(|i| (format!("key{i}"), json!(i))).collect();
        let data = Value::Object(keys).to_string();
        for _ in 0..300 {
            let _ = checks.run("app_1", vec![check(0, &racy, RawValue::from_string(data.clone()).unwrap())]).await;
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while running_over(&checks).contains("running_over{event_type=\"order.racy\"} 1")
            || checks.flags.lock().unwrap().values().any(|f| f.running_over > 0)
        {
            assert!(
                Instant::now() < deadline,
                "a check's running-over count was never taken off: {}",
                running_over(&checks)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_stops_checking_once_its_request_budget_is_spent() {
        // Each event alone is within its budget, together they are not.
        let checks = Checks::new(2, Duration::from_secs(30), Duration::from_millis(5));
        let slow = slow_type();
        let batch: Vec<Check> = (0..40).map(|i| check(i, &slow, many_keys())).collect();
        let (i, refused) = checks.run("app_1", batch).await.err().unwrap();
        assert!(matches!(refused, Refusal::TooCostly { why: OverBudget::Request(_), .. }), "{refused:?}");
        assert!(refused.message().contains("FENIX_SCHEMA_REQUEST_BUDGET"), "{}", refused.message());
        assert!(i < 40, "{i}");
        until_no_check_runs_over(&checks).await;
        // The rest of the batch was never checked.
        let started = checks.done.load(Ordering::Relaxed);
        assert!(started <= i as u64 + 1, "{started} checks started, the refused one was events[{i}]");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_app_holds_at_most_half_the_slots_so_another_app_always_finds_one() {
        let checks = Checks::new(2, Duration::from_millis(50), Duration::from_millis(100));
        let (slow, other_slow, fast) =
            (slow_type(), typed("order.slow2", json!({"type": "object"})), typed("order.fast", json!({})));
        hold_a_slot_with_the_slow_check(&checks, "app_1", &slow).await;
        // app_1's share (one slot) is held: its next check, of another type, waits and is told to retry ...
        let (_, busy) = checks.run("app_1", vec![check(0, &other_slow, small())]).await.err().unwrap();
        assert!(matches!(busy, Refusal::Busy), "{busy:?}");
        // ... while another app's check takes the other slot.
        assert!(checks.run("app_2", vec![check(0, &fast, small())]).await.is_ok());
        until_no_check_runs_over(&checks).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn checks_wait_for_one_of_few_slots_and_a_request_that_gets_none_is_told_to_retry() {
        let checks = Checks::new(1, Duration::from_millis(50), Duration::from_millis(100));
        let (slow, fast) = (slow_type(), typed("order.fast", json!({"type": "object"})));
        hold_a_slot_with_the_slow_check(&checks, "app_1", &slow).await;
        // The one slot is still held by the slow check: another type's check waits, then is told to retry.
        let (_, busy) = checks.run("app_1", vec![check(0, &fast, small())]).await.err().unwrap();
        assert!(matches!(busy, Refusal::Busy), "{busy:?}");
        assert_eq!(busy.status(), 503);
        until_no_check_runs_over(&checks).await;
        // Its slot is given back just after the check ended.
        let deadline = Instant::now() + Duration::from_secs(30);
        while checks.run("app_1", vec![check(0, &fast, small())]).await.is_err() {
            assert!(Instant::now() < deadline, "the slot never came back");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A mismatch is answered as before, with its index.
        let integer = typed("order.paid", json!({"properties": {"amount": {"type": "string"}}}));
        let (i, mismatch) =
            checks.run("app_1", vec![check(0, &fast, small()), check(3, &integer, small())]).await.err().unwrap();
        assert!(matches!((i, &mismatch), (3, Refusal::Mismatch { .. })), "{mismatch:?}");
        assert_eq!(mismatch.details()[0].path, "/events/3/data/amount");
    }
}
