//! The URL policy at registration: an adversarial table of endpoint URLs, each
//! refused with its own 422 code, on create and on update, by a Fenix running
//! the production policy (no `http`, no allowed ranges).

use serde_json::Value;

use super::common::{change_url, endpoints, register, strict_fenix, PUBLIC_V4, PUBLIC_V6};
use crate::support::{dns::TestDns, error_code_or_empty, error_message, Backend, TestDb};

/// The one name of the zone that answers (public addresses only). Every
/// other name is NXDOMAIN, so a case that wrongly passed the URL policy would
/// show up as `destination_unresolvable`, not as an accepted endpoint.
const GOOD_HOST: &str = "hooks.example-test.com";

/// (URL, the code it must be refused with).
fn refused_urls() -> Vec<(String, &'static str)> {
    let mut table: Vec<(String, &'static str)> = [
        // IP literals in every notation, loopback, metadata, public or malformed alike.
        ("https://127.0.0.1/", "url_host_is_ip"),
        ("https://127.0.0.1:443/hook", "url_host_is_ip"),
        ("https://2130706433/", "url_host_is_ip"),
        ("https://0x7f000001/", "url_host_is_ip"),
        ("https://0x7F.0.0.1/", "url_host_is_ip"),
        ("https://0177.0.0.1/", "url_host_is_ip"),
        ("https://127.1/", "url_host_is_ip"),
        ("https://127.0.0.1./", "url_host_is_ip"),
        ("https://%31%32%37.0.0.1/", "url_host_is_ip"),
        ("https://0/", "url_host_is_ip"),
        ("https://0.0.0.0/", "url_host_is_ip"),
        ("https://169.254.169.254/latest/meta-data/", "url_host_is_ip"),
        ("https://10.0.0.1/hook", "url_host_is_ip"),
        ("https://93.184.215.14/hook", "url_host_is_ip"),
        ("https://1.2.3.256/", "url_host_is_ip"),
        ("https://[::1]/", "url_host_is_ip"),
        ("https://[::]/", "url_host_is_ip"),
        ("https://[::ffff:169.254.169.254]/", "url_host_is_ip"),
        ("https://[::ffff:7f00:1]/", "url_host_is_ip"),
        ("https://[fe80::1]/", "url_host_is_ip"),
        ("https://[2606:2800:21f:cb07:6820:80da:af6b:3c96]/", "url_host_is_ip"),
        ("https://[::1/", "url_host_is_ip"),
        // Schemes other than https (checked before anything else).
        ("http://hooks.example-test.com/hook", "url_scheme_not_https"),
        ("HTTP://hooks.example-test.com/hook", "url_scheme_not_https"),
        ("http://127.0.0.1:8080/hook", "url_scheme_not_https"),
        ("ftp://hooks.example-test.com/hook", "url_scheme_not_https"),
        ("file:///etc/passwd", "url_scheme_not_https"),
        ("gopher://hooks.example-test.com:70/_x", "url_scheme_not_https"),
        ("ws://hooks.example-test.com/hook", "url_scheme_not_https"),
        ("javascript:alert(1)", "url_scheme_not_https"),
        // Credentials, even empty ones, and the `trusted@evil` confusion.
        ("https://user:s3cr3t-pa55@hooks.example-test.com/hook", "url_has_credentials"),
        ("https://user@hooks.example-test.com/hook", "url_has_credentials"),
        ("https://:s3cr3t-pa55@hooks.example-test.com/hook", "url_has_credentials"),
        ("https://@hooks.example-test.com/hook", "url_has_credentials"),
        ("https://hooks.example-test.com@127.0.0.1/hook", "url_has_credentials"),
        // Query strings and fragments, even empty ones.
        ("https://hooks.example-test.com/hook?token=abc", "url_has_query"),
        ("https://hooks.example-test.com/hook?", "url_has_query"),
        ("https://hooks.example-test.com/hook#frag", "url_has_fragment"),
        ("https://hooks.example-test.com/hook#", "url_has_fragment"),
        // Ports other than 443.
        ("https://hooks.example-test.com:8443/hook", "url_port_not_allowed"),
        ("https://hooks.example-test.com:80/hook", "url_port_not_allowed"),
        ("https://hooks.example-test.com:22/", "url_port_not_allowed"),
        ("https://hooks.example-test.com:0/", "url_port_not_allowed"),
        // Names that are not public.
        ("https://localhost/hook", "url_host_not_public"),
        ("https://LOCALHOST./hook", "url_host_not_public"),
        ("https://foo.localhost/hook", "url_host_not_public"),
        ("https://printer.local/hook", "url_host_not_public"),
        ("https://intranet/hook", "url_host_not_public"),
        ("https://a.internal/hook", "url_host_not_public"),
        ("https://x.test/hook", "url_host_not_public"),
        ("https://router.home.arpa/hook", "url_host_not_public"),
        ("https://1.0.0.127.in-addr.arpa/hook", "url_host_not_public"),
        ("https://www.example/hook", "url_host_not_public"),
        ("https://x.invalid/hook", "url_host_not_public"),
        ("https://abcdefghijklmnop.onion/hook", "url_host_not_public"),
        ("https://com/hook", "url_host_not_public"),
        ("https://co.uk/hook", "url_host_not_public"),
        ("https://hooks.not-a-real-tld-zz/hook", "url_host_not_public"),
        // Anything that does not parse.
        ("not a url", "url_invalid"),
        ("", "url_invalid"),
        ("https://", "url_invalid"),
        ("//hooks.example-test.com/hook", "url_invalid"),
        ("https://hooks example-test.com/hook", "url_invalid"),
        // Written differently from what URL parsers make of it (one row per class).
        ("https://hooks.example-test.com/ho\nok", "url_ambiguous"),
        ("https://hooks.exa\tmple-test.com/hook", "url_ambiguous"),
        (" https://hooks.example-test.com/hook", "url_ambiguous"),
        ("https://hooks.example-test.com/hook\u{0}", "url_ambiguous"),
        ("https://hooks.example-test.com\\@127.0.0.1/", "url_ambiguous"),
        ("https:\\\\hooks.example-test.com\\hook", "url_ambiguous"),
        ("https:/hooks.example-test.com/hook", "url_ambiguous"),
        ("https:///hooks.example-test.com/hook", "url_ambiguous"),
        ("https://hooks.%65xample-test.com/hook", "url_ambiguous"),
        ("https://hooks.\u{ff45}xample-test.com/hook", "url_ambiguous"),
        ("https://hooks.example-test.com:0443/hook", "url_ambiguous"),
        ("https://hooks.example-test.com/a/%2e%2e/hook", "url_ambiguous"),
        ("https://hooks.example-test.com/a/../hook", "url_ambiguous"),
        ("https://hooks.example-test.com/h\u{f6}ok", "url_ambiguous"),
        ("https://hooks_under.example-test.com/hook", "url_invalid"),
    ]
    .iter()
    .map(|(u, c)| (u.to_string(), *c))
    .collect();
    // Over 2,048 bytes, otherwise fine.
    let long = format!("https://{GOOD_HOST}/{}", "a".repeat(2048));
    table.push((long, "url_too_long"));
    table
}

