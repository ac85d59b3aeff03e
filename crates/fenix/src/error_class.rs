//! Why an attempt failed, as one closed set: the class the delivery log
//! (`attempts.error`), an ownership challenge's `last_error`, the
//! `fenix_attempts_total` metric and the adaptive limit all name.
//!
//! Stored as the same text as ever ([`ErrorClass::as_str`]): the conversion
//! happens once, where the attempt's record is made, so the stored data and
//! the API's JSON are unchanged. Nothing on the delivery path reads a class
//! back from the database: the API shows the stored text as it is, so a row
//! written by another version of Fenix (with a class this one no longer
//! makes) still reads. Code that does need the type back uses
//! [`ErrorClass::parse`], which refuses a text it does not know (`None`)
//! rather than guess.

use std::fmt;

/// The class of a failed attempt (or of a refused ownership challenge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// No complete answer within the attempt's timeout.
    Timeout,
    /// No connection could be made (refused, reset, unreachable).
    Connect,
    /// The request failed in another way once under way.
    Request,
    /// The TLS handshake or the receiver's certificate failed.
    Tls,
    /// The receiver's name could not be resolved.
    Dns,
    /// The answer's body could not be read.
    ResponseBody,
    /// A `3xx`: redirects are not followed.
    Redirect,
    /// Any other status that is not `2xx`.
    HttpStatus,
    /// The destination policy refused the URL or an address it resolved to.
    DestinationBlocked,
    /// The endpoint has no signing secret usable now.
    NoSecret,
    /// A sensitive custom header could not be opened: not sent without it.
    SealedHeader,
    /// The request could not be signed.
    Signing,
    /// An ownership challenge answered `2xx` without echoing the challenge.
    ChallengeMismatch,
    /// The endpoint's client certificate or CA certificates could not be
    /// loaded (a key no master key given opens): no request was made.
    ClientCertificate,
    /// No OAuth2 access token could be had from the endpoint's token URL.
    AuthToken,
    /// The egress proxy (`FENIX_EGRESS_PROXY`) opened no tunnel: unreachable,
    /// refused Fenix's credentials, or answered without a tunnel.
    Proxy,
    /// The endpoint's transformation threw, hit a limit, or returned a
    /// request outside the rules (`transform`): no request was made.
    TransformationFailed,
}

impl ErrorClass {
    /// Every class, for tests and for whoever lists them.
    pub const ALL: [ErrorClass; 17] = [
        ErrorClass::Timeout,
        ErrorClass::Connect,
        ErrorClass::Request,
        ErrorClass::Tls,
        ErrorClass::Dns,
        ErrorClass::ResponseBody,
        ErrorClass::Redirect,
        ErrorClass::HttpStatus,
        ErrorClass::DestinationBlocked,
        ErrorClass::NoSecret,
        ErrorClass::SealedHeader,
        ErrorClass::Signing,
        ErrorClass::ChallengeMismatch,
        ErrorClass::ClientCertificate,
        ErrorClass::AuthToken,
        ErrorClass::Proxy,
        ErrorClass::TransformationFailed,
    ];

    /// The stable text: what is stored, shown by the API and used as the metric's label.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Timeout => "timeout",
            ErrorClass::Connect => "connect",
            ErrorClass::Request => "request",
            ErrorClass::Tls => "tls",
            ErrorClass::Dns => "dns",
            ErrorClass::ResponseBody => "response_body",
            ErrorClass::Redirect => "redirect",
            ErrorClass::HttpStatus => "http_status",
            ErrorClass::DestinationBlocked => "destination_blocked",
            ErrorClass::NoSecret => "no_secret",
            ErrorClass::SealedHeader => "sealed_header",
            ErrorClass::Signing => "signing",
            ErrorClass::ChallengeMismatch => "challenge_mismatch",
            ErrorClass::ClientCertificate => "client_certificate",
            ErrorClass::AuthToken => "auth_token",
            ErrorClass::Proxy => "proxy",
            ErrorClass::TransformationFailed => "transformation_failed",
        }
    }

    /// Whether a failure of this class says something about the receiver.
    /// The egress proxy's failures are the operator's: they neither start
    /// nor end an endpoint's failure run, so an outage of the proxy never
    /// disables endpoints (`FENIX_DISABLE_AFTER_FAILING`). Nor does a failed
    /// transformation: the owner's script failed, not the receiver.
    pub const fn concerns_the_receiver(self) -> bool {
        !matches!(self, ErrorClass::Proxy | ErrorClass::TransformationFailed)
    }

    /// The class of a stored text; `None` for a text no class has.
    pub fn parse(text: &str) -> Option<ErrorClass> {
        ErrorClass::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// The class of a destination refusal: `dns` when the name could not be
    /// resolved, `destination_blocked` for every policy refusal (the two
    /// values `fenix-destination` documents for `attempt_error`).
    pub fn of_destination(e: &fenix_destination::DestinationError) -> ErrorClass {
        match e.attempt_error() {
            "dns" => ErrorClass::Dns,
            _ => ErrorClass::DestinationBlocked,
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_reads_back_from_its_own_text_and_no_two_share_one() {
        for class in ErrorClass::ALL {
            assert_eq!(ErrorClass::parse(class.as_str()), Some(class));
        }
        let texts: std::collections::HashSet<_> = ErrorClass::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(texts.len(), ErrorClass::ALL.len());
    }

    #[test]
    fn a_text_no_class_has_is_refused_rather_than_guessed() {
        assert_eq!(ErrorClass::parse("Timeout"), None);
        assert_eq!(ErrorClass::parse("destination_not_public"), None);
        assert_eq!(ErrorClass::parse(""), None);
    }
}
