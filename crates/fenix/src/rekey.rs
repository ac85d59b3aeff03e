//! `fenix rekey`: every sealed value (signing secrets, sensitive custom header
//! values, OAuth2 client secrets and private keys, client certificate keys)
//! sealed again under the keyring's current master key. What no key given
//! opens is left as it is and reported, so a key change can finish even when
//! a value was sealed with a key that is lost (`--skip-unreadable`).

use std::fmt;

use crate::{
    endpoint_policy::StoredHeaders,
    oauth::spec::EndpointAuth,
    secrets::{Keyring, MasterKey},
};

/// What `fenix rekey` re-sealed, and what it could not open.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rekeyed {
    /// Signing secret versions.
    pub secrets: usize,
    /// Endpoints whose sensitive custom header values were re-sealed.
    pub header_sets: usize,
    /// Endpoints whose OAuth2 client secret or private key was re-sealed.
    pub auth_sets: usize,
    /// Endpoints whose client certificate keys (current, previous) were re-sealed.
    pub tls_sets: usize,
    /// Values left as they were: none of the keys given opens them.
    pub unreadable: Vec<Unreadable>,
}

/// A sealed value `fenix rekey` could not open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The endpoint it belongs to.
    pub endpoint_id: crate::ids::EndpointId,
    /// Which of the endpoint's values.
    pub what: SealedValue,
    /// Hex id of the key it was sealed with, if the blob names one.
    pub key_id: Option<String>,
}

/// The kinds of sealed value an endpoint holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealedValue {
    /// A signing secret (or Ed25519 key) version.
    Secret { version: i64 },
    /// Its sensitive custom header values.
    Headers,
    /// Its OAuth2 client secret or private key.
    Auth,
    /// Its client certificate's private key (or the previous one's).
    ClientKey,
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.what {
            SealedValue::Secret { version } => write!(f, "{} (secret version {version}", self.endpoint_id)?,
            SealedValue::Headers => write!(f, "{} (custom headers", self.endpoint_id)?,
            SealedValue::Auth => write!(f, "{} (OAuth2 credential", self.endpoint_id)?,
            SealedValue::ClientKey => write!(f, "{} (client certificate key", self.endpoint_id)?,
        }
        match &self.key_id {
            Some(id) => write!(f, ", sealed with key id {id})"),
            None => f.write_str(", not a sealed value)"),
        }
    }
}

impl Rekeyed {
    /// How many signing secret versions were left unopened.
    pub fn unreadable_secrets(&self) -> usize {
        self.unreadable.iter().filter(|u| matches!(u.what, SealedValue::Secret { .. })).count()
    }
}

/// Re-seals every stored secret and every sensitive custom header value under
/// the keyring's current key; what is already under it is left alone, and so
/// is what no key given opens (listed in [`Rekeyed::unreadable`]). Running
/// instances keep delivering throughout: they open old and new blobs alike
/// as long as they know both keys.
pub async fn rekey(store: &crate::store::Store, keyring: &Keyring) -> anyhow::Result<Rekeyed> {
    let mut done = Rekeyed::default();
    rekey_secrets(store, keyring, &mut done).await?;
    rekey_headers(store, keyring, &mut done).await?;
    rekey_auth(store, keyring, &mut done).await?;
    rekey_tls(store, keyring, &mut done).await?;
    Ok(done)
}

/// Endpoints' sensitive header values (sealed inside the `headers` column).
/// A set changed through the API meanwhile is read again: its new values are
/// sealed under the current key already, older ones may not be. A set with a
/// value that does not open is left whole.
async fn rekey_headers(store: &crate::store::Store, keyring: &Keyring, done: &mut Rekeyed) -> anyhow::Result<()> {
    for (endpoint_id, mut json) in store.all_endpoint_headers().await? {
        loop {
            let resealed = match StoredHeaders::from_json(&json).map(|s| s.resealed(keyring, endpoint_id.as_str())) {
                Ok(Ok(Some(resealed))) => resealed,
                Ok(Ok(None)) => break,
                // Text that is not the stored shape is reported like a value that does not open.
                Ok(Err(_)) | Err(_) => {
                    let key_id = unopened_header_key(&json, keyring);
                    done.unreadable.push(Unreadable { endpoint_id, what: SealedValue::Headers, key_id });
                    break;
                }
            };
            if store.reseal_endpoint_headers(&endpoint_id, &json, &resealed.to_json()).await? {
                done.header_sets += 1;
                break;
            }
            match store.all_endpoint_headers().await?.into_iter().find(|(id, _)| *id == endpoint_id) {
                Some((_, now)) => json = now,
                None => break,
            }
        }
    }
    Ok(())
}

