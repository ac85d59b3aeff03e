//! Endpoint secrets opened for signing: those loaded with a claimed batch, and
//! a small cache of secrets reloaded for jobs whose own grew too old to sign
//! with (a rotation without overlap retires the old secret at once, and a job
//! may wait in its endpoint's queue well after its batch was claimed).
//!
//! [`signature_header`] is the one place a request is signed with an
//! endpoint's keys (HMAC and Ed25519 alike): deliveries use it, and so does
//! anything else Fenix sends to an endpoint in its name.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use crate::{
    ids::EndpointId,
    secrets::{self, EndpointKey, Keyring},
    store::{endpoints::SecretRow, Store},
    time::Millis,
};

/// Secrets loaded longer ago than this are loaded again before signing.
pub(super) const SECRETS_FRESH_MS: Millis = 1_000;

/// An endpoint key version opened for signing, with the end of its validity.
pub(crate) struct LiveSecret {
    pub(crate) version: i64,
    pub(crate) key: EndpointKey,
    /// `None` until a rotation retires it.
    expires_at: Option<Millis>,
}

impl LiveSecret {
    /// True while the secret may sign (a retired one stops at its expiry).
    pub(crate) fn is_live(&self, now: Millis) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }
}

/// The signature header value for `endpoint_id`'s `live` keys (newest
/// first), in `scheme`'s format: one signature per key, `v1` for an HMAC
/// secret and `v1a` for an Ed25519 key (with its key id in fenix-v1), so
/// during a rotation's overlap receivers of either key verify.
///
/// Fails only on a stored HMAC secret unusable for Standard Webhooks.
pub(crate) fn signature_header(
    scheme: fenix_signing::Scheme,
    endpoint_id: &str,
    live: &[&LiveSecret],
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, fenix_signing::SigningError> {
    // Key ids only for Ed25519 keys: an HMAC-only endpoint allocates nothing more than before.
    let key_ids: Vec<Option<String>> = live
        .iter()
        .map(|s| matches!(s.key, EndpointKey::Ed25519(_)).then(|| secrets::key_id(endpoint_id, s.version)))
        .collect();
    let keys: Vec<fenix_signing::SignKey<'_>> = live
        .iter()
        .zip(&key_ids)
        .map(|(s, key_id)| match (&s.key, key_id) {
            (EndpointKey::Ed25519(key), Some(key_id)) => fenix_signing::SignKey::Ed25519 { key, key_id },
            (EndpointKey::Ed25519(_), None) => unreachable!("every Ed25519 key was given its id above"),
            (EndpointKey::Hmac(secret), _) => fenix_signing::SignKey::Hmac(secret.expose()),
        })
        .collect();
    fenix_signing::signature_header_with(scheme, &keys, msg_id, timestamp, body)
}

/// An endpoint's live secrets, newest first, shared by the jobs of a batch.
pub(super) type Secrets = Arc<Vec<LiveSecret>>;

/// Opens sealed secret rows with the keyring; a row that cannot be opened is
/// logged (without its content) and left out.
pub(crate) fn open(keyring: &Keyring, endpoint_id: &str, rows: Option<&Vec<SecretRow>>) -> Vec<LiveSecret> {
    rows.into_iter()
        .flatten()
        .filter_map(|r| match keyring.open_key(&r.sealed, endpoint_id) {
            Ok(key) => Some(LiveSecret { version: r.version, key, expires_at: r.expires_at }),
            Err(e) => {
                tracing::error!(
                    endpoint_id,
                    version = r.version,
                    error = format!("{e:#}"),
                    "cannot open endpoint secret"
                );
                None
            }
        })
        .collect()
}

/// Secrets reloaded for jobs whose own were too old: endpoint → (loaded at, secrets).
#[derive(Default)]
pub(super) struct Reloaded {
    fresh: Mutex<HashMap<String, (Millis, Secrets)>>,
}

impl Reloaded {
    /// The endpoint's secrets as of at most [`SECRETS_FRESH_MS`] ago: `own`
    /// (loaded at `loaded_at`) while they are that fresh, else loaded again
    /// (once per endpoint and interval, shared by its queued jobs). If they
    /// cannot be loaded, `own` are used, still filtered by their expiry.
    pub(super) async fn secrets_for(
        &self,
        store: &Store,
        keyring: &Keyring,
        endpoint_id: &EndpointId,
        own: &Secrets,
        loaded_at: Millis,
        now: Millis,
    ) -> Secrets {
        if now - loaded_at <= SECRETS_FRESH_MS {
            return own.clone();
        }
        if let Some((at, secrets)) = self.fresh.lock().expect("secrets lock").get(endpoint_id.as_str()) {
            if now - *at <= SECRETS_FRESH_MS {
                return secrets.clone();
            }
        }
        match store.live_secrets(endpoint_id, now).await {
            Ok(rows) => {
                let secrets = Arc::new(open(keyring, endpoint_id.as_str(), Some(&rows)));
                self.fresh.lock().expect("secrets lock").insert(endpoint_id.to_string(), (now, secrets.clone()));
                secrets
            }
            Err(e) => {
                tracing::warn!(endpoint_id = %endpoint_id, error = %e, "could not reload signing secrets; using those loaded at claim");
                own.clone()
            }
        }
    }

    /// Drops reloaded secrets too old to be used again.
    pub(super) fn prune(&self, now: Millis) {
        self.fresh.lock().expect("secrets lock").retain(|_, (at, _)| now - *at <= SECRETS_FRESH_MS);
    }
}
