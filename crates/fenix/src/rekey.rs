//! `fenix rekey`: every sealed value (signing secrets, sensitive custom header
//! values, the key check) sealed again under the keyring's current master key.

use anyhow::Context;

use crate::{endpoint_policy::StoredHeaders, secrets::Keyring};

/// What `fenix rekey` re-sealed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Rekeyed {
    /// Signing secret versions.
    pub secrets: usize,
    /// Endpoints whose sensitive custom header values were re-sealed.
    pub header_sets: usize,
}

/// Re-seals every stored secret, every sensitive custom header value and the
/// key check under the keyring's current key; what is already under it is
/// left alone. Running instances keep delivering throughout: they open old
/// and new blobs alike as long as they know both keys.
pub async fn rekey(store: &crate::store::Store, keyring: &Keyring) -> anyhow::Result<Rekeyed> {
    let secrets = rekey_secrets(store, keyring).await?;
    let header_sets = rekey_headers(store, keyring).await?;
    if let Some(check) = store.get_meta("master_key_check").await? {
        if !keyring.is_current(&check) {
            let clear = keyring.open(&check, "master_key_check")?;
            store.set_meta("master_key_check", &keyring.current.seal(&clear, "master_key_check")).await?;
        }
    }
    Ok(Rekeyed { secrets, header_sets })
}

/// Endpoints' sensitive header values (sealed inside the `headers` column).
/// A set changed through the API meanwhile is read again: its new values are
/// sealed under the current key already, older ones may not be.
async fn rekey_headers(store: &crate::store::Store, keyring: &Keyring) -> anyhow::Result<usize> {
    let mut n = 0;
    for (endpoint_id, mut json) in store.all_endpoint_headers().await? {
        loop {
            let stored = StoredHeaders::from_json(&json);
            let Some(resealed) = stored
                .resealed(keyring, &endpoint_id)
                .with_context(|| format!("opening the custom headers of {endpoint_id}"))?
            else {
                break;
            };
            if store.reseal_endpoint_headers(&endpoint_id, &json, &resealed.to_json()).await? {
                n += 1;
                break;
            }
            match store.all_endpoint_headers().await?.into_iter().find(|(id, _)| *id == endpoint_id) {
                Some((_, now)) => json = now,
                None => break,
            }
        }
    }
    Ok(n)
}

async fn rekey_secrets(store: &crate::store::Store, keyring: &Keyring) -> anyhow::Result<usize> {
    let mut n = 0;
    for row in store.all_secrets().await? {
        if keyring.is_current(&row.sealed) {
            continue;
        }
        let clear = keyring
            .open(&row.sealed, &row.endpoint_id)
            .with_context(|| format!("opening secret version {} of {}", row.version, row.endpoint_id))?;
        store.reseal_secret(&row.endpoint_id, row.version, &keyring.current.seal(&clear, &row.endpoint_id)).await?;
        n += 1;
    }
    Ok(n)
}
