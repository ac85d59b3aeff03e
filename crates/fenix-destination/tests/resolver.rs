//! The checking resolver against a real DNS server on 127.0.0.1. No test
//! connects anywhere but loopback: public answers are only ever checked.

mod support;

use std::error::Error as _;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fenix_destination::{CheckingResolver, DestinationError, Policy};
use hickory_resolver::proto::rr::RecordType;
use support::TestDns;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PUBLIC_V4: &str = "93.184.215.14";
const PUBLIC_V6: &str = "2606:2800:21f:cb07:6820:80da:af6b:3c96";

async fn zone() -> TestDns {
    TestDns::with_zone(&[
        ("public.example-test.com", &[PUBLIC_V4, PUBLIC_V6]),
        ("private.example-test.com", &["10.1.2.3"]),
        ("mixed.example-test.com", &[PUBLIC_V4, "192.168.1.10"]),
        ("mixed6.example-test.com", &[PUBLIC_V4, "fd00::1"]),
        ("mapped.example-test.com", &["::ffff:127.0.0.1"]),
        ("loopback.example-test.com", &["127.0.0.1"]),
        ("empty.example-test.com", &[]),
    ])
    .await
}

fn resolver(dns: &TestDns, policy: Policy) -> CheckingResolver {
    CheckingResolver::new(policy, Some(vec![dns.addr])).unwrap()
}

fn loopback_allowed(allow_http: bool) -> Policy {
    Policy { allow_http, allow_cidrs: vec!["127.0.0.0/8".parse().unwrap()], ..Policy::default() }
}

fn ips(list: &[&str]) -> Vec<IpAddr> {
    list.iter().map(|ip| ip.parse().unwrap()).collect()
}

#[tokio::test]
async fn a_name_with_only_public_addresses_is_accepted_and_both_families_returned() {
    let dns = zone().await;
    let resolver = resolver(&dns, Policy::default());
    let mut found = resolver.resolve_checked("public.example-test.com").await.unwrap();
    found.sort();
    assert_eq!(found, ips(&[PUBLIC_V4, PUBLIC_V6]));
    let url = resolver.check_destination("https://PUBLIC.example-test.com./hooks/1").await.unwrap();
    assert_eq!(url.as_str(), "https://public.example-test.com/hooks/1");
}

#[tokio::test]
async fn a_name_with_a_private_address_is_not_public() {
    let dns = zone().await;
    let err =
        resolver(&dns, Policy::default()).check_destination("https://private.example-test.com/").await.unwrap_err();
    assert_eq!(err.code(), "destination_not_public");
    assert_eq!(err.attempt_error(), "destination_blocked");
    assert!(err.message().contains("private.example-test.com"), "the message names the host: {err}");
    assert!(err.message().contains("not publicly reachable"), "{err}");
}

#[tokio::test]
async fn a_refusal_never_reveals_which_addresses_a_name_resolved_to() {
    let dns = zone().await;
    let resolver = resolver(&dns, Policy::default());
    let private = resolver.resolve_checked("private.example-test.com").await.unwrap_err();
    let mapped = resolver.resolve_checked("mapped.example-test.com").await.unwrap_err();
    for (err, leaked) in
        [(&private, &["10.1.2.3", "10.", "private-use"][..]), (&mapped, &["127.0.0.1", "::ffff", "loopback"])]
    {
        for text in leaked {
            assert!(!err.message().contains(text), "{text:?} leaked: {err}");
        }
    }
    let mixed = resolver.resolve_checked("mixed.example-test.com").await.unwrap_err();
    for text in ["192.168", PUBLIC_V4, "private-use"] {
        assert!(!mixed.message().contains(text), "{text:?} leaked: {mixed}");
    }
    // Apart from the host name, every non-public answer reads the same.
    let generic = |err: &DestinationError, host: &str| err.message().replace(host, "HOST");
    assert_eq!(generic(&private, "private.example-test.com"), generic(&mapped, "mapped.example-test.com"));
    assert_eq!(generic(&private, "private.example-test.com"), generic(&mixed, "mixed.example-test.com"));
}

