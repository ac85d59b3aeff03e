//! Access tokens kept until shortly before they expire ([`fetch::use_for`]),
//! shared by every attempt and every instance.
//!
//! Each endpoint has one slot behind an async lock: the attempts that need
//! a token while one is being fetched wait for that fetch (each within its
//! own attempt's time: the caller's timeout drops its wait, and a cancelled
//! fetch lets the next waiter fetch). A slot that holds no usable token
//! looks in `oauth_tokens` first, where another instance may have stored
//! one; a fetched token is stored there sealed under the master key, bound
//! to the endpoint. A token is used only for the `auth` option it was
//! fetched with (its fingerprint): a changed option fetches anew.
//!
//! A receiver's `401` drops the token it refused ([`TokenCache::refused`]),
//! here and in the table, unless a newer one has replaced it meanwhile.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use rand::RngCore;

use super::{
    fetch::{self, AccessToken, Fetcher, TokenError},
    spec::EndpointAuth,
};
use crate::{
    ids::EndpointId,
    store::{oauth_tokens::TokenRow, Store},
    time::{self, Millis},
};

/// Most endpoints' slots kept in memory before idle ones are forgotten.
const MAX_SLOTS: usize = 4096;

/// A token as an attempt sends it, with the id that names it.
#[derive(Debug, Clone)]
pub struct Bearer {
    pub token_id: String,
    pub token: AccessToken,
}

struct Cached {
    fingerprint: String,
    bearer: Bearer,
    use_until: Millis,
}

type Slot = Arc<tokio::sync::Mutex<Option<Cached>>>;

/// Every endpoint's token slot (in the application state).
#[derive(Default)]
pub struct TokenCache {
    slots: Mutex<HashMap<EndpointId, Slot>>,
}

/// Where tokens come from: the shared table and a fetch.
pub struct Source<'a> {
    pub store: &'a Store,
    pub fetcher: Fetcher<'a>,
}

/// What seals an access token: bound to its endpoint.
fn context(endpoint_id: &EndpointId) -> String {
    format!("{endpoint_id}/oauth/access_token")
}

impl TokenCache {
    fn slot(&self, id: &EndpointId) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if slots.len() >= MAX_SLOTS && !slots.contains_key(id) {
            // Forget the slots no attempt holds now (their tokens stay in
            // `oauth_tokens`): deleted endpoints' slots do not pile up.
            slots.retain(|_, slot| Arc::strong_count(slot) > 1);
        }
        slots.entry(id.clone()).or_default().clone()
    }

    /// A token for endpoint `id` with `auth`: the one kept, the one another
    /// instance stored, or a fresh one (one fetch per endpoint at a time).
    pub async fn bearer(&self, src: &Source<'_>, id: &EndpointId, auth: &EndpointAuth) -> Result<Bearer, TokenError> {
        let fingerprint = auth.fingerprint();
        let slot = self.slot(id);
        let mut held = slot.lock().await;
        let now = time::now_ms();
        if let Some(c) = held.as_ref().filter(|c| c.fingerprint == fingerprint && c.use_until > now) {
            return Ok(c.bearer.clone());
        }
        if let Some(c) = stored(src, id, &fingerprint, now).await {
            let bearer = c.bearer.clone();
            *held = Some(c);
            return Ok(bearer);
        }
        // The lifetime counts from before the request: never later than the server's.
        let fetched = fetch::fetch(&src.fetcher, id.as_str(), auth).await?;
        let use_for = i64::try_from(fetch::use_for(fetched.lifetime).as_millis()).unwrap_or(i64::MAX);
        let mut token_id = [0u8; 12];
        rand::rngs::OsRng.fill_bytes(&mut token_id);
        let bearer = Bearer { token_id: hex::encode(token_id), token: fetched.token };
        let row = TokenRow {
            token_id: bearer.token_id.clone(),
            access_token_sealed: src.fetcher.keyring.current.seal(bearer.token.expose().as_bytes(), &context(id)),
            use_until: now.saturating_add(use_for),
        };
        if let Err(e) = src.store.put_oauth_token(id, &fingerprint, &row, now).await {
            tracing::warn!(endpoint_id = %id, error = %e, "an OAuth2 token could not be stored for other instances");
        }
        *held = Some(Cached { fingerprint, bearer: bearer.clone(), use_until: row.use_until });
        Ok(bearer)
    }

    /// A receiver refused `bearer`: it is not used again (a newer token
    /// kept meanwhile stays).
    pub async fn refused(&self, store: &Store, id: &EndpointId, bearer: &Bearer) {
        let slot = self.slot(id);
        let mut held = slot.lock().await;
        if held.as_ref().is_some_and(|c| c.bearer.token_id == bearer.token_id) {
            *held = None;
        }
        if let Err(e) = store.drop_oauth_token(id, &bearer.token_id).await {
            tracing::warn!(endpoint_id = %id, error = %e, "a refused OAuth2 token could not be dropped");
        }
    }
}

/// The token another instance (or this one, earlier) stored, if usable.
async fn stored(src: &Source<'_>, id: &EndpointId, fingerprint: &str, now: Millis) -> Option<Cached> {
    let row = match src.store.oauth_token(id, fingerprint, now).await {
        Ok(row) => row?,
        Err(e) => {
            tracing::warn!(endpoint_id = %id, error = %e, "the stored OAuth2 token could not be read");
            return None;
        }
    };
    // One that does not open (a key lost) or is not text is fetched anew.
    let clear = src.fetcher.keyring.open(&row.access_token_sealed, &context(id)).ok()?;
    let token = AccessToken::from_cache(String::from_utf8(clear).ok()?);
    Some(Cached {
        fingerprint: fingerprint.to_string(),
        bearer: Bearer { token_id: row.token_id, token },
        use_until: row.use_until,
    })
}
