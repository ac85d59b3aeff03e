//! Portal links (admin): a short-lived, single-use link that opens the web
//! console for one app's customer, minted by the product's backend and handed
//! to its customer (or opened in an iframe).
//!
//! The link's secret (`fxp_…`) sits in the URL's fragment
//! (`…/console/portal#fxp_…`): browsers never send a fragment to a server, so
//! it reaches no access log, proxy or `Referer`. The page sends it once to
//! `POST /console/api/portal/exchange` for a session cookie (`sessions.rs`).
//! Only its SHA-256 is stored; the session lives until the link's expiry.

use crate::api::code::Code;
use axum::{
    extract::State,
    http::{header, HeaderMap, StatusCode},
    Json,
};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    duration::DurationIn,
    error::{ApiError, ErrorBody},
    extract::{plain_text, ApiJson, ApiPath, ApiQuery, AppPath, ListScope, NoQuery, Page, PageQuery},
    lookup::{self, IdParam},
    sessions::{digest, new_secret, LINK_PREFIX},
};
use crate::{
    access::Access,
    ids::{AppId, PortalSessionId},
    settings,
    state::SharedState,
    store::sessions::{NewPortalLink, PortalLinkRow},
    time,
};

/// A link's life when `expires_in` is left out (capped by `FENIX_PORTAL_MAX_TTL`).
const DEFAULT_EXPIRES_IN: Duration = Duration::from_secs(3600);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct CreatePortalSession {
    /// What the customer may do in their app: `read` (look only) or `manage`.
    access: Access,
    /// How long until the link, and the session made from it, expire: a
    /// duration (`90s`, `30m`, `1h`, `30d`, as in the settings) or whole
    /// seconds, up to `FENIX_PORTAL_MAX_TTL` (default 24h). Default 1h (or the
    /// maximum, if lower).
    expires_in: Option<DurationIn>,
    /// For the operator: who the link is for (1-256 characters).
    #[schema(min_length = 1, max_length = 256, example = "acme support ticket 4711")]
    label: Option<String>,
}

/// A portal link as minted: `url` carries the secret, shown once.
#[derive(Debug, Serialize, ToSchema)]
struct PortalLink {
    id: PortalSessionId,
    app_id: AppId,
    access: Access,
    /// Open this once (or in an iframe) to reach the console for this app.
    /// Its fragment is the single-use secret: shown only here, never stored.
    #[schema(example = "https://fenix.example.com/console/portal#fxp_9f86d081884c7d659a2feaa0c55ad015")]
    url: String,
    expires_at: String,
    created_at: String,
    label: Option<String>,
}

/// A portal link as listed (no secret), with what became of it.
#[derive(Debug, Serialize, ToSchema)]
struct PortalSession {
    id: PortalSessionId,
    app_id: AppId,
    access: Access,
    expires_at: String,
    created_at: String,
    label: Option<String>,
    /// When the link was exchanged for a session; `null` while unused.
    used_at: Option<String>,
    /// When it was revoked; `null` unless revoked.
    revoked_at: Option<String>,
}

impl TryFrom<PortalLinkRow> for PortalSession {
    type Error = ApiError;
    fn try_from(r: PortalLinkRow) -> Result<Self, ApiError> {
        let access = Access::parse(&r.access)
            .ok_or_else(|| anyhow::anyhow!("portal session {} has unknown access {:?}", r.id, r.access))?;
        Ok(PortalSession {
            id: r.id,
            app_id: r.app_id,
            access,
            expires_at: time::rfc3339_ms(r.expires_at),
            created_at: time::rfc3339_ms(r.created_at),
            label: r.label,
            used_at: r.used_at.map(time::rfc3339_ms),
            revoked_at: r.revoked_at.map(time::rfc3339_ms),
        })
    }
}

/// `{app}/portal-sessions/{ps}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct PortalSessionPath {
    /// The app's id (`app_…`) or its uid.
    app: String,
    /// The portal session's id (`ps_…`).
    #[param(value_type = String)]
    ps: IdParam<PortalSessionId>,
}

/// `/v1/apps/{app}/portal-sessions…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(create, list)).routes(routes!(revoke))
}