/// Endpoints' OAuth2 credentials (sealed inside the `auth` column), read
/// again when changed through the API meanwhile; then the cached access
/// tokens sealed under an older key are dropped (a cache: the next attempt
/// fetches a fresh token).
async fn rekey_auth(store: &crate::store::Store, keyring: &Keyring, done: &mut Rekeyed) -> anyhow::Result<()> {
    for (endpoint_id, mut json) in store.all_endpoint_auth().await? {
        loop {
            let auth = EndpointAuth::from_json(&json);
            let resealed = match auth.as_ref().map(|a| a.resealed(keyring, endpoint_id.as_str())) {
                Ok(Ok(Some(resealed))) => resealed,
                Ok(Ok(None)) => break,
                Ok(Err(_)) | Err(_) => {
                    let key_id = auth.ok().and_then(|a| a.unknown_key_id(keyring));
                    done.unreadable.push(Unreadable { endpoint_id, what: SealedValue::Auth, key_id });
                    break;
                }
            };
            if store.reseal_endpoint_auth(&endpoint_id, &json, &resealed.to_json()).await? {
                done.auth_sets += 1;
                break;
            }
            match store.all_endpoint_auth().await?.into_iter().find(|(id, _)| *id == endpoint_id) {
                Some((_, now)) => json = now,
                None => break,
            }
        }
    }
    for token in store.all_oauth_tokens().await? {
        if !keyring.is_current(&token.access_token_sealed) {
            store.drop_oauth_token(&token.endpoint_id, &token.token_id).await?;
        }
    }
    Ok(())
}

/// Endpoints' client certificate keys (sealed inside the `tls` column), read
/// again when changed through the API meanwhile (a PATCH, a rotation).
async fn rekey_tls(store: &crate::store::Store, keyring: &Keyring, done: &mut Rekeyed) -> anyhow::Result<()> {
    use crate::endpoint_tls::EndpointTls;
    for (endpoint_id, _, mut json) in store.all_endpoint_tls().await? {
        loop {
            let tls = EndpointTls::from_json(&json);
            let resealed = match tls.as_ref().map(|t| t.resealed(keyring, endpoint_id.as_str())) {
                Ok(Ok(Some(resealed))) => resealed,
                Ok(Ok(None)) => break,
                Ok(Err(_)) | Err(_) => {
                    let known: Vec<String> =
                        std::iter::once(&keyring.current).chain(&keyring.previous).map(|k| k.id_hex()).collect();
                    let sealed_with = tls.ok().and_then(|t| {
                        let ids = t.client.iter().chain(t.previous.iter().map(|p| &p.identity));
                        ids.filter_map(|i| i.sealed_with()).find(|id| !known.contains(id))
                    });
                    done.unreadable.push(Unreadable { endpoint_id, what: SealedValue::ClientKey, key_id: sealed_with });
                    break;
                }
            };
            let new = resealed.to_json();
            if store.replace_endpoint_tls(&endpoint_id, Some(&json), Some(&new), None).await? {
                done.tls_sets += 1;
                break;
            }
            match store.all_endpoint_tls().await?.into_iter().find(|(id, _, _)| *id == endpoint_id) {
                Some((_, _, now)) => json = now,
                None => break,
            }
        }
    }
    Ok(())
}

/// The key id of the first sealed header value that no key given made.
fn unopened_header_key(json: &str, keyring: &Keyring) -> Option<String> {
    use base64::{engine::general_purpose::STANDARD, Engine};
    let values: Vec<serde_json::Value> = serde_json::from_str(json).ok()?;
    let known: Vec<String> = std::iter::once(&keyring.current).chain(&keyring.previous).map(|k| k.id_hex()).collect();
    values
        .iter()
        .filter_map(|h| STANDARD.decode(h["sealed"].as_str()?).ok())
        .filter_map(|blob| MasterKey::blob_key_id(&blob).map(hex::encode))
        .find(|id| !known.contains(id))
}

async fn rekey_secrets(store: &crate::store::Store, keyring: &Keyring, done: &mut Rekeyed) -> anyhow::Result<()> {
    for row in store.all_secrets().await? {
        if keyring.is_current(&row.sealed) {
            continue;
        }
        let Ok(clear) = keyring.open(&row.sealed, row.endpoint_id.as_str()) else {
            done.unreadable.push(Unreadable {
                key_id: MasterKey::blob_key_id(&row.sealed).map(hex::encode),
                endpoint_id: row.endpoint_id,
                what: SealedValue::Secret { version: row.version },
            });
            continue;
        };
        store
            .reseal_secret(&row.endpoint_id, row.version, &keyring.current.seal(&clear, row.endpoint_id.as_str()))
            .await?;
        done.secrets += 1;
    }
    Ok(())
}
