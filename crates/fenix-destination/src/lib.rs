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
//! | does not parse, contains spaces or control characters inside, bad DNS name | `url_invalid` |
//! | written differently from what the parser makes of it (see below) | `url_ambiguous` |
//! | longer than 2,048 bytes (as typed or normalised) | `url_too_long` |
//! | scheme other than `https` (`http` too with `allow_http`) | `url_scheme_not_https` |
//! | user name or password, even an empty `@` | `url_has_credentials` |
//! | a query string, even an empty `?` | `url_has_query` |
//! | a fragment, even an empty `#` | `url_has_fragment` |
//! | a port other than 443 (any port with `allow_http`) | `url_port_not_allowed` |
//! | an IP literal in any notation, unless inside `allow_cidrs` | `url_host_is_ip` |
//! | an allowed IP literal inside `deny_cidrs` | `destination_not_public` |
//! | single label, `localhost`, special-use suffix, no known public suffix | `url_host_not_public` |
//!
//! Host names are normalised: lower case, IDNA to punycode, one trailing dot
//! removed (`https://BÜcher.de./x` becomes `https://xn--bcher-kva.de/x`).
//!
//! ## URLs that parsers read differently: `url_ambiguous`
//!
//! A URL must already be written the way the WHATWG parser writes it, apart
//! from the case of the scheme and host, IDNA of a Unicode (NFC) host, one
//! trailing dot, the default port written out and an empty path (written
//! `/`). Everything else that the parser rewrites silently is refused, each
//! class with a message saying what to write instead:
//!
//! | class | example | write instead |
//! |---|---|---|
//! | tab, CR or LF anywhere | `https://exa\tmple.com/` | remove it |
//! | leading or trailing space or C0 control | `" https://example.com/"` | remove it |
//! | backslash | `https://example.com\@evil.com/` | `/` |
//! | not exactly two slashes after the scheme | `https:/example.com/`, `https:///example.com/` | `https://` |
//! | percent-encoded, full-width or compatibility characters in the host | `https://%65xample.com/`, `https://ｅｘａｍｐｌｅ.com/` | the host the message names |
//! | port with leading zeros or empty | `https://example.com:0443/`, `https://example.com:/` | `:443` or nothing |
//! | `.`, `..` or `%2e` path segments | `https://example.com/a/%2e%2e/b` | the path they lead to |
//! | path characters the parser percent-encodes | `https://example.com/ü`, `/{x}` | `%C3%BC`, `%7Bx%7D` |
//!
//! Rules that already have their own code keep it (`https://%31%32%37.0.0.1/`
//! is still `url_host_is_ip`). So every accepted URL is its own normalised
//! form (up to those normalisations), and that form checks again to the same
//! verdict. See `canonical.rs`.
//!
//! # Address policy
//!
//! An address passes when [`is_global`] says so (IANA IPv4 and IPv6
//! Special-Purpose Address Registries; the tables in `ip_policy.rs` cite each
//! row), or when it lies inside the development `allow_cidrs`, and in either
//! case not inside the operator's `deny_cidrs`. A name passes only if it
//! resolves and *every* address passes (`destination_unresolvable`,
//! `destination_not_public`).
//!
//! ## The operator's deny list
//!
//! `deny_cidrs` (`FENIX_DENY_CIDRS`) adds ranges that Fenix never contacts,
//! although the registries call them global: a network's own NAT64 prefix
//! (anything but `64:ff9b::/96`, e.g. a network-specific `2001:db8:64::/96`),
//! or internal services on public addresses. It applies to every resolved
//! address and to IP-literal hosts, and wins over `allow_cidrs`. A denied
//! address is refused with `destination_not_public`, like any non-public
//! one, so a tenant cannot tell the deny list from the registries.
//!
//! An IPv4 address and its IPv4-mapped and NAT64 well-known forms are one
//! destination, so a deny entry written in any of these forms denies all
//! three (`203.0.113.0/24` denies `::ffff:203.0.113.7` and
//! `64:ff9b::cb00:7107`). An IPv6 prefix in the list is denied whole: for a
//! network-specific NAT64 prefix this means *every* address inside it,
//! including those embedding a public IPv4 address. Fenix does not guess at
//! an operator's translation scheme; a network whose only way to IPv4 is
//! such a prefix should give Fenix native IPv4 egress or the well-known
//! prefix (whose embedded IPv4 Fenix judges, see below).
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
//! While they cover a loopback address (`127.0.0.1` or `::1`), the host
//! `localhost` (exactly that name) stands for those addresses without any DNS
//! query, so `http://localhost:9000/hook` works like `127.0.0.1`; otherwise
//! `localhost` is refused like any special-use name.
//!
//! # Errors
//!
//! Every refusal is a [`DestinationError`] with a stable
//! [`code`](DestinationError::code), a human [`message`](DestinationError::message)
//! and, for delivery attempts, an [`attempt_error`](DestinationError::attempt_error)
//! class (`destination_blocked` or `dns`).
//!
//! Messages are shown to tenants (the API's `422` and the delivery log), so
//! a refusal by resolution says only *that* the host resolves to a
//! non-public address or could not be resolved: never the addresses, the
//! range they fall in, whether the deny list matched, or the resolver's
//! error text. The resolver logs that detail for the operator at `info`.

mod canonical;
mod checked_host;
mod error;
mod ip_policy;
#[cfg(test)]
mod properties;
mod resolver;
mod url_policy;

pub use error::DestinationError;
pub use ip_policy::is_global;
pub use resolver::CheckingResolver;
pub use url_policy::MAX_URL_LEN;

/// What the destination policy allows beyond its production defaults.
///
/// `Policy::default()` is the production policy: https on port 443 to public
/// DNS names whose every address is globally reachable. `allow_http` and
/// `allow_cidrs` are development-only escape hatches
/// (`FENIX_UNSAFE_ALLOW_HTTP`, `FENIX_UNSAFE_ALLOW_CIDRS`); `deny_cidrs` is a
/// production setting that only ever refuses more (`FENIX_DENY_CIDRS`).
#[derive(Clone, Debug, Default)]
pub struct Policy {
    /// Allow `http://` URLs and ports other than 443.
    pub allow_http: bool,
    /// Addresses inside these ranges pass the address check, and IP-literal
    /// hosts inside them pass the URL policy.
    pub allow_cidrs: Vec<ipnet::IpNet>,
    /// Addresses inside these ranges (in any IPv4, IPv4-mapped or NAT64
    /// well-known form) are refused, even when `allow_cidrs` admits them:
    /// the operator's own NAT64 prefix, internal services on public addresses.
    pub deny_cidrs: Vec<ipnet::IpNet>,
}
