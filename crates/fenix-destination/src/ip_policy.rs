//! Which IP addresses are globally reachable, per the IANA IPv4 and IPv6
//! Special-Purpose Address Registries (RFC 6890 and its updates).
//!
//! Every table row cites its registry row or RFC. A row of the registry whose
//! "Globally Reachable" column is `False` or `N/A` is blocked here; the few
//! `True` rows nested inside a blocked block (the 2001::/23 exceptions) are
//! listed separately and let through. IPv6 outside 2000::/3 (the only space
//! IANA allocates as global unicast) is blocked as a last rule, so space that
//! IANA has not yet allocated is never "reachable" by accident. How IPv4
//! embedded in IPv6 is judged is described in the crate docs.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};

use crate::error::{Code, DestinationError};
use crate::Policy;

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

const fn v6(s: [u16; 8], len: u8) -> Ipv6Net {
    let ip = Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    Ipv6Net::new_assert(ip, len)
}

/// IPv4 ranges that are not globally reachable, with the reason shown to users.
pub(crate) const V4_NOT_GLOBAL: &[(Ipv4Net, &str)] = &[
    // IANA IPv4 SPAR "This network", RFC 791 §3.2.
    (v4(0, 0, 0, 0, 8), "\"this network\""),
    // IANA IPv4 SPAR "Private-Use", RFC 1918.
    (v4(10, 0, 0, 0, 8), "private-use"),
    // IANA IPv4 SPAR "Shared Address Space" (carrier-grade NAT), RFC 6598.
    (v4(100, 64, 0, 0, 10), "shared address space (CGNAT)"),
    // IANA IPv4 SPAR "Loopback", RFC 1122 §3.2.1.3.
    (v4(127, 0, 0, 0, 8), "loopback"),
    // IANA IPv4 SPAR "Link Local", RFC 3927.
    (v4(169, 254, 0, 0, 16), "link-local"),
    // IANA IPv4 SPAR "Private-Use", RFC 1918.
    (v4(172, 16, 0, 0, 12), "private-use"),
    // IANA IPv4 SPAR "IETF Protocol Assignments", RFC 6890 §2.1. Blocked whole,
    // including the anycast rows 192.0.0.9/32 and 192.0.0.10/32: no webhook
    // receiver lives on a PCP or TURN anycast address.
    (v4(192, 0, 0, 0, 24), "IETF protocol assignment"),
    // IANA IPv4 SPAR "Documentation (TEST-NET-1)", RFC 5737.
    (v4(192, 0, 2, 0, 24), "documentation"),
    // IANA IPv4 SPAR "Deprecated (6to4 Relay Anycast)", RFC 7526.
    (v4(192, 88, 99, 0, 24), "deprecated 6to4 relay anycast"),
    // IANA IPv4 SPAR "Private-Use", RFC 1918.
    (v4(192, 168, 0, 0, 16), "private-use"),
    // IANA IPv4 SPAR "Benchmarking", RFC 2544.
    (v4(198, 18, 0, 0, 15), "benchmarking"),
    // IANA IPv4 SPAR "Documentation (TEST-NET-2)", RFC 5737.
    (v4(198, 51, 100, 0, 24), "documentation"),
    // IANA IPv4 SPAR "Documentation (TEST-NET-3)", RFC 5737.
    (v4(203, 0, 113, 0, 24), "documentation"),
    // IANA IPv4 Multicast Address Space Registry, RFC 5771.
    (v4(224, 0, 0, 0, 4), "multicast"),
    // IANA IPv4 SPAR "Reserved", RFC 1112 §4; includes "Limited Broadcast"
    // 255.255.255.255/32 (RFC 919 §7, RFC 8190).
    (v4(240, 0, 0, 0, 4), "reserved or broadcast"),
];

