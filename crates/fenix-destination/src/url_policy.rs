//! The URL policy: what an endpoint URL may look like, judged without DNS.
//!
//! The `url` crate parses with the WHATWG rules, which already turn numeric
//! hosts such as `2130706433`, `0x7f000001`, `0177.0.0.1` and `127.1` into
//! IPv4 addresses. We check its parsed `Host` *and* the raw authority text,
//! so that an IP literal is caught even if a future parser stops
//! normalising one of these notations.

use std::net::IpAddr;

use url::{Host, Url};

use crate::canonical::{check_canonical, check_no_silently_dropped_characters};
pub(crate) use crate::checked_host::CheckedHost;
use crate::error::{Code, DestinationError};
use crate::Policy;

/// Longest accepted URL, in bytes (before and after normalisation).
pub const MAX_URL_LEN: usize = 2048;

/// Top-level or registered names that never reach the public internet.
const SPECIAL_USE_SUFFIXES: &[&str] = &[
    "localhost",   // RFC 6761 §6.3
    "local",       // mDNS, RFC 6762
    "internal",    // ICANN private-use TLD (2024)
    "arpa",        // infrastructure, RFC 3172; includes home.arpa (RFC 8375)
    "test",        // RFC 6761 §6.2
    "invalid",     // RFC 6761 §6.4
    "example",     // RFC 6761 §6.5
    "onion",       // RFC 7686
    "alt",         // RFC 9476
    "localdomain", // conventional, never delegated
    "lan",         // conventional private names (ICANN SAC 113)
    "home",
    "corp",
    "intranet",
    "private",
];

/// The addresses `localhost` stands for when the development overrides allow them.
const LOOPBACK: [IpAddr; 2] = [IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)];

impl Policy {
    /// Applies the URL policy (no DNS) and returns the normalised URL: host in
    /// lower-case ASCII (IDNA punycode) without a trailing dot, default port
    /// dropped. Every refusal has its own code; see the crate docs.
    pub fn check_url(&self, raw: &str) -> Result<Url, DestinationError> {
        if raw.len() > MAX_URL_LEN {
            return Err(too_long(raw.len()));
        }
        check_no_silently_dropped_characters(raw)?;
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(DestinationError::new(
                Code::UrlInvalid,
                "the URL contains spaces or control characters; remove them",
            ));
        }
        let mut url = Url::parse(raw).map_err(parse_error)?;
        let authority = raw_authority(raw);
        self.check_parts(&url, authority)?;
        let host = url.host().ok_or_else(|| DestinationError::new(Code::UrlInvalid, "the URL has no host; add one"))?;
        let checked = self.check_host(host, raw_host(authority))?;
        if let Some(name) = checked.name() {
            if url.host_str() != Some(name) {
                url.set_host(Some(name))
                    .map_err(|e| DestinationError::new(Code::UrlInvalid, format_args!("bad host: {e}")))?;
            }
        }
        check_canonical(raw, &url, &checked)?;
        if url.as_str().len() > MAX_URL_LEN {
            return Err(too_long(url.as_str().len()));
        }
        Ok(url)
    }

    /// The URL's parts but its host: the scheme, no credentials (in the URL
    /// or its raw `authority`), no query, no fragment, no port.
    fn check_parts(&self, url: &Url, authority: &str) -> Result<(), DestinationError> {
        match url.scheme() {
            "https" => {}
            "http" if self.allow_http => {}
            other => {
                return Err(DestinationError::new(
                    Code::UrlSchemeNotHttps,
                    format_args!("the URL must start with https:// (it uses `{other}:`)"),
                ))
            }
        }
        if !url.username().is_empty() || url.password().is_some() || authority.contains('@') {
            return Err(DestinationError::new(
                Code::UrlHasCredentials,
                "remove the user name and password from the URL; \
                 receivers authenticate Fenix by its request signature",
            ));
        }
        if url.query().is_some() {
            return Err(DestinationError::new(
                Code::UrlHasQuery,
                "remove the query string (the part from `?`) from the URL",
            ));
        }
        if url.fragment().is_some() {
            return Err(DestinationError::new(
                Code::UrlHasFragment,
                "remove the fragment (the part from `#`) from the URL",
            ));
        }
        if let (Some(port), false) = (url.port(), self.allow_http) {
            return Err(DestinationError::new(
                Code::UrlPortNotAllowed,
                format_args!("remove the port :{port} from the URL; Fenix delivers only to port 443"),
            ));
        }
        Ok(())
    }

    /// The host policy, shared by the URL policy and the resolver.
    /// `raw_host` is the host as the user wrote it (before normalisation).
    pub(crate) fn check_host(&self, host: Host<&str>, raw_host: &str) -> Result<CheckedHost, DestinationError> {
        let ip = match host {
            Host::Ipv4(ip) => IpAddr::V4(ip),
            Host::Ipv6(ip) => IpAddr::V6(ip),
            Host::Domain(_) if looks_like_ip_literal(raw_host) => {
                return Err(host_is_ip(raw_host));
            }
            Host::Domain(domain) => return self.check_name(domain),
        };
        if !self.is_allowed_by_override(ip) {
            Err(host_is_ip(&ip.to_string()))
        } else if self.is_denied(ip) {
            // The user wrote this address, so naming it reveals nothing.
            Err(DestinationError::new(
                Code::DestinationNotPublic,
                format_args!("the host `{ip}` is in an address range this Fenix does not send to"),
            ))
        } else {
            Ok(CheckedHost::Ip(ip))
        }
    }
}