/// Checks one refusal: 422, the expected code, a message, and no secret echoed.
fn assert_refused(what: &str, url: &str, expected: &str, status: u16, body: &Value) {
    assert_eq!((status, error_code_or_empty(body)), (422, expected), "{what} {url:?}: {status} {body}");
    let message = error_message(body);
    assert!(!message.is_empty(), "{what} {url:?}: the refusal says what to change: {body}");
    assert!(!message.contains("s3cr3t-pa55"), "{what} {url:?}: the message echoes the password: {body}");
}

async fn every_non_public_url_form_is_refused_at_registration_with_its_own_code(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[(GOOD_HOST, &[PUBLIC_V4, PUBLIC_V6])]).await;
    let fenix = strict_fenix(&db, &dns).await;
    let app = fenix.create_app("acme").await;

    for (url, expected) in refused_urls() {
        let (status, body) = register(&fenix, &app, &url).await;
        assert_refused("create", &url, expected, status, &body);
    }
    assert!(endpoints(&fenix, &app).await.is_empty(), "no refused URL created an endpoint");

    // The same table's well-formed neighbours are accepted (registered only, never sent to):
    // `:443` written out is the default port, and the host is normalised.
    let (status, body) = register(&fenix, &app, "https://hooks.example-test.com/hook").await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["url"], "https://hooks.example-test.com/hook");
    let (status, body) = register(&fenix, &app, "https://HOOKS.Example-Test.com.:443/hook").await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["url"], "https://hooks.example-test.com/hook");
    assert!(dns.queries_for(GOOD_HOST) > 0, "Fenix asked the test's DNS server");
}

async fn changing_an_endpoint_url_is_checked_like_registering_it(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[
        (GOOD_HOST, &[PUBLIC_V4, PUBLIC_V6]),
        ("other.example-test.com", &[PUBLIC_V4]),
        ("private.example-test.com", &["10.0.0.1"]),
    ])
    .await;
    let fenix = strict_fenix(&db, &dns).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, serde_json::json!({"url": "https://hooks.example-test.com/hook"})).await;
    let ep_id = ep["id"].as_str().unwrap();

    let mut table = refused_urls();
    table.push(("https://private.example-test.com/hook".into(), "destination_not_public"));
    table.push(("https://gone.example-test.com/hook".into(), "destination_unresolvable"));
    for (url, expected) in table {
        let (status, body) = change_url(&fenix, &app, ep_id, &url).await;
        assert_refused("update", &url, expected, status, &body);
    }
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep_id}"), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["url"], "https://hooks.example-test.com/hook", "refused updates left the URL as it was");

    let (status, body) = change_url(&fenix, &app, ep_id, "https://Other.Example-Test.com:443/v2").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["url"], "https://other.example-test.com/v2");
}

crate::on_both_backends!(
    every_non_public_url_form_is_refused_at_registration_with_its_own_code,
    changing_an_endpoint_url_is_checked_like_registering_it,
);
