//! Fenix's destination policy: which webhook URLs and addresses may be
//! contacted. It is Fenix's defence against server-side request forgery
//! (SSRF): a customer registers a URL, and Fenix's servers then send requests
//! to it, so without this policy a customer could make Fenix reach its own
//! private network, loopback services or cloud metadata endpoints.
//!
//! The same code runs at two moments:
//!
//! * **Registration** (endpoint create/update): [`CheckingResolver::check_destination`]
//!   applies the URL policy ([`Policy::check_url`]), resolves the host and
//!   checks every address.
//! * **Every delivery**: the HTTP client's DNS resolver *is* the
//!   [`CheckingResolver`] (`reqwest::ClientBuilder::dns_resolver`), so the
//!   connection goes only to addresses checked in that very resolution: no
//!   second lookup can rebind. Nothing is cached.
//!
//! # URL policy (no DNS)
//!
//! | rule | code |
//! |---|---|
//! | does not parse, contains spaces/control characters, bad DNS name | `url_invalid` |
//! | longer than 2,048 bytes (as typed or normalised) | `url_too_long` |
//! | scheme other than `https` (`http` too with `allow_http`) | `url_scheme_not_https` |
//! | user name or password, even an empty `@` | `url_has_credentials` |
//! | a query string, even an empty `?` | `url_has_query` |
//! | a fragment, even an empty `#` | `url_has_fragment` |
//! | a port other than 443 (any port with `allow_http`) | `url_port_not_allowed` |
//! | an IP literal in any notation, unless inside `allow_cidrs` | `url_host_is_ip` |
//! | single label, `localhost`, special-use suffix, no known public suffix | `url_host_not_public` |
//!
//! Host names are normalised: lower case, IDNA to punycode, one trailing dot
//! removed (`https://BÜcher.de./x` becomes `https://xn--bcher-kva.de/x`).
//!
//! # Address policy
//!
//! An address passes when [`is_global`] says so (IANA IPv4 and IPv6
//! Special-Purpose Address Registries; the tables in `ip_policy.rs` cite each
//! row), or when it lies inside the development `allow_cidrs`. A name passes
//! only if it resolves and *every* address passes (`destination_unresolvable`,
//! `destination_not_public`).
//!
//! IPv6 forms that embed an IPv4 address are handled as follows:
//!
//! | range | RFC | choice | why |
//! |---|---|---|---|
//! | `::ffff:0:0/96` IPv4-mapped | 4291 | unwrap, judge the IPv4 | a dual-stack socket sends to the IPv4 itself: same destination, same verdict |
//! | `64:ff9b::/96` NAT64 well-known prefix | 6052 | unwrap, judge the IPv4 | the translator delivers to the embedded IPv4; DNS64 makes public ones legitimate |
//! | `::/96` IPv4-compatible (incl. `::`, `::1`) | 4291 §2.5.5.1 | block outright | deprecated; no legitimate use |
//! | `64:ff9b:1::/48` local-use NAT64 | 8215 | block outright | local to an operator's network; its embedding is operator-chosen |
//! | `2002::/16` 6to4 | 3056, 7526 | block outright | deprecated tunnel through relays nobody controls |
//! | `2001::/32` Teredo | 4380 | block outright | tunnel; the embedded client address is obfuscated and NAT-dependent |
//!
//! # Development overrides
//!
//! [`Policy`]'s defaults allow nothing extra. `allow_http` admits `http://`
//! and any port; `allow_cidrs` admits addresses (and IP-literal hosts) inside
//! the given ranges, e.g. `http://127.0.0.1:9000/hook` with `127.0.0.0/8`.
//!
//! # Errors
//!
//! Every refusal is a [`DestinationError`] with a stable
//! [`code`](DestinationError::code), a human [`message`](DestinationError::message)
//! and, for delivery attempts, an [`attempt_error`](DestinationError::attempt_error)
//! class (`destination_blocked` or `dns`).

mod error;
mod ip_policy;
mod resolver;
mod url_policy;

pub use error::DestinationError;
pub use ip_policy::is_global;
pub use resolver::CheckingResolver;
pub use url_policy::MAX_URL_LEN;

/// What the destination policy allows beyond its production defaults.
///
/// `Policy::default()` is the production policy: https on port 443 to public
/// DNS names whose every address is globally reachable. The two fields are
/// development-only escape hatches (`FENIX_UNSAFE_ALLOW_HTTP`,
/// `FENIX_UNSAFE_ALLOW_CIDRS`).
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Allow `http://` URLs and ports other than 443.
    pub allow_http: bool,
    /// Addresses inside these ranges pass the address check, and IP-literal
    /// hosts inside them pass the URL policy.
    pub allow_cidrs: Vec<ipnet::IpNet>,
}