/// The base of links: `FENIX_PUBLIC_URL`, else `http://` + the request's
/// `Host` (when it is a plain host name or address with an optional port),
/// else the listening address.
fn base_url(s: &SharedState, headers: &HeaderMap) -> String {
    if let Some(u) = &s.settings.public_url {
        return u.clone();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).filter(|h| {
        !h.is_empty()
            && h.len() <= 255
            && h.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    });
    match host {
        Some(h) => format!("http://{h}"),
        None => format!("http://{}", s.settings.listen),
    }
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/portal-sessions", tag = "portal", operation_id = "create_portal_session",
    summary = "Mint a portal link: the console for one app, for its customer",
    description = "The answer's `url` opens the web console for this app only, once: its fragment is a \
        single-use secret exchanged for a session cookie on first load. The link and the session made from it \
        expire after `expires_in` (a duration such as `1h` or `30d`, or whole seconds; default 1h, at most \
        `FENIX_PORTAL_MAX_TTL`). The URL is shown only \
        in this answer.",
    params(AppPath),
    request_body = CreatePortalSession,
    security(("bearer" = ["admin"])),
    responses(
        (status = 201, description = "The link", body = PortalLink),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_expires_in`, `invalid_label`", body = ErrorBody),
    )
)]
async fn create(
    State(s): State<SharedState>,
    _: NoQuery,
    headers: HeaderMap,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<CreatePortalSession>,
) -> Result<(StatusCode, Json<PortalLink>), ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let max = s.settings.portal_max_ttl.max(Duration::from_secs(1));
    let expires_in = match &body.expires_in {
        Some(d) => d.parse("expires_in", Code::InvalidExpiresIn)?,
        None => DEFAULT_EXPIRES_IN.min(max),
    };
    if expires_in > max {
        let (shown, secs) = (settings::show_duration(max), max.as_secs());
        let message = format!("expires_in must be at most {shown} ({secs} seconds, FENIX_PORTAL_MAX_TTL), e.g. 1h");
        return Err(ApiError::new(Code::InvalidExpiresIn, message));
    }
    let label = body.label.as_deref().map(parse_label).transpose()?;
    let secret = new_secret(LINK_PREFIX);
    let now = time::now_ms();
    let link = NewPortalLink {
        id: PortalSessionId::new(),
        app_id: app.id,
        access: body.access,
        link_sha256: digest(&secret),
        expires_at: time::add(now, expires_in),
        created_at: now,
        label,
    };
    s.store.insert_portal_link(&link).await?;
    tracing::info!(portal_session = %link.id, app = %link.app_id, access = %link.access.as_str(), "portal link minted");
    let url = format!("{}/console/portal#{secret}", base_url(&s, &headers));
    let out = PortalLink {
        id: link.id,
        app_id: link.app_id,
        access: body.access,
        url,
        expires_at: time::rfc3339_ms(link.expires_at),
        created_at: time::rfc3339_ms(link.created_at),
        label: link.label,
    };
    Ok((StatusCode::CREATED, Json(out)))
}

fn parse_label(label: &str) -> Result<String, ApiError> {
    let label = label.trim();
    if label.is_empty() || label.chars().count() > 256 {
        return Err(ApiError::new(Code::InvalidLabel, "label must be 1-256 characters"));
    }
    plain_text("label", Code::InvalidLabel, label)?;
    Ok(label.to_string())
}

#[utoipa::path(
    get, path = "/v1/apps/{app}/portal-sessions", tag = "portal", operation_id = "list_portal_sessions",
    summary = "List an app's portal links (without their secrets), newest first",
    params(AppPath, PageQuery),
    security(("bearer" = ["admin"])),
    responses(
        (status = 200, description = "A page of portal links", body = Page<PortalSession>),
        (status = 400, description = "`invalid_path`, `invalid_limit`, `invalid_cursor`, `invalid_query`",
            body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<PortalSession>>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let limit = q.limit()?;
    let list = ListScope::new(PortalSessionId::PREFIX, &[Some(app.id.as_str())]);
    let rows = s.store.list_portal_links(&app.id, q.cursor_id::<PortalSessionId>(&list)?.as_ref(), limit + 1).await?;
    let rows = rows.into_iter().map(PortalSession::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.to_string(), |r| r)))
}

#[utoipa::path(
    delete, path = "/v1/apps/{app}/portal-sessions/{ps}", tag = "portal", operation_id = "revoke_portal_session",
    summary = "Revoke a portal link and the session made from it",
    description = "The link can no longer be exchanged, and a session made from it is refused from now on \
        (`401 session_revoked`). Revoking again is not an error.",
    params(PortalSessionPath),
    security(("bearer" = ["admin"])),
    responses(
        (status = 204, description = "Revoked"),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `portal_session_not_found`", body = ErrorBody),
    )
)]
async fn revoke(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(PortalSessionPath { app, ps }): ApiPath<PortalSessionPath>,
) -> Result<StatusCode, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let missing = || ApiError::new(Code::PortalSessionNotFound, "no such portal session");
    let Some(ps) = ps.id() else { return Err(missing()) };
    if !s.store.revoke_portal_link(&app.id, ps, time::now_ms()).await? {
        return Err(missing());
    }
    tracing::info!(portal_session = %ps, app = %app.id, "portal link revoked");
    Ok(StatusCode::NO_CONTENT)
}
