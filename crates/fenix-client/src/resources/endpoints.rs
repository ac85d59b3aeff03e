//! An app's endpoints: where its events are delivered (`/v1/apps/{app}/endpoints`).

use futures::Stream;

use super::{list, list_all, ListOptions};
use crate::generated::{
    operations, CreateEndpoint, Endpoint, NoOptions, PageEndpoint, PatchEndpoint, PublicKeys, Resume, ResumedEndpoint,
    RotateSecret, Rotated,
};
use crate::transport::{Call, Transport};
use crate::Error;

/// `fenix.endpoints()`.
#[derive(Debug, Clone, Copy)]
pub struct Endpoints<'a> {
    transport: &'a Transport,
}

impl<'a> Endpoints<'a> {
    pub(crate) fn new(transport: &'a Transport) -> Endpoints<'a> {
        Endpoints { transport }
    }

    /// Creates an endpoint of `app` at `url`, subscribed to `event_types`
    /// (`[]`: every type; `booking.*` patterns allowed). The answer holds the
    /// endpoint's `secret`, shown this once.
    pub async fn create(&self, app: &str, url: &str, event_types: &[&str]) -> Result<Endpoint, Error> {
        let body = CreateEndpoint::builder()
            .url(url)
            .event_types(event_types.iter().map(|t| t.to_string()).collect::<Vec<_>>());
        self.create_with(app, &body.try_into().expect("url is set")).await
    }

    /// Creates an endpoint with every option of the API
    /// (`CreateEndpoint::builder().url(…).retry_schedule(…)`, then `try_into()`).
    pub async fn create_with(&self, app: &str, endpoint: &CreateEndpoint) -> Result<Endpoint, Error> {
        self.transport.send(Call::new(operations::CREATE_ENDPOINT, &[app]).json(endpoint)).await
    }

    /// One endpoint.
    pub async fn get(&self, app: &str, endpoint: &str) -> Result<Endpoint, Error> {
        self.transport.send(Call::new(operations::GET_ENDPOINT, &[app, endpoint])).await
    }

    /// One page of the app's endpoints.
    pub async fn list(&self, app: &str, options: &ListOptions) -> Result<PageEndpoint, Error> {
        list(self.transport, operations::LIST_ENDPOINTS, &[app], options.pairs()).await
    }

    /// Every endpoint of the app, page after page.
    pub fn list_all(&self, app: &str) -> impl Stream<Item = Result<Endpoint, Error>> + 'a {
        list_all::<PageEndpoint>(self.transport, operations::LIST_ENDPOINTS, vec![app.to_owned()], Vec::new())
    }

    /// Changes the fields `patch` holds (`PatchEndpoint::builder()…`).
    pub async fn update(&self, app: &str, endpoint: &str, patch: &PatchEndpoint) -> Result<Endpoint, Error> {
        self.transport.send(Call::new(operations::UPDATE_ENDPOINT, &[app, endpoint]).json(patch)).await
    }

    /// Deletes the endpoint; its pending deliveries are dropped.
    pub async fn delete(&self, app: &str, endpoint: &str) -> Result<(), Error> {
        self.transport.send_empty(Call::new(operations::DELETE_ENDPOINT, &[app, endpoint])).await
    }

    /// Stops sending to the endpoint (deliveries wait) until [`Endpoints::resume`].
    pub async fn pause(&self, app: &str, endpoint: &str) -> Result<Endpoint, Error> {
        // Pausing twice is pausing once.
        self.transport
            .send(Call::new(operations::PAUSE_ENDPOINT, &[app, endpoint]).json(&NoOptions {}).retry_if(true))
            .await
    }

    /// Sends to a paused or disabled endpoint again; `replay_skipped` also
    /// re-sends what was skipped meanwhile.
    pub async fn resume(&self, app: &str, endpoint: &str, replay_skipped: bool) -> Result<ResumedEndpoint, Error> {
        let body = Resume { replay_skipped: Some(replay_skipped) };
        self.transport.send(Call::new(operations::RESUME_ENDPOINT, &[app, endpoint]).json(&body)).await
    }

    /// A new secret (or key pair); the old one keeps signing for
    /// `overlap_seconds` (Fenix's default: a day). The answer holds the new
    /// `secret` (or `public_key`), shown this once.
    pub async fn rotate_secret(&self, app: &str, endpoint: &str, rotate: &RotateSecret) -> Result<Rotated, Error> {
        self.transport.send(Call::new(operations::ROTATE_ENDPOINT_SECRET, &[app, endpoint]).json(rotate)).await
    }

    /// The Ed25519 public keys the endpoint signs with now.
    pub async fn public_keys(&self, app: &str, endpoint: &str) -> Result<PublicKeys, Error> {
        self.transport.send(Call::new(operations::LIST_ENDPOINT_PUBLIC_KEYS, &[app, endpoint])).await
    }
}
