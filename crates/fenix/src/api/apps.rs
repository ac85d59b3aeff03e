//! Apps: the producer's customers (tenants), addressed by id or by `uid`.

use crate::api::code::Code;
use axum::{extract::State, http::StatusCode, Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::duration::DurationIn;
use super::{
    error::{ApiError, ErrorBody},
    extract::{
        non_null, nullable, plain_text, ApiJson, ApiPath, ApiQuery, AppPath, ListScope, NoQuery, Page, PageQuery,
    },
    lookup,
};
use crate::{
    access::Principal,
    ids,
    retention::{AppRetention, Kind, Refused},
    state::SharedState,
    store::{apps::AppRow, retention::AppRetentions},
    time,
};

/// A producer-chosen app name: 1–64 characters of `A-Z a-z 0-9 _ - .`, not
/// starting with `app_` (in any case), and not the operator app's uid.
///
/// Apps are addressed by id or by uid in one path segment, so a uid that
/// could be an app id would shadow another app: an app whose uid is the
/// operator app's id (`app_0000000000000000000FENX0P`, shorter than a ULID id)
/// got the operator's events. The operator app's uid is reserved, or a tenant
/// holding it would stop Fenix from starting once operator webhooks are set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppUid(String);

impl AppUid {
    /// Parses a uid.
    pub fn parse(s: &str) -> Result<AppUid, ApiError> {
        let ok = !s.is_empty()
            && s.len() <= 64
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
            && !s.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("app_"));
        if !ok {
            return Err(ApiError::new(
                Code::InvalidUid,
                "uid must be 1-64 characters of A-Z a-z 0-9 _ - . and not start with app_ (the shape of app ids)",
            ));
        }
        if s.eq_ignore_ascii_case(crate::operator::OPERATOR_APP_UID) {
            return Err(ApiError::new(
                Code::UidReserved,
                format!("uid {:?} is reserved for Fenix's operator app", crate::operator::OPERATOR_APP_UID),
            ));
        }
        Ok(AppUid(s.to_string()))
    }
}

/// An app as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = App)]
pub struct AppOut {
    pub id: crate::ids::AppId,
    pub uid: Option<String>,
    pub name: String,
    pub created_at: String,
    pub updated_at: String,
    /// Its endpoints must prove they control their URL before they are sent
    /// events (also when `FENIX_REQUIRE_ENDPOINT_VERIFICATION` is off).
    pub require_endpoint_verification: bool,
    /// How long this app's event payloads are kept (e.g. `7d`); null: the
    /// operator's `FENIX_PAYLOAD_RETENTION`.
    #[schema(example = "7d")]
    pub payload_retention: Option<String>,
    /// How long this app's finished deliveries and their attempts are kept;
    /// null: the operator's `FENIX_LOG_RETENTION`.
    #[schema(example = "30d")]
    pub log_retention: Option<String>,
}

impl From<AppRow> for AppOut {
    fn from(r: AppRow) -> Self {
        AppOut {
            id: r.id,
            uid: r.uid,
            name: r.name,
            created_at: time::rfc3339_ms(r.created_at),
            updated_at: time::rfc3339_ms(r.updated_at),
            require_endpoint_verification: false,
            payload_retention: None,
            log_retention: None,
        }
    }
}

impl AppOut {
    fn set_retentions(&mut self, own: AppRetentions) {
        self.payload_retention = own.payload.map(|r| r.to_string());
        self.log_retention = own.log.map(|r| r.to_string());
    }
}

/// The app as answered, with its own opt-in to proof of ownership and its own retentions.
async fn shown(s: &SharedState, row: AppRow) -> Result<AppOut, ApiError> {
    let required = s.store.app_requires_verification(&row.id).await?;
    let own = s.store.app_retentions(&row.id).await?;
    let mut out = AppOut { require_endpoint_verification: required, ..row.into() };
    out.set_retentions(own);
    Ok(out)
}