#[tokio::test]
async fn a_name_mixing_public_and_private_answers_is_refused_as_a_whole() {
    let dns = zone().await;
    let resolver = resolver(&dns, Policy::default());
    for host in ["mixed.example-test.com", "mixed6.example-test.com", "mapped.example-test.com"] {
        let err = resolver.resolve_checked(host).await.unwrap_err();
        assert_eq!(err.code(), "destination_not_public", "{host}");
    }
}

#[tokio::test]
async fn a_missing_name_is_unresolvable_and_counts_as_a_dns_failure() {
    let dns = zone().await;
    let resolver = resolver(&dns, Policy::default());
    let err = resolver.resolve_checked("missing.example-test.com").await.unwrap_err();
    assert_eq!(err.code(), "destination_unresolvable");
    assert_eq!(err.attempt_error(), "dns");
    assert!(err.message().contains("missing.example-test.com"), "{err}");
    let empty = resolver.resolve_checked("empty.example-test.com").await.unwrap_err();
    assert_eq!(empty.code(), "destination_unresolvable");
    // NXDOMAIN and "no records" read the same: the message tells nothing the code does not.
    assert_eq!(
        err.message().replace("missing.example-test.com", "HOST"),
        empty.message().replace("empty.example-test.com", "HOST")
    );
}

#[tokio::test]
async fn a_dns_failure_is_unresolvable_without_the_resolver_s_own_words() {
    let dns = TestDns::start_servfail().await;
    let err = resolver(&dns, Policy::default()).resolve_checked("public.example-test.com").await.unwrap_err();
    assert_eq!(err.code(), "destination_unresolvable");
    assert_eq!(err.attempt_error(), "dns");
    assert!(dns.queries() > 0, "the server was asked");
    let message = err.message();
    for text in
        ["SERVFAIL", "ServFail", "Serv", "server", "failed", &dns.addr.to_string(), &dns.addr.port().to_string()]
    {
        assert!(!message.contains(text), "{text:?} leaked: {message}");
    }
    let nxdomain = resolver(&zone().await, Policy::default()).resolve_checked("missing.example-test.com").await;
    let nxdomain = nxdomain.unwrap_err().message().replace("missing.example-test.com", "HOST");
    assert_eq!(message.replace("public.example-test.com", "HOST"), nxdomain);
}

fn denying(ranges: &[&str]) -> Policy {
    Policy { deny_cidrs: ranges.iter().map(|r| r.parse().unwrap()).collect(), ..Policy::default() }
}

#[tokio::test]
async fn a_name_resolving_into_the_deny_list_is_refused_like_a_private_one() {
    let dns = zone().await;
    let private = resolver(&dns, Policy::default()).resolve_checked("private.example-test.com").await.unwrap_err();
    for deny in ["93.184.215.0/24", "2606:2800:21f::/48", "::ffff:93.184.215.14/128", "64:ff9b::5db8:d70e/128"] {
        let err = resolver(&dns, denying(&[deny])).resolve_checked("public.example-test.com").await.unwrap_err();
        assert_eq!(err.code(), "destination_not_public", "{deny}");
        assert_eq!(
            err.message().replace("public.example-test.com", "HOST"),
            private.message().replace("private.example-test.com", "HOST"),
            "a tenant cannot tell the deny list from a private address"
        );
    }
    let unrelated = denying(&["198.51.0.0/16", "2001:db8:64::/96"]);
    assert_eq!(resolver(&dns, unrelated).resolve_checked("public.example-test.com").await.unwrap().len(), 2);
}

#[tokio::test]
async fn the_deny_list_wins_over_the_development_allow_list() {
    let dns = zone().await;
    let policy = Policy { deny_cidrs: vec!["127.0.0.1/32".parse().unwrap()], ..loopback_allowed(true) };
    let resolver = resolver(&dns, policy);
    let err = resolver.resolve_checked("loopback.example-test.com").await.unwrap_err();
    assert_eq!(err.code(), "destination_not_public");
    let asked = dns.queries();
    let err = resolver.check_destination("http://127.0.0.1:9000/hook").await.unwrap_err();
    assert_eq!(err.code(), "destination_not_public");
    let err = resolver.resolve_checked("[::ffff:127.0.0.1]").await.unwrap_err();
    assert_eq!(err.code(), "destination_not_public");
    assert!(resolver.check_destination("http://127.0.0.2:9000/hook").await.is_ok());
    assert_eq!(dns.queries(), asked, "IP literals are judged without DNS");
}

