//! The URL policy: an adversarial table of refused URLs (each with the code
//! it must get), a table of accepted ones with their normalised form, and
//! the development overrides.

use fenix_destination::{Policy, MAX_URL_LEN};

/// (raw URL, expected code) under the production policy.
#[rustfmt::skip]
const REFUSED: &[(&str, &str)] = &[
    // unparsable or malformed
    ("", "url_invalid"), ("example.com", "url_invalid"), ("not a url", "url_invalid"),
    ("https://", "url_invalid"),
    ("https://exa mple.com/", "url_invalid"), ("https://example.com/a b", "url_invalid"),
    ("https://example.com/\u{0}x", "url_invalid"), ("https://example.com/\u{3000}", "url_invalid"),
    ("https://ex_ample.com/", "url_invalid"), ("https://example..com/", "url_invalid"),
    ("https://example.com../", "url_invalid"),
    ("https://example.com:99999/", "url_invalid"),
    // scheme
    ("http://example.com/", "url_scheme_not_https"), ("HTTP://example.com/", "url_scheme_not_https"),
    ("ftp://example.com/", "url_scheme_not_https"), ("file:///etc/passwd", "url_scheme_not_https"),
    ("javascript:alert(1)", "url_scheme_not_https"), ("wss://example.com/", "url_scheme_not_https"),
    ("gopher://example.com/", "url_scheme_not_https"), ("data:text/plain,hi", "url_scheme_not_https"),
    ("mailto:hooks@example.com", "url_scheme_not_https"),
    // credentials, even empty ones, and confusing authorities
    ("https://user:secret@example.com/", "url_has_credentials"),
    ("https://user@example.com/", "url_has_credentials"),
    ("https://:secret@example.com/", "url_has_credentials"),
    ("https://@example.com/", "url_has_credentials"),
    ("https://example.com@evil.example.org/", "url_has_credentials"),
    ("https://user@127.0.0.1:8443/?q#f", "url_has_credentials"),
    // query and fragment, even empty
    ("https://example.com/?", "url_has_query"), ("https://example.com/?token=abc", "url_has_query"),
    ("https://example.com?x", "url_has_query"), ("https://example.com/#", "url_has_fragment"),
    ("https://example.com/#frag", "url_has_fragment"),
    // ports
    ("https://example.com:8443/", "url_port_not_allowed"), ("https://example.com:80/", "url_port_not_allowed"),
    ("https://example.com:0/", "url_port_not_allowed"), ("https://example.com:1/", "url_port_not_allowed"),
    // IP literals in every notation, public or not
    ("https://127.0.0.1/", "url_host_is_ip"), ("https://127.0.0.1./", "url_host_is_ip"),
    ("https://2130706433/", "url_host_is_ip"), ("https://0x7f000001/", "url_host_is_ip"),
    ("https://0X7F000001/", "url_host_is_ip"), ("https://0x7f.0.0.1/", "url_host_is_ip"),
    ("https://0177.0.0.1/", "url_host_is_ip"), ("https://017700000001/", "url_host_is_ip"),
    ("https://127.1/", "url_host_is_ip"), ("https://127.0.1/", "url_host_is_ip"),
    ("https://0x7f.1/", "url_host_is_ip"), ("https://0/", "url_host_is_ip"),
    ("https://%31%32%37.0.0.1/", "url_host_is_ip"), ("https://\u{ff11}\u{ff12}\u{ff17}.0.0.1/", "url_host_is_ip"),
    ("https://169.254.169.254/", "url_host_is_ip"), ("https://93.184.215.14/", "url_host_is_ip"),
    ("https://8.8.8.8:443/", "url_host_is_ip"), ("https://[::1]/", "url_host_is_ip"),
    ("https://[::ffff:127.0.0.1]/", "url_host_is_ip"), ("https://[0:0:0:0:0:ffff:7f00:1]/", "url_host_is_ip"),
    ("https://[2606:2800:21f:cb07:6820:80da:af6b:3c96]/", "url_host_is_ip"),
    // malformed addresses, IPv6 zones included, are IP literals too
    ("https://256.0.0.1/", "url_host_is_ip"), ("https://1.2.3.4.5/", "url_host_is_ip"),
    ("https://[::1/", "url_host_is_ip"), ("https://[fe80::1%25eth0]/", "url_host_is_ip"),
    ("https://[fe80::1%eth0]/", "url_host_is_ip"), ("https://[::1]x/", "url_host_is_ip"),
    // names that are not public
    ("https://localhost/", "url_host_not_public"), ("https://LOCALHOST./", "url_host_not_public"),
    ("https://foo.localhost/", "url_host_not_public"), ("https://\u{ff4c}\u{ff4f}\u{ff43}\u{ff41}\u{ff4c}\u{ff48}\u{ff4f}\u{ff53}\u{ff54}/", "url_host_not_public"),
    ("https://printer.local/", "url_host_not_public"), ("https://intranet/", "url_host_not_public"),
    ("https://a.internal/", "url_host_not_public"), ("https://router.home.arpa/", "url_host_not_public"),
    ("https://1.0.0.127.in-addr.arpa/", "url_host_not_public"), ("https://x.test/", "url_host_not_public"),
    ("https://x.invalid/", "url_host_not_public"), ("https://x.example/", "url_host_not_public"),
    ("https://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/", "url_host_not_public"),
    ("https://x.alt/", "url_host_not_public"), ("https://box.localdomain/", "url_host_not_public"),
    ("https://nas.lan/", "url_host_not_public"), ("https://dc.corp/", "url_host_not_public"),
    ("https://x.home/", "url_host_not_public"), ("https://x.private/", "url_host_not_public"),
    ("https://com/", "url_host_not_public"), ("https://co.uk/", "url_host_not_public"),
    ("https://foo.notarealtld/", "url_host_not_public"),
    // WHATWG skips extra slashes, so `path` is the (single-label) host here
    ("https:///path", "url_host_not_public"),
    // Written differently from what the parser makes of it: one row per class.
    // Tabs and line breaks anywhere (the parser drops them):
    ("https://exa\tmple.com/", "url_ambiguous"), ("https://example.com/\n", "url_ambiguous"),
    ("https://example.com/a\r\nb", "url_ambiguous"), ("ht\ttps://example.com/", "url_ambiguous"),
    // leading or trailing space or C0 control (the parser trims them):
    (" https://example.com/", "url_ambiguous"), ("https://example.com/ ", "url_ambiguous"),
    ("\u{1}https://example.com/", "url_ambiguous"), ("https://example.com/\u{1f}", "url_ambiguous"),
    // backslashes (the parser reads them as `/`), including the classic host confusion:
    ("https:\\\\example.com\\x", "url_ambiguous"), ("https://example.com\\@evil.example.org/", "url_ambiguous"),
    ("https://example.com/a\\b", "url_ambiguous"), ("https:/\\example.com/", "url_ambiguous"),
    // not exactly two slashes after the scheme:
    ("https:example.com/", "url_ambiguous"), ("https:/example.com/", "url_ambiguous"),
    ("https:///example.com/", "url_ambiguous"), ("https:////example.com/", "url_ambiguous"),
    // percent-encoded, full-width, compatibility or unnormalised characters in the host:
    ("https://%65xample.com/", "url_ambiguous"), ("https://example%2ecom/", "url_ambiguous"),
    ("https://\u{ff45}\u{ff58}\u{ff41}\u{ff4d}\u{ff50}\u{ff4c}\u{ff45}.com/", "url_ambiguous"),
    ("https://example\u{3002}com/", "url_ambiguous"), ("https://\u{fb01}sh.com/", "url_ambiguous"),
    ("https://mu\u{308}nchen.de/", "url_ambiguous"), ("https://ex\u{ad}ample.com/", "url_ambiguous"),
    // a port with leading zeros, or an empty one:
    ("https://example.com:0443/", "url_ambiguous"), ("https://example.com:/", "url_ambiguous"),
    // `.`, `..` and `%2e` path segments (the parser resolves them):
    ("https://example.com/a/../b", "url_ambiguous"), ("https://example.com/./a", "url_ambiguous"),
    ("https://example.com/a/%2e%2e/b", "url_ambiguous"), ("https://example.com/a/%2E", "url_ambiguous"),
    ("https://example.com/a/.%2e/", "url_ambiguous"), ("https://example.com/..", "url_ambiguous"),
    // path characters the parser percent-encodes:
    ("https://example.com/\u{fc}", "url_ambiguous"), ("https://example.com/{x}", "url_ambiguous"),
    ("https://example.com/a\"b", "url_ambiguous"), ("https://example.com/<x>", "url_ambiguous"),
    ("https://example.com/`x`", "url_ambiguous"),
];

