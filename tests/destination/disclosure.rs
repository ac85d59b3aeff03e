//! What a tenant can learn from a refusal: registration answers and the
//! delivery log name the host the tenant wrote, never the addresses an
//! internal name resolved to nor the resolver's own error text. That detail
//! is in the operator's log only.

use std::time::Duration;

use serde_json::json;

use super::common::{register, strict_fenix, wait_for_attempts, PUBLIC_V4};
use crate::support::{
    dns::TestDns, error_code_or_empty, error_message, eventually, Backend, Fenix, Plan, Receiver, TestDb,
};

/// (host, code, texts the answer must not contain)
fn refusals(dns: &TestDns) -> Vec<(&'static str, &'static str, Vec<String>)> {
    let words = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            "internal.disclose-test.com",
            "destination_not_public",
            words(&["10.20.30.40", "10.20", "fd12", "private", "unique-local"]),
        ),
        ("half.disclose-test.com", "destination_not_public", words(&["172.20.1.2", PUBLIC_V4, "private"])),
        (
            "broken.disclose-test.com",
            "destination_unresolvable",
            words(&["SERVFAIL", "ServFail", "Serv", &dns.server(), &dns.addr.port().to_string()]),
        ),
        ("missing.disclose-test.com", "destination_unresolvable", words(&["NXDomain", "NXDOMAIN", &dns.server()])),
    ]
}

async fn zone() -> TestDns {
    let dns = TestDns::with_zone(&[
        ("internal.disclose-test.com", &["10.20.30.40", "fd12:3456:789a::7"]),
        ("half.disclose-test.com", &[PUBLIC_V4, "172.20.1.2"]),
    ])
    .await;
    dns.fail("broken.disclose-test.com");
    dns
}

async fn a_refused_registration_names_the_host_but_never_internal_dns_data(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = zone().await;
    let fenix = strict_fenix(&db, &dns).await;
    let app = fenix.create_app("acme").await;

    for (host, expected, hidden) in refusals(&dns) {
        let (status, body) = register(&fenix, &app, &format!("https://{host}/hook")).await;
        assert_eq!((status, error_code_or_empty(&body)), (422, expected), "{host}: {body}");
        let message = error_message(&body);
        assert!(message.contains(host), "{host}: the message names the host: {body}");
        for text in hidden {
            assert!(!body.to_string().contains(&text), "{host}: the answer reveals {text:?}: {body}");
        }
        assert!(dns.queries_for(host) > 0, "{host} was looked up");
    }

    // The operator keeps the detail, in the log.
    eventually("the operator's log has the refused address", Duration::from_secs(5), || async {
        let logs = fenix.logs();
        logs.contains("10.20.30.40") && logs.contains("172.20.1.2") && logs.contains("broken.disclose-test.com")
    })
    .await;
}

async fn the_delivery_log_never_shows_the_address_or_the_resolver_error(backend: Backend) {
    const NAME: &str = "hooks.disclose-test.com";
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let port = url::Url::parse(&receiver.url).unwrap().port().unwrap();
    let server = dns.server();
    let fenix = Fenix::start(
        &db,
        &[("FENIX_UNSAFE_ALLOW_CIDRS", "127.0.0.0/8"), ("FENIX_DNS_SERVERS", &server), ("FENIX_RETRY_SCHEDULE", "30s")],
    )
    .await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": format!("http://{NAME}:{port}/hook")})).await;

    // The name now answers an internal address: the attempt is blocked.
    dns.set(NAME, &["10.20.30.40"]);
    let blocked = fenix.send_event(&app, json!({"type": "a.b", "data": {}})).await;
    let (_, attempts) = wait_for_attempts(&fenix, &app, blocked["id"].as_str().unwrap(), 1).await;
    assert_eq!(attempts[0]["error"], "destination_blocked", "{attempts:?}");
    let detail = attempts[0]["error_detail"].as_str().unwrap_or("");
    assert!(detail.contains(NAME) && detail.contains("not publicly reachable"), "{attempts:?}");
    assert!(!attempts[0].to_string().contains("10.20.30.40"), "the log reveals the address: {attempts:?}");

    // Its DNS server now fails: a DNS error, in Fenix's words only.
    dns.fail(NAME);
    let failed = fenix.send_event(&app, json!({"type": "a.b", "data": {}})).await;
    let (_, attempts) = wait_for_attempts(&fenix, &app, failed["id"].as_str().unwrap(), 1).await;
    assert_eq!(attempts[0]["error"], "dns", "{attempts:?}");
    let text = attempts[0].to_string();
    for hidden in ["SERVFAIL", "ServFail", "Serv", &server] {
        assert!(!text.contains(hidden), "the log reveals {hidden:?}: {attempts:?}");
    }
    assert_eq!(receiver.count(), 0, "nothing was sent");
}

crate::on_both_backends!(
    a_refused_registration_names_the_host_but_never_internal_dns_data,
    the_delivery_log_never_shows_the_address_or_the_resolver_error,
);
