//! The one error type of the destination policy.
//!
//! Every refusal carries a stable, machine-readable code (what the admin API
//! puts in `error.code` and what tests match on) and a human message that
//! tells the user what to change. Messages may name the host as the user
//! wrote it, and an IP address the user wrote themselves, but never:
//!
//! * the URL itself: its path, userinfo or query may hold a customer's secret;
//! * an address a *name* resolved to, or the resolver's error text: both are
//!   internal DNS data (an internal name's private address, the name of an
//!   internal DNS server) that a tenant registering endpoints must not learn.
//!   That detail goes to the operator's log only (see `resolver.rs`).

use std::fmt;

/// Why a destination was refused. Private so that callers depend on the
/// stable string codes, not on this enum's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Code {
    UrlInvalid,
    UrlAmbiguous,
    UrlTooLong,
    UrlSchemeNotHttps,
    UrlHasCredentials,
    UrlHasQuery,
    UrlHasFragment,
    UrlPortNotAllowed,
    UrlHostIsIp,
    UrlHostNotPublic,
    DestinationUnresolvable,
    DestinationNotPublic,
}

impl Code {
    fn as_str(self) -> &'static str {
        match self {
            Code::UrlInvalid => "url_invalid",
            Code::UrlAmbiguous => "url_ambiguous",
            Code::UrlTooLong => "url_too_long",
            Code::UrlSchemeNotHttps => "url_scheme_not_https",
            Code::UrlHasCredentials => "url_has_credentials",
            Code::UrlHasQuery => "url_has_query",
            Code::UrlHasFragment => "url_has_fragment",
            Code::UrlPortNotAllowed => "url_port_not_allowed",
            Code::UrlHostIsIp => "url_host_is_ip",
            Code::UrlHostNotPublic => "url_host_not_public",
            Code::DestinationUnresolvable => "destination_unresolvable",
            Code::DestinationNotPublic => "destination_not_public",
        }
    }
}

/// A destination (URL, host name or address) that Fenix will not send to.
///
/// `Display` is the human message; [`code`](Self::code) is the stable code.
/// It is `Clone + Send + Sync + 'static` so that it can travel inside a
/// `reqwest::Error` (as the boxed source of a failed DNS resolution) and be
/// found again with `downcast_ref::<DestinationError>()`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DestinationError {
    code: Code,
    message: String,
}

impl DestinationError {
    pub(crate) fn new(code: Code, message: impl fmt::Display) -> Self {
        Self { code, message: message.to_string() }
    }

    /// The stable snake_case code, e.g. `url_host_not_public`.
    pub fn code(&self) -> &'static str {
        self.code.as_str()
    }

    /// What the user should change, in plain words.
    pub fn message(&self) -> String {
        self.message.clone()
    }

    /// The error class of a delivery attempt refused by this error:
    /// `"dns"` when the name could not be resolved (NXDOMAIN, no answer,
    /// time-out), `"destination_blocked"` for every policy refusal.
    pub fn attempt_error(&self) -> &'static str {
        match self.code {
            Code::DestinationUnresolvable => "dns",
            _ => "destination_blocked",
        }
    }
}