/// (raw URL, normalised URL) under the production policy.
const ACCEPTED: &[(&str, &str)] = &[
    ("https://example.com/", "https://example.com/"),
    ("https://example.com", "https://example.com/"),
    ("https://example.com:443/", "https://example.com/"),
    ("https://Example.COM/Path", "https://example.com/Path"),
    ("https://BÜcher.de./x", "https://xn--bcher-kva.de/x"),
    ("https://münchen.de/hook", "https://xn--mnchen-3ya.de/hook"),
    ("https://xn--bcher-kva.de/", "https://xn--bcher-kva.de/"),
    ("https://hooks.example.co.uk/a/b", "https://hooks.example.co.uk/a/b"),
    ("https://tenant.github.io/hook", "https://tenant.github.io/hook"),
    ("https://123.example.com/", "https://123.example.com/"),
    ("https://0x7f.example.com/", "https://0x7f.example.com/"),
    ("https://example.com/%7Efoo/bar%20baz", "https://example.com/%7Efoo/bar%20baz"),
    // The documented normalisations: scheme and host case, IDNA of an NFC
    // Unicode host, one trailing dot, the default port, an empty path.
    ("HTTPS://EXAMPLE.COM/A", "https://example.com/A"),
    ("https://M\u{dc}NCHEN.de/", "https://xn--mnchen-3ya.de/"),
    ("https://example.com.:443", "https://example.com/"),
    ("https://XN--BCHER-KVA.de/", "https://xn--bcher-kva.de/"),
    // What the parser keeps as written is fine, lower-case escapes and `%2e` inside a segment too.
    ("https://example.com/a%2fb/%2e%2e%2e/c%2ed/.x/..y/", "https://example.com/a%2fb/%2e%2e%2e/c%2ed/.x/..y/"),
    ("https://example.com/a//b/|^[]!$&'()*+,;=:@~", "https://example.com/a//b/|^[]!$&'()*+,;=:@~"),
];

