//! Property tests (proptest) of the URL and address policies: the rules the
//! example tables in `tests/` illustrate, checked on generated input. Inside
//! the crate so that they can walk the registry tables themselves.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use proptest::prelude::*;

use crate::ip_policy::{V4_NOT_GLOBAL, V6_GLOBAL_EXCEPTIONS, V6_NOT_GLOBAL};
use crate::{is_global, Policy};

fn v4_in(net: Ipv4Net, offset: u32) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(net.network()) | (offset & u32::from(net.hostmask())))
}

fn v6_in(net: Ipv6Net, offset: u128) -> Ipv6Addr {
    Ipv6Addr::from(u128::from(net.network()) | (offset & u128::from(net.hostmask())))
}

fn mapped(v4: Ipv4Addr) -> IpAddr {
    IpAddr::V6(v4.to_ipv6_mapped())
}

fn nat64(v4: Ipv4Addr) -> IpAddr {
    IpAddr::V6(Ipv6Addr::from((0x0064_ff9b_u128 << 96) | u128::from(u32::from(v4))))
}

fn any_net() -> impl Strategy<Value = IpNet> {
    prop_oneof![
        (any::<u32>(), 0u8..=32).prop_map(|(a, len)| IpNet::V4(Ipv4Net::new(a.into(), len).unwrap().trunc())),
        (any::<u128>(), 0u8..=128).prop_map(|(a, len)| IpNet::V6(Ipv6Net::new(a.into(), len).unwrap().trunc())),
    ]
}

fn any_ip_in(net: IpNet, offset: u128) -> IpAddr {
    match net {
        IpNet::V4(net) => IpAddr::V4(v4_in(net, offset as u32)),
        IpNet::V6(net) => IpAddr::V6(v6_in(net, offset)),
    }
}

proptest! {
    #[test]
    fn every_address_in_a_listed_ipv4_range_is_not_global(row in 0..V4_NOT_GLOBAL.len(), offset: u32) {
        let ip = v4_in(V4_NOT_GLOBAL[row].0, offset);
        prop_assert!(!is_global(IpAddr::V4(ip)), "{ip}");
        prop_assert!(!is_global(mapped(ip)) && !is_global(nat64(ip)), "{ip} embedded");
    }

    #[test]
    fn every_address_in_a_listed_ipv6_range_is_not_global_outside_the_listed_exceptions(
        row in 0..V6_NOT_GLOBAL.len(),
        offset: u128,
    ) {
        let ip = v6_in(V6_NOT_GLOBAL[row].0, offset);
        prop_assume!(!V6_GLOBAL_EXCEPTIONS.iter().any(|net| net.contains(&ip)));
        prop_assert!(!is_global(IpAddr::V6(ip)), "{ip}");
    }

    #[test]
    fn every_address_in_a_listed_exception_is_global(row in 0..V6_GLOBAL_EXCEPTIONS.len(), offset: u128) {
        let ip = v6_in(V6_GLOBAL_EXCEPTIONS[row], offset);
        prop_assert!(is_global(IpAddr::V6(ip)), "{ip}");
    }

    #[test]
    fn an_ipv4_address_and_its_mapped_and_nat64_forms_get_the_same_verdict(
        v4: u32,
        deny in prop::collection::vec(any_net(), 0..3),
    ) {
        let v4 = Ipv4Addr::from(v4);
        for policy in [Policy::default(), Policy { deny_cidrs: deny.clone(), ..Policy::default() }] {
            let verdict = policy.check_ip(IpAddr::V4(v4)).is_ok();
            prop_assert_eq!(policy.check_ip(mapped(v4)).is_ok(), verdict, "::ffff:{} under {:?}", v4, deny);
            prop_assert_eq!(policy.check_ip(nat64(v4)).is_ok(), verdict, "64:ff9b::{} under {:?}", v4, deny);
        }
    }

    #[test]
    fn anything_inside_a_denied_range_is_refused_even_when_allowed(net in any_net(), offset: u128) {
        let everything = vec!["0.0.0.0/0".parse().unwrap(), "::/0".parse().unwrap()];
        let policy = Policy { allow_http: true, allow_cidrs: everything, deny_cidrs: vec![net] };
        let ip = any_ip_in(net, offset);
        let err = policy.check_ip(ip).unwrap_err();
        prop_assert_eq!(err.code(), "destination_not_public");
        if let IpAddr::V4(v4) = ip {
            prop_assert!(policy.check_ip(mapped(v4)).is_err() && policy.check_ip(nat64(v4)).is_err(), "{}", v4);
        }
    }
}