/// IPv6 rows of the registry inside 2001::/23 whose "Globally Reachable" is True.
pub(crate) const V6_GLOBAL_EXCEPTIONS: &[Ipv6Net] = &[
    // IANA IPv6 SPAR "Port Control Protocol Anycast", RFC 7723.
    v6([0x2001, 1, 0, 0, 0, 0, 0, 1], 128),
    // IANA IPv6 SPAR "Traversal Using Relays around NAT Anycast", RFC 8155.
    v6([0x2001, 1, 0, 0, 0, 0, 0, 2], 128),
    // IANA IPv6 SPAR "DNS-SD Service Registration Protocol Anycast", RFC 9665.
    v6([0x2001, 1, 0, 0, 0, 0, 0, 3], 128),
    // IANA IPv6 SPAR "AMT", RFC 7450.
    v6([0x2001, 3, 0, 0, 0, 0, 0, 0], 32),
    // IANA IPv6 SPAR "AS112-v6", RFC 7535.
    v6([0x2001, 4, 0x112, 0, 0, 0, 0, 0], 48),
    // IANA IPv6 SPAR "ORCHIDv2", RFC 7343.
    v6([0x2001, 0x20, 0, 0, 0, 0, 0, 0], 28),
    // IANA IPv6 SPAR "Drone Remote ID Protocol Entity Tags (DETs) Prefix", RFC 9374.
    v6([0x2001, 0x30, 0, 0, 0, 0, 0, 0], 28),
];

/// IPv6 ranges that are not globally reachable (or that Fenix blocks whole).
pub(crate) const V6_NOT_GLOBAL: &[(Ipv6Net, &str)] = &[
    // IANA IPv6 SPAR "Unspecified Address" ::/128 and "Loopback Address" ::1/128
    // (RFC 4291), inside the deprecated "IPv4-Compatible" ::/96, RFC 4291 §2.5.5.1.
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 96), "unspecified, loopback or IPv4-compatible"),
    // IANA IPv6 SPAR "IPv4-IPv6 Translat." local-use prefix, RFC 8215.
    (v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48), "local-use NAT64"),
    // IANA IPv6 SPAR "Discard-Only Address Block", RFC 6666.
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), "discard-only"),
    // IANA IPv6 SPAR "Dummy IPv6 Prefix", RFC 9780.
    (v6([0x100, 0, 0, 1, 0, 0, 0, 0], 64), "dummy prefix"),
    // IANA IPv6 SPAR "TEREDO", RFC 4380 (inside 2001::/23, listed for its reason).
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32), "Teredo tunnel"),
    // IANA IPv6 SPAR "Benchmarking", RFC 5180.
    (v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48), "benchmarking"),
    // IANA IPv6 SPAR "IETF Protocol Assignments", RFC 2928 (less the exceptions above).
    (v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23), "IETF protocol assignment"),
    // IANA IPv6 SPAR "Documentation", RFC 3849.
    (v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), "documentation"),
    // IANA IPv6 SPAR "6to4", RFC 3056; deprecated anycast relays, RFC 7526.
    (v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16), "6to4 tunnel"),
    // IANA IPv6 SPAR "Documentation", RFC 9637.
    (v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), "documentation"),
    // IANA IPv6 SPAR "Segment Routing (SRv6) SIDs", RFC 9602.
    (v6([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16), "segment routing SID"),
    // IANA IPv6 SPAR "Unique-Local", RFC 4193.
    (v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7), "unique-local"),
    // IANA IPv6 SPAR "Link-Local Unicast", RFC 4291.
    (v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), "link-local"),
    // Deprecated site-local, RFC 3879 (IANA IPv6 Address Space registry).
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), "site-local"),
    // IANA IPv6 Multicast Address Space Registry, RFC 4291 §2.7.
    (v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast"),
];

/// IANA IPv6 Address Space registry: 2000::/3 is the Global Unicast space
/// (RFC 4291 §2.4); every other block is reserved by the IETF.
const V6_GLOBAL_UNICAST: Ipv6Net = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);

/// IANA IPv6 SPAR "IPv4-IPv6 Translat." well-known prefix, RFC 6052.
const V6_NAT64_WELL_KNOWN: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);

/// True when `ip` is globally reachable per the IANA special-purpose
/// registries, with no development override applied.
///
/// IPv4-mapped (`::ffff:a.b.c.d`) and NAT64 well-known-prefix
/// (`64:ff9b::a.b.c.d`) addresses are judged by their embedded IPv4 address;
/// every other IPv6 form that embeds IPv4 is blocked outright.
pub fn is_global(ip: IpAddr) -> bool {
    not_global_reason(ip).is_none()
}

