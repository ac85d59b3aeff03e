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
    store::deliveries::{BatchContext, ClaimedDelivery, Outcome},
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
    let mut envelopes: HashMap<EventId, Option<Bytes>> = HashMap::new();
    let mut parts: HashMap<EndpointId, EndpointParts> = HashMap::new();
    let mut unreadable_logged: HashSet<EndpointId> = HashSet::new();
    let BatchContext { mut events, endpoints, secrets: sealed } = ctx;
    claimed
        .into_iter()
        .map(|c| {
            let Some(target) = endpoints.get(&c.endpoint_id) else {
                return Err(Box::new(settled(&c, DeliveryStatus::Skipped)));
            };
            if !target.state.sends() {
                return Err(Box::new(settled(&c, DeliveryStatus::Skipped)));
            }
            let spec = match &target.spec {
                Ok(spec) => spec,
                Err(e) => return Err(Box::new(unreadable(&c, e, &mut unreadable_logged))),
            };
            let event_type = events.get(&c.event_id).map(|e| e.0.clone()).unwrap_or_default();
            let event_created_at = events.get(&c.event_id).map(|e| e.2).unwrap_or_default();
            let envelope = envelopes
                .entry(c.event_id.clone())
                .or_insert_with(|| events.get_mut(&c.event_id).and_then(|e| e.1.take()).map(Bytes::from))
                .clone();
            let Some(envelope) = envelope else {
                if erased.contains(&c.event_id) {
                    return Err(Box::new(settled(&c, DeliveryStatus::Skipped)));
                }
                tracing::warn!(delivery_id = %c.id, "payload purged by retention before delivery; marking failed");
                return Err(Box::new(settled(&c, DeliveryStatus::Failed)));
            };
            let p = parts
                .entry(c.endpoint_id.clone())
                .or_insert_with(|| {
                    let secrets = signing_keys::open(keyring, c.endpoint_id.as_str(), sealed.get(&c.endpoint_id));
                    let policy = SendPolicy::of(&c.endpoint_id, spec, keyring, clients, ctx_loaded_at);
                    EndpointParts::of(&target.url, Arc::new(secrets), policy, &check_url)
                })
                .clone();
            Ok(Job {
                host: p.host,
                url: p.url,
                prepared_for: p.prepared_for,
                rate_limit_per_sec: spec.rate_limit_per_sec,
                scheme: spec.signature_scheme,
                secrets: p.secrets,
                loaded_at: ctx_loaded_at,
                event_type,
                event_created_at,
                envelope,
                policy: p.policy,
                claimed: c,
            })
        })
        .collect()
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
