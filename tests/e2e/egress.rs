//! The egress proxy (`FENIX_EGRESS_PROXY`) with a real proxy (Debian's
//! tinyproxy, tests/support/proxy.rs): deliveries and ownership challenges to
//! an endpoint named in DNS arrive through it, over HTTPS (TLS end to end,
//! the certificate checked against the name) and plain HTTP; the proxy is
//! only ever asked for the address Fenix checked, never the name; a name
//! rebound to a forbidden address is refused by Fenix before the proxy hears
//! of it; the proxy's credentials work, and wrong ones fail the attempt as
//! `proxy` without the password showing anywhere.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{attempts, signing_crate_accepts, wait_for_status, Signed};
use crate::support::{
    dns::TestDns, eventually, proxy::Proxy, receiver::CHALLENGE, wait_for_state, Backend, Fenix, Plan, Receiver,
    TestDb, Tls,
};

const NAME: &str = "hooks.egress-test.com";
const PATIENCE: Duration = Duration::from_secs(15);

fn port_of(url: &str) -> u16 {
    url::Url::parse(url).unwrap().port().unwrap()
}

async fn send(fenix: &Fenix, app: &str) -> String {
    fenix.send_event(app, json!({"type": "invoice.paid", "data": {"n": 1}})).await["id"].as_str().unwrap().to_string()
}

/// The attempts of the delivery of `event` once it has `n` of them.
async fn attempts_of(fenix: &Fenix, app: &str, event: &str, n: usize) -> Vec<Value> {
    eventually(&format!("{n} attempt(s) of {event}"), PATIENCE, || async {
        let d = fenix.deliveries(app, &format!("event_id={event}")).await;
        d.len() == 1 && d[0]["attempt_count"].as_u64() >= Some(n as u64)
    })
    .await;
    let delivery = fenix.deliveries(app, &format!("event_id={event}")).await.remove(0);
    attempts(fenix, app, delivery["id"].as_str().unwrap()).await
}

/// Fenix set to send through `proxy`, resolving names with `dns`, trusting `ca`.
async fn fenix_through(db: &TestDb, proxy_url: &str, dns: &TestDns, ca: &str, extra: &[(&str, &str)]) -> Fenix {
    let server = dns.server();
    let mut env = vec![
        ("FENIX_EGRESS_PROXY", proxy_url),
        ("FENIX_DNS_SERVERS", server.as_str()),
        ("FENIX_EXTRA_CA_CERT", ca),
        ("FENIX_RETRY_SCHEDULE", "1h"),
    ];
    env.extend_from_slice(extra);
    Fenix::start(db, &env).await
}

async fn deliveries_by_name_go_through_the_proxy_which_sees_only_checked_addresses(backend: Backend) {
    let Some(proxy) = Proxy::start(None).await else { return };
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let https = Receiver::https_with(db.dir.path(), Tls { h2: false, names: &[NAME] }, |_| Plan::ok()).await;
    let http = Receiver::http(|_| Plan::ok()).await;
    let ca = https.ca_pem_path.clone().unwrap();
    let fenix = fenix_through(&db, &proxy.url, &dns, ca.to_str().unwrap(), &[]).await;
    let app = fenix.create_app("acme").await;
    let (tls_port, plain_port) = (port_of(&https.url), port_of(&http.url));
    let secured = fenix.create_endpoint(&app, json!({"url": format!("https://{NAME}:{tls_port}/hook")})).await;
    let plain = fenix.create_endpoint(&app, json!({"url": format!("http://{NAME}:{plain_port}/hook")})).await;

    let event = send(&fenix, &app).await;
    eventually("both receivers got the event", PATIENCE, || async { https.count() == 1 && http.count() == 1 }).await;
    for (receiver, ep) in [(&https, &secured), (&http, &plain)] {
        let got = &receiver.received()[0];
        assert_eq!(got.json()["id"], event.as_str());
        assert_eq!(got.header("host"), format!("{NAME}:{}", port_of(&receiver.url)), "the URL's name, kept");
        assert!(signing_crate_accepts(ep["secret"].as_str().unwrap(), &Signed::of(got)), "signed");
    }
    let requests = proxy.requests();
    for port in [tls_port, plain_port] {
        let connect = format!("CONNECT 127.0.0.1:{port} HTTP/1.1");
        assert!(requests.contains(&connect), "the proxy was asked for the checked address: {requests:?}");
    }
    assert!(!proxy.log().contains(NAME), "the proxy never sees the name:\n{}", proxy.log());

    // Rebound to a forbidden address: Fenix refuses it; the proxy is asked nothing.
    let before = proxy.requests().len();
    dns.set(NAME, &["10.1.2.3"]);
    let refused = send(&fenix, &app).await;
    eventually("both deliveries have a refused attempt", PATIENCE, || async {
        let d = fenix.deliveries(&app, &format!("event_id={refused}")).await;
        d.len() == 2 && d.iter().all(|d| d["attempt_count"] == 1)
    })
    .await;
    for delivery in fenix.deliveries(&app, &format!("event_id={refused}")).await {
        let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
        assert_eq!(logged[0]["error"], "destination_blocked", "{logged:?}");
    }
    assert_eq!(proxy.requests().len(), before, "no request for the forbidden address: {:?}", proxy.requests());
    assert!(!proxy.log().contains("10.1.2.3"));
    assert_eq!((https.count(), http.count()), (1, 1));
}

