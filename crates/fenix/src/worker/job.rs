//! A claimed delivery with everything needed to send it, and the step that
//! turns a claimed batch into jobs (or into outcomes at once, for deliveries
//! that must not be sent). The endpoint's spec comes decoded from the store.

use std::{
    collections::{HashMap, HashSet},
    sync::Arc,
    time::Duration,
};

use bytes::Bytes;
use reqwest::header::HeaderMap;

use super::{
    clients::Clients,
    gate::Gated,
    signing_keys::{self, Secrets},
};
use crate::{
    endpoint_spec::{EndpointSpec, SpecError},
    ids::{EndpointId, EventId},
    lifecycle::DeliveryStatus,
    secrets::Keyring,
    store::deliveries::{BatchContext, ClaimedDelivery, EndpointTarget, Outcome},
    store::endpoints::SecretRow,
    time::Millis,
};

/// The endpoint URL after the URL rules of the destination policy.
pub(super) type CheckedUrl = Arc<Result<url::Url, fenix_destination::DestinationError>>;

/// A claimed delivery with everything needed to send it.
pub(super) struct Job {
    pub(super) claimed: ClaimedDelivery,
    pub(super) event_type: String,
    pub(super) event_created_at: Millis,
    pub(super) envelope: Bytes,
    /// The endpoint URL after the URL rules of the destination policy (checked
    /// once per endpoint and batch: they depend on the URL alone); the address
    /// check runs again before every attempt.
    pub(super) url: CheckedUrl,
    /// The endpoint's URL as the claim read it (before the URL rules): a
    /// job whose endpoint has moved since is not sent ([`super::watch`]).
    pub(super) prepared_for: Arc<str>,
    /// The URL's host (lower case), the key of the per-host limit; `None` when
    /// the URL is refused (no request is made).
    pub(super) host: Option<Arc<str>>,
    pub(super) rate_limit_per_sec: Option<i64>,
    pub(super) scheme: fenix_signing::Scheme,
    /// The endpoint's live secrets when the batch was claimed (`loaded_at`);
    /// reloaded before signing when older than [`signing_keys::SECRETS_FRESH_MS`].
    pub(super) secrets: Secrets,
    pub(super) loaded_at: Millis,
    /// The endpoint's own headers and retry rules (made once per endpoint and batch).
    pub(super) policy: Arc<SendPolicy>,
    /// The `traceparent` its event's ingestion stored: the parent of the
    /// attempt's span (`traces`); `None` when ingested with tracing off.
    pub(super) trace_context: Option<String>,
}

/// An endpoint's policy as an attempt needs it.
pub(super) struct SendPolicy {
    /// Custom headers, sensitive values opened; `None` when a sealed value
    /// does not open (the attempt is refused rather than sent without it).
    pub(super) headers: Option<HeaderMap>,
    /// `None`: `FENIX_RETRY_SCHEDULE`.
    pub(super) retry_schedule: Option<Vec<Duration>>,
    pub(super) final_status_codes: Vec<u16>,
    /// `None`: `FENIX_ATTEMPT_TIMEOUT`.
    pub(super) attempt_timeout: Option<Duration>,
    /// OAuth2 client credentials: each request carries a bearer token.
    pub(super) auth: Option<crate::oauth::spec::EndpointAuth>,
    /// The common client, or the endpoint's own (`tls`: `clients.rs`).
    pub(super) client: super::clients::EndpointClient,
    /// The endpoint's transformation (`transformed.rs`); `None` for most.
    pub(super) transformation: Option<Arc<str>>,
    /// The custom headers a transformation is given: those not sealed
    /// (empty, and never filled, without a transformation).
    pub(super) script_headers: std::collections::BTreeMap<String, String>,
}

impl SendPolicy {
    fn of(id: &EndpointId, spec: &EndpointSpec, keyring: &Keyring, clients: &Clients, now: Millis) -> SendPolicy {
        let endpoint_id = id.as_str();
        let headers = match spec.headers.open(keyring, endpoint_id) {
            Ok(map) => Some(map),
            Err(e) => {
                // The error names no value (a key, a name, an encoding).
                tracing::warn!(endpoint_id, error = %e, "an endpoint's custom headers cannot be opened");
                None
            }
        };
        SendPolicy {
            headers,
            retry_schedule: spec.retry_schedule.clone(),
            final_status_codes: spec.final_status_codes.clone(),
            attempt_timeout: spec.attempt_timeout,
            auth: spec.auth.clone(),
            client: clients.for_endpoint(id, spec.tls.as_ref(), keyring, now),
            transformation: spec.transformation.clone(),
            script_headers: match spec.transformation {
                Some(_) => {
                    let (shown, _) = spec.headers.redacted();
                    shown.into_iter().filter(|(_, v)| v != crate::endpoint_policy::REDACTED).collect()
                }
                None => Default::default(),
            },
        }
    }
}