/// The registry's name for the range that makes `ip` not globally reachable.
pub(crate) fn not_global_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => v4_reason(ip),
        IpAddr::V6(ip) => v6_reason(ip),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    V4_NOT_GLOBAL.iter().find(|(net, _)| net.contains(&ip)).map(|(_, reason)| *reason)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(embedded) = judged_embedded_v4(ip) {
        return v4_reason(embedded);
    }
    if V6_GLOBAL_EXCEPTIONS.iter().any(|net| net.contains(&ip)) {
        return None;
    }
    if let Some((_, reason)) = V6_NOT_GLOBAL.iter().find(|(net, _)| net.contains(&ip)) {
        return Some(reason);
    }
    if !V6_GLOBAL_UNICAST.contains(&ip) {
        return Some("reserved by the IETF");
    }
    None
}

/// The IPv4 address a packet to `ip` really goes to, for the two embeddings
/// Fenix judges by that address: IPv4-mapped and NAT64 well-known prefix.
fn judged_embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(mapped) = ip.to_ipv4_mapped() {
        return Some(mapped);
    }
    if V6_NAT64_WELL_KNOWN.contains(&ip) {
        let [.., a, b, c, d] = ip.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

impl Policy {
    /// Accepts `ip` when it is globally reachable, or inside one of the
    /// development `allow_cidrs` (an IPv4-mapped IPv6 address counts as its
    /// IPv4 address there), and in neither case inside the operator's
    /// `deny_cidrs`. Refuses with `destination_not_public`. The caller
    /// supplied `ip`, so the message names it and the reason.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), DestinationError> {
        match self.refusal_reason(ip) {
            None => Ok(()),
            Some(reason) => Err(DestinationError::new(
                Code::DestinationNotPublic,
                format_args!(
                    "{ip} is not publicly reachable ({reason}); \
                     webhook endpoints must be reachable on the public internet"
                ),
            )),
        }
    }

    /// Why `ip` is refused under this policy, or `None` when it may be
    /// contacted. The deny list is asked first: it wins over the allow list.
    pub(crate) fn refusal_reason(&self, ip: IpAddr) -> Option<&'static str> {
        if self.is_denied(ip) {
            Some(DENIED)
        } else if self.is_allowed_by_override(ip) {
            None
        } else {
            not_global_reason(ip)
        }
    }

    /// True when a development override lets `ip` through.
    pub(crate) fn is_allowed_by_override(&self, ip: IpAddr) -> bool {
        let canonical = ip.to_canonical();
        self.allow_cidrs.iter().any(|net| net.contains(&ip) || net.contains(&canonical))
    }

    /// True when `ip`, in any form that reaches the same IPv4 destination, is
    /// inside one of the operator's `deny_cidrs`: denying `203.0.113.0/24`
    /// also denies `::ffff:203.0.113.7` and `64:ff9b::203.0.113.7`, and
    /// denying `::ffff:203.0.113.0/120` denies `203.0.113.7` too.
    pub(crate) fn is_denied(&self, ip: IpAddr) -> bool {
        !self.deny_cidrs.is_empty() && same_destination_forms(ip).iter().flatten().any(|form| self.denies(*form))
    }

    fn denies(&self, ip: IpAddr) -> bool {
        self.deny_cidrs.iter().any(|net| net.contains(&ip))
    }
}

/// The reason given for an address inside the operator's deny list.
const DENIED: &str = "denied by this Fenix's operator";

/// `ip` and every address that Fenix judges as the same destination: an IPv4
/// address, its IPv4-mapped form and its NAT64 well-known-prefix form. For
/// other addresses, just `ip`.
fn same_destination_forms(ip: IpAddr) -> [Option<IpAddr>; 4] {
    let v4 = match ip {
        IpAddr::V4(v4) => Some(v4),
        IpAddr::V6(v6) => judged_embedded_v4(v6),
    };
    match v4 {
        None => [Some(ip), None, None, None],
        Some(v4) => [
            Some(ip),
            Some(IpAddr::V4(v4)),
            Some(IpAddr::V6(v4.to_ipv6_mapped())),
            Some(IpAddr::V6(nat64_well_known(v4))),
        ],
    }
}

/// `64:ff9b::a.b.c.d`, the RFC 6052 well-known-prefix form of `v4`.
fn nat64_well_known(v4: Ipv4Addr) -> Ipv6Addr {
    let [a, b, c, d] = v4.octets();
    Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]))
}
