//! The address policy: a table of addresses on both sides of every boundary
//! of the IANA special-purpose registries, and of every IPv4-in-IPv6 form.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use fenix_destination::{is_global, Policy};

/// (address, globally reachable?)
#[rustfmt::skip]
const V4_TABLE: &[(&str, bool)] = &[
    // 0.0.0.0/8 "this network"
    ("0.0.0.0", false), ("0.255.255.255", false), ("1.0.0.0", true),
    // 10.0.0.0/8 private-use
    ("9.255.255.255", true), ("10.0.0.0", false), ("10.255.255.255", false), ("11.0.0.0", true),
    // 100.64.0.0/10 CGNAT
    ("100.63.255.255", true), ("100.64.0.0", false), ("100.127.255.255", false), ("100.128.0.0", true),
    // 127.0.0.0/8 loopback
    ("126.255.255.255", true), ("127.0.0.1", false), ("127.255.255.255", false), ("128.0.0.0", true),
    // 169.254.0.0/16 link-local, including cloud metadata
    ("169.253.255.255", true), ("169.254.0.0", false), ("169.254.169.254", false),
    ("169.254.255.255", false), ("169.255.0.0", true),
    // 172.16.0.0/12 private-use
    ("172.15.255.255", true), ("172.16.0.0", false), ("172.31.255.255", false), ("172.32.0.0", true),
    // 192.0.0.0/24 IETF protocol assignments, blocked whole
    ("191.255.255.255", true), ("192.0.0.0", false), ("192.0.0.9", false), ("192.0.0.10", false),
    ("192.0.0.255", false), ("192.0.1.0", true),
    // 192.0.2.0/24 TEST-NET-1
    ("192.0.2.0", false), ("192.0.2.255", false), ("192.0.3.0", true),
    // 192.88.99.0/24 deprecated 6to4 relay anycast
    ("192.88.98.255", true), ("192.88.99.0", false), ("192.88.99.255", false), ("192.88.100.0", true),
    // 192.168.0.0/16 private-use
    ("192.167.255.255", true), ("192.168.0.0", false), ("192.168.255.255", false), ("192.169.0.0", true),
    // 198.18.0.0/15 benchmarking
    ("198.17.255.255", true), ("198.18.0.0", false), ("198.19.255.255", false), ("198.20.0.0", true),
    // 198.51.100.0/24 TEST-NET-2
    ("198.51.99.255", true), ("198.51.100.0", false), ("198.51.100.255", false), ("198.51.101.0", true),
    // 203.0.113.0/24 TEST-NET-3
    ("203.0.112.255", true), ("203.0.113.0", false), ("203.0.113.255", false), ("203.0.114.0", true),
    // 224.0.0.0/4 multicast, 240.0.0.0/4 reserved, broadcast
    ("223.255.255.255", true), ("224.0.0.0", false), ("239.255.255.255", false),
    ("240.0.0.0", false), ("255.255.255.254", false), ("255.255.255.255", false),
    // globally reachable rows and ordinary public addresses
    ("192.31.196.1", true), ("192.52.193.1", true), ("192.175.48.1", true),
    ("8.8.8.8", true), ("1.1.1.1", true), ("93.184.215.14", true),
];

