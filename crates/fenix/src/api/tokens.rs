//! API tokens, managed by admins: admin tokens (`fxa_…`, everything) and
//! app tokens (`fxk_…`, one app, `manage` or `read`), with an optional
//! expiry. A token is shown once, when made; only its hash is stored.

use crate::api::code::Code;
use std::sync::Arc;

use axum::{extract::State, http::StatusCode, Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    auth::Auth,
    duration::DurationIn,
    error::{ApiError, ErrorBody},
    extract::{plain_text, ApiJson, ApiPath, ApiQuery, ListScope, NoQuery, Page, PageQuery},
    lookup::{self, IdParam},
};
use crate::{
    access::{Access, Principal},
    ids::{AppId, TokenId},
    secrets::issue_token,
    state::SharedState,
    store::tokens::{TokenDeletion, TokenRow},
    time,
};

/// What a token reaches: `admin` (every app and route), or, with `app`,
/// `manage` (everything within the app) or `read` (read it, change nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenAccess {
    Admin,
    Manage,
    Read,
}

impl TokenAccess {
    fn of(p: &Principal) -> TokenAccess {
        match p {
            Principal::Admin => TokenAccess::Admin,
            Principal::App { access: Access::Manage, .. } => TokenAccess::Manage,
            Principal::App { access: Access::Read, .. } => TokenAccess::Read,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateToken {
    /// For people: what the token is for.
    #[schema(example = "acme dashboard", min_length = 1, max_length = 256)]
    name: String,
    /// The app (id or uid) an app token is confined to; required with `read`
    /// and `manage`, left out (or null) with `admin`.
    #[schema(example = "acme")]
    app: Option<String>,
    access: TokenAccess,
    /// RFC 3339, in the future; left out (or null), like `expires_in`: never expires.
    #[schema(example = "2027-01-01T00:00:00Z")]
    expires_at: Option<String>,
    /// Instead of `expires_at`: how long from now, a duration (`90s`, `12h`,
    /// `30d`, as in the settings and `fenix token create --expires-in`) or
    /// whole seconds.
    expires_in: Option<DurationIn>,
}

/// A token as listed: never the token itself (only its hash is stored).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Token)]
pub struct TokenOut {
    /// `tok_…`, what `DELETE /v1/tokens/{tok}` takes.
    pub id: TokenId,
    pub name: String,
    /// The app an app token is confined to; null for an admin token.
    pub app_id: Option<AppId>,
    pub access: TokenAccess,
    /// Null: never expires.
    pub expires_at: Option<String>,
    /// True once `expires_at` is past: the token no longer authenticates.
    pub expired: bool,
    pub created_at: String,
}

impl TokenOut {
    fn new(row: TokenRow, now: time::Millis) -> TokenOut {
        TokenOut {
            app_id: row.principal.app_id().cloned(),
            access: TokenAccess::of(&row.principal),
            expired: row.expires_at.is_some_and(|at| at <= now),
            expires_at: row.expires_at.map(time::rfc3339_ms),
            created_at: time::rfc3339_ms(row.created_at),
            id: row.id,
            name: row.name,
        }
    }
}

/// A token just made: the listing's fields and, this once, the token.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CreatedToken)]
pub struct CreatedTokenOut {
    #[serde(flatten)]
    pub token_info: TokenOut,
    /// The token (`fxa_…` or `fxk_…`): shown only in this answer, store it now.
    pub token: String,
}

/// `{tok}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct TokenPath {
    /// The token's id (`tok_…`), never the token.
    #[param(value_type = String)]
    tok: IdParam<TokenId>,
}

/// `/v1/tokens…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(remove))
}

#[utoipa::path(
    post, path = "/v1/tokens", tag = "tokens", operation_id = "create_token",
    summary = "Make a token (shown once)",
    security(("bearer" = ["admin"])),
    description = "An admin token (`access: admin`, no `app`) or an app token confined to one app \
        (`access: manage` or `read`, `app` required). The answer's `token` is shown only here.",
    request_body = CreateToken,
    responses(
        (status = 201, description = "The token, shown once", body = CreatedTokenOut),
        (status = 422, description = "`invalid_name`, `invalid_token_scope` (`app` missing or not wanted), \
            `unknown_app`, `invalid_expires_at`, `invalid_expires_in`", body = ErrorBody),
    )
)]
async fn create(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiJson(body): ApiJson<CreateToken>,
) -> Result<(StatusCode, Json<CreatedTokenOut>), ApiError> {
    let name = body.name.trim();
    if name.is_empty() || name.chars().count() > 256 {
        return Err(ApiError::new(Code::InvalidName, "name must be 1-256 characters"));
    }
    plain_text("name", Code::InvalidName, name)?;
    let now = time::now_ms();
    let expires_at = expiry(&body, now)?;
    let principal = match (body.access, body.app.as_deref()) {
        (TokenAccess::Admin, None) => Principal::Admin,
        (TokenAccess::Admin, Some(_)) => {
            return Err(ApiError::new(Code::InvalidTokenScope, "an admin token reaches every app: leave app out"))
        }
        (_, None) => return Err(ApiError::new(Code::InvalidTokenScope, "app is required with access read or manage")),
        (access, Some(app)) => {
            plain_text("app", Code::UnknownApp, app)?;
            let app = match lookup::app(&s.store, app).await {
                Ok(app) => app,
                Err(e) if e.status == StatusCode::NOT_FOUND => {
                    return Err(ApiError::new(Code::UnknownApp, "app: no app has this id or uid"))
                }
                Err(e) => return Err(e),
            };
            let access = if access == TokenAccess::Manage { Access::Manage } else { Access::Read };
            Principal::App { app_id: app.id, access }
        }
    };
    let (row, token) = issue_token(&s.store, name, principal, expires_at).await?;
    Ok((StatusCode::CREATED, Json(CreatedTokenOut { token_info: TokenOut::new(row, now), token })))
}