#[tokio::test]
async fn a_loopback_answer_is_accepted_only_when_its_range_is_allowed() {
    let dns = zone().await;
    let refused = resolver(&dns, Policy::default()).resolve_checked("loopback.example-test.com").await.unwrap_err();
    assert_eq!(refused.code(), "destination_not_public");
    let allowed = resolver(&dns, loopback_allowed(false)).resolve_checked("loopback.example-test.com").await.unwrap();
    assert_eq!(allowed, ips(&["127.0.0.1"]));
}

#[tokio::test]
async fn the_url_policy_is_applied_before_any_dns_query() {
    let dns = zone().await;
    let resolver = resolver(&dns, Policy::default());
    for (url, code) in [
        ("https://localhost/", "url_host_not_public"),
        ("http://public.example-test.com/", "url_scheme_not_https"),
        ("https://127.0.0.1/", "url_host_is_ip"),
    ] {
        let err = resolver.check_destination(url).await.unwrap_err();
        assert_eq!(err.code(), code, "{url}");
        assert_eq!(err.attempt_error(), "destination_blocked");
    }
    let err = resolver.resolve_checked("intranet").await.unwrap_err();
    assert_eq!(err.code(), "url_host_not_public");
    assert_eq!(dns.queries(), 0);
}

#[tokio::test]
async fn allowed_ip_literal_hosts_are_checked_without_dns() {
    let dns = zone().await;
    let resolver = resolver(&dns, loopback_allowed(true));
    let url = resolver.check_destination("http://127.0.0.1:9000/hook").await.unwrap();
    assert_eq!(url.as_str(), "http://127.0.0.1:9000/hook");
    assert_eq!(resolver.resolve_checked("[::ffff:127.0.0.2]").await.unwrap().len(), 1);
    let err = resolver.check_destination("http://[::1]:9000/").await.unwrap_err();
    assert_eq!(err.code(), "url_host_is_ip");
    assert_eq!(dns.queries(), 0);
}

#[tokio::test]
async fn a_name_that_rebinds_to_loopback_after_its_first_answer_is_refused_the_second_time() {
    let a_queries = Arc::new(AtomicUsize::new(0));
    let counter = a_queries.clone();
    let dns = TestDns::start(move |name, kind| {
        if name != "rebind.example-test.com" {
            return None;
        }
        if kind != RecordType::A {
            return Some(vec![]);
        }
        let first = counter.fetch_add(1, Ordering::SeqCst) == 0;
        Some(ips(&[if first { PUBLIC_V4 } else { "127.0.0.1" }]))
    })
    .await;
    let resolver = resolver(&dns, Policy::default());
    let first = resolver.resolve_checked("rebind.example-test.com").await.unwrap();
    assert_eq!(first, ips(&[PUBLIC_V4]));
    let second = resolver.resolve_checked("rebind.example-test.com").await.unwrap_err();
    assert_eq!(second.code(), "destination_not_public");
    assert_eq!(a_queries.load(Ordering::SeqCst), 2, "the answer must not be cached");
}

#[tokio::test]
async fn a_truncated_udp_answer_is_asked_again_over_tcp() {
    let dns =
        TestDns::start_truncating_udp(|name, _| (name == "public.example-test.com").then(|| ips(&[PUBLIC_V4]))).await;
    let found = resolver(&dns, Policy::default()).resolve_checked("public.example-test.com").await.unwrap();
    assert_eq!(found, ips(&[PUBLIC_V4]));
    assert!(dns.tcp_queries() > 0);
}

#[test]
fn a_resolver_needs_at_least_one_dns_server() {
    assert!(CheckingResolver::new(Policy::default(), Some(vec![])).is_err());
}

fn client(resolver: CheckingResolver) -> reqwest::Client {
    reqwest::Client::builder().dns_resolver(Arc::new(resolver)).no_proxy().build().unwrap()
}

