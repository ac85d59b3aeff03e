//! HTTP/2 to receivers that offer it: Fenix picks `h2` by ALPN when an HTTPS
//! receiver offers it and multiplexes an endpoint's attempts over few
//! connections; a receiver that offers nothing (or only `http/1.1`) gets
//! HTTP/1.1. Either way the request bytes and signatures are the same, and the
//! destination check still runs before every delivery, even while a
//! multiplexed connection to the old address stays open.

use std::time::Duration;

use serde_json::json;

use super::common::{attempts, signing_crate_accepts, wait_for_status, Signed};
use crate::support::{dns::TestDns, eventually, Backend, Fenix, Plan, Receiver, TestDb, Tls};

/// Events sent to one endpoint in the multiplexing test.
const EVENTS: usize = 200;

async fn send_many(fenix: &Fenix, app: &str, n: usize) -> Vec<String> {
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let evt = fenix.send_event(app, json!({"type": "booking.confirmed", "data": {"n": i}})).await;
        ids.push(evt["id"].as_str().unwrap().to_string());
    }
    ids
}

async fn a_receiver_offering_h2_gets_every_attempt_over_http2_on_few_connections(backend: Backend) {
    let db = TestDb::new(backend).await;
    // Each answer takes a little while, so that attempts overlap and share connections.
    let receiver = Receiver::https_with(db.dir.path(), Tls { h2: true, names: &[] }, |_| {
        Plan::ok().after(Duration::from_millis(20))
    })
    .await;
    let ca = receiver.ca_pem_path.clone().expect("CA file");
    let fenix = Fenix::start(&db, &[("FENIX_EXTRA_CA_CERT", ca.to_str().unwrap())]).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let secret = ep["secret"].as_str().unwrap().to_string();

    // The first burst: while the first TLS handshake is under way, a few more
    // connections may be opened (the client does not know yet that the
    // receiver multiplexes).
    let first = send_many(&fenix, &app, EVENTS).await;
    eventually("every event arrived", Duration::from_secs(30), || async { receiver.count() >= EVENTS }).await;
    wait_for_status(&fenix, &app, first.last().unwrap(), "succeeded", Duration::from_secs(10)).await;
    let opened = receiver.connections();

    // From then on every attempt is a stream on those connections: a second
    // burst opens none, however many attempts overlap.
    let second = send_many(&fenix, &app, EVENTS).await;
    eventually("every event arrived", Duration::from_secs(30), || async { receiver.count() >= 2 * EVENTS }).await;
    wait_for_status(&fenix, &app, second.last().unwrap(), "succeeded", Duration::from_secs(10)).await;

    let got = receiver.received();
    assert_eq!(got.len(), 2 * EVENTS, "each event once");
    for r in &got {
        assert_eq!(r.version, "HTTP/2.0", "every attempt over HTTP/2");
        assert!(signing_crate_accepts(&secret, &Signed::of(r)), "signed as over HTTP/1.1");
        assert_eq!(r.header("content-type"), "application/json");
    }
    assert!(receiver.max_concurrent() > 1, "attempts overlapped (else multiplexing is not tested)");
    assert_eq!(
        receiver.connections(),
        opened,
        "{} attempts, up to {} at once, multiplexed over the {opened} connection(s) of the first burst",
        2 * EVENTS,
        receiver.max_concurrent()
    );
}

async fn a_receiver_offering_only_http1_gets_http1(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::https_with(db.dir.path(), Tls { h2: false, names: &[] }, |_| Plan::ok()).await;
    let ca = receiver.ca_pem_path.clone().expect("CA file");
    let fenix = Fenix::start(&db, &[("FENIX_EXTRA_CA_CERT", ca.to_str().unwrap())]).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let secret = ep["secret"].as_str().unwrap().to_string();

    let ids = send_many(&fenix, &app, 5).await;
    for id in &ids {
        wait_for_status(&fenix, &app, id, "succeeded", Duration::from_secs(10)).await;
    }
    let got = receiver.received();
    assert_eq!(got.len(), 5);
    for r in &got {
        assert_eq!(r.version, "HTTP/1.1");
        assert!(signing_crate_accepts(&secret, &Signed::of(r)));
    }
}

crate::on_both_backends!(
    a_receiver_offering_h2_gets_every_attempt_over_http2_on_few_connections,
    a_receiver_offering_only_http1_gets_http1,
);

const NAME: &str = "hooks.h2-rebind-test.com";

/// A multiplexed connection is no way around the destination check: once the
/// name answers a forbidden address, the next delivery is refused before any
/// request, although an HTTP/2 connection to the old address is still open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_http2_connection_does_not_bypass_the_check_after_the_name_is_rebound() {
    let db = TestDb::new(Backend::Sqlite).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let receiver = Receiver::https_with(db.dir.path(), Tls { h2: true, names: &[NAME] }, |_| Plan::ok()).await;
    let ca = receiver.ca_pem_path.clone().expect("CA file");
    let port = url::Url::parse(&receiver.url).unwrap().port().unwrap();
    let server = dns.server();
    let fenix = Fenix::start(
        &db,
        &[
            ("FENIX_EXTRA_CA_CERT", ca.to_str().unwrap()),
            ("FENIX_DNS_SERVERS", &server),
            ("FENIX_RETRY_SCHEDULE", "1500ms,1500ms,1500ms,1500ms"),
        ],
    )
    .await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": format!("https://{NAME}:{port}/hook")})).await;

    let first = send_many(&fenix, &app, 1).await.remove(0);
    wait_for_status(&fenix, &app, &first, "succeeded", Duration::from_secs(10)).await;
    assert_eq!(receiver.received()[0].version, "HTTP/2.0");
    assert_eq!(receiver.connections(), 1);

    // The name now answers 10.0.0.1, which is not allowed (and nothing may connect there).
    dns.set(NAME, &["10.0.0.1"]);
    let second = send_many(&fenix, &app, 1).await.remove(0);
    let what = "the second delivery has a blocked attempt";
    eventually(what, Duration::from_secs(10), || async {
        let d = fenix.deliveries(&app, &format!("event_id={second}")).await;
        d.len() == 1 && d[0]["attempt_count"] == 1
    })
    .await;
    let delivery = fenix.deliveries(&app, &format!("event_id={second}")).await.remove(0);
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged[0]["error"], "destination_blocked", "{logged:?}");
    assert!(logged[0]["response_status"].is_null(), "{logged:?}");
    assert_eq!(delivery["status"], "pending", "retried on the schedule: {delivery}");
    assert_eq!(receiver.count(), 1, "nothing was sent over the open HTTP/2 connection");

    // Pointed back: the retry is delivered.
    dns.set(NAME, &["127.0.0.1"]);
    wait_for_status(&fenix, &app, &second, "succeeded", Duration::from_secs(15)).await;
    assert_eq!(receiver.count(), 2);
}
