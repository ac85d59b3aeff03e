//! Client certificates close to their expiry: once per maintenance pass,
//! every endpoint's current client certificate is looked at; those that
//! expire within 14 days (`endpoint_tls::EXPIRING_WITHIN_MS`) are counted in
//! the `fenix_client_certificates_expiring` gauge, logged, and reported to
//! the operator webhook (`endpoint.client_certificate_expiring`) once per
//! certificate. Reads show the same as `expires_soon`.

use std::sync::atomic::Ordering;

use crate::{endpoint_tls::EndpointTls, operator, state::AppState, time::Millis};

/// One look at every endpoint's client certificate at `now`.
pub async fn check(state: &AppState, now: Millis) -> anyhow::Result<()> {
    let mut expiring = 0;
    for (endpoint_id, app_id, json) in state.store.all_endpoint_tls().await? {
        // An unreadable value fails the endpoint's reads and attempts already.
        let Ok(tls) = EndpointTls::from_json(&json) else { continue };
        let Some(leaf) = tls.expiring(now) else { continue };
        expiring += 1;
        if state.alerts.certificate_expiring(&leaf.sha256) {
            tracing::warn!(
                %endpoint_id, subject = %leaf.subject, not_after = %crate::time::rfc3339_ms(leaf.not_after),
                "an endpoint's client certificate expires within 14 days"
            );
            operator::client_certificate_expiring(state, &app_id, &endpoint_id, leaf).await;
        }
    }
    state.metrics.client_certificates_expiring.store(expiring, Ordering::Relaxed);
    Ok(())
}