/// Host names the production policy accepts: letters and digits under a
/// known public suffix, in mixed case, sometimes with the trailing dot. The
/// registrable label starts `fnx` so that it is never itself a public suffix
/// (the list has private entries such as `br.com`).
fn valid_host() -> impl Strategy<Value = String> {
    let tld = prop::sample::select(vec!["com", "de", "co.uk", "io", "org", "COM"]);
    (prop::collection::vec("[a-zA-Z0-9]{1,10}\\.", 0..2), "[fF][nN][xX][a-zA-Z0-9]{0,8}", tld, any::<bool>())
        .prop_map(|(subs, name, tld, dot)| format!("{}{name}.{tld}{}", subs.concat(), if dot { "." } else { "" }))
}

/// Paths the parser keeps exactly as written.
fn valid_path() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-zA-Z0-9_~!$&'()*+,;=:@-]{1,8}", 0..4)
        .prop_map(|segments| segments.iter().map(|s| format!("/{s}")).collect::<String>())
}

/// URLs the production policy accepts (one of the documented normalisations
/// aside, each is already in canonical form).
fn valid_url() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec!["https", "HTTPS", "Https"]);
    let port = prop::sample::select(vec!["", ":443"]);
    (scheme, valid_host(), port, valid_path()).prop_map(|(s, h, p, path)| format!("{s}://{h}{p}{path}"))
}

