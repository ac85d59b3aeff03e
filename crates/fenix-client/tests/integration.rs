//! The SDK against a running Fenix (`FENIX_URL`, `FENIX_TOKEN`: an admin
//! token), as `crates/fenix-client/test.sh` runs it: an app and an endpoint
//! pointing at a receiver on 127.0.0.1 that verifies every request with the
//! SDK's own `Webhook`; an event and a batch delivered; 250 deliveries paged
//! through; a failed delivery replayed; a refused call's code read. A failure
//! names the SDK and the call. The server must allow loopback delivery
//! (`FENIX_UNSAFE_ALLOW_HTTP`, `FENIX_UNSAFE_ALLOW_CIDRS`).

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::{body::Bytes, extract::State, http::HeaderMap, http::StatusCode, routing::post, Router};
use fenix_client::types::{CreateEndpoint, DeliveryStatus, NewEvent};
use fenix_client::{DeliveryFilter, Error, Fenix, Webhook};
use futures::TryStreamExt as _;
use serde_json::json;

/// What the receiver saw.
#[derive(Default)]
struct Inbox {
    /// Set once the endpoint exists (its secret is known only then).
    webhook: OnceLock<Webhook>,
    /// While set, events of type `sdk.flaky` are answered `500`.
    failing: AtomicBool,
    /// Verified event ids, by event type.
    verified: Mutex<HashMap<String, HashSet<String>>>,
    /// Requests whose signature did not verify.
    rejected: AtomicUsize,
}

impl Inbox {
    fn count(&self, event_type: &str) -> usize {
        self.verified.lock().unwrap().get(event_type).map_or(0, HashSet::len)
    }
}

