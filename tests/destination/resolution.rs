//! The address policy at registration: names served by the test's DNS server
//! with public, non-public, mixed and missing answers. Names with public
//! answers are accepted and never sent anything (no event is ever sent here).

use super::common::{endpoints, register, strict_fenix, PUBLIC_V4, PUBLIC_V6};
use crate::support::{dns::TestDns, error_code_or_empty, error_message, Backend, TestDb};

/// Names answering only globally reachable addresses: accepted.
const PUBLIC_NAMES: &[(&str, &[&str])] = &[
    ("public.dest-test.com", &[PUBLIC_V4, PUBLIC_V6]),
    ("public4.dest-test.com", &[PUBLIC_V4]),
    ("public6.dest-test.com", &[PUBLIC_V6]),
    ("two-public.dest-test.com", &[PUBLIC_V4, "8.8.4.4", "2001:4860:4860::8844"]),
    // IPv4 embeddings that are unwrapped (docs: mapped and NAT64 are judged by the IPv4 inside).
    ("mapped-public.dest-test.com", &["::ffff:93.184.215.14"]),
    ("nat64-public.dest-test.com", &["64:ff9b::5db8:d70e"]),
];

/// Names with at least one address that is not globally reachable: `destination_not_public`.
const NON_PUBLIC_NAMES: &[(&str, &[&str])] = &[
    ("private10.dest-test.com", &["10.0.0.1"]),
    ("private172.dest-test.com", &["172.16.5.4"]),
    ("private192.dest-test.com", &["192.168.1.1"]),
    ("metadata.dest-test.com", &["169.254.169.254"]),
    ("cgnat.dest-test.com", &["100.64.0.1"]),
    ("loopback.dest-test.com", &["127.0.0.1"]),
    ("unspecified.dest-test.com", &["0.0.0.0"]),
    ("this-network.dest-test.com", &["0.1.2.3"]),
    ("ietf.dest-test.com", &["192.0.0.8"]),
    ("doc.dest-test.com", &["192.0.2.10"]),
    ("doc2.dest-test.com", &["198.51.100.7"]),
    ("doc3.dest-test.com", &["203.0.113.9"]),
    ("bench.dest-test.com", &["198.18.0.1"]),
    ("multicast.dest-test.com", &["224.0.0.1"]),
    ("reserved.dest-test.com", &["240.0.0.1"]),
    ("broadcast.dest-test.com", &["255.255.255.255"]),
    ("loopback6.dest-test.com", &["::1"]),
    ("unspecified6.dest-test.com", &["::"]),
    ("ula.dest-test.com", &["fd00::1"]),
    ("ula-fc.dest-test.com", &["fc00::1"]),
    ("linklocal6.dest-test.com", &["fe80::1"]),
    ("sitelocal.dest-test.com", &["fec0::1"]),
    ("multicast6.dest-test.com", &["ff02::1"]),
    ("doc6.dest-test.com", &["2001:db8::1"]),
    ("bench6.dest-test.com", &["2001:2::1"]),
    ("discard6.dest-test.com", &["100::1"]),
    ("mapped.dest-test.com", &["::ffff:10.0.0.1"]),
    ("mapped-loopback.dest-test.com", &["::ffff:127.0.0.1"]),
    ("mapped-metadata.dest-test.com", &["::ffff:169.254.169.254"]),
    ("compat.dest-test.com", &["::a00:1"]),
    ("nat64.dest-test.com", &["64:ff9b::a00:1"]),
    ("nat64-local.dest-test.com", &["64:ff9b:1::5db8:d70e"]),
    ("6to4.dest-test.com", &["2002:a00:1::"]),
    ("6to4-public.dest-test.com", &["2002:5db8:d70e::1"]),
    ("teredo.dest-test.com", &["2001::1"]),
    ("mixed.dest-test.com", &[PUBLIC_V4, "10.0.0.1"]),
    ("mixed-order.dest-test.com", &["10.0.0.1", PUBLIC_V4]),
    ("mixed-families.dest-test.com", &[PUBLIC_V4, "fd00::1"]),
    ("mixed-families2.dest-test.com", &["127.0.0.1", PUBLIC_V6]),
    ("mixed-many.dest-test.com", &[PUBLIC_V4, "8.8.4.4", "169.254.169.254", PUBLIC_V6]),
    // A well-known wildcard-DNS trick, served here by the test's zone.
    ("127.0.0.1.nip.io", &["127.0.0.1"]),
    ("169.254.169.254.sslip.io", &["169.254.169.254"]),
];

