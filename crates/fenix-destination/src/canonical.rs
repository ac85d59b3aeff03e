//! The canonical-form rule against URLs that parsers read differently.
//!
//! The WHATWG URL parser (the `url` crate, browsers, most HTTP clients)
//! silently rewrites many inputs: it drops tabs and line breaks, trims
//! leading and trailing spaces and C0 controls, reads `\` as `/`, skips extra
//! slashes after `https:`, percent-decodes and IDNA-maps the host (full-width
//! `ｅｘａｍｐｌｅ.com` becomes `example.com`), resolves `.`, `..` and `%2e`
//! path segments and percent-encodes some path characters. Other parsers (a
//! receiver's framework, a proxy, an operator's tooling, a tenant's own
//! allow-list) read many of these differently, so the URL a tenant reviewed
//! and the one Fenix calls may not be the same.
//!
//! The rule is simple and checkable: a URL is accepted only if it is already
//! written the way the parser would write it, apart from these normalisations,
//! which every parser agrees on:
//!
//! * the case of the scheme and of the host;
//! * a Unicode host written in its NFC form, turned into IDNA punycode;
//! * one trailing dot after the host;
//! * the default port written out (`:443`, or `:80` for `http` in development);
//! * an empty path, written `/`.
//!
//! Anything else the parser would change is refused with `url_ambiguous` and
//! a message saying what to write instead (never echoing the URL: its path
//! may hold a secret). An allowed IP-literal host (development only) is
//! judged as the address it denotes and is exempt from the host comparison.

use std::fmt;

use url::Url;

use crate::checked_host::CheckedHost;
use crate::error::{Code, DestinationError};

/// Characters the parser drops or trims before parsing: checked on the raw
/// input first, before anything else could be confused by them.
pub(crate) fn check_no_silently_dropped_characters(raw: &str) -> Result<(), DestinationError> {
    if raw.contains(['\t', '\n', '\r']) {
        return Err(ambiguous("the URL contains a tab or line break, which URL parsers silently drop; remove it"));
    }
    let c0_or_space = |c: char| c <= ' ';
    if raw.starts_with(c0_or_space) || raw.ends_with(c0_or_space) {
        return Err(ambiguous(
            "the URL starts or ends with a space or control character, which URL parsers \
             silently trim; remove it",
        ));
    }
    Ok(())
}

/// Compares `raw` with the parsed and normalised `url`, part by part.
/// Called after every other URL rule passed, so `raw` parsed, has no
/// userinfo, query or fragment, and its host passed the host policy.
pub(crate) fn check_canonical(raw: &str, url: &Url, host: &CheckedHost) -> Result<(), DestinationError> {
    if raw.contains('\\') {
        return Err(ambiguous(
            "the URL contains a backslash, which some parsers read as `/` and others do not; \
             write `/` instead",
        ));
    }
    let rest = raw.split_once(':').map_or("", |(_, rest)| rest);
    let Some(after) = rest.strip_prefix("//").filter(|after| !after.starts_with('/')) else {
        return Err(ambiguous(format_args!("write exactly two slashes after `{}:`", url.scheme())));
    };
    let (authority, path) = after.find('/').map_or((after, ""), |i| after.split_at(i));
    let (host_text, port_text) = split_host_port(authority);
    if let Some(name) = host.name() {
        check_host_text(host_text, name)?;
    }
    if let Some(port) = port_text {
        check_port_text(port, url)?;
    }
    check_path_text(path, url.path())
}

/// `host` and the text after its `:`, if any (brackets kept on IPv6).
fn split_host_port(authority: &str) -> (&str, Option<&str>) {
    let host_end = if authority.starts_with('[') {
        authority.find(']').map_or(authority.len(), |i| i + 1)
    } else {
        authority.find(':').unwrap_or(authority.len())
    };
    let (host, rest) = authority.split_at(host_end);
    (host, rest.strip_prefix(':'))
}

fn check_host_text(written: &str, name: &str) -> Result<(), DestinationError> {
    let written = written.strip_suffix('.').unwrap_or(written);
    let same = if written.is_ascii() {
        written.eq_ignore_ascii_case(name)
    } else {
        written.to_lowercase() == idna::domain_to_unicode(name).0
    };
    if same {
        return Ok(());
    }
    Err(ambiguous(format_args!(
        "the host is written in a form that URL parsers rewrite (percent-encoding, full-width \
         or other compatibility characters, or Unicode not in NFC form); write it as `{name}`"
    )))
}

fn check_port_text(written: &str, url: &Url) -> Result<(), DestinationError> {
    let plain = !written.is_empty() && written.bytes().all(|b| b.is_ascii_digit()) && !written.starts_with('0');
    if plain && written.parse::<u16>().ok() == url.port_or_known_default() {
        return Ok(());
    }
    Err(ambiguous("write the port as a plain number without leading zeros, or leave it out"))
}

fn check_path_text(written: &str, canonical: &str) -> Result<(), DestinationError> {
    if written.is_empty() || written == canonical {
        return Ok(());
    }
    if written.split('/').any(is_dot_segment) {
        return Err(ambiguous(
            "remove the `.` and `..` segments (also when written `%2e`) from the path; \
             write the path they lead to instead",
        ));
    }
    Err(ambiguous(
        "the path contains characters that URL parsers percent-encode (non-ASCII characters, \
         `\"`, `<`, `>`, `` ` ``, `{` or `}`); percent-encode them yourself, e.g. `%C3%BC` for `ü`",
    ))
}

/// `.` or `..`, in any mix of literal and percent-encoded dots.
fn is_dot_segment(segment: &str) -> bool {
    matches!(segment.to_ascii_lowercase().replace("%2e", ".").as_str(), "." | "..")
}

fn ambiguous(message: impl fmt::Display) -> DestinationError {
    DestinationError::new(Code::UrlAmbiguous, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_split_from_names_and_bracketed_addresses() {
        assert_eq!(split_host_port("example.com"), ("example.com", None));
        assert_eq!(split_host_port("example.com:443"), ("example.com", Some("443")));
        assert_eq!(split_host_port("example.com:"), ("example.com", Some("")));
        assert_eq!(split_host_port("[::1]:9000"), ("[::1]", Some("9000")));
        assert_eq!(split_host_port("[::1]"), ("[::1]", None));
    }

    #[test]
    fn dot_segments_are_found_in_every_spelling() {
        for dots in [".", "..", "%2e", "%2E", "%2e%2e", ".%2E", "%2e."] {
            assert!(is_dot_segment(dots), "{dots}");
        }
        for plain in ["", "a", "...", ".a", "%2e%2e%2e", "%2f"] {
            assert!(!is_dot_segment(plain), "{plain}");
        }
    }
}
