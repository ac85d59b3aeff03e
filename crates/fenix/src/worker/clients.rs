//! The outbound client of each endpoint with TLS material of its own (a
//! client certificate, extra CA certificates): built from
//! [`Outbound::builder`](crate::outbound::Outbound::builder), so every shared
//! rule holds (the checking resolver, no redirects, the timeouts, hostname
//! verification), with the endpoint's identity and its CAs added on top of
//! the built-in roots (never instead of them).
//!
//! Building a client costs milliseconds, so it happens at most once per
//! material: [`Clients`] keeps them by endpoint id and a fingerprint of the
//! material (a change of certificate, key or CAs builds a new one), bounded
//! in size. An endpoint without TLS material keeps the common client and
//! never comes here. During a rotation's overlap an endpoint has two: the
//! new identity, and the previous one that `attempt::tls_fallback` tries
//! when the new one fails the handshake.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use crate::{
    endpoint_tls::{CaBundle, ClientIdentity, EndpointTls},
    ids::EndpointId,
    outbound::Outbound,
    secrets::Keyring,
    time::Millis,
};

/// Most endpoints whose clients are kept; the least recently used goes first.
const MAX_CACHED: usize = 1024;

/// A client built for some material, or why none could be (the key does not
/// open, the material does not load): attempts fail with that reason.
type Built = Result<reqwest::Client, Arc<str>>;

/// How an endpoint's requests are sent.
#[derive(Clone, Default)]
pub(crate) enum EndpointClient {
    /// The common client (no TLS material of its own).
    #[default]
    Common,
    /// Its own client, and during a rotation's overlap the previous identity's.
    Own { current: Built, previous: Option<Built> },
}

struct Entry {
    fingerprints: ([u8; 32], Option<[u8; 32]>),
    client: EndpointClient,
    used: u64,
}

/// The endpoints' own clients (one per process and user of them).
pub(crate) struct Clients {
    outbound: Outbound,
    cache: Mutex<(HashMap<EndpointId, Entry>, u64)>,
    /// Clients built so far (each costs milliseconds: once per material).
    builds: std::sync::atomic::AtomicUsize,
}

impl Clients {
    pub(crate) fn new(outbound: Outbound) -> Clients {
        Clients { outbound, cache: Mutex::new((HashMap::new(), 0)), builds: Default::default() }
    }

