#![doc = include_str!("../README.md")]
//!
//! ## How the crate is laid out
//!
//! [`generated`] holds every request and response model, written by
//! `scripts/generate_sdks.sh` from the API document the server serves
//! (`sdks/openapi.json`); CI fails when it differs, so the types follow the
//! server. Above it, a thin hand-written layer: [`Fenix`] and one resource
//! per noun of the API (`resources`), the transport with its retries
//! (`transport`), [`Error`], paging ([`Paged`]) and [`Webhook`] for
//! receivers, which verifies with `fenix-signing`, the code Fenix signs with.

mod error;
pub mod generated;
mod paging;
mod resources;
mod transport;
mod webhook;

use std::time::Duration;

pub use error::Error;
pub use generated as types;
pub use paging::Paged;
pub use resources::{
    Apps, Deliveries, DeliveryFilter, Endpoints, EventTypes, Events, ListOptions, PortalSessions, Tokens,
};
pub use webhook::{Headers, Webhook, WebhookEvent, WebhookVerificationError};

/// One operation of the API document: its method and path template
/// (`/v1/apps/{app}`). The constants are in [`generated::operations`], so a
/// path the server renames stops this crate from compiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// `GET`, `POST`, `PATCH`, `DELETE`.
    pub method: &'static str,
    /// The path, with `{name}` for each parameter.
    pub path: &'static str,
}

/// A client of one Fenix server, with one API token.
///
/// Cheap to clone (the connection pool is shared): make one and pass it
/// around. Each resource (`fenix.apps()`, `fenix.deliveries()`, …) borrows it.
#[derive(Debug, Clone)]
pub struct Fenix {
    transport: transport::Transport,
}

impl Fenix {
    /// A client of the server at `base_url` (`https://fenix.example.com`),
    /// calling with `token` (`fxa_…` or an app's `fxk_…`). Retries `429` and
    /// `503` answers of idempotent calls up to 3 times.
    pub fn new(base_url: &str, token: &str) -> Result<Fenix, Error> {
        Fenix::builder(base_url, token).build()
    }

    /// A client with settings other than the defaults.
    pub fn builder(base_url: &str, token: &str) -> FenixBuilder {
        FenixBuilder {
            base_url: base_url.to_owned(),
            token: token.to_owned(),
            max_retries: 3,
            timeout: Duration::from_secs(30),
        }
    }

    /// Apps: the tenants whose events Fenix delivers.
    pub fn apps(&self) -> Apps<'_> {
        Apps::new(&self.transport)
    }

    /// An app's endpoints: the URLs events are delivered to.
    pub fn endpoints(&self) -> Endpoints<'_> {
        Endpoints::new(&self.transport)
    }

    /// Sending events (one, or a batch), and reading them back.
    pub fn events(&self) -> Events<'_> {
        Events::new(&self.transport)
    }

    /// The delivery log: one delivery per event and endpoint, its attempts, replays.
    pub fn deliveries(&self) -> Deliveries<'_> {
        Deliveries::new(&self.transport)
    }

    /// The event-type catalogue.
    pub fn event_types(&self) -> EventTypes<'_> {
        EventTypes::new(&self.transport)
    }

    /// Links into the consumer portal for an app's own users.
    pub fn portal_sessions(&self) -> PortalSessions<'_> {
        PortalSessions::new(&self.transport)
    }

    /// API tokens (admin only).
    pub fn tokens(&self) -> Tokens<'_> {
        Tokens::new(&self.transport)
    }
}

/// Settings of a [`Fenix`] client beyond its address and token.
#[derive(Debug, Clone)]
pub struct FenixBuilder {
    base_url: String,
    token: String,
    max_retries: u32,
    timeout: Duration,
}

impl FenixBuilder {
    /// How many times a `429` or `503` answer to an idempotent call (or to
    /// `events().send` with an idempotency key) is retried, with backoff or
    /// after the server's `Retry-After`. `0` turns retrying off.
    pub fn max_retries(mut self, max_retries: u32) -> FenixBuilder {
        self.max_retries = max_retries;
        self
    }

    /// The time limit of one HTTP request (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> FenixBuilder {
        self.timeout = timeout;
        self
    }

    /// The client; fails on a base URL that is not an absolute `http(s)` URL.
    pub fn build(self) -> Result<Fenix, Error> {
        let transport = transport::Transport::new(&self.base_url, &self.token, self.max_retries, self.timeout)?;
        Ok(Fenix { transport })
    }
}