/// When the token expires: `expires_at`, or now plus `expires_in` (not both).
fn expiry(body: &CreateToken, now: time::Millis) -> Result<Option<time::Millis>, ApiError> {
    match (body.expires_at.as_deref(), &body.expires_in) {
        (None, None) => Ok(None),
        (Some(_), Some(_)) => {
            Err(ApiError::new(Code::InvalidExpiresIn, "give expires_at or expires_in, not both (e.g. expires_in: 30d)"))
        }
        (None, Some(d)) => Ok(Some(time::add(now, d.parse("expires_in", Code::InvalidExpiresIn)?))),
        (Some(text), None) => match time::parse_rfc3339(text) {
            Some(at) if at > now => Ok(Some(at)),
            Some(_) => Err(ApiError::new(Code::InvalidExpiresAt, "expires_at must be in the future")),
            None => Err(ApiError::new(
                Code::InvalidExpiresAt,
                "expires_at must be an RFC 3339 time, e.g. 2027-01-01T00:00:00Z",
            )),
        },
    }
}

#[utoipa::path(
    get, path = "/v1/tokens", tag = "tokens", operation_id = "list_tokens",
    summary = "List tokens (never their secret)",
    security(("bearer" = ["admin"])),
    params(PageQuery),
    responses(
        (status = 200, description = "A page of tokens, newest first, expired ones included", body = Page<TokenOut>),
        (status = 400, description = "`invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<TokenOut>>, ApiError> {
    let limit = q.limit()?;
    let list = ListScope::new(TokenId::PREFIX, &[]);
    let rows = s.store.list_tokens(q.cursor_id::<TokenId>(&list)?.as_ref(), limit + 1).await?;
    let now = time::now_ms();
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.to_string(), |r| TokenOut::new(r, now))))
}

#[utoipa::path(
    delete, path = "/v1/tokens/{tok}", tag = "tokens", operation_id = "delete_token",
    summary = "Revoke a token",
    security(("bearer" = ["admin"])),
    description = "It stops working at once on this instance, and within 10 s on the others. \
        The last admin token that still works cannot be revoked here (make another first).",
    params(TokenPath),
    responses(
        (status = 204, description = "Revoked"),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`token_not_found`", body = ErrorBody),
        (status = 409, description = "`last_admin_token`: the only admin token that still works", body = ErrorBody),
    )
)]
async fn remove(
    State(s): State<SharedState>,
    Extension(auth): Extension<Arc<Auth>>,
    _: NoQuery,
    ApiPath(TokenPath { tok }): ApiPath<TokenPath>,
) -> Result<StatusCode, ApiError> {
    let Some(tok) = tok.id() else { return Err(ApiError::new(Code::TokenNotFound, "no such token")) };
    match s.store.delete_token_keeping_an_admin(tok, time::now_ms()).await? {
        TokenDeletion::Deleted => {
            auth.forget_tokens();
            Ok(StatusCode::NO_CONTENT)
        }
        TokenDeletion::NotFound => Err(ApiError::new(Code::TokenNotFound, "no such token")),
        TokenDeletion::LastAdmin => Err(ApiError::new(
            Code::LastAdminToken,
            "this is the last admin token that still works: make another before revoking it",
        )),
    }
}