async fn receive(State(inbox): State<Arc<Inbox>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let Some(webhook) = inbox.webhook.get() else { return StatusCode::SERVICE_UNAVAILABLE };
    let event = match webhook.verify(&body, &headers) {
        Ok(event) => event,
        Err(error) => {
            eprintln!("fenix-client: receiver refused a request: {error}");
            inbox.rejected.fetch_add(1, Ordering::SeqCst);
            return StatusCode::UNAUTHORIZED;
        }
    };
    if event.type_ == "sdk.flaky" && inbox.failing.load(Ordering::SeqCst) {
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    inbox.verified.lock().unwrap().entry(event.type_).or_default().insert(event.id);
    StatusCode::OK
}

/// The receiver's URL.
async fn start_receiver(inbox: Arc<Inbox>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = Router::new().route("/webhooks", post(receive)).with_state(inbox);
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{address}/webhooks")
}

/// Awaits one SDK call; a failure names the SDK and the call.
async fn call<T>(name: &str, future: impl Future<Output = Result<T, Error>>) -> T {
    future.await.unwrap_or_else(|error| panic!("fenix-client: {name} failed: {error}"))
}

/// Polls `check` until it holds (the server delivers in the background).
async fn eventually<F: Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(Instant::now() < deadline, "fenix-client: timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The server to test, or `None` (with a note) when none was given outside CI.
fn server() -> Option<(String, String)> {
    match (std::env::var("FENIX_URL"), std::env::var("FENIX_TOKEN")) {
        (Ok(url), Ok(token)) => Some((url, token)),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!("fenix-client: FENIX_URL and FENIX_TOKEN must be set in CI (scripts/sdk_tests.sh sets them)")
        }
        _ => {
            eprintln!("note: FENIX_URL/FENIX_TOKEN not set; skipping the fenix-client integration test (run test.sh)");
            None
        }
    }
}

fn new_event(event_type: &str, n: usize) -> NewEvent {
    let data = json!({ "n": n }).as_object().unwrap().clone();
    NewEvent {
        type_: event_type.to_owned(),
        data,
        id: Some(format!("{event_type}-{n}")),
        ordering_key: None,
        channels: Vec::new(),
        tags: Vec::new(),
        deliver_at: None,
        delay: None,
    }
}

#[tokio::test]
async fn the_sdk_drives_a_real_fenix_from_app_to_replay() {
    let Some((url, token)) = server() else { return };
    let fenix = Fenix::new(&url, &token).expect("a client");
    let inbox = Arc::new(Inbox::default());
    let receiver = start_receiver(inbox.clone()).await;

    let unique = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let app = call("apps.create", fenix.apps().create("SDK test (Rust)", Some(&format!("sdk-rust-{unique}")))).await;
    assert_eq!(call("apps.get", fenix.apps().get(&app.id)).await.id, app.id);
    // One retry 200 ms after a failure, so the flaky event fails fast.
    let options = CreateEndpoint::builder().url(receiver).retry_schedule(Some(vec!["200ms".to_owned()]));
    let endpoint = call("endpoints.create", fenix.endpoints().create_with(&app.id, &options.try_into().unwrap())).await;
    let secret = endpoint.secret.clone().expect("the create answer shows the secret");
    inbox.webhook.set(Webhook::new(&secret).expect("a whsec_ secret")).unwrap();

    sends_an_event_and_a_batch(&fenix, &app.id, &inbox).await;
    pages_through_250_deliveries(&fenix, &app.id, &inbox).await;
    replays_a_failed_delivery(&fenix, &app.id, &inbox).await;
    cancels_and_erases_a_scheduled_event(&fenix, &app.id, &inbox).await;
    reads_a_refused_calls_code(&fenix).await;
    assert_eq!(inbox.rejected.load(Ordering::SeqCst), 0, "fenix-client: Webhook refused a genuine delivery");
    call("apps.delete", fenix.apps().delete(&app.id)).await;
}

async fn sends_an_event_and_a_batch(fenix: &Fenix, app: &str, inbox: &Inbox) {
    let event =
        call("events.send", fenix.events().send(app, "sdk.ping", json!({"hello": "world"}), Some("ping-1"))).await;
    assert_eq!(event.deliveries, 1);
    let batch = (0..3).map(|n| new_event("sdk.batch", n)).collect();
    let result = call("events.send_batch", fenix.events().send_batch(app, batch)).await;
    assert_eq!(result.data.len(), 3);
    eventually("the event and the batch are verified at the receiver", || async {
        inbox.count("sdk.ping") == 1 && inbox.count("sdk.batch") == 3
    })
    .await;
    let filter = DeliveryFilter { event_id: Some(event.id.to_string()), ..DeliveryFilter::default() };
    eventually("the event's delivery is succeeded", || async {
        let page = call("deliveries.list", fenix.deliveries().list(app, &filter)).await;
        page.data.first().is_some_and(|delivery| delivery.status == DeliveryStatus::Succeeded)
    })
    .await;
}

async fn pages_through_250_deliveries(fenix: &Fenix, app: &str, inbox: &Inbox) {
    let events = (0..250).map(|n| new_event("sdk.bulk", n)).collect();
    call("events.send_batch", fenix.events().send_batch(app, events)).await;
    let filter = DeliveryFilter { event_type: Some("sdk.bulk".into()), limit: Some(100), ..DeliveryFilter::default() };
    let first = call("deliveries.list", fenix.deliveries().list(app, &filter)).await;
    assert_eq!(first.data.len(), 100);
    assert!(first.next_cursor.is_some(), "fenix-client: deliveries.list: a first page of 250 has a next_cursor");
    let all: Vec<_> = call("deliveries.list_all", fenix.deliveries().list_all(app, &filter).try_collect()).await;
    let ids: HashSet<&str> = all.iter().map(|delivery| delivery.id.as_str()).collect();
    assert_eq!((all.len(), ids.len()), (250, 250), "fenix-client: deliveries.list_all");
    eventually("all 250 are verified at the receiver", || async { inbox.count("sdk.bulk") == 250 }).await;
}

async fn replays_a_failed_delivery(fenix: &Fenix, app: &str, inbox: &Inbox) {
    inbox.failing.store(true, Ordering::SeqCst);
    let event = call("events.send", fenix.events().send(app, "sdk.flaky", json!({"try": 1}), None)).await;
    let filter = DeliveryFilter { event_id: Some(event.id.to_string()), ..DeliveryFilter::default() };
    let failed_delivery = || async {
        let page = call("deliveries.list", fenix.deliveries().list(app, &filter)).await;
        page.data.into_iter().find(|delivery| delivery.status == DeliveryStatus::Failed)
    };
    eventually("the flaky delivery has failed", || async { failed_delivery().await.is_some() }).await;
    let failed = failed_delivery().await.unwrap();
    let attempts = call("deliveries.attempts", fenix.deliveries().attempts(app, &failed.id)).await;
    assert_eq!(attempts.data.len(), 2, "fenix-client: deliveries.attempts: one attempt and one retry");
    inbox.failing.store(false, Ordering::SeqCst);
    call("deliveries.replay", fenix.deliveries().replay(app, &failed.id)).await;
    eventually("the replayed delivery has succeeded", || async {
        let delivery = call("deliveries.get", fenix.deliveries().get(app, &failed.id)).await;
        delivery.status == DeliveryStatus::Succeeded
    })
    .await;
    assert_eq!(inbox.count("sdk.flaky"), 1);
}

async fn cancels_and_erases_a_scheduled_event(fenix: &Fenix, app: &str, inbox: &Inbox) {
    let later =
        NewEvent { delay: Some(fenix_client::types::Duration::String("1h".to_owned())), ..new_event("sdk.later", 0) };
    let event = call("events.send_with", fenix.events().send_with(app, &later, None)).await;
    let cancelled = call("events.cancel", fenix.events().cancel(app, &event.id)).await;
    assert_eq!((cancelled.id.as_str(), cancelled.cancelled), (event.id.as_str(), 1), "fenix-client: events.cancel");
    match fenix.events().cancel(app, &event.id).await {
        Err(Error::Api { status: 409, code, .. }) => assert_eq!(code, "nothing_to_cancel"),
        other => panic!("fenix-client: events.cancel a second time answered {other:?}"),
    }
    let filter = DeliveryFilter { event_id: Some(event.id.to_string()), ..DeliveryFilter::default() };
    let page = call("deliveries.list", fenix.deliveries().list(app, &filter)).await;
    let delivery = page.data.first().expect("the cancelled event's delivery");
    assert_eq!((delivery.status, delivery.skip_reason.as_deref()), (DeliveryStatus::Skipped, Some("cancelled")));
    let erased = call("events.expunge", fenix.events().expunge(app, &event.id)).await;
    assert_eq!(erased.id, event.id);
    let read = call("events.get", fenix.events().get(app, &event.id, true)).await;
    assert!(read.data.is_none(), "fenix-client: events.expunge: the payload is gone: {read:?}");
    assert_eq!(inbox.count("sdk.later"), 0, "the cancelled event was never sent");
}

async fn reads_a_refused_calls_code(fenix: &Fenix) {
    match fenix.apps().get("app_does_not_exist").await {
        Err(Error::Api { status: 404, code, .. }) => assert_eq!(code, "app_not_found"),
        other => panic!("fenix-client: apps.get of an unknown app answered {other:?}"),
    }
}