#[test]
fn refused_urls_get_their_specific_code() {
    let policy = Policy::default();
    let wrong: Vec<String> = REFUSED
        .iter()
        .filter_map(|(url, want)| match policy.check_url(url) {
            Err(e) if e.code() == *want => None,
            Err(e) => Some(format!("{url:?}: expected {want}, got {} ({e})", e.code())),
            Ok(u) => Some(format!("{url:?}: expected {want}, accepted as {u}")),
        })
        .collect();
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn accepted_urls_are_returned_normalised() {
    let policy = Policy::default();
    for (url, normalised) in ACCEPTED {
        match policy.check_url(url) {
            Ok(u) => assert_eq!(u.as_str(), *normalised, "{url}"),
            Err(e) => panic!("{url:?} refused: {} ({e})", e.code()),
        }
    }
}

#[test]
fn urls_longer_than_2048_bytes_are_too_long() {
    let base = "https://example.com/";
    let fits = format!("{base}{}", "a".repeat(MAX_URL_LEN - base.len()));
    assert!(Policy::default().check_url(&fits).is_ok());
    let err = Policy::default().check_url(&format!("{fits}a")).unwrap_err();
    assert_eq!(err.code(), "url_too_long");
    // `bücher.de` (10 bytes) becomes `xn--bcher-kva.de` (16 bytes): fits as typed, too long normalised.
    let unicode = "https://bücher.de/";
    let grows = format!("{unicode}{}", "a".repeat(MAX_URL_LEN - unicode.len()));
    assert_eq!(grows.len(), MAX_URL_LEN);
    assert_eq!(Policy::default().check_url(&grows).unwrap_err().code(), "url_too_long");
}

#[test]
fn messages_say_what_to_change_and_never_echo_secrets() {
    let policy = Policy::default();
    let err = policy.check_url("https://admin:hunter2@example.com/").unwrap_err();
    assert!(!err.message().contains("hunter2") && !err.message().contains("admin"), "{err}");
    let err = policy.check_url("https://example.com/hook?token=s3cr3t").unwrap_err();
    assert!(!err.to_string().contains("s3cr3t"), "{err}");
    assert!(err.message().contains("remove the query"), "{err}");
    let err = policy.check_url("https://printer.local/hook").unwrap_err();
    assert!(err.message().contains("printer.local"), "{err}");
    assert_eq!(err.attempt_error(), "destination_blocked");
}

#[test]
fn allow_http_admits_plain_http_and_any_port_but_nothing_else() {
    let policy = Policy { allow_http: true, ..Policy::default() };
    let ok = |url: &str| policy.check_url(url).map(|u| u.to_string());
    assert_eq!(ok("http://example.com:8080/hook").unwrap(), "http://example.com:8080/hook");
    assert_eq!(ok("https://example.com:8443/").unwrap(), "https://example.com:8443/");
    for (url, code) in [
        ("ftp://example.com/", "url_scheme_not_https"),
        ("http://127.0.0.1:9000/hook", "url_host_is_ip"),
        ("http://localhost:9000/", "url_host_not_public"),
        ("http://example.com/?q", "url_has_query"),
    ] {
        assert_eq!(policy.check_url(url).unwrap_err().code(), code, "{url}");
    }
}

#[test]
fn allow_cidrs_admit_ip_literal_hosts_inside_them() {
    let loopback = Policy {
        allow_http: true,
        allow_cidrs: vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()],
        ..Policy::default()
    };
    let ok = |url: &str| loopback.check_url(url).map(|u| u.to_string());
    assert_eq!(ok("http://127.0.0.1:9000/hook").unwrap(), "http://127.0.0.1:9000/hook");
    assert_eq!(ok("http://2130706433:9000/").unwrap(), "http://127.0.0.1:9000/");
    assert_eq!(ok("http://[::1]:9000/").unwrap(), "http://[::1]:9000/");
    assert_eq!(ok("http://[::ffff:127.0.0.1]/").unwrap(), "http://[::ffff:7f00:1]/");
    assert_eq!(ok("http://10.0.0.1/").unwrap_err().code(), "url_host_is_ip");

    let https_only = Policy { allow_cidrs: vec!["127.0.0.0/8".parse().unwrap()], ..Policy::default() };
    assert!(https_only.check_url("https://127.0.0.1/").is_ok());
    let err = https_only.check_url("https://127.0.0.1:9000/").unwrap_err();
    assert_eq!(err.code(), "url_port_not_allowed");
}