fn destination_error(err: &reqwest::Error) -> Option<&DestinationError> {
    let mut source = err.source();
    while let Some(cause) = source {
        if let Some(found) = cause.downcast_ref::<DestinationError>() {
            return Some(found);
        }
        source = cause.source();
    }
    None
}

#[tokio::test]
async fn reqwest_with_the_checking_resolver_refuses_a_blocked_answer_without_connecting() {
    let dns = TestDns::with_zone(&[("rebind.example-test.com", &["127.0.0.1"])]).await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let policy = Policy { allow_http: true, ..Policy::default() };
    let err = client(resolver(&dns, policy))
        .post(format!("http://rebind.example-test.com:{port}/"))
        .send()
        .await
        .unwrap_err();
    let refusal = destination_error(&err).expect("DestinationError in the source chain");
    assert_eq!(refusal.attempt_error(), "destination_blocked");
    assert_eq!(refusal.code(), "destination_not_public");
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "no connection may reach the listener: {accepted:?}"
    );
}

#[tokio::test]
async fn reqwest_with_the_checking_resolver_connects_to_an_allowed_answer() {
    let dns = TestDns::with_zone(&[("rebind.example-test.com", &["127.0.0.1"])]).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "request ended early");
            request.extend_from_slice(&buf[..n]);
        }
        let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
        stream.write_all(reply.as_bytes()).await.unwrap();
        String::from_utf8_lossy(&request).into_owned()
    });
    let response = client(resolver(&dns, loopback_allowed(true)))
        .get(format!("http://rebind.example-test.com:{port}/hook"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "ok");
    let request = server.await.unwrap();
    assert!(request.starts_with("GET /hook HTTP/1.1\r\n"), "{request}");
}

#[tokio::test]
async fn localhost_stands_for_loopback_without_dns_exactly_when_loopback_is_allowed() {
    let dns = zone().await;
    let dev = resolver(&dns, loopback_allowed(true));
    let url = dev.check_destination("http://LocalHost.:9000/hooks").await.unwrap();
    assert_eq!(url.as_str(), "http://localhost:9000/hooks");
    assert_eq!(dev.resolve_checked("localhost").await.unwrap(), ips(&["127.0.0.1"]));
    let both = Policy {
        allow_http: true,
        allow_cidrs: vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()],
        ..Policy::default()
    };
    assert_eq!(resolver(&dns, both).resolve_checked("localhost").await.unwrap(), ips(&["127.0.0.1", "::1"]));
    assert_eq!(dns.queries(), 0, "localhost is never looked up");

    // Production, development without loopback, loopback denied by the operator: refused.
    let no_loopback =
        Policy { allow_http: true, allow_cidrs: vec!["10.0.0.0/8".parse().unwrap()], ..Policy::default() };
    let denied = Policy { deny_cidrs: vec!["127.0.0.0/8".parse().unwrap()], ..loopback_allowed(true) };
    for (policy, url) in [
        (Policy::default(), "https://localhost/hooks"),
        (Policy { allow_http: true, ..Policy::default() }, "http://localhost:9000/hooks"),
        (no_loopback, "http://localhost:9000/hooks"),
        (denied, "http://localhost:9000/hooks"),
    ] {
        let resolver = resolver(&dns, policy.clone());
        let err = resolver.check_destination(url).await.unwrap_err();
        assert_eq!(err.code(), "url_host_not_public", "{policy:?}");
        assert!(!err.message().contains("example.com"), "suggests a name that does not resolve: {}", err.message());
        if policy.allow_http && policy.deny_cidrs.is_empty() {
            assert!(err.message().contains("FENIX_UNSAFE_ALLOW_CIDRS"), "{}", err.message());
        }
        assert_eq!(resolver.resolve_checked("localhost").await.unwrap_err().code(), "url_host_not_public");
    }
    // Only `localhost` itself: its subdomains and look-alikes stay refused.
    for url in ["http://app.localhost:9000/", "http://localhost.localdomain:9000/"] {
        assert_eq!(dev.check_destination(url).await.unwrap_err().code(), "url_host_not_public", "{url}");
    }
    assert_eq!(dns.queries(), 0);
}
