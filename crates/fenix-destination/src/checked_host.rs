//! The host of a URL that passed the host policy: what the URL rules
//! (`url_policy`) hand to the canonical-form check (`canonical`) and to the
//! checking resolver, in a module of its own below all three.

use std::net::IpAddr;

/// A host that passed the host policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CheckedHost {
    /// A normalised DNS name (lower case, ASCII, no trailing dot).
    Name(String),
    /// An IP literal inside the development `allow_cidrs`.
    Ip(IpAddr),
    /// `localhost`, admitted only while the development `allow_cidrs` cover
    /// a loopback address: it stands for those loopback addresses (the ones
    /// allowed, IPv4 first) and is never looked up in DNS, so it means this
    /// machine whatever the resolver says.
    Loopback(String, Vec<IpAddr>),
}

impl CheckedHost {
    /// The normalised name, for hosts written as a name.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            CheckedHost::Name(name) | CheckedHost::Loopback(name, _) => Some(name),
            CheckedHost::Ip(_) => None,
        }
    }
}
