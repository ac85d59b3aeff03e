//! Operational webhooks: Fenix tells the producer's operators about trouble
//! (a delivery that exhausted its attempts, an endpoint disabled) by emitting
//! ordinary events into the app named by `FENIX_OPERATIONAL_APP`. They are
//! signed, retried and logged like any other event; the operators subscribe by
//! registering endpoints on that app. Deliveries of that app never raise
//! operational events themselves, so trouble cannot loop.

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::{
    api::AppState, event_types::EventType, event_types::EventTypeFilter, events::build_envelope, ids,
    store::events::NewEvent, time,
};

/// Emits `event_type` with `data` into the operational app, if one is configured.
/// `source_app_id` is the app the trouble concerns (no event when it is the operational app itself).
pub async fn emit(state: &AppState, event_type: &str, source_app_id: &str, data: serde_json::Value) {
    let Some(target) = state.settings.operational_app.as_deref() else { return };
    let app = match state.store.find_app(target).await {
        Ok(Some(app)) => app,
        Ok(None) => {
            tracing::warn!(app = target, "FENIX_OPERATIONAL_APP names no app; operational event dropped");
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not look up the operational app");
            return;
        }
    };
    if app.id == source_app_id {
        return;
    }
    let Ok(t) = EventType::parse(event_type) else { return };
    let id = ids::new_id("evt");
    let now = time::now_ms();
    let raw = serde_json::value::to_raw_value(&data).expect("JSON values serialize");
    let envelope = build_envelope(&id, &t, now, &raw);
    let new = NewEvent {
        payload_sha256: hex::encode(Sha256::digest(&envelope)),
        id,
        app_id: app.id,
        event_type: t.as_str().to_string(),
        idempotency_key: None,
        envelope,
        created_at: now,
    };
    match state
        .store
        .ingest_event(&new, |f| EventTypeFilter::from_json(f).matches(t.as_str()), || ids::new_id("dlv"))
        .await
    {
        Ok(ingested) => {
            if ingested.event.delivery_count > 0 {
                state.wake.notify_one();
            }
        }
        Err(e) => tracing::warn!(error = %e, event_type, "could not store an operational event"),
    }
}

/// `fenix.delivery.failed`: a delivery used its whole attempt budget.
pub async fn delivery_failed(state: &AppState, app_id: &str, delivery_id: &str, event_id: &str, endpoint_id: &str) {
    let data = json!({"app_id": app_id, "delivery_id": delivery_id, "event_id": event_id, "endpoint_id": endpoint_id});
    emit(state, "fenix.delivery.failed", app_id, data).await;
}

/// `fenix.endpoint.disabled`: an endpoint was disabled automatically.
pub async fn endpoint_disabled(state: &AppState, app_id: &str, endpoint_id: &str, reason: &str) {
    let data = json!({"app_id": app_id, "endpoint_id": endpoint_id, "reason": reason});
    emit(state, "fenix.endpoint.disabled", app_id, data).await;
}
