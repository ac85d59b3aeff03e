//! The worker's parts against a real SQLite database in a temporary
//! directory, without a server: the recorder and the lease book around a lost
//! lease, and the drain at shutdown. No request leaves the process: the
//! endpoints' plain-http URLs are refused by the destination policy before
//! any connection or DNS look-up.

use std::{collections::HashSet, sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use futures::FutureExt;

use super::{
    lease_book::LeaseBook,
    reactions::{after_recorded, Notes},
    recorder::Recorder,
    run::{Rounds, Step, IDLE_POLL},
    ErrorClass, Tick, Worker,
};
use crate::{
    lifecycle::{DeliveryStatus, EndpointState},
    metrics::{Metrics, QueueFigures},
    settings::Settings,
    state::SharedState,
    store::{
        apps::AppRow,
        deliveries::{AttemptRecord, ClaimedDelivery, DeliveryFilter, DeliveryRow, Outcome},
        endpoints::{EndpointRow, NewEndpoint},
    },
    time,
};

/// A fresh database with one app and one active endpoint.
struct Setup {
    state: SharedState,
    app: crate::ids::AppId,
    _dir: tempfile::TempDir,
}

async fn setup(tweak: impl FnOnce(&mut Settings)) -> Setup {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut settings =
        Settings { database_url: format!("sqlite://{}/fenix.db", dir.path().display()), ..Settings::default() };
    tweak(&mut settings);
    let state = crate::build_state(settings).await.expect("state");
    let now = time::now_ms();
    let app = crate::ids::AppId::new();
    let row = AppRow { id: app.clone(), uid: None, name: "acme".into(), created_at: now, updated_at: now };
    state.store.insert_app(&row).await.expect("insert app");
    let endpoint = EndpointRow {
        id: crate::ids::EndpointId::new(),
        app_id: app.clone(),
        url: "http://hooks.example.com/refused".into(),
        description: String::new(),
        state: EndpointState::Active,
        state_reason: None,
        state_changed_at: None,
        created_at: now,
        updated_at: now,
        spec: Default::default(),
    };
    let sealed_secret = state.keyring.current.seal(b"whsec-test", endpoint.id.as_str());
    state
        .store
        .insert_endpoint(&NewEndpoint { row: endpoint, sealed_secret, public_key: None })
        .await
        .expect("insert endpoint");
    Setup { state, app, _dir: dir }
}

impl Setup {
    /// Accepts `n` events, each making one delivery due now.
    async fn events(&self, n: usize) {
        for _ in 0..n {
            let data = serde_json::value::RawValue::from_string("{}".into()).expect("JSON");
            let event_type = crate::event_types::EventType::parse("booking.confirmed").expect("event type");
            let event = crate::ingest::new_event(self.app.clone(), &event_type, &data, None, 100);
            self.state.ingestor.ingest(event).await.expect("ingest");
        }
    }

    /// Every delivery of the app, as the API shows them (`in_flight` while leased).
    async fn deliveries(&self) -> Vec<DeliveryRow> {
        let filter = DeliveryFilter { limit: 1000, ..DeliveryFilter::default() };
        self.state.store.list_deliveries(&self.app, &filter).await.expect("list deliveries")
    }

    async fn claim(&self, owner: &str, now: i64, lease_until: i64) -> Vec<ClaimedDelivery> {
        self.state.store.claim_due(owner, now, lease_until, 100).await.expect("claim")
    }
}

/// The outcome of a first attempt on `c` answered `http_status`, leaving it `status`.
fn outcome(c: &ClaimedDelivery, status: DeliveryStatus, http_status: u16, at: i64) -> Outcome {
    let ok = (200..300).contains(&http_status);
    let attempt = AttemptRecord {
        id: crate::ids::AttemptId::new(),
        delivery_id: c.id.clone(),
        endpoint_id: c.endpoint_id.clone(),
        attempt_number: 1,
        started_at: at,
        duration_ms: 5,
        response_status: Some(i64::from(http_status)),
        response_excerpt: None,
        error: (!ok).then(|| ErrorClass::HttpStatus.as_str().to_owned()),
        error_detail: None,
        signed_with: "[1]".into(),
    };
    c.outcome(status, Some(attempt), (status == DeliveryStatus::Pending).then_some(at))
}

fn succeeded(c: &ClaimedDelivery, at: i64) -> Outcome {
    outcome(c, DeliveryStatus::Succeeded, 204, at)
}

/// What the attempt of [`outcome`] showed.
fn failed_attempt() -> Notes {
    Notes { error: Some(ErrorClass::HttpStatus), ..Notes::default() }
}

#[tokio::test]
async fn an_outcome_under_a_lost_lease_changes_nothing_and_leaves_the_book() {
    let s = setup(|_| {}).await;
    s.events(1).await;
    let t = time::now_ms();
    let slow = s.claim("slow", t, t + 1_000).await;
    assert_eq!(slow.len(), 1);
    // The slow instance's lease ran out; another instance took the delivery over.
    let fast = s.claim("fast", t + 1_000, t + 60_000).await;
    assert_eq!(fast.len(), 1);

    let book = Arc::new(LeaseBook::new());
    book.hold(&slow);
    let recorder = Recorder::new(s.state.store.clone(), book.clone());
    let metrics = Metrics::default();
    let late = [succeeded(&slow[0], t + 500)];
    let applied = recorder.write(&late, &metrics).await;
    assert!(applied.is_empty(), "an outcome under a lost lease is not applied: {applied:?}");
    book.settled(&late);
    assert!(book.is_empty(), "the lost lease leaves the book");
    let rows = s.deliveries().await;
    assert_eq!(
        (rows[0].status, rows[0].attempt_count),
        (DeliveryStatus::InFlight, 0),
        "the delivery is still the other instance's"
    );

    let applied = recorder.write(&[succeeded(&fast[0], t + 1_500)], &metrics).await;
    assert!(applied.contains(&fast[0].id), "the current lease's outcome is applied");
    let rows = s.deliveries().await;
    assert_eq!((rows[0].status, rows[0].attempt_count), (DeliveryStatus::Succeeded, 1));
}

#[tokio::test]
async fn a_drain_before_any_attempt_started_leaves_nothing_leased() {
    // One slot per endpoint: of three claimed deliveries one is handed to a
    // task, two wait in the gate's queue. The test holds every global slot,
    // so the task cannot start its attempt before the drain begins.
    let s = setup(|settings| {
        settings.endpoint_concurrency = 1;
        settings.worker_concurrency = 4;
    })
    .await;
    s.events(3).await;
    let (worker, rx) = Worker::new(s.state.clone(), reqwest::Client::new());
    // Two other apps (one alone would be kept off the last slot, the reserve).
    let mut every_slot = Vec::new();
    for holder in ["app_holder_1", "app_holder_1", "app_holder_1", "app_holder_2"] {
        every_slot.push(worker.global.acquire(&Arc::from(holder)).await);
    }
    let tick = worker.claim_batch(time::now_ms(), 10).await.expect("claim");
    assert_eq!(tick, Tick::Claimed(3));
    assert_eq!(worker.leases.held().len(), 3);
    assert!(s.deliveries().await.iter().all(|d| d.status == DeliveryStatus::InFlight));

    let shutdown = CancellationToken::new();
    shutdown.cancel();
    // No await between giving the slots back and the drain's start: the task
    // finds the worker stopping.
    drop(every_slot);
    worker.clone().run(rx, shutdown).await;

    assert!(worker.leases.is_empty());
    let rows = s.deliveries().await;
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|d| d.status != DeliveryStatus::InFlight), "nothing leased after the drain: {rows:?}");
    assert!(rows.iter().all(|d| d.attempt_count == 0), "no attempt started once draining: {rows:?}");
    let again = s.claim("next", time::now_ms(), time::now_ms() + 30_000).await;
    assert_eq!(again.len(), 3, "every delivery is due again at once, not when its lease expires");
}

