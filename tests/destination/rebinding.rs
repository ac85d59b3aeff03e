//! DNS rebinding: a name that answered an allowed address at registration and
//! later answers a forbidden one is refused at delivery time, before any
//! connection, and retried on the normal schedule.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use serde_json::json;

use super::common::{verifies, wait_for_attempts};
use crate::support::{delivery_of, dns::TestDns, eventually, Fenix, Plan, Receiver, TestDb};

const NAME: &str = "hooks.rebind-test.com";

/// Long enough that the test reads a blocked delivery as `pending` before its retry.
const SCHEDULE: &str = "1500ms,1500ms,1500ms,1500ms";

/// The receiver's port (its URL is `http://127.0.0.1:<port>/hook`).
fn port_of(receiver: &Receiver) -> u16 {
    let url = url::Url::parse(&receiver.url).expect("receiver URL");
    url.port().expect("receiver port")
}

/// Fenix allowing `http`, custom ports and only `cidrs`, asking only `dns`.
async fn fenix_allowing(db: &TestDb, dns: &TestDns, cidrs: &str) -> Fenix {
    let server = dns.server();
    Fenix::start(
        db,
        &[
            ("FENIX_UNSAFE_ALLOW_HTTP", "true"),
            ("FENIX_UNSAFE_ALLOW_CIDRS", cidrs),
            ("FENIX_DNS_SERVERS", &server),
            ("FENIX_RETRY_SCHEDULE", SCHEDULE),
        ],
    )
    .await
}

/// Registers `http://hooks.rebind-test.com:<port>/hook`; answers (endpoint id, secret).
async fn register_name(fenix: &Fenix, app: &str, port: u16) -> (String, String) {
    let ep = fenix.create_endpoint(app, json!({"url": format!("http://{NAME}:{port}/hook")})).await;
    (ep["id"].as_str().unwrap().to_string(), ep["secret"].as_str().unwrap().to_string())
}