/// An app's own retention of `kind` as sent, within the operator's.
fn parse_retention(s: &SharedState, kind: Kind, given: &DurationIn) -> Result<AppRetention, ApiError> {
    let d = given.parse(kind.field(), Code::InvalidRetention)?;
    let operator = match kind {
        Kind::Payload => s.settings.payload_retention,
        Kind::Log => s.settings.log_retention,
    };
    AppRetention::parse(kind, d, operator).map_err(|refused| {
        let code = match refused {
            Refused::Invalid(_) => Code::InvalidRetention,
            Refused::TooLong { .. } => Code::RetentionTooLong,
        };
        ApiError::new(code, refused.to_string())
    })
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateApp {
    #[schema(example = "Acme Corp", min_length = 1, max_length = 256)]
    name: String,
    /// Not shaped like an app id (`app_…`).
    #[schema(example = "acme", pattern = "^[A-Za-z0-9_.-]{1,64}$")]
    uid: Option<String>,
    /// Its endpoints must prove ownership of their URL (default `false`).
    #[serde(default)]
    require_endpoint_verification: bool,
    /// How long its event payloads are kept, at most the operator's
    /// `FENIX_PAYLOAD_RETENTION`; left out or null: the operator's.
    #[schema(value_type = Option<DurationIn>)]
    payload_retention: Option<DurationIn>,
    /// How long its finished deliveries and attempts are kept, at most the
    /// operator's `FENIX_LOG_RETENTION`; left out or null: the operator's.
    #[schema(value_type = Option<DurationIn>)]
    log_retention: Option<DurationIn>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PatchApp {
    /// Left out: unchanged; cannot be null.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = String, required = false, example = "Acme Corp", min_length = 1, max_length = 256)]
    name: Option<String>,
    /// Not shaped like an app id (`app_…`). Left out: unchanged; `null` removes the uid.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>, required = false, example = "acme", pattern = "^[A-Za-z0-9_.-]{1,64}$")]
    uid: Option<Option<String>>,
    /// Left out: unchanged; cannot be null. Applies to endpoints created, or
    /// whose URL changes, from then on.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = bool, required = false)]
    require_endpoint_verification: Option<bool>,
    /// At most the operator's `FENIX_PAYLOAD_RETENTION`. Left out: unchanged;
    /// `null`: the operator's from then on.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<DurationIn>, required = false)]
    payload_retention: Option<Option<DurationIn>>,
    /// At most the operator's `FENIX_LOG_RETENTION`. Left out: unchanged;
    /// `null`: the operator's from then on.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<DurationIn>, required = false)]
    log_retention: Option<Option<DurationIn>>,
}

fn parse_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    // Counted in characters, as documented (`len()` is bytes: 129 × "é" is 258).
    if name.is_empty() || name.chars().count() > 256 {
        return Err(ApiError::new(Code::InvalidName, "name must be 1-256 characters"));
    }
    plain_text("name", Code::InvalidName, name)?;
    Ok(name.to_string())
}

/// `/v1/apps…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(read, update, remove))
}

#[utoipa::path(
    post, path = "/v1/apps", tag = "apps", operation_id = "create_app",
    summary = "Create an app",
    security(("bearer" = ["admin"])),
    request_body = CreateApp,
    responses(
        (status = 201, description = "The app", body = AppOut),
        (status = 409, description = "Another app has this uid (`uid_taken`)", body = ErrorBody),
        (status = 422, description = "`invalid_name`, `invalid_uid`, `uid_reserved`, `invalid_retention`, \
            `retention_too_long` (longer than the operator's)", body = ErrorBody),
    )
)]
async fn create(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiJson(body): ApiJson<CreateApp>,
) -> Result<(StatusCode, Json<AppOut>), ApiError> {
    let uid = body.uid.as_deref().map(AppUid::parse).transpose()?;
    let own = AppRetentions {
        payload: body.payload_retention.as_ref().map(|d| parse_retention(&s, Kind::Payload, d)).transpose()?,
        log: body.log_retention.as_ref().map(|d| parse_retention(&s, Kind::Log, d)).transpose()?,
    };
    let now = time::now_ms();
    let row = AppRow {
        id: ids::AppId::new(),
        uid: uid.map(|u| u.0),
        name: parse_name(&body.name)?,
        created_at: now,
        updated_at: now,
    };
    s.store.insert_app(&row).await.map_err(uid_conflict)?;
    if body.require_endpoint_verification {
        s.store.set_app_requires_verification(&row.id, true).await?;
    }
    if own != AppRetentions::default() {
        s.store.set_app_retentions(&row.id, own).await?;
    }
    Ok((StatusCode::CREATED, Json(shown(&s, row).await?)))
}

