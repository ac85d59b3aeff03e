//! `GET /v1/settings` (admin): the settings this instance runs with, by the
//! names an operator sets them with (`FENIX_*`, `DATABASE_URL`), for the
//! console's settings page and for checking a deployment. Every secret is
//! redacted: tokens and keys show only whether they are set, and a URL's
//! password (and the operator webhook's query, which may carry a token) is
//! replaced, so the answer can be shown on a screen or pasted into a ticket.

use std::time::Duration;

use axum::{extract::State, Json};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    extract::NoQuery,
};
use crate::{
    settings::{Redacted, Settings, FOREVER},
    state::SharedState,
};

/// What a secret shows instead of its value.
const REDACTED: &str = "[redacted]";

/// The settings in force.
#[derive(Debug, Serialize, ToSchema)]
struct SettingsOut {
    data: Vec<SettingOut>,
}

/// One setting.
#[derive(Debug, Serialize, ToSchema)]
struct SettingOut {
    /// The environment variable that sets it.
    #[schema(example = "FENIX_RETRY_SCHEDULE")]
    name: &'static str,
    /// Its value in force; `null` when unset. A secret that is set reads `[redacted]`.
    #[schema(example = "1m,5m,30m,2h")]
    value: Option<String>,
    /// True for tokens and keys, whose value is never shown.
    secret: bool,
}

/// `/v1/settings`.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(read))
}

#[utoipa::path(
    get, path = "/v1/settings", tag = "service", operation_id = "get_settings",
    summary = "The settings in force, secrets redacted",
    security(("bearer" = ["admin"])),
    responses(
        (status = 200, description = "Every setting by its variable name", body = SettingsOut),
        (status = 400, description = "`invalid_query`: this call takes no query parameter", body = ErrorBody),
    )
)]
async fn read(State(s): State<SharedState>, _: NoQuery) -> Result<Json<SettingsOut>, ApiError> {
    Ok(Json(SettingsOut { data: in_force(&s.settings) }))
}

fn dur(d: Duration) -> Option<String> {
    Some(if d == FOREVER { "forever".into() } else { humantime::format_duration(d).to_string() })
}

fn list<T: ToString>(items: &[T]) -> Option<String> {
    Some(items.iter().map(ToString::to_string).collect::<Vec<_>>().join(","))
}

fn secret(v: Option<&Redacted>) -> Option<String> {
    v.map(|_| REDACTED.to_string())
}

/// A URL with its password (and, with `query_too`, its query) redacted; not a URL: redacted whole.
fn url_redacted(u: &str, query_too: bool) -> String {
    let Ok(mut parsed) = url::Url::parse(u) else { return REDACTED.into() };
    // Inside a URL the brackets of `[redacted]` would be percent-encoded: the bare word reads better.
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("redacted"));
    }
    if query_too && parsed.query().is_some() {
        parsed.set_query(Some("redacted"));
    }
    parsed.to_string()
}