/// (address, globally reachable?)
#[rustfmt::skip]
const V6_TABLE: &[(&str, bool)] = &[
    // unspecified, loopback, IPv4-compatible ::/96 (blocked whole)
    ("::", false), ("::1", false), ("::2", false), ("::127.0.0.1", false), ("::8.8.8.8", false),
    ("::1:0:0", false),
    // IPv4-mapped ::ffff:0:0/96: judged by the IPv4 address
    ("::ffff:127.0.0.1", false), ("::ffff:10.0.0.1", false), ("::ffff:169.254.169.254", false),
    ("::ffff:0.0.0.0", false), ("::ffff:8.8.8.8", true), ("::ffff:93.184.215.14", true),
    // NAT64 64:ff9b::/96: judged by the IPv4 address
    ("64:ff9b::8.8.8.8", true), ("64:ff9b::93.184.215.14", true), ("64:ff9b::127.0.0.1", false),
    ("64:ff9b::10.0.0.1", false), ("64:ff9b::192.168.0.1", false), ("64:ff9b::100.64.0.1", false),
    ("64:ff9b::1:808:808", false), ("64:ff9b::ffff:1:808:808", false),
    // local-use NAT64 64:ff9b:1::/48 (blocked whole)
    ("64:ff9b:1::808:808", false), ("64:ff9b:1::a00:1", false), ("64:ff9b:1:ffff::1", false),
    // discard-only 100::/64 and dummy 100:0:0:1::/64
    ("100::", false), ("100::ffff:ffff:ffff:ffff", false), ("100:0:0:1::1", false),
    // Teredo 2001::/32 (blocked whole, public or private server inside)
    ("2001::", false), ("2001:0:4136:e378:8000:63bf:3fff:fdd2", false), ("2001:0:a00:1::1", false),
    // 2001::/23 IETF protocol assignments and its globally reachable rows
    ("2001:1::1", true), ("2001:1::2", true), ("2001:1::3", true), ("2001:1::4", false),
    ("2001:2::", false), ("2001:2:0:ffff::1", false), ("2001:2:1::", false),
    ("2001:3::", true), ("2001:3:ffff::1", true), ("2001:4:112::1", true), ("2001:4:113::1", false),
    ("2001:10::1", false), ("2001:20::1", true), ("2001:2f:ffff::1", true), ("2001:30::1", true),
    ("2001:3f:ffff::1", true), ("2001:40::1", false), ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", false),
    ("2001:200::", true),
    // documentation 2001:db8::/32
    ("2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", true), ("2001:db8::", false),
    ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false), ("2001:db9::", true),
    // 6to4 2002::/16 (blocked whole, public or private IPv4 inside)
    ("2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true), ("2002:808:808::1", false),
    ("2002:7f00:1::1", false), ("2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false), ("2003::", true),
    // documentation 3fff::/20
    ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", true), ("3fff::", false),
    ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", false), ("3fff:1000::", true),
    // outside 2000::/3 global unicast, segment routing, ULA, link-local, site-local, multicast
    ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false), ("4000::", false), ("5f00::1", false),
    ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false), ("fc00::", false), ("fd00::1", false),
    ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false), ("fe80::1", false),
    ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false), ("fec0::1", false), ("feff::1", false),
    ("ff02::1", false), ("ff0e::1", false), ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
    // ordinary public addresses and AS112 direct delegation
    ("2606:2800:21f:cb07:6820:80da:af6b:3c96", true), ("2606:4700:4700::1111", true),
    ("2001:4860:4860::8888", true), ("2a00:1450:4001::1", true), ("2620:4f:8000::1", true),
];

fn mismatches(table: &[(&str, bool)]) -> Vec<String> {
    table
        .iter()
        .filter(|(ip, want)| is_global(ip.parse().unwrap()) != *want)
        .map(|(ip, want)| format!("{ip}: expected global={want}"))
        .collect()
}

#[test]
fn ipv4_special_purpose_ranges_are_blocked_on_both_sides_of_each_boundary() {
    assert_eq!(mismatches(V4_TABLE), Vec::<String>::new());
}

#[test]
fn ipv6_special_purpose_ranges_and_embeddings_are_blocked_on_both_sides_of_each_boundary() {
    assert_eq!(mismatches(V6_TABLE), Vec::<String>::new());
}

#[test]
fn mapped_and_nat64_forms_share_their_ipv4_verdict_while_other_embeddings_never_pass() {
    for (ip, global) in V4_TABLE {
        let v4: Ipv4Addr = ip.parse().unwrap();
        let [a, b, c, d] = v4.octets();
        let (hi, lo) = (u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]));
        let nat64 = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, hi, lo);
        let compat = Ipv6Addr::new(0, 0, 0, 0, 0, 0, hi, lo);
        let six_to_four = Ipv6Addr::new(0x2002, hi, lo, 0, 0, 0, 0, 1);
        let local_nat64 = Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, hi, lo);
        assert_eq!(is_global(v4.to_ipv6_mapped().into()), *global, "::ffff:{v4}");
        assert_eq!(is_global(nat64.into()), *global, "{nat64}");
        for blocked in [compat, six_to_four, local_nat64] {
            assert!(!is_global(blocked.into()), "{blocked}");
        }
    }
}