async fn the_proxys_credentials_are_sent_and_wrong_ones_fail_as_proxy(backend: Backend) {
    let Some(proxy) = Proxy::start(Some(("fenix-egress", "s3cret-pw"))).await else { return };
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let https = Receiver::https_with(db.dir.path(), Tls { h2: false, names: &[NAME] }, |_| Plan::ok()).await;
    let ca = https.ca_pem_path.clone().unwrap();
    let url = json!({"url": format!("https://{NAME}:{}/hook", port_of(&https.url))});

    let mut fenix = fenix_through(&db, &proxy.url, &dns, ca.to_str().unwrap(), &[]).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, url).await;
    let event = send(&fenix, &app).await;
    wait_for_status(&fenix, &app, &event, "succeeded", PATIENCE).await;
    assert_eq!(https.count(), 1);
    let (status, settings) = fenix.call("GET", "/v1/settings", None).await;
    assert_eq!(status, 200, "{settings}");
    assert!(!settings.to_string().contains("s3cret-pw"), "the settings view hides the password: {settings}");
    assert!(settings.to_string().contains(&format!("127.0.0.1:{}", proxy.port)), "{settings}");
    fenix.terminate().await;

    let wrong = proxy.url.replace("s3cret-pw", "wrong-pw");
    let fenix = fenix_through(&db, &wrong, &dns, ca.to_str().unwrap(), &[]).await;
    let event = send(&fenix, &app).await;
    let logged = attempts_of(&fenix, &app, &event, 1).await;
    assert_eq!(logged[0]["error"], "proxy", "{logged:?}");
    let detail = logged[0].to_string();
    assert!(detail.contains("credentials"), "the detail says why: {detail}");
    assert_eq!(https.count(), 1, "nothing arrived without the proxy");
    for text in [detail, fenix.logs()] {
        assert!(!text.contains("wrong-pw") && !text.contains("s3cret-pw"), "no password in {text}");
    }
}

async fn an_ownership_challenge_goes_through_the_proxy_too(backend: Backend) {
    let Some(proxy) = Proxy::start(None).await else { return };
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let echo = format!(r#"{{"challenge":"{CHALLENGE}"}}"#);
    let https = Receiver::https_with(db.dir.path(), Tls { h2: false, names: &[NAME] }, move |_| {
        Plan::ok().with_header("content-type", "application/json").with_body(echo.clone())
    })
    .await;
    let ca = https.ca_pem_path.clone().unwrap();
    let required = [("FENIX_REQUIRE_ENDPOINT_VERIFICATION", "true")];
    let fenix = fenix_through(&db, &proxy.url, &dns, ca.to_str().unwrap(), &required).await;
    let app = fenix.create_app("acme").await;
    let port = port_of(&https.url);
    let created = fenix.create_endpoint(&app, json!({"url": format!("https://{NAME}:{port}/hook")})).await;
    wait_for_state(&fenix, &app, created["id"].as_str().unwrap(), "active", PATIENCE).await;
    assert_eq!(https.received()[0].header("x-fenix-event-type"), "webhook.verification");
    let connect = format!("CONNECT 127.0.0.1:{port} HTTP/1.1");
    assert!(proxy.requests().contains(&connect), "{:?}", proxy.requests());
}

/// A receiver that is down is the receiver's failure (`connect`), as without
/// a proxy: tinyproxy answers `500 Unable to connect` to its `CONNECT`.
async fn a_receiver_that_is_down_fails_as_connect_not_as_the_proxys_failure(backend: Backend) {
    let Some(proxy) = Proxy::start(None).await else { return };
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let https = Receiver::https_with(db.dir.path(), Tls { h2: false, names: &[NAME] }, |_| Plan::ok()).await;
    let ca = https.ca_pem_path.clone().unwrap();
    let fenix = fenix_through(&db, &proxy.url, &dns, ca.to_str().unwrap(), &[]).await;
    let app = fenix.create_app("acme").await;
    let closed = crate::support::free_port();
    fenix.create_endpoint(&app, json!({"url": format!("https://{NAME}:{closed}/hook")})).await;
    let event = send(&fenix, &app).await;
    let logged = attempts_of(&fenix, &app, &event, 1).await;
    assert_eq!(logged[0]["error"], "connect", "{logged:?}");
    assert!(proxy.requests().contains(&format!("CONNECT 127.0.0.1:{closed} HTTP/1.1")), "{:?}", proxy.requests());
}

crate::on_both_backends!(
    deliveries_by_name_go_through_the_proxy_which_sees_only_checked_addresses,
    a_receiver_that_is_down_fails_as_connect_not_as_the_proxys_failure,
    the_proxys_credentials_are_sent_and_wrong_ones_fail_as_proxy,
    an_ownership_challenge_goes_through_the_proxy_too,
);

/// A proxy URL Fenix cannot use stops it at start, naming the setting.
#[test]
fn an_unusable_proxy_url_stops_fenix_at_start() {
    for (url, says) in [("https://127.0.0.1:3128", "https://"), ("http://127.0.0.1", "no port"), ("ftp://h:1", "ftp")] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_fenix"))
            .arg("serve")
            .env("FENIX_EGRESS_PROXY", url)
            .env("DATABASE_URL", "sqlite::memory:")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{url}: {stderr}");
        assert!(stderr.contains("FENIX_EGRESS_PROXY") && stderr.contains(says), "{url}: {stderr}");
    }
}