impl Gated for Job {
    fn app_id(&self) -> &str {
        self.claimed.app_id.as_str()
    }

    fn endpoint_id(&self) -> &str {
        self.claimed.endpoint_id.as_str()
    }

    fn host(&self) -> Option<&Arc<str>> {
        self.host.as_ref()
    }

    fn rate_limit_per_sec(&self) -> Option<i64> {
        self.rate_limit_per_sec
    }
}

/// The outcome of a claimed delivery settled without an attempt.
pub(super) fn settled(c: &ClaimedDelivery, status: DeliveryStatus) -> Outcome {
    c.outcome(status, None, None)
}

/// The outcome of a delivery whose endpoint's stored spec cannot be read:
/// failed, not sent under a policy its owner did not choose (a replay after
/// the spec is fixed sends it). The error is logged once per endpoint and batch.
fn unreadable(c: &ClaimedDelivery, e: &SpecError, logged: &mut HashSet<EndpointId>) -> Outcome {
    if logged.insert(c.endpoint_id.clone()) {
        tracing::error!(endpoint_id = %c.endpoint_id, error = %e, "an endpoint's stored spec cannot be read; its deliveries fail");
    }
    settled(c, DeliveryStatus::Failed)
}

/// Turns claimed rows into jobs; deliveries that must not be sent become
/// outcomes at once (paused or disabled endpoint → `skipped`, payload purged
/// → `failed`, payload erased on request, one of `erased` → `skipped`, its
/// reason `payload_erased` written when it was erased). `check_url` is the
/// destination policy's URL rules.
pub(super) fn prepare(
    claimed: Vec<ClaimedDelivery>,
    ctx: BatchContext,
    erased: &HashSet<EventId>,
    ctx_loaded_at: Millis,
    keyring: &Keyring,
    clients: &Clients,
    check_url: impl Fn(&str) -> Result<url::Url, fenix_destination::DestinationError>,
) -> Vec<Result<Job, Box<Outcome>>> {
    let BatchContext { events, endpoints, secrets: sealed, trace_contexts } = ctx;
    let batch = Batch { endpoints, sealed, erased, loaded_at: ctx_loaded_at, keyring, clients, check_url };
    let mut shared = Shared {
        events,
        envelopes: HashMap::new(),
        parts: HashMap::new(),
        unreadable_logged: HashSet::new(),
        trace_contexts,
    };
    claimed.into_iter().map(|c| job(c, &batch, &mut shared)).collect()
}

/// The job that sends `c`, or its outcome when it must not be sent.
fn job<F>(c: ClaimedDelivery, batch: &Batch<'_, F>, shared: &mut Shared) -> Result<Job, Box<Outcome>>
where
    F: Fn(&str) -> Result<url::Url, fenix_destination::DestinationError>,
{
    let (target, spec) = batch.sendable(&c, &mut shared.unreadable_logged)?;
    let (event_type, event_created_at, envelope) = shared.event(&c.event_id);
    let Some(envelope) = envelope else {
        return Err(Box::new(payload_gone(&c, batch.erased)));
    };
    let p =
        shared.parts.entry(c.endpoint_id.clone()).or_insert_with(|| batch.parts(&c.endpoint_id, target, spec)).clone();
    Ok(Job {
        host: p.host,
        url: p.url,
        prepared_for: p.prepared_for,
        rate_limit_per_sec: spec.rate_limit_per_sec,
        scheme: spec.signature_scheme,
        secrets: p.secrets,
        loaded_at: batch.loaded_at,
        event_type,
        event_created_at,
        envelope,
        policy: p.policy,
        trace_context: shared.trace_contexts.get(&c.event_id).cloned(),
        claimed: c,
    })
}

/// The outcome of a delivery whose payload is gone: `skipped` when it was
/// erased on request, `failed` when retention purged it first.
fn payload_gone(c: &ClaimedDelivery, erased: &HashSet<EventId>) -> Outcome {
    if erased.contains(&c.event_id) {
        return settled(c, DeliveryStatus::Skipped);
    }
    tracing::warn!(delivery_id = %c.id, "payload purged by retention before delivery; marking failed");
    settled(c, DeliveryStatus::Failed)
}

/// What a claimed batch brings that its jobs only read.
struct Batch<'a, F> {
    endpoints: HashMap<EndpointId, EndpointTarget>,
    /// endpoint id → its sealed live secrets.
    sealed: HashMap<EndpointId, Vec<SecretRow>>,
    erased: &'a HashSet<EventId>,
    loaded_at: Millis,
    keyring: &'a Keyring,
    clients: &'a Clients,
    check_url: F,
}