/// Names that do not resolve: `destination_unresolvable`.
const UNRESOLVABLE_NAMES: &[(&str, &[&str])] = &[
    // Not in the zone: NXDOMAIN.
    ("nxdomain.dest-test.com", &[]),
    ("typo.dest-test.com", &[]),
];

async fn zone() -> TestDns {
    let dns = TestDns::start().await;
    for (name, ips) in PUBLIC_NAMES.iter().chain(NON_PUBLIC_NAMES) {
        dns.set(name, ips);
    }
    // In the zone, but with no A or AAAA record (NOERROR, empty answer).
    dns.set("no-records.dest-test.com", &[]);
    dns
}

async fn names_are_judged_by_every_address_they_resolve_to(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = zone().await;
    let fenix = strict_fenix(&db, &dns).await;
    let app = fenix.create_app("acme").await;

    for (name, ips) in NON_PUBLIC_NAMES {
        let (status, body) = register(&fenix, &app, &format!("https://{name}/hook")).await;
        assert_eq!(
            (status, error_code_or_empty(&body)),
            (422, "destination_not_public"),
            "{name} answering {ips:?}: {body}"
        );
        let message = error_message(&body);
        assert!(message.contains(name), "{name}: the message names the host: {body}");
        assert!(dns.queries_for(name) > 0, "{name} was looked up on the test's DNS server");
    }
    let mut unresolvable: Vec<&str> = UNRESOLVABLE_NAMES.iter().map(|(n, _)| *n).collect();
    unresolvable.push("no-records.dest-test.com");
    for name in unresolvable {
        let (status, body) = register(&fenix, &app, &format!("https://{name}/hook")).await;
        assert_eq!((status, error_code_or_empty(&body)), (422, "destination_unresolvable"), "{name}: {body}");
        assert!(dns.queries_for(name) > 0, "{name} was looked up on the test's DNS server");
    }
    assert!(endpoints(&fenix, &app).await.is_empty(), "no refused name created an endpoint");

    // Public answers are accepted. These endpoints are never sent anything.
    for (name, ips) in PUBLIC_NAMES {
        let url = format!("https://{name}/hook");
        let (status, body) = register(&fenix, &app, &url).await;
        assert_eq!(status, 201, "{name} answering {ips:?}: {body}");
        assert_eq!(body["url"], url.as_str());
        assert_eq!(body["state"], "active");
    }
    assert_eq!(endpoints(&fenix, &app).await.len(), PUBLIC_NAMES.len());
    assert!(fenix.deliveries(&app, "").await.is_empty(), "registration alone sends nothing");
}

async fn a_name_that_turns_private_is_refused_at_its_next_registration(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[("flip.dest-test.com", &[PUBLIC_V4])]).await;
    let fenix = strict_fenix(&db, &dns).await;
    let app = fenix.create_app("acme").await;
    let (status, body) = register(&fenix, &app, "https://flip.dest-test.com/a").await;
    assert_eq!(status, 201, "{body}");
    // Nothing is cached: the next look-up sees the new answer.
    dns.set("flip.dest-test.com", &["192.168.0.10"]);
    let (status, body) = register(&fenix, &app, "https://flip.dest-test.com/b").await;
    assert_eq!((status, error_code_or_empty(&body)), (422, "destination_not_public"), "{body}");
    dns.remove("flip.dest-test.com");
    let (status, body) = register(&fenix, &app, "https://flip.dest-test.com/c").await;
    assert_eq!((status, error_code_or_empty(&body)), (422, "destination_unresolvable"), "{body}");
    assert_eq!(endpoints(&fenix, &app).await.len(), 1);
}

crate::on_both_backends!(
    names_are_judged_by_every_address_they_resolve_to,
    a_name_that_turns_private_is_refused_at_its_next_registration,
);
