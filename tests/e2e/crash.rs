//! Nothing accepted is lost: the process killed with SIGKILL in the middle of a
//! burst, then restarted, still delivers every event it acknowledged.

use std::{
    collections::{BTreeSet, HashMap},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use serde_json::json;

use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

const EVENTS: usize = 300;
const SENDERS: usize = 4;

/// Sends events `first, first + SENDERS, …` to whichever process `base` names,
/// retrying on connection errors with the same body `id` (so a request whose
/// answer was lost in the crash is answered again, not duplicated). Returns the
/// acknowledged event id per index, and counts acknowledgements in `acked_so_far`.
async fn send_share(
    first: usize,
    base: Arc<Mutex<String>>,
    acked_so_far: Arc<AtomicUsize>,
    token: String,
    app: String,
) -> Vec<(usize, String, bool)> {
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().expect("client");
    let mut acked = Vec::new();
    for i in (first..EVENTS).step_by(SENDERS) {
        let body = json!({"type": "booking.confirmed", "data": {"i": i}, "id": format!("burst-{i}")});
        loop {
            let url = format!("{}/v1/apps/{app}/events", base.lock().unwrap());
            match http.post(&url).bearer_auth(&token).json(&body).send().await {
                Ok(resp) if resp.status() == 202 || resp.status() == 200 => {
                    let replayed = resp.status() == 200;
                    let answer: serde_json::Value = resp.json().await.expect("event JSON");
                    acked.push((i, answer["id"].as_str().expect("event id").to_string(), replayed));
                    acked_so_far.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                Ok(resp) => panic!("ingestion answered {}: {}", resp.status(), resp.text().await.unwrap_or_default()),
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
    acked
}

async fn a_process_killed_mid_burst_delivers_every_accepted_event_after_restart(backend: Backend) {
    let db = TestDb::new(backend).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(20))).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;

    let base = Arc::new(Mutex::new(fenix.base.clone()));
    let acked = Arc::new(AtomicUsize::new(0));
    let senders: Vec<_> = (0..SENDERS)
        .map(|k| tokio::spawn(send_share(k, base.clone(), acked.clone(), fenix.token.clone(), app.clone())))
        .collect();

    eventually("a third of the burst arrived", Duration::from_secs(20), || async { receiver.count() >= EVENTS / 3 })
        .await;
    fenix.kill9();
    let (arrived_at_kill, acked_at_kill) = (receiver.count(), acked.load(Ordering::SeqCst));
    fenix.restart().await;
    *base.lock().unwrap() = fenix.base.clone();

    let mut accepted: HashMap<usize, String> = HashMap::new();
    let mut replayed = 0;
    for s in senders {
        for (i, id, was_replay) in s.await.expect("sender") {
            assert!(accepted.insert(i, id).is_none(), "event {i} acknowledged twice");
            replayed += usize::from(was_replay);
        }
    }
    assert_eq!(accepted.len(), EVENTS, "every event is acknowledged, before or after the restart");
    let accepted_ids: BTreeSet<String> = accepted.values().cloned().collect();
    assert_eq!(accepted_ids.len(), EVENTS, "a resent event keeps its original id");

    eventually("every accepted event arrived", Duration::from_secs(30), || async {
        let got: BTreeSet<String> =
            receiver.received().iter().map(|r| r.header("x-fenix-event-id").to_string()).collect();
        accepted_ids.is_subset(&got)
    })
    .await;
    eventually("every delivery succeeded", Duration::from_secs(30), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == EVENTS
    })
    .await;
    assert_eq!(fenix.deliveries(&app, "").await.len(), EVENTS, "one delivery per event, none extra");

    let requests = receiver.received();
    let delivered: BTreeSet<&str> = requests.iter().map(|r| r.header("x-fenix-event-id")).collect();
    println!(
        "crash test ({backend:?}): accepted {} ({acked_at_kill} before the kill, {replayed} answered as replays \
         of a resent request), requests at kill {arrived_at_kill}, delivered {} distinct, duplicates {}",
        accepted_ids.len(),
        delivered.len(),
        requests.len() - delivered.len()
    );
    assert_eq!(delivered.len(), EVENTS, "only accepted events arrive");
}

crate::on_both_backends!(a_process_killed_mid_burst_delivers_every_accepted_event_after_restart);