#[tokio::test]
async fn a_drain_while_attempts_run_records_them_and_leaves_nothing_leased() {
    // Retries due at once: the deliveries keep being claimed and attempted
    // until the worker is stopped.
    let s = setup(|settings| {
        settings.retry_schedule = vec![Duration::ZERO; 1_000];
        settings.endpoint_concurrency = 2;
    })
    .await;
    s.events(5).await;
    let (worker, rx) = Worker::new(s.state.clone(), reqwest::Client::new());
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.clone().run(rx, shutdown.clone()));
    // Until every delivery has been attempted (and that attempt recorded).
    loop {
        let rows = s.deliveries().await;
        if rows.iter().all(|d| d.attempt_count >= 1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shutdown.cancel();
    running.await.expect("the worker stops");

    assert!(worker.leases.is_empty());
    let rows = s.deliveries().await;
    assert!(rows.iter().all(|d| d.status == DeliveryStatus::Pending), "nothing leased after the drain: {rows:?}");
    for d in &rows {
        let attempts = s.state.store.list_attempts(&d.id).await.expect("attempts");
        assert_eq!(attempts.len() as i64, d.attempt_count, "every attempt made is recorded: {d:?}");
        assert!(attempts.iter().all(|a| a.error.as_deref() == Some("destination_blocked")), "{attempts:?}");
    }
}

#[tokio::test]
async fn reactions_count_every_attempt_but_a_new_status_only_where_the_row_changed() {
    let s = setup(|_| {}).await;
    s.events(4).await;
    let t = time::now_ms();
    let c = s.claim("w", t, t + 60_000).await;
    assert_eq!(c.len(), 4);
    // Two dead letters and two retries; one of each lost its lease.
    let outcomes = [
        outcome(&c[0], DeliveryStatus::Failed, 500, t),
        outcome(&c[1], DeliveryStatus::Failed, 500, t),
        outcome(&c[2], DeliveryStatus::Pending, 500, t),
        outcome(&c[3], DeliveryStatus::Pending, 500, t),
    ];
    let notes = [failed_attempt(); 4];
    let _ = s.state.wake.notified().now_or_never();

    let written_later: HashSet<crate::ids::DeliveryId> = [c[0].id.clone(), c[1].id.clone(), c[2].id.clone()].into();
    after_recorded(&s.state, &outcomes[1..], &notes[1..], &[c[1].id.clone()].into()).await;
    let metrics = s.state.metrics.render(&QueueFigures::default());
    assert!(metrics.contains(r#"fenix_attempts_total{outcome="failure",error="http_status"} 3"#), "{metrics}");
    let failed = format!(r#"fenix_app_deliveries_total{{app_id="{}",status="{}"}} 1"#, s.app, DeliveryStatus::Failed);
    assert!(metrics.contains(&failed), "one dead letter applied: {metrics}");
    assert!(s.state.wake.notified().now_or_never().is_none(), "a retry that was not written wakes nobody");

    after_recorded(&s.state, &outcomes[..1], &notes[..1], &written_later).await;
    after_recorded(&s.state, &outcomes[2..3], &notes[2..3], &written_later).await;
    assert!(s.state.wake.notified().now_or_never().is_some(), "a retry just written wakes the worker");
    let metrics = s.state.metrics.render(&QueueFigures::default());
    assert!(metrics.contains(r#"fenix_attempts_total{outcome="failure",error="http_status"} 5"#), "{metrics}");
    let failed = format!(r#"fenix_app_deliveries_total{{app_id="{}",status="{}"}} 2"#, s.app, DeliveryStatus::Failed);
    assert!(metrics.contains(&failed), "{metrics}");
}

#[tokio::test]
async fn a_410_recorded_disables_its_endpoint() {
    let s = setup(|_| {}).await;
    s.events(1).await;
    let t = time::now_ms();
    let c = s.claim("w", t, t + 60_000).await.remove(0);
    let gone = [outcome(&c, DeliveryStatus::Failed, 410, t)];
    let notes = [Notes { gone: true, ..failed_attempt() }];
    let recorder = Recorder::new(s.state.store.clone(), Arc::new(LeaseBook::new()));
    let applied = recorder.write(&gone, &s.state.metrics).await;
    assert!(applied.contains(&c.id));
    assert_eq!(s.state.store.get_endpoint(&s.app, &c.endpoint_id).await.unwrap().unwrap().state, EndpointState::Active);

    after_recorded(&s.state, &gone, &notes, &applied).await;
    let endpoint = s.state.store.get_endpoint(&s.app, &c.endpoint_id).await.expect("read").expect("endpoint");
    assert_eq!(endpoint.state, EndpointState::Disabled);
    assert!(endpoint.state_reason.unwrap_or_default().contains("410 Gone"));
    assert_eq!(s.deliveries().await[0].status, DeliveryStatus::Failed);
}

#[tokio::test]
async fn fresh_deliveries_of_an_idle_worker_are_leased_at_insert_and_come_due_when_the_lease_runs_out() {
    let s = setup(|_| {}).await;
    let fresh = s.state.wake.fresh();
    let mut handed = fresh.take("idle-worker", Duration::from_secs(30));
    // Closed until the worker says it has nothing due: ingestion leaves the delivery to claims.
    s.events(1).await;
    assert!(handed.try_recv().is_err(), "nothing is handed over while the worker has no room");
    let t = time::now_ms();
    assert_eq!(s.claim("w", t, t + 600_000).await.len(), 1, "the first event's delivery is due for a claim");

    fresh.open(10);
    s.events(1).await;
    let got = handed.try_recv().expect("handed over by the time the event is answered");
    assert_eq!((got.len(), got[0].attempt_count, got[0].lane_seq), (1, 0, None));
    let rows = s.deliveries().await;
    let row = rows.iter().find(|d| d.id == got[0].id).expect("stored");
    assert_eq!(row.status, DeliveryStatus::InFlight, "leased as it was inserted: {row:?}");
    let t = time::now_ms();
    assert!(s.claim("other", t, t + 60_000).await.is_empty(), "no other worker takes a leased delivery");
    // The worker died before sending it: the delivery comes due when its lease runs out.
    let later = t + 31_000;
    let again = s.claim("other", later, later + 60_000).await;
    assert_eq!(again.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), [got[0].id.as_str()]);
    assert!(again[0].lease_token > got[0].lease_token, "the old lease's outcome would not apply");
}

#[tokio::test]
async fn fresh_deliveries_no_worker_takes_any_more_are_given_back_at_once() {
    let s = setup(|_| {}).await;
    let fresh = s.state.wake.fresh();
    // The worker opened its room, then went away before the hand-over.
    let handed = fresh.take("gone-worker", Duration::from_secs(30));
    fresh.open(10);
    drop(handed);
    s.events(2).await;
    let rows = s.deliveries().await;
    assert!(rows.iter().all(|d| d.status == DeliveryStatus::Pending), "no lease is kept: {rows:?}");
    let t = time::now_ms();
    assert_eq!(s.claim("next", t, t + 60_000).await.len(), 2, "due at once, not when a lease would run out");
}

#[tokio::test]
async fn a_running_worker_sends_what_is_ingested_while_it_idles_and_leaves_nothing_leased() {
    let s = setup(|_| {}).await;
    let (worker, rx) = Worker::new(s.state.clone(), reqwest::Client::new());
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(worker.clone().run(rx, shutdown.clone()));
    for _ in 0..20 {
        s.events(3).await;
        tokio::task::yield_now().await;
    }
    // Until every delivery has its (refused) attempt recorded.
    loop {
        let rows = s.deliveries().await;
        if rows.len() == 60 && rows.iter().all(|d| d.attempt_count == 1 && d.status != DeliveryStatus::InFlight) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    shutdown.cancel();
    running.await.expect("the worker stops");
    assert!(worker.leases.is_empty());
    for d in s.deliveries().await {
        let attempts = s.state.store.list_attempts(&d.id).await.expect("attempts");
        assert_eq!(attempts.len(), 1, "one attempt each, none sent twice: {d:?}");
    }
}

#[tokio::test]
async fn a_step_claims_what_is_due_and_hands_it_to_tasks_and_the_next_finds_the_queue_empty() {
    let s = setup(|settings| settings.claim_batch = 10).await;
    s.events(3).await;
    let (worker, mut rx) = Worker::new(s.state.clone(), reqwest::Client::new());
    let mut rounds = Rounds::new();

    assert_eq!(worker.step(&mut rounds).await, Step::Claimed(3));
    assert_eq!(Step::Claimed(3).pause(), None, "the next round comes at once");
    assert_eq!(worker.leases.held().len(), 3);
    // Each claimed delivery went to a task, which made its attempt: refused
    // by the destination policy before any connection.
    for _ in 0..3 {
        let reported = rx.recv().await.expect("an attempt reported");
        assert_eq!(reported.notes.error, Some(ErrorClass::DestinationBlocked));
        let record = reported.outcome.attempt.expect("an attempt record");
        assert_eq!(record.error.as_deref(), Some("destination_blocked"), "stored as today's text");
    }

    // Their outcomes are not recorded (no recorder runs): nothing else is due.
    let step = worker.step(&mut rounds).await;
    let Step::EmptyQueue(wait) = step else { panic!("{step:?}") };
    assert!(wait <= IDLE_POLL, "{wait:?}");
    let pause = step.pause().expect("an idle pause");
    assert!(pause.on_work && !pause.on_progress, "new work ends it: {pause:?}");
    assert!(rx.try_recv().is_err(), "nothing more was dispatched");
}

#[tokio::test]
async fn steps_with_full_hands_leave_their_app_out_and_then_wait_before_a_fair_claim_again() {
    // Two attempt slots and one delivery a claim: three in hand at most.
    let s = setup(|settings| {
        settings.worker_concurrency = 2;
        settings.claim_batch = 1;
    })
    .await;
    s.events(5).await;
    let (worker, mut rx) = Worker::new(s.state.clone(), reqwest::Client::new());
    // The test holds every global slot: no claimed job is attempted yet.
    let mut every_slot = Vec::new();
    for holder in ["app_holder_1", "app_holder_2"] {
        every_slot.push(worker.global.acquire(&Arc::from(holder)).await);
    }
    let mut rounds = Rounds::new();
    for n in 1..=3 {
        assert_eq!(worker.step(&mut rounds).await, Step::Claimed(1), "claim {n}");
    }
    assert_eq!(worker.leases.held().len(), 3);
    // The one app holds more than its share: left out, the fair claim finds
    // nothing in the apps it visits, and the next waits a little first.
    assert_eq!(worker.step(&mut rounds).await, Step::VisitedEmpty);
    let step = worker.step(&mut rounds).await;
    assert!(matches!(step, Step::FairTooSoon(left) if left <= Duration::from_millis(50)), "{step:?}");
    assert_eq!(worker.leases.held().len(), 3, "nothing more claimed");
    assert!(rx.try_recv().is_err(), "no attempt while every slot is held");

    drop(every_slot);
    for _ in 0..3 {
        let reported = rx.recv().await.expect("an attempt reported");
        assert_eq!(reported.notes.error, Some(ErrorClass::DestinationBlocked));
    }
}
