//! Endpoint secrets opened for signing: those loaded with a claimed batch, and
//! a small cache of secrets reloaded for jobs whose own grew too old to sign
//! with (a rotation without overlap retires the old secret at once, and a job
//! may wait in its endpoint's queue well after its batch was claimed).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use crate::{
    secrets::{Keyring, SigningSecret},
    store::{endpoints::SecretRow, Store},
    time::Millis,
};

/// Secrets loaded longer ago than this are loaded again before signing.
pub(super) const SECRETS_FRESH_MS: Millis = 1_000;

/// An endpoint secret opened for signing, with the end of its validity.
pub(crate) struct LiveSecret {
    pub(super) version: i64,
    pub(super) secret: SigningSecret,
    /// `None` until a rotation retires it.
    expires_at: Option<Millis>,
}

impl LiveSecret {
    /// True while the secret may sign (a retired one stops at its expiry).
    pub(super) fn is_live(&self, now: Millis) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }
}

/// An endpoint's live secrets, newest first, shared by the jobs of a batch.
pub(super) type Secrets = Arc<Vec<LiveSecret>>;

/// Opens sealed secret rows with the keyring; a row that cannot be opened is
/// logged (without its content) and left out.
pub(super) fn open(keyring: &Keyring, endpoint_id: &str, rows: Option<&Vec<SecretRow>>) -> Vec<LiveSecret> {
    rows.into_iter()
        .flatten()
        .filter_map(|r| match keyring.open_secret(&r.sealed, endpoint_id) {
            Ok(secret) => Some(LiveSecret { version: r.version, secret, expires_at: r.expires_at }),
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
        endpoint_id: &str,
        own: &Secrets,
        loaded_at: Millis,
        now: Millis,
    ) -> Secrets {
        if now - loaded_at <= SECRETS_FRESH_MS {
            return own.clone();
        }
        if let Some((at, secrets)) = self.fresh.lock().expect("secrets lock").get(endpoint_id) {
            if now - *at <= SECRETS_FRESH_MS {
                return secrets.clone();
            }
        }
        match store.live_secrets(endpoint_id, now).await {
            Ok(rows) => {
                let secrets = Arc::new(open(keyring, endpoint_id, Some(&rows)));
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