fn uid_conflict(e: crate::store::Error) -> ApiError {
    if e.is_unique_violation() {
        ApiError::new(Code::UidTaken, "another app already has this uid")
    } else {
        e.into()
    }
}

#[utoipa::path(
    get, path = "/v1/apps", tag = "apps", operation_id = "list_apps",
    summary = "List apps",
    security(("bearer" = ["app:read"])),
    description = "An app token lists its own app only.",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of apps", body = Page<AppOut>),
        (status = 400, description = "`invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    Extension(caller): Extension<Principal>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<AppOut>>, ApiError> {
    let limit = q.limit()?;
    let Some(own) = caller.app_id() else {
        let list = ListScope::new("app", &[]);
        let rows = s.store.list_apps(q.cursor(&list)?.as_deref(), limit + 1).await?;
        let page = Page::from_rows(rows, limit, &list, |r| r.id.to_string(), AppOut::from);
        return Ok(Json(with_opt_ins(&s, page).await?));
    };
    // An app-scoped caller sees its own app only: a list of one, on one page
    // (a cursor, which could only come from an admin's list, is refused).
    let list = ListScope::new("app", &[Some(own.as_str())]);
    let after = q.cursor(&list)?;
    let rows: Vec<AppRow> = match s.store.find_app(own.as_str()).await? {
        Some(app) if after.as_deref().is_none_or(|c| app.id.as_str() < c) => vec![app],
        _ => vec![],
    };
    let page = Page::from_rows(rows, limit, &list, |r| r.id.to_string(), AppOut::from);
    Ok(Json(with_opt_ins(&s, page).await?))
}

/// A page of apps with their opt-ins to proof of ownership and their own retentions, in two reads.
async fn with_opt_ins(s: &SharedState, mut page: Page<AppOut>) -> Result<Page<AppOut>, ApiError> {
    let (Some(high), Some(low)) = (page.data.first(), page.data.last()) else { return Ok(page) };
    let required = s.store.apps_requiring_verification(low.id.as_str(), high.id.as_str()).await?;
    let mut own = s.store.apps_retentions(low.id.as_str(), high.id.as_str()).await?;
    for app in &mut page.data {
        app.require_endpoint_verification = required.contains(app.id.as_str());
        app.set_retentions(own.remove(app.id.as_str()).unwrap_or_default());
    }
    Ok(page)
}