async fn send(fenix: &Fenix, app: &str, n: u32) -> String {
    let evt = fenix.send_event(app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
    evt["id"].as_str().unwrap().to_string()
}

/// The receiver keeps its connection alive, as real receivers do: the check must
/// run again for the next delivery even though a pooled connection to the old
/// address is still open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_rebound_to_a_private_address_is_blocked_and_delivered_once_it_points_back() {
    let db = TestDb::new(crate::support::Backend::Sqlite).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let fenix = fenix_allowing(&db, &dns, "127.0.0.0/8").await;
    let app = fenix.create_app("acme").await;
    let (_, secret) = register_name(&fenix, &app, port_of(&receiver)).await;

    // While the name answers the allowed loopback address, events arrive, signed.
    let first = send(&fenix, &app, 1).await;
    eventually("the first event arrived", Duration::from_secs(10), || async { receiver.count() == 1 }).await;
    assert_eq!(receiver.received()[0].header("x-fenix-event-id"), first);
    assert!(verifies(&secret, &receiver.received()[0]));

    // The name now answers 10.0.0.1, which is not allowed (nothing listens there,
    // and nothing may connect there: the resolver refuses before connecting).
    dns.set(NAME, &["10.0.0.1"]);
    let asked_before = dns.queries_for(NAME);
    let second = send(&fenix, &app, 2).await;
    let (delivery, attempts) = wait_for_attempts(&fenix, &app, &second, 1).await;
    assert_eq!(attempts[0]["error"], "destination_blocked", "{attempts:?}");
    assert!(attempts[0]["response_status"].is_null(), "no request was made: {attempts:?}");
    let detail = attempts[0]["error_detail"].as_str().unwrap_or("");
    assert!(detail.contains(NAME), "the delivery log names the host: {attempts:?}");
    assert!(!detail.contains("10.0.0.1"), "but not the address it resolved to: {attempts:?}");
    assert!(dns.queries_for(NAME) > asked_before, "the name was resolved again for this delivery");
    assert_eq!(delivery["status"], "pending", "a blocked destination is retried: {delivery}");
    assert!(delivery["next_attempt_at"].is_string(), "{delivery}");
    assert_eq!(receiver.count(), 1, "the receiver got nothing more");

    // DNS is fixed: the retry, on the normal schedule, is delivered.
    dns.set(NAME, &["127.0.0.1"]);
    eventually("the retry arrived", Duration::from_secs(15), || async { receiver.count() == 2 }).await;
    let got = &receiver.received()[1];
    assert_eq!(got.header("x-fenix-event-id"), second);
    assert!(verifies(&secret, got));
    let (delivery, attempts) = wait_for_attempts(&fenix, &app, &second, 2).await;
    assert_eq!(delivery["status"], "succeeded", "{delivery}");
    let last = attempts.last().unwrap();
    assert!(last["error"].is_null(), "{attempts:?}");
    assert_eq!(last["response_status"], 200);
    assert!(
        attempts[..attempts.len() - 1].iter().all(|a| a["error"] == "destination_blocked"),
        "every earlier attempt was blocked: {attempts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_the_rebound_address_never_sees_a_connection() {
    let db = TestDb::new(crate::support::Backend::Sqlite).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    // This receiver closes every connection, so each delivery opens a new one and
    // goes through the resolver (kept-alive connections: the test above).
    let receiver = Receiver::http(|_| Plan::ok().with_header("connection", "close")).await;
    let port = port_of(&receiver);
    // A listener on 127.0.0.3, same port: where a rebound connection would land.
    let trap = tokio::net::TcpListener::bind(("127.0.0.3", port)).await.expect("bind 127.0.0.3");
    let trapped = Arc::new(AtomicUsize::new(0));
    let counter = trapped.clone();
    let trap_task = tokio::spawn(async move {
        while let Ok((_conn, _)) = trap.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    // Only 127.0.0.1 is allowed; 127.0.0.3 is loopback too, but not allowed.
    let fenix = fenix_allowing(&db, &dns, "127.0.0.1/32").await;
    let app = fenix.create_app("acme").await;
    let (_, secret) = register_name(&fenix, &app, port).await;

    let first = send(&fenix, &app, 1).await;
    eventually("the first event arrived", Duration::from_secs(10), || async { receiver.count() == 1 }).await;
    assert_eq!(receiver.received()[0].header("x-fenix-event-id"), first);
    assert!(verifies(&secret, &receiver.received()[0]));

    dns.set(NAME, &["127.0.0.3"]);
    let second = send(&fenix, &app, 2).await;
    let (delivery, attempts) = wait_for_attempts(&fenix, &app, &second, 1).await;
    assert_eq!(attempts[0]["error"], "destination_blocked", "{attempts:?}");
    assert_eq!(delivery["status"], "pending", "{delivery}");
    // A second blocked attempt, so that the check holds for retries too.
    let (_, attempts) = wait_for_attempts(&fenix, &app, &second, 2).await;
    assert!(attempts.iter().all(|a| a["error"] == "destination_blocked"), "{attempts:?}");
    assert_eq!(trapped.load(Ordering::SeqCst), 0, "nothing connected to the rebound address");
    assert_eq!(receiver.count(), 1, "nor to the old one");
    trap_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_stops_resolving_fails_its_attempt_with_a_dns_error_and_is_retried() {
    let db = TestDb::new(crate::support::Backend::Sqlite).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let fenix = fenix_allowing(&db, &dns, "127.0.0.0/8").await;
    let app = fenix.create_app("acme").await;
    let (_, secret) = register_name(&fenix, &app, port_of(&receiver)).await;

    dns.remove(NAME);
    let evt = send(&fenix, &app, 1).await;
    let (delivery, attempts) = wait_for_attempts(&fenix, &app, &evt, 1).await;
    assert_eq!(attempts[0]["error"], "dns", "{attempts:?}");
    assert!(attempts[0]["response_status"].is_null(), "{attempts:?}");
    assert_eq!(delivery["status"], "pending", "{delivery}");
    assert_eq!(receiver.count(), 0);

    dns.set(NAME, &["127.0.0.1"]);
    eventually("the retry arrived", Duration::from_secs(15), || async { receiver.count() == 1 }).await;
    assert_eq!(receiver.received()[0].header("x-fenix-event-id"), evt);
    assert!(verifies(&secret, &receiver.received()[0]));
    eventually("the delivery succeeded", Duration::from_secs(10), || async {
        delivery_of(&fenix, &app, &evt).await["status"] == "succeeded"
    })
    .await;
}