impl<F> Batch<'_, F>
where
    F: Fn(&str) -> Result<url::Url, fenix_destination::DestinationError>,
{
    /// The endpoint of `c` and its spec, or the outcome of a delivery that
    /// is not sent: `skipped` when the endpoint is gone, paused or disabled,
    /// `failed` when its spec cannot be read.
    fn sendable(
        &self,
        c: &ClaimedDelivery,
        logged: &mut HashSet<EndpointId>,
    ) -> Result<(&EndpointTarget, &EndpointSpec), Box<Outcome>> {
        let Some(target) = self.endpoints.get(&c.endpoint_id) else {
            return Err(Box::new(settled(c, DeliveryStatus::Skipped)));
        };
        if !target.state.sends() {
            return Err(Box::new(settled(c, DeliveryStatus::Skipped)));
        }
        match &target.spec {
            Ok(spec) => Ok((target, spec)),
            Err(e) => Err(Box::new(unreadable(c, e, logged))),
        }
    }

    /// The endpoint's secrets, policy and checked URL, for its first job of the batch.
    fn parts(&self, id: &EndpointId, target: &EndpointTarget, spec: &EndpointSpec) -> EndpointParts {
        let secrets = signing_keys::open(self.keyring, id.as_str(), self.sealed.get(id));
        let policy = SendPolicy::of(id, spec, self.keyring, self.clients, self.loaded_at);
        EndpointParts::of(&target.url, Arc::new(secrets), policy, &self.check_url)
    }
}

/// What the jobs of a batch share, each made once as the jobs are made.
struct Shared {
    /// event id → (type, envelope bytes until taken, created at).
    events: HashMap<EventId, (String, Option<Vec<u8>>, Millis)>,
    /// event id → its envelope, taken out of `events` once (`None`: purged or erased).
    envelopes: HashMap<EventId, Option<Bytes>>,
    parts: HashMap<EndpointId, EndpointParts>,
    unreadable_logged: HashSet<EndpointId>,
    /// event id → its stored `traceparent` (only events that have one).
    trace_contexts: HashMap<EventId, String>,
}

impl Shared {
    /// Event `id`'s type, creation time and envelope.
    fn event(&mut self, id: &EventId) -> (String, Millis, Option<Bytes>) {
        let event_type = self.events.get(id).map(|e| e.0.clone()).unwrap_or_default();
        let created_at = self.events.get(id).map(|e| e.2).unwrap_or_default();
        let events = &mut self.events;
        let envelope = self
            .envelopes
            .entry(id.clone())
            .or_insert_with(|| events.get_mut(id).and_then(|e| e.1.take()).map(Bytes::from))
            .clone();
        (event_type, created_at, envelope)
    }
}

/// What the jobs of one endpoint share within a batch, made once.
#[derive(Clone)]
struct EndpointParts {
    secrets: Secrets,
    url: CheckedUrl,
    /// The URL's host, lower case.
    host: Option<Arc<str>>,
    policy: Arc<SendPolicy>,
    /// The URL as the claim read it.
    prepared_for: Arc<str>,
}

impl EndpointParts {
    fn of(
        raw_url: &str,
        secrets: Secrets,
        policy: SendPolicy,
        check_url: impl Fn(&str) -> Result<url::Url, fenix_destination::DestinationError>,
    ) -> EndpointParts {
        let url = Arc::new(check_url(raw_url));
        let host = url.as_ref().as_ref().ok().and_then(|u| u.host_str()).map(|h| Arc::from(h.to_ascii_lowercase()));
        EndpointParts { secrets, url, host, policy: Arc::new(policy), prepared_for: Arc::from(raw_url) }
    }
}