#[utoipa::path(
    get, path = "/v1/apps/{app}", tag = "apps", operation_id = "get_app",
    summary = "Read an app",
    security(("bearer" = ["app:read"])),
    params(AppPath),
    responses(
        (status = 200, description = "The app", body = AppOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn read(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
) -> Result<Json<AppOut>, ApiError> {
    let row = lookup::app(&s.store, &app).await?;
    Ok(Json(shown(&s, row).await?))
}

#[utoipa::path(
    patch, path = "/v1/apps/{app}", tag = "apps", operation_id = "update_app",
    summary = "Rename an app, change its uid, its opt-in to proof of endpoint ownership, or its retentions",
    security(("bearer" = ["admin"])),
    params(AppPath),
    request_body = PatchApp,
    responses(
        (status = 200, description = "The app", body = AppOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 409, description = "Another app has this uid (`uid_taken`)", body = ErrorBody),
        (status = 422, description = "`invalid_name`, `invalid_uid`, `uid_reserved`, `invalid_body` (`name: null`), \
            `invalid_retention`, `retention_too_long` (longer than the operator's)", body = ErrorBody),
    )
)]
async fn update(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<PatchApp>,
) -> Result<Json<AppOut>, ApiError> {
    let mut row = lookup::app(&s.store, &app).await?;
    if let Some(name) = &body.name {
        row.name = parse_name(name)?;
    }
    match &body.uid {
        None => {}
        Some(None) => row.uid = None,
        Some(Some(uid)) => row.uid = Some(AppUid::parse(uid)?.0),
    }
    let mut own = s.store.app_retentions(&row.id).await?;
    if let Some(given) = &body.payload_retention {
        own.payload = given.as_ref().map(|d| parse_retention(&s, Kind::Payload, d)).transpose()?;
    }
    if let Some(given) = &body.log_retention {
        own.log = given.as_ref().map(|d| parse_retention(&s, Kind::Log, d)).transpose()?;
    }
    row.updated_at = time::now_ms();
    s.store.update_app(&row).await.map_err(uid_conflict)?;
    if let Some(on) = body.require_endpoint_verification {
        s.store.set_app_requires_verification(&row.id, on).await?;
    }
    if body.payload_retention.is_some() || body.log_retention.is_some() {
        s.store.set_app_retentions(&row.id, own).await?;
    }
    s.forget_cached_apps();
    Ok(Json(shown(&s, row).await?))
}

#[utoipa::path(
    delete, path = "/v1/apps/{app}", tag = "apps", operation_id = "delete_app",
    summary = "Delete an app with its endpoints, events and deliveries",
    security(("bearer" = ["admin"])),
    description = "At once, the app is no longer found (its id and uid answer 404), its tokens and console \
        sessions stop working, its endpoints are disabled and its tasks still going are cancelled. Its deliveries, \
        attempts, events and endpoints are then erased in the background in bounded batches, by the `delete_app` \
        task answered here (read it at `GET /v1/tasks/{task}`); the app's row goes last. A deletion cannot be \
        cancelled.",
    params(AppPath),
    responses(
        (status = 202, description = "Its deletion began: the task that erases it", body = super::tasks::TaskOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn remove(
    State(s): State<SharedState>,
    Extension(actor): Extension<super::auth::Actor>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
) -> Result<(StatusCode, Json<super::tasks::TaskOut>), ApiError> {
    let row = lookup::app(&s.store, &app).await?;
    let by = super::tasks::created_by(actor);
    let rate = s.settings.task_rate as i64;
    let task = s
        .store
        .begin_app_deletion(&row.id, by, rate, time::now_ms())
        .await?
        .ok_or_else(|| ApiError::not_found(crate::api::code::Resource::App))?;
    s.forget_cached_apps();
    tracing::info!(app_id = %row.id, task_id = %task.id, selected = task.selected, "app deletion began");
    Ok((StatusCode::ACCEPTED, Json(task.into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_short_plain_names() {
        assert!(AppUid::parse("acme-corp.eu_1").is_ok());
        assert!(AppUid::parse("").is_err());
        assert!(AppUid::parse("has space").is_err());
        assert!(AppUid::parse(&ids::AppId::new().into_string()).is_err());
    }

    #[test]
    fn uids_shaped_like_app_ids_and_the_operator_uid_are_refused() {
        for uid in ["app_0000000000000000000FENX0P", "APP_x", "app_", "App_01JZZZZZZZZZZZZZZZZZZZZZZZ"] {
            assert_eq!(AppUid::parse(uid).unwrap_err().code, "invalid_uid", "{uid}");
        }
        for uid in ["fenix-operator", "Fenix-Operator"] {
            assert_eq!(AppUid::parse(uid).unwrap_err().code, "uid_reserved", "{uid}");
        }
        assert!(AppUid::parse("application").is_ok());
        assert!(AppUid::parse("my_app_1").is_ok());
    }
}
