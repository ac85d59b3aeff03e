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
//!   aggregated per endpoint and sent once per maintenance interval;
//! - `endpoint.client_certificate_expiring` — an endpoint's client certificate
//!   expires within 14 days (once per certificate and instance).
//!
//! Trouble with the operator endpoint itself raises nothing (no loops). The
//! success-rate window is kept per instance, in memory.

use anyhow::{bail, Context};
use serde_json::json;

use crate::{
    event_types::EventType,
    ids::{AppId, EndpointId},
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

/// The operator app's fixed id, typed.
fn operator_app() -> AppId {
    AppId::from_stored(OPERATOR_APP_ID.into())
}

/// The operator app's id when `text` is it (a fixed id, shorter than a ULID).
pub fn fixed_app_id(text: &str) -> Option<AppId> {
    (text == OPERATOR_APP_ID).then(operator_app)
}

/// The operator endpoint's id when `text` is it: a fixed id, shorter than a
/// ULID, that the API's paths still take.
pub fn fixed_endpoint_id(text: &str) -> Option<EndpointId> {
    (text == OPERATOR_ENDPOINT_ID).then(operator_endpoint)
}

/// The operator endpoint's fixed id, typed.
fn operator_endpoint() -> EndpointId {
    EndpointId::from_stored(OPERATOR_ENDPOINT_ID.into())
}
/// Creates or updates the operator app and endpoint from settings; returns the app id when configured.
pub async fn provision(
    store: &Store,
    settings: &Settings,
    keyring: &Keyring,
    policy: &fenix_destination::Policy,
) -> anyhow::Result<Option<AppId>> {
    let Some(url) = settings.operator_webhook_url.as_deref() else { return Ok(None) };
    let Some(secret) = settings.operator_webhook_secret.as_ref() else {
        bail!("FENIX_OPERATOR_WEBHOOK_URL is set but FENIX_OPERATOR_WEBHOOK_SECRET is not: give the operator endpoint a secret (whsec_ + base64 of 32 bytes)");
    };
    let secret = SigningSecret::parse(&secret.0).map_err(|e| anyhow::anyhow!("FENIX_OPERATOR_WEBHOOK_SECRET: {e}"))?;
    let url = policy.check_url(url).map_err(|e| anyhow::anyhow!("FENIX_OPERATOR_WEBHOOK_URL: {e}"))?.to_string();
    let now = time::now_ms();
    let (app_id, endpoint_id) = (operator_app(), operator_endpoint());
    provision_app(store, &app_id, now).await?;
    provision_endpoint(store, keyring, &app_id, &endpoint_id, url, &secret, now).await?;
    Ok(Some(app_id))
}

/// The operator app, created once (a tenant holding its uid is an error to fix).
async fn provision_app(store: &Store, app_id: &AppId, now: time::Millis) -> anyhow::Result<()> {
    let app = AppRow {
        id: app_id.clone(),
        uid: Some(OPERATOR_APP_UID.into()),
        name: "Fenix operator webhooks".into(),
        created_at: now,
        updated_at: now,
    };
    match store.insert_app(&app).await {
        Ok(()) => {}
        Err(e) if e.is_unique_violation() => {
            // The API refuses this uid now; a database from before may still have a tenant holding it.
            if let Some(other) = store.find_app(OPERATOR_APP_UID).await?.filter(|a| a.id != *app_id) {
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
    Ok(())
}

/// The operator endpoint, created once, then kept at the configured URL and secret.
async fn provision_endpoint(
    store: &Store,
    keyring: &Keyring,
    app_id: &AppId,
    endpoint_id: &EndpointId,
    url: String,
    secret: &SigningSecret,
    now: time::Millis,
) -> anyhow::Result<()> {
    match store.get_endpoint(app_id, endpoint_id).await? {
        None => {
            let row = EndpointRow {
                id: endpoint_id.clone(),
                app_id: app_id.clone(),
                url,
                description: "operator webhooks (FENIX_OPERATOR_WEBHOOK_URL)".into(),
                state: crate::lifecycle::EndpointState::Active,
                state_reason: None,
                state_changed_at: None,
                created_at: now,
                updated_at: now,
                spec: Default::default(),
            };
            let sealed_secret = keyring.current.seal(secret.expose().as_bytes(), endpoint_id.as_str());
            match store.insert_endpoint(&NewEndpoint { row, sealed_secret, public_key: None }).await {
                Ok(()) => {}
                Err(e) if e.is_unique_violation() => {}
                Err(e) => return Err(e).context("creating the operator endpoint"),
            }
        }
        Some(existing) => {
            if existing.url != url {
                let patch = crate::store::endpoints::EndpointPatch { url: Some(url), ..Default::default() };
                store.update_endpoint(app_id, endpoint_id, &patch, now).await?;
            }
            let live = store.live_secrets(endpoint_id, now).await?;
            let current = live.first().and_then(|r| keyring.open_secret(&r.sealed, endpoint_id.as_str()).ok());
            if current.as_ref() != Some(secret) {
                let sealed = keyring.current.seal(secret.expose().as_bytes(), endpoint_id.as_str());
                store.rotate_secret(endpoint_id, |_| sealed.clone(), now, now, 5).await?;
            }
        }
    }
    Ok(())
}

/// Stores one operator event through the intake every event takes (it is then
/// delivered like any other).
async fn emit(state: &AppState, app_id: &AppId, event_type: &str, source_app_id: &str, data: serde_json::Value) {
    if source_app_id == app_id.as_str() {
        return;
    }
    let Ok(t) = EventType::parse(event_type) else { return };
    let raw = serde_json::value::to_raw_value(&data).expect("JSON values serialize");
    // One operator endpoint only; its own events are never limited.
    let new = ingest::new_event(app_id.clone(), &t, &raw, None, usize::MAX);
    if let Err(e) = state.ingestor.ingest(new).await {
        tracing::warn!(error = %e, event_type, "could not store an operator event");
    }
}

/// `endpoint.disabled`, at once.
pub async fn endpoint_disabled(state: &AppState, app_id: &AppId, endpoint_id: &EndpointId, reason: &str) {
    if let Some(op) = state.operator_app_id.as_ref() {
        let data = json!({"endpoint_id": endpoint_id, "app_id": app_id, "reason": reason});
        emit(state, op, "endpoint.disabled", app_id.as_str(), data).await;
    }
}

/// `endpoint.client_certificate_expiring`: the endpoint's client certificate
/// `leaf` expires within 14 days (`tls_expiry`, once per certificate).
pub async fn client_certificate_expiring(
    state: &AppState,
    app_id: &AppId,
    endpoint_id: &EndpointId,
    leaf: &crate::endpoint_tls::CertInfo,
) {
    if let Some(op) = state.operator_app_id.as_ref() {
        let data = json!({
            "endpoint_id": endpoint_id, "app_id": app_id, "subject": leaf.subject,
            "not_after": time::rfc3339_ms(leaf.not_after), "sha256": leaf.sha256,
        });
        emit(state, op, "endpoint.client_certificate_expiring", app_id.as_str(), data).await;
    }
}

/// Sends what accumulated since the last pass (called by the maintenance loop).
pub async fn flush(state: &AppState, now: Millis) {
    let due = state.alerts.take_due(now);
    let Some(op) = state.operator_app_id.as_ref() else { return };
    for (event_type, source_app, data) in due {
        emit(state, op, event_type, &source_app, data).await;
    }
}
