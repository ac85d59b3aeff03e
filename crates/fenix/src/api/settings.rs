//! `GET /v1/settings` (admin): the settings this instance runs with, by the
//! names an operator sets them with (`FENIX_*`, `DATABASE_URL`), for the
//! console's settings page and for checking a deployment. Every secret is
//! redacted: tokens and keys show only whether they are set, and a URL's
//! password (and the operator webhook's query, which may carry a token) is
//! replaced, so the answer can be shown on a screen or pasted into a ticket.

use axum::{extract::State, Json};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    extract::NoQuery,
};
use crate::{
    settings::{Settings, SETTINGS},
    state::SharedState,
};

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

/// Every setting, in the order of its table (and of docs/configuration.md).
fn in_force(s: &Settings) -> Vec<SettingOut> {
    SETTINGS.iter().map(|row| SettingOut { name: row.env, value: (row.show)(s), secret: row.secret }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{Redacted, REDACTED};

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
}