    /// The client of endpoint `id` with material `tls` at `now` (the
    /// previous identity only while its overlap lasts).
    pub(crate) fn for_endpoint(
        &self,
        id: &EndpointId,
        tls: Option<&EndpointTls>,
        keyring: &Keyring,
        now: Millis,
    ) -> EndpointClient {
        let Some(tls) = tls else { return EndpointClient::Common };
        let previous = tls.live_previous(now);
        let ca = tls.ca.as_ref();
        let fingerprints = (
            EndpointTls::fingerprint(tls.client.as_ref(), ca),
            previous.map(|p| EndpointTls::fingerprint(Some(p), ca)),
        );
        let mut guard = self.cache.lock().expect("client cache");
        let (cache, clock) = &mut *guard;
        *clock += 1;
        let (mut old_current, mut old_previous) = (None, None);
        if let Some(e) = cache.get_mut(id) {
            if e.fingerprints == fingerprints {
                e.used = *clock;
                return e.client.clone();
            }
            // Reuse what did not change: a previous identity that lapsed, or
            // after a rotation the current client that is now the previous one.
            if let EndpointClient::Own { current, previous } = &e.client {
                old_current = (e.fingerprints.0 == fingerprints.0).then(|| current.clone());
                old_previous = if e.fingerprints.1.is_some() && e.fingerprints.1 == fingerprints.1 {
                    previous.clone()
                } else {
                    (Some(e.fingerprints.0) == fingerprints.1).then(|| current.clone())
                };
            }
        }
        drop(guard);
        let current = old_current.unwrap_or_else(|| self.build(id, tls.client.as_ref(), ca, keyring));
        let previous = previous.map(|p| old_previous.unwrap_or_else(|| self.build(id, Some(p), ca, keyring)));
        let client = EndpointClient::Own { current, previous };
        let mut guard = self.cache.lock().expect("client cache");
        let (cache, clock) = &mut *guard;
        if cache.len() >= MAX_CACHED && !cache.contains_key(id) {
            if let Some(oldest) = cache.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) {
                cache.remove(&oldest);
            }
        }
        cache.insert(id.clone(), Entry { fingerprints, client: client.clone(), used: *clock });
        client
    }

    /// A client with `identity` (if any) and the extra `ca` (if any).
    fn build(
        &self,
        id: &EndpointId,
        identity: Option<&ClientIdentity>,
        ca: Option<&CaBundle>,
        keyring: &Keyring,
    ) -> Built {
        let built = self.try_build(id, identity, ca, keyring);
        let builds = self.builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        tracing::debug!(endpoint_id = %id, builds, "an endpoint's own client built");
        if let Err(why) = &built {
            // The reason names no key material (a key id, a parser's kind of error).
            tracing::warn!(endpoint_id = %id, error = %why, "an endpoint's TLS material cannot be used; its attempts fail");
        }
        built
    }

    fn try_build(
        &self,
        id: &EndpointId,
        identity: Option<&ClientIdentity>,
        ca: Option<&CaBundle>,
        keyring: &Keyring,
    ) -> Built {
        let mut b = self.outbound.builder();
        if let Some(identity) = identity {
            let pem = identity.identity_pem(keyring, id.as_str()).map_err(|_| {
                Arc::<str>::from("the endpoint's client key cannot be opened with the master keys given")
            })?;
            let identity = reqwest::Identity::from_pem(&pem)
                .map_err(|_| Arc::<str>::from("the endpoint's client certificate and key cannot be loaded"))?;
            b = b.identity(identity);
        }
        if let Some(ca) = ca {
            let certs = reqwest::Certificate::from_pem_bundle(ca.pem.as_bytes())
                .map_err(|_| Arc::<str>::from("the endpoint's CA certificates cannot be loaded"))?;
            for cert in certs {
                b = b.add_root_certificate(cert);
            }
        }
        b.build().map_err(|_| Arc::from("no HTTP client could be built with the endpoint's TLS material"))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

    use super::*;
    use crate::endpoint_tls::{parse_ca_bundle, parse_identity};

    /// A self-signed CA certificate and its key, PEM (a valid client identity too).
    fn pair() -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        (params.self_signed(&key).unwrap().pem(), key.serialize_pem())
    }

    #[tokio::test]
    async fn a_client_is_built_once_per_material_and_a_rotation_reuses_the_current_one() {
        let dir = tempfile::tempdir().unwrap();
        let settings = crate::settings::Settings {
            database_url: format!("sqlite://{}/fenix.db", dir.path().display()),
            ..Default::default()
        };
        let state = crate::build_state(settings).await.unwrap();
        let (clients, keyring, now) = (Clients::new(state.outbound.clone()), &state.keyring, crate::time::now_ms());
        let builds = || clients.builds.load(Ordering::Relaxed);
        let (id, other) = (EndpointId::new(), EndpointId::new());
        assert!(matches!(clients.for_endpoint(&id, None, keyring, now), EndpointClient::Common));
        assert_eq!(builds(), 0, "no TLS material: the common client");

        let (cert, key) = pair();
        let ca = parse_ca_bundle(&cert, now).unwrap();
        let first = parse_identity(&cert, &key, now).unwrap().seal(&keyring.current, id.as_str());
        let tls = EndpointTls { client: Some(first), ca: Some(ca), previous: None };
        for _ in 0..3 {
            let client = clients.for_endpoint(&id, Some(&tls), keyring, now);
            assert!(matches!(client, EndpointClient::Own { current: Ok(_), previous: None }));
        }
        assert_eq!(builds(), 1, "built once, then taken from the cache");

        let (cert2, key2) = pair();
        let second = parse_identity(&cert2, &key2, now).unwrap().seal(&keyring.current, id.as_str());
        let rotated = tls.rotated(second, now + 60_000);
        let client = clients.for_endpoint(&id, Some(&rotated), keyring, now);
        assert!(matches!(client, EndpointClient::Own { current: Ok(_), previous: Some(Ok(_)) }));
        assert_eq!(builds(), 2, "only the new identity is built: the previous one is the former current client");
        let lapsed = clients.for_endpoint(&id, Some(&rotated), keyring, now + 60_000);
        assert!(matches!(lapsed, EndpointClient::Own { current: Ok(_), previous: None }));
        assert_eq!(builds(), 2, "the overlap's end builds nothing");

        // A key sealed for another endpoint does not open for this one: its attempts fail.
        let moved = EndpointTls { previous: None, ..rotated.clone() };
        let unusable = clients.for_endpoint(&other, Some(&moved), keyring, now);
        assert!(matches!(unusable, EndpointClient::Own { current: Err(_), .. }));
    }
}
