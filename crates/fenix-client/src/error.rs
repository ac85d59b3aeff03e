//! The one error type of the client.
//!
//! A call fails because Fenix refused it ([`Error::Api`], with Fenix's stable
//! `code`: match on that, not on the message), because the server could not
//! be reached or timed out ([`Error::Transport`]), or because an answer was
//! not what the API document describes ([`Error::Decode`], a version
//! mismatch between client and server). Webhook verification has its own
//! error, [`crate::WebhookVerificationError`], convertible into this one.

use std::fmt;
use std::time::Duration;

/// Why a call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Fenix answered with an error status and its error body.
    Api {
        /// The HTTP status (`404`).
        status: u16,
        /// Fenix's machine-readable code (`app_not_found`); the list is in docs/api.md.
        code: String,
        /// A sentence for people.
        message: String,
        /// The server's `Retry-After`, on `429` and `503` answers that carry one.
        retry_after: Option<Duration>,
    },
    /// No answer: connection refused, TLS, a timeout.
    Transport(reqwest::Error),
    /// An answer whose body does not match the API document.
    Decode {
        /// The HTTP status of that answer.
        status: u16,
        /// What did not parse.
        source: serde_json::Error,
    },
    /// The base URL given to [`crate::Fenix::new`] is not an absolute http(s) URL.
    InvalidBaseUrl(String),
    /// An argument the client refuses before sending (event data that is not a JSON object).
    InvalidInput(String),
    /// A webhook did not verify.
    Webhook(crate::WebhookVerificationError),
}

impl Error {
    /// The HTTP status of a refused call.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api { status, .. } | Error::Decode { status, .. } => Some(*status),
            Error::Transport(error) => error.status().map(|status| status.as_u16()),
            _ => None,
        }
    }

    /// Fenix's error code of a refused call (`app_not_found`).
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Api { code, .. } => Some(code),
            _ => None,
        }
    }

    /// The server's `Retry-After`, when it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Api { status, code, message, .. } => write!(f, "Fenix answered {status} {code}: {message}"),
            Error::Transport(error) => write!(f, "could not reach Fenix: {error}"),
            Error::Decode { status, source } => write!(f, "unexpected answer from Fenix ({status}): {source}"),
            Error::InvalidBaseUrl(url) => write!(f, "not an absolute http(s) URL: {url:?}"),
            Error::InvalidInput(reason) => f.write_str(reason),
            Error::Webhook(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Transport(error) => Some(error),
            Error::Decode { source, .. } => Some(source),
            Error::Webhook(error) => Some(error),
            _ => None,
        }
    }
}

impl From<crate::WebhookVerificationError> for Error {
    fn from(error: crate::WebhookVerificationError) -> Error {
        Error::Webhook(error)
    }
}