/// What the crate docs promise an accepted ASCII URL goes through: lower-case
/// scheme and host, one trailing dot and the default port dropped, an empty
/// path written `/`. Nothing else.
fn documented_normalisation(raw: &str) -> String {
    let (scheme, rest) = raw.split_once("://").unwrap_or(("", raw));
    let (authority, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let authority = authority.to_ascii_lowercase();
    let (host, port) = authority.split_once(':').map_or((authority.as_str(), None), |(h, p)| (h, Some(p)));
    let host = host.strip_suffix('.').unwrap_or(host);
    let port = port.filter(|p| *p != "443").map(|p| format!(":{p}")).unwrap_or_default();
    let path = if path.is_empty() { "/" } else { path };
    format!("{}://{host}{port}{path}", scheme.to_ascii_lowercase())
}

/// Pieces that URL parsers treat specially, to break valid URLs with.
const HAZARDS: &[&str] = &[
    " ",
    "\t",
    "\n",
    "\r",
    "\\",
    "%",
    "%2e",
    "%2E",
    ".",
    "..",
    "/",
    "//",
    "@",
    "?",
    "#",
    ":",
    "[",
    "]",
    "ü",
    "\u{ff45}",
    "\u{0}",
    "\u{1f}",
    "\u{ad}",
    "\u{3002}",
    "\u{fb01}",
    "%41",
    ":0443",
    "0x7f",
    "127.0.0.1",
    "[::1]",
    "xn--",
    "\u{308}",
    "{",
    "`",
    "\"",
];

/// Path endings that the parser rewrites (or keeps), appended to a valid URL.
const TAILS: &[&str] = &[
    "/..",
    "/../x",
    "/./x",
    "/.",
    "/%2e%2e/x",
    "/%2E",
    "/.%2e/",
    "/x/%2e%2e",
    "/...",
    "/.x",
    "/%2e%2e%2e",
    "\\x",
    "/\u{fc}",
    "/{x}",
    "/a b",
    "/a%20b",
    "/%zz",
    "//x",
    "/x/",
    "/%C3%BC",
];

/// A valid URL with up to three hazards inserted anywhere, or free text
/// after a scheme: input that sits on the edges of every rule.
fn url_like() -> impl Strategy<Value = String> {
    let mangled = (valid_url(), prop::collection::vec((any::<prop::sample::Index>(), 0..HAZARDS.len()), 0..4))
        .prop_map(|(url, hazards)| {
            let mut url = url;
            for (at, hazard) in hazards {
                let boundaries: Vec<usize> = (0..=url.len()).filter(|i| url.is_char_boundary(*i)).collect();
                url.insert_str(boundaries[at.index(boundaries.len())], HAZARDS[hazard]);
            }
            url
        });
    let tails = prop::sample::select(TAILS);
    let tailed = (valid_url(), tails).prop_map(|(url, tail)| format!("{url}{tail}"));
    prop_oneof![3 => mangled, 2 => tailed, 1 => "(https?|HTTPS|ftp):[/\\\\]{0,3}\\PC{0,30}"]
}

proptest! {
    #[test]
    fn check_url_never_panics_on_any_string(raw in "\\PC{0,80}|.{0,80}") {
        let _ = Policy::default().check_url(&raw);
        let _ = Policy { allow_http: true, allow_cidrs: vec!["0.0.0.0/0".parse().unwrap()], ..Policy::default() }
            .check_url(&raw);
    }

    #[test]
    fn a_generated_valid_url_is_accepted(raw in valid_url()) {
        let checked = Policy::default().check_url(&raw);
        prop_assert!(checked.is_ok(), "{:?}: {:?}", raw, checked);
    }

    #[test]
    fn an_accepted_url_is_its_own_normal_form_and_checks_again_the_same(raw in url_like()) {
        for policy in [Policy::default(), Policy { allow_http: true, ..Policy::default() }] {
            if let Ok(url) = policy.check_url(&raw) {
                prop_assert_eq!(policy.check_url(url.as_str()), Ok(url.clone()), "{:?}", raw);
                prop_assert_eq!(url.scheme(), "https");
                prop_assert!(url.username().is_empty() && url.password().is_none());
                prop_assert!(url.query().is_none() && url.fragment().is_none());
            }
        }
    }

    #[test]
    fn an_accepted_ascii_url_differs_from_its_input_only_by_the_documented_normalisations(raw in url_like()) {
        if let (Ok(url), true) = (Policy::default().check_url(&raw), raw.is_ascii()) {
            prop_assert_eq!(url.as_str(), documented_normalisation(&raw), "{:?}", raw);
        }
    }

    #[test]
    fn credentials_a_query_a_fragment_or_another_scheme_are_always_refused(
        host in valid_host(),
        path in valid_path(),
        extra in "[a-zA-Z0-9=&]{0,8}",
        scheme in prop::sample::select(vec!["http", "HTTP", "ftp", "ws", "wss", "file", "gopher", "data"]),
    ) {
        let policy = Policy::default();
        let code = |raw: &str| policy.check_url(raw).map(|u| u.to_string()).map_err(|e| e.code());
        prop_assert_eq!(code(&format!("https://{extra}@{host}{path}")), Err("url_has_credentials"));
        prop_assert_eq!(code(&format!("https://{extra}:{extra}@{host}{path}")), Err("url_has_credentials"));
        prop_assert_eq!(code(&format!("https://{host}{path}?{extra}")), Err("url_has_query"));
        prop_assert_eq!(code(&format!("https://{host}{path}#{extra}")), Err("url_has_fragment"));
        prop_assert_eq!(code(&format!("{scheme}://{host}{path}")), Err("url_scheme_not_https"));
    }
}
