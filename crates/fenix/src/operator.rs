//! Operator webhooks: Fenix's own signed events about trouble, sent to
//! `FENIX_OPERATOR_WEBHOOK_URL` through the same delivery path as every other
//! event (same signing, retries, log and destination policy).
//!
//! At start Fenix keeps an internal app (uid `fenix-operator`) with one endpoint
//! at that URL, signed with `FENIX_OPERATOR_WEBHOOK_SECRET`. Events:
//! - `endpoint.disabled` — an endpoint was disabled automatically (410 Gone, or failing too long);
//! - `endpoint.success_rate_low` — below 99 % over the last hour with at least 20
//!   attempts (at most once an hour per endpoint);
//! - `delivery.dead_lettered` — deliveries that exhausted their attempts,
//!   aggregated per endpoint and sent once per maintenance interval.
//!
//! Trouble with the operator endpoint itself raises nothing (no loops). The
//! success-rate window is kept per instance, in memory.

use anyhow::{bail, Context};
use serde_json::json;

use crate::{
    event_types::EventType,
    ingest,
    secrets::{Keyring, SigningSecret},
    settings::Settings,
    state::AppState,
    store::{apps::AppRow, endpoints::EndpointRow, endpoints::NewEndpoint, Store},
    time::{self, Millis},
};

/// The internal app's uid.
pub const OPERATOR_APP_UID: &str = "fenix-operator";
/// Fixed ids, so instances starting together converge on one app and one endpoint.
const OPERATOR_APP_ID: &str = "app_0000000000000000000FENX0P";
const OPERATOR_ENDPOINT_ID: &str = "ep_0000000000000000000FENX0P";
/// Creates or updates the operator app and endpoint from settings; returns the app id when configured.
pub async fn provision(
    store: &Store,
    settings: &Settings,
    keyring: &Keyring,
    policy: &fenix_destination::Policy,
) -> anyhow::Result<Option<String>> {
    let Some(url) = settings.operator_webhook_url.as_deref() else { return Ok(None) };
    let Some(secret) = settings.operator_webhook_secret.as_ref() else {
        bail!("FENIX_OPERATOR_WEBHOOK_URL is set but FENIX_OPERATOR_WEBHOOK_SECRET is not: give the operator endpoint a secret (whsec_ + base64 of 32 bytes)");
    };
    let secret = SigningSecret::parse(&secret.0).map_err(|e| anyhow::anyhow!("FENIX_OPERATOR_WEBHOOK_SECRET: {e}"))?;
    let url = policy.check_url(url).map_err(|e| anyhow::anyhow!("FENIX_OPERATOR_WEBHOOK_URL: {e}"))?.to_string();
    let now = time::now_ms();
    let app = AppRow {
        id: OPERATOR_APP_ID.into(),
        uid: Some(OPERATOR_APP_UID.into()),
        name: "Fenix operator webhooks".into(),
        created_at: now,
        updated_at: now,
    };
    match store.insert_app(&app).await {
        Ok(()) => {}
        Err(e) if e.is_unique_violation() => {
            // The API refuses this uid now; a database from before may still have a tenant holding it.
            if let Some(other) = store.find_app(OPERATOR_APP_UID).await?.filter(|a| a.id != OPERATOR_APP_ID) {
                bail!(
                    "the app {} has the uid {OPERATOR_APP_UID:?}, reserved for the operator app: change its uid \
                     (PATCH /v1/apps/{}) or unset FENIX_OPERATOR_WEBHOOK_URL",
                    other.id,
                    other.id
                );
            }
        }
        Err(e) => return Err(e).context("creating the operator app"),
    }
    match store.get_endpoint(OPERATOR_APP_ID, OPERATOR_ENDPOINT_ID).await? {
        None => {
            let row = EndpointRow {
                id: OPERATOR_ENDPOINT_ID.into(),
                app_id: OPERATOR_APP_ID.into(),
                url,
                description: "operator webhooks (FENIX_OPERATOR_WEBHOOK_URL)".into(),
                state: crate::lifecycle::EndpointState::Active,
                state_reason: None,
                state_changed_at: None,
                created_at: now,
                updated_at: now,
                spec: Default::default(),
            };
            let sealed_secret = keyring.current.seal(secret.expose().as_bytes(), OPERATOR_ENDPOINT_ID);
            match store.insert_endpoint(&NewEndpoint { row, sealed_secret, public_key: None }).await {
                Ok(()) => {}
                Err(e) if e.is_unique_violation() => {}
                Err(e) => return Err(e).context("creating the operator endpoint"),
            }
        }
        Some(existing) => {
            if existing.url != url {
                let patch = crate::store::endpoints::EndpointPatch { url: Some(url), ..Default::default() };
                store.update_endpoint(OPERATOR_APP_ID, OPERATOR_ENDPOINT_ID, &patch, now).await?;
            }
            let live = store.live_secrets(OPERATOR_ENDPOINT_ID, now).await?;
            let current = live.first().and_then(|r| keyring.open_secret(&r.sealed, OPERATOR_ENDPOINT_ID).ok());
            if current.as_ref() != Some(&secret) {
                let sealed = keyring.current.seal(secret.expose().as_bytes(), OPERATOR_ENDPOINT_ID);
                store.rotate_secret(OPERATOR_ENDPOINT_ID, |_| sealed.clone(), now, now, 5).await?;
            }
        }
    }
    Ok(Some(OPERATOR_APP_ID.to_string()))
}

/// Stores one operator event through the intake every event takes (it is then
/// delivered like any other).
async fn emit(state: &AppState, app_id: &str, event_type: &str, source_app_id: &str, data: serde_json::Value) {
    if source_app_id == app_id {
        return;
    }
    let Ok(t) = EventType::parse(event_type) else { return };
    let raw = serde_json::value::to_raw_value(&data).expect("JSON values serialize");
    // One operator endpoint only; its own events are never limited.
    let new = ingest::new_event(app_id.to_string(), &t, &raw, None, usize::MAX);
    if let Err(e) = state.ingestor.ingest(new).await {
        tracing::warn!(error = %e, event_type, "could not store an operator event");
    }
}

/// `endpoint.disabled`, at once.
pub async fn endpoint_disabled(state: &AppState, app_id: &str, endpoint_id: &str, reason: &str) {
    if let Some(op) = state.operator_app_id.as_deref() {
        let data = json!({"endpoint_id": endpoint_id, "app_id": app_id, "reason": reason});
        emit(state, op, "endpoint.disabled", app_id, data).await;
    }
}

/// Sends what accumulated since the last pass (called by the maintenance loop).
pub async fn flush(state: &AppState, now: Millis) {
    let due = state.alerts.take_due(now);
    let Some(op) = state.operator_app_id.as_deref() else { return };
    for (event_type, source_app, data) in due {
        emit(state, op, event_type, &source_app, data).await;
    }
}
