//! Address parsing and the address policy: the input is an address, then
//! deny ranges, separated by `|` (e.g. `64:ff9b::a00:1|10.0.0.0/8`). Never
//! panics; an IPv4 address and its mapped and NAT64 forms share a verdict;
//! anything inside a denied range is refused, even when allowed.

#![no_main]

use std::net::{IpAddr, Ipv6Addr};

use fenix_destination::Policy;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut parts = text.split('|');
    let Some(Ok(ip)) = parts.next().map(str::parse::<IpAddr>) else { return };
    let deny_cidrs: Vec<ipnet::IpNet> = parts.filter_map(|p| p.parse().ok()).collect();
    let everything = vec!["0.0.0.0/0".parse().unwrap(), "::/0".parse().unwrap()];
    let denying = Policy { deny_cidrs: deny_cidrs.clone(), ..Policy::default() };
    let allowing = Policy { allow_http: true, allow_cidrs: everything, deny_cidrs: deny_cidrs.clone() };

    let _ = fenix_destination::is_global(ip);
    if deny_cidrs.iter().any(|net| net.contains(&ip)) {
        assert!(allowing.check_ip(ip).is_err(), "{ip} is denied");
    }
    if let IpAddr::V4(v4) = ip {
        let nat64 = Ipv6Addr::from((0x0064_ff9b_u128 << 96) | u128::from(u32::from(v4)));
        for policy in [&Policy::default(), &denying] {
            let verdict = policy.check_ip(ip).is_ok();
            assert_eq!(policy.check_ip(IpAddr::V6(v4.to_ipv6_mapped())).is_ok(), verdict, "{ip}");
            assert_eq!(policy.check_ip(IpAddr::V6(nat64)).is_ok(), verdict, "{ip}");
        }
    }
    // The same address as a URL host goes through the URL parser's reading of it.
    let host = match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    let _ = allowing.check_url(&format!("https://{host}/"));
});