/// Every setting, in the order of docs/configuration.md.
fn in_force(s: &Settings) -> Vec<SettingOut> {
    let plain = |name, value: Option<String>| SettingOut { name, value, secret: false };
    let hidden = |name, value: Option<String>| SettingOut { name, value, secret: true };
    vec![
        plain("FENIX_LISTEN", Some(s.listen.to_string())),
        plain("DATABASE_URL", Some(url_redacted(&s.database_url, false))),
        hidden("FENIX_ADMIN_TOKEN", secret(s.admin_token.as_ref())),
        hidden("FENIX_MASTER_KEY", secret(s.master_key.as_ref())),
        hidden(
            "FENIX_PREVIOUS_MASTER_KEYS",
            (!s.previous_master_keys.is_empty()).then(|| vec![REDACTED; s.previous_master_keys.len()].join(",")),
        ),
        plain(
            "FENIX_RETRY_SCHEDULE",
            list(&s.retry_schedule.iter().map(|d| dur(*d).unwrap_or_default()).collect::<Vec<_>>()),
        ),
        plain("FENIX_ATTEMPT_TIMEOUT", dur(s.attempt_timeout)),
        plain("FENIX_LEASE_DURATION", dur(s.lease_duration)),
        plain("FENIX_WORKER_CONCURRENCY", Some(s.worker_concurrency.to_string())),
        plain("FENIX_ENDPOINT_CONCURRENCY", Some(s.endpoint_concurrency.to_string())),
        plain("FENIX_CLAIM_BATCH", Some(s.claim_batch.to_string())),
        plain("FENIX_MAX_DB_CONNECTIONS", Some(s.max_db_connections.to_string())),
        plain("FENIX_PAYLOAD_RETENTION", dur(s.payload_retention)),
        plain("FENIX_LOG_RETENTION", dur(s.log_retention)),
        plain("FENIX_DISABLE_AFTER_FAILING", dur(s.disable_after_failing)),
        plain("FENIX_MAINTENANCE_INTERVAL", dur(s.maintenance_interval)),
        plain("FENIX_OPERATOR_WEBHOOK_URL", s.operator_webhook_url.as_deref().map(|u| url_redacted(u, true))),
        hidden("FENIX_OPERATOR_WEBHOOK_SECRET", secret(s.operator_webhook_secret.as_ref())),
        plain("FENIX_DNS_SERVERS", s.dns_servers.as_deref().and_then(list)),
        plain("FENIX_UNSAFE_ALLOW_HTTP", Some(s.unsafe_allow_http.to_string())),
        plain("FENIX_UNSAFE_ALLOW_CIDRS", list(&s.unsafe_allow_cidrs)),
        plain("FENIX_EXTRA_CA_CERT", s.extra_ca_cert.as_ref().map(|p| p.display().to_string())),
        plain("FENIX_MAX_ENDPOINTS_PER_APP", Some(s.max_endpoints_per_app.to_string())),
        plain("FENIX_MAX_FANOUT_PER_EVENT", Some(s.max_fanout_per_event.to_string())),
        plain("FENIX_MAX_BATCH_EVENTS", Some(s.max_batch_events.to_string())),
        plain("FENIX_MAX_BATCH_BYTES", Some(s.max_batch_bytes.to_string())),
        plain("FENIX_MAX_PAGE_BYTES", Some(s.max_page_bytes.to_string())),
        plain("FENIX_ANSWER_BYTES", Some(s.answer_bytes.to_string())),
        plain("FENIX_HOST_CONCURRENCY", Some(s.host_concurrency.to_string())),
        plain("FENIX_WORKER_STALL_AFTER", dur(s.worker_stall_after)),
        plain("FENIX_HTTP_HEADER_TIMEOUT", dur(s.http_header_timeout)),
        plain("FENIX_HTTP_BODY_TIMEOUT", dur(s.http_body_timeout)),
        plain("FENIX_HTTP_IDLE_TIMEOUT", dur(s.http_idle_timeout)),
        plain("FENIX_HTTP_MAX_CONNECTIONS", Some(s.http_max_connections.to_string())),
        plain("FENIX_HTTP_MAX_IN_FLIGHT", Some(s.http_max_in_flight.to_string())),
        plain("FENIX_DENY_CIDRS", list(&s.deny_cidrs)),
        plain("FENIX_PUBLIC_URL", s.public_url.clone()),
        plain("FENIX_PORTAL_MAX_TTL", dur(s.portal_max_ttl)),
        plain("FENIX_CONSOLE_SESSION_TTL", dur(s.console_session_ttl)),
        plain("FENIX_CONSOLE_FRAME_ANCESTORS", list(&s.console_frame_ancestors)),
        plain("FENIX_EVENT_TYPES_STRICT", Some(s.event_types_strict.to_string())),
        plain("FENIX_REQUIRE_ENDPOINT_VERIFICATION", Some(s.require_endpoint_verification.to_string())),
        plain(
            "FENIX_VERIFICATION_RETRY_SCHEDULE",
            list(&s.verification_retry_schedule.iter().map(|d| dur(*d).unwrap_or_default()).collect::<Vec<_>>()),
        ),
        plain("FENIX_ENDPOINT_CONCURRENCY_MIN", Some(s.endpoint_concurrency_min.to_string())),
        plain("FENIX_SCHEMA_BUDGET", dur(s.schema_budget)),
        plain("FENIX_SCHEMA_REQUEST_BUDGET", dur(s.schema_request_budget)),
        plain("FENIX_SCHEMA_CONCURRENCY", Some(s.schema_concurrency.to_string())),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_secret_is_shown() {
        let s = Settings {
            database_url: "postgres://fenix:dbpassword1@db.internal:5432/fenix".into(),
            admin_token: Some(Redacted("fxa_admintoken1".into())),
            master_key: Some(Redacted("masterkey1".into())),
            previous_master_keys: vec![Redacted("oldkey1".into()), Redacted("oldkey2".into())],
            operator_webhook_url: Some("https://ops:hookpassword1@ops.example.com/hook?token=querytoken1".into()),
            operator_webhook_secret: Some(Redacted("whsec_hooksecret1".into())),
            ..Settings::default()
        };
        let text = serde_json::to_string(&in_force(&s)).unwrap();
        for secret in [
            "dbpassword1",
            "admintoken1",
            "masterkey1",
            "oldkey1",
            "oldkey2",
            "hookpassword1",
            "querytoken1",
            "hooksecret1",
        ] {
            assert!(!text.contains(secret), "{secret} shown in {text}");
        }
        assert!(text.contains("db.internal:5432/fenix"), "{text}");
        let shown = in_force(&s);
        let admin = shown.iter().find(|v| v.name == "FENIX_ADMIN_TOKEN").unwrap();
        assert_eq!((admin.value.as_deref(), admin.secret), (Some(REDACTED), true));
    }

    #[test]
    fn every_documented_setting_is_shown() {
        // docs/configuration.md's settings table lists each variable in its first column.
        let doc = include_str!("../../../../docs/configuration.md");
        let shown: Vec<&str> = in_force(&Settings::default()).iter().map(|v| v.name).collect();
        let documented: Vec<&str> = doc
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once('`').map(|(name, _)| name))
            .filter(|name| name.starts_with("FENIX_") || *name == "DATABASE_URL")
            .filter(|name| !matches!(*name, "FENIX_LOG" | "FENIX_LOG_FORMAT" | "FENIX_CONFIG"))
            .collect();
        assert!(documented.len() >= 30, "{documented:?}");
        for name in documented {
            assert!(shown.contains(&name), "{name} is documented but not in GET /v1/settings");
        }
    }
}
