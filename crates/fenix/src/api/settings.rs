//! `GET /v1/settings` (admin): the settings this instance runs with, by the
//! names an operator sets them with (`FENIX_*`, `DATABASE_URL`), for the
//! console's settings page and for checking a deployment. Every secret is
//! redacted: tokens and keys show only whether they are set, and a URL's
//! password (and the operator webhook's query, which may carry a token) is
//! replaced, so the answer can be shown on a screen or pasted into a ticket.
//! Durations read as they are written (`90d`); an unset `FENIX_MASTER_KEY`
//! on SQLite names the key file in use instead (`key file ./fenix.db.key`).

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
    SETTINGS
        .iter()
        .map(|row| {
            let value = (row.show)(s).or_else(|| (row.env == "FENIX_MASTER_KEY").then(|| key_file(s)).flatten());
            SettingOut { name: row.env, value, secret: row.secret }
        })
        .collect()
}

/// Where the master key comes from when `FENIX_MASTER_KEY` is unset: on
/// SQLite, the key file beside the database (`startup::load_keyring`); its
/// path is no secret (the key inside it is).
fn key_file(s: &Settings) -> Option<String> {
    crate::startup::key_file_path(s).map(|p| format!("key file {}", p.display()))
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

    #[test]
    fn an_unset_master_key_on_sqlite_names_the_key_file_in_use() {
        let s = Settings { database_url: "sqlite://data/fenix.db".into(), master_key: None, ..Settings::default() };
        let key = in_force(&s).into_iter().find(|v| v.name == "FENIX_MASTER_KEY").unwrap();
        assert_eq!(key.value.as_deref(), Some("key file data/fenix.db.key"));
        let s = Settings { master_key: Some(Redacted("masterkey1".into())), ..s };
        let key = in_force(&s).into_iter().find(|v| v.name == "FENIX_MASTER_KEY").unwrap();
        assert_eq!(key.value.as_deref(), Some(REDACTED));
    }

    #[test]
    fn durations_read_as_they_are_written() {
        let s = Settings { log_retention: std::time::Duration::from_secs(90 * 86_400), ..Settings::default() };
        let shown = in_force(&s);
        let retention = shown.iter().find(|v| v.name == "FENIX_LOG_RETENTION").unwrap();
        assert_eq!(retention.value.as_deref(), Some("90d"));
    }
}