#[test]
fn the_production_policy_refuses_non_public_addresses_with_a_reason() {
    let err = Policy::default().check_ip("127.0.0.1".parse().unwrap()).unwrap_err();
    assert_eq!(err.code(), "destination_not_public");
    assert_eq!(err.attempt_error(), "destination_blocked");
    assert!(err.message().contains("127.0.0.1"), "{err}");
    assert!(err.message().contains("loopback"), "{err}");
    for public in ["93.184.215.14", "2606:4700:4700::1111", "::ffff:8.8.8.8"] {
        assert!(Policy::default().check_ip(public.parse().unwrap()).is_ok(), "{public}");
    }
}

#[test]
fn allowed_cidrs_let_their_addresses_through_and_nothing_else() {
    let policy =
        Policy { allow_cidrs: vec!["127.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()], ..Policy::default() };
    let check = |ip: &str| policy.check_ip(ip.parse::<IpAddr>().unwrap()).is_ok();
    for allowed in ["127.0.0.1", "127.255.0.9", "::ffff:127.0.0.1", "fd00::1", "8.8.8.8"] {
        assert!(check(allowed), "{allowed} should pass");
    }
    for refused in ["10.0.0.1", "::1", "64:ff9b::127.0.0.1", "fc00::1", "169.254.169.254"] {
        assert!(!check(refused), "{refused} should be refused");
    }
}

fn denying(ranges: &[&str]) -> Policy {
    Policy { deny_cidrs: ranges.iter().map(|r| r.parse().unwrap()).collect(), ..Policy::default() }
}

#[test]
fn a_denied_ipv4_range_is_refused_in_its_mapped_and_nat64_forms_too() {
    let check = |policy: &Policy, ip: &str| policy.check_ip(ip.parse::<IpAddr>().unwrap()).is_ok();
    // The same range written in each of the three forms denies all three forms.
    for deny in ["93.184.215.0/24", "::ffff:93.184.215.0/120", "64:ff9b::5db8:d700/120"] {
        let policy = denying(&[deny]);
        for refused in ["93.184.215.14", "::ffff:93.184.215.14", "64:ff9b::93.184.215.14"] {
            assert!(!check(&policy, refused), "{refused} under {deny}");
        }
        for allowed in ["93.184.216.14", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2606:4700:4700::1111"] {
            assert!(check(&policy, allowed), "{allowed} under {deny}");
        }
    }
    let err = denying(&["93.184.215.0/24"]).check_ip("93.184.215.14".parse().unwrap()).unwrap_err();
    assert_eq!(err.code(), "destination_not_public");
    assert!(err.message().contains("operator"), "{err}");
}

#[test]
fn a_denied_network_specific_nat64_prefix_is_refused_whole() {
    let policy = denying(&["2001:db8:64::/96", "2a00:1450:64::/96"]);
    // Public, private, anything embedded: the whole prefix is refused.
    for refused in ["2a00:1450:64::808:808", "2a00:1450:64::a00:1", "2a00:1450:64::ffff:ffff"] {
        assert!(policy.check_ip(refused.parse().unwrap()).is_err(), "{refused}");
    }
    // Neighbours of the prefix, and the well-known prefix, are judged as before.
    for allowed in ["2a00:1450:64:0:1::808:808", "2a00:1450:63::1", "64:ff9b::8.8.8.8"] {
        assert!(policy.check_ip(allowed.parse().unwrap()).is_ok(), "{allowed}");
    }
}

#[test]
fn the_deny_list_wins_over_the_development_allow_list() {
    let policy = Policy {
        allow_cidrs: vec!["127.0.0.0/8".parse().unwrap()],
        deny_cidrs: vec!["127.0.0.53/32".parse().unwrap()],
        ..Policy::default()
    };
    let check = |ip: &str| policy.check_ip(ip.parse::<IpAddr>().unwrap()).is_ok();
    assert!(check("127.0.0.1"));
    assert!(!check("127.0.0.53"));
    assert!(!check("::ffff:127.0.0.53"));
    let err = policy.check_url("https://127.0.0.53/").unwrap_err();
    assert_eq!(err.code(), "destination_not_public");
    assert!(policy.check_url("https://127.0.0.1/").is_ok());
}