impl Policy {
    /// A host written as a name: `localhost` while the development overrides
    /// allow a loopback address, otherwise a public DNS name.
    fn check_name(&self, domain: &str) -> Result<CheckedHost, DestinationError> {
        let name = normalise(domain);
        if name == "localhost" {
            let allowed: Vec<IpAddr> =
                LOOPBACK.into_iter().filter(|ip| self.is_allowed_by_override(*ip) && !self.is_denied(*ip)).collect();
            if !allowed.is_empty() {
                return Ok(CheckedHost::Loopback(name, allowed));
            }
            let denied_by_operator = LOOPBACK.into_iter().any(|ip| self.is_allowed_by_override(ip));
            if (self.allow_http || !self.allow_cidrs.is_empty()) && !denied_by_operator {
                // Development mode without loopback in the allow list: say what would work.
                return Err(DestinationError::new(
                    Code::UrlHostNotPublic,
                    "the host `localhost` is refused because the development allow list does not \
                     include loopback; add 127.0.0.0/8 to FENIX_UNSAFE_ALLOW_CIDRS (development only)",
                ));
            }
        }
        check_domain(name).map(CheckedHost::Name)
    }
}

/// Lower case, without a trailing dot.
fn normalise(domain: &str) -> String {
    domain.strip_suffix('.').unwrap_or(domain).to_ascii_lowercase()
}

/// Requires a registrable name under a public suffix (`name` already normalised).
fn check_domain(name: String) -> Result<String, DestinationError> {
    let labels: Vec<&str> = name.split('.').collect();
    let valid_label =
        |l: &&str| (1..=63).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if name.len() > 253 || !labels.iter().all(valid_label) {
        return Err(DestinationError::new(
            Code::UrlInvalid,
            format_args!("the host `{name}` is not a valid DNS name (letters, digits, hyphens and dots only)"),
        ));
    }
    let not_public = |why: &str| {
        DestinationError::new(
            Code::UrlHostNotPublic,
            format_args!("the host `{name}` {why}; use the receiver's public DNS name"),
        )
    };
    if labels.len() < 2 {
        return Err(not_public("is a single-label name"));
    }
    if labels.last().is_some_and(|tld| SPECIAL_USE_SUFFIXES.contains(tld)) {
        return Err(not_public("is in a special-use domain that is not public"));
    }
    match psl::suffix(name.as_bytes()) {
        Some(suffix) if suffix.is_known() && suffix.as_bytes().len() < name.len() => Ok(name),
        Some(suffix) if suffix.is_known() => Err(not_public("is a public suffix, not a host")),
        _ => Err(not_public("does not end in a known public suffix")),
    }
}

/// The authority of a raw URL as typed: after `scheme:` and any slashes, up to
/// the first path, query or fragment delimiter (`\` counts as `/` in http(s)).
fn raw_authority(raw: &str) -> &str {
    let rest = raw.split_once(':').map_or(raw, |(_, rest)| rest);
    let rest = rest.trim_start_matches(['/', '\\']);
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    &rest[..end]
}

/// The host part of a raw authority (no userinfo, no port).
pub(crate) fn raw_host(authority: &str) -> &str {
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host_port.starts_with('[') {
        let end = host_port.find(']').map_or(host_port.len(), |i| i + 1);
        return &host_port[..end];
    }
    host_port.split_once(':').map_or(host_port, |(h, _)| h)
}

/// True for anything a resolver or `inet_aton` could read as an address:
/// brackets or colons (IPv6), or a last label that is a decimal, octal or
/// hexadecimal number (every IPv4 notation ends in one).
fn looks_like_ip_literal(raw_host: &str) -> bool {
    let host = percent_decode(raw_host).to_ascii_lowercase();
    if host.contains(['[', ']', ':']) || host.parse::<IpAddr>().is_ok() {
        return true;
    }
    let host = host.strip_suffix('.').unwrap_or(&host);
    let last = host.rsplit('.').next().unwrap_or_default();
    let hex = last.strip_prefix("0x");
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
        || hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A malformed IP literal is still an IP literal: the fix is the same.
pub(crate) fn parse_error(error: url::ParseError) -> DestinationError {
    match error {
        url::ParseError::InvalidIpv4Address | url::ParseError::InvalidIpv6Address => DestinationError::new(
            Code::UrlHostIsIp,
            format_args!("the host is a malformed IP address ({error}); use the receiver's DNS name instead"),
        ),
        _ => DestinationError::new(
            Code::UrlInvalid,
            format_args!("the URL could not be parsed ({error}); write it like https://hooks.example.com/path"),
        ),
    }
}

fn host_is_ip(host: &str) -> DestinationError {
    DestinationError::new(
        Code::UrlHostIsIp,
        format_args!("the host `{host}` is an IP address; use the receiver's DNS name instead"),
    )
}

fn too_long(len: usize) -> DestinationError {
    DestinationError::new(
        Code::UrlTooLong,
        format_args!("the URL is {len} bytes long; shorten it to at most {MAX_URL_LEN} bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_host_is_taken_from_the_authority_as_typed() {
        assert_eq!(raw_host(raw_authority("https://u:p@0x7f.1:443/x")), "0x7f.1");
        assert_eq!(raw_host(raw_authority("https://[::1]:8443/")), "[::1]");
        assert_eq!(raw_host(raw_authority("https:\\\\a.com\\x")), "a.com");
    }

    #[test]
    fn numeric_last_labels_look_like_ip_literals() {
        for host in ["127.1", "2130706433", "0x7F000001", "%31%32%37.0.0.1", "1.2.3.4.", "[::1]"] {
            assert!(looks_like_ip_literal(host), "{host}");
        }
        for host in ["example.com", "0x.example.com", "1.example.com", "a.b0x"] {
            assert!(!looks_like_ip_literal(host), "{host}");
        }
    }
}
