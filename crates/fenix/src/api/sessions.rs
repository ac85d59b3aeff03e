//! Console sessions over HTTP: the cookie that stands for a logged-in
//! operator or a customer's portal session, its CSRF token, and the console's
//! own JSON calls (`/console/api/…`, outside `/v1` and outside the OpenAPI
//! document: they serve the web console, not API clients).
//!
//! - `POST /console/api/login` `{"token"}`: an admin token → an operator session.
//! - `POST /console/api/portal/exchange` `{"link"}`: a portal link's secret
//!   (read by the page from the URL fragment) → a portal session, once.
//! - `GET /console/api/session`: who the cookie stands for, and the CSRF token.
//! - `POST /console/api/logout`: ends the session and clears the cookie.
//!
//! The cookie holds the session secret (`fxs_…`); the database holds only its
//! SHA-256. Where the console is served over HTTPS it is named
//! `__Host-fenix_session`: the browser keeps such a cookie only when it is
//! `Secure`, on `Path=/` and without `Domain`, so neither a sibling subdomain
//! nor a plain-http answer can plant one for Fenix (a planted cookie is a
//! session chosen by someone else). Over http (development) it is plain
//! `fenix_session`, and each reader accepts the one name of its scheme only.
//! It is `HttpOnly` (page scripts cannot read it) and `SameSite` (Strict for
//! operators; Lax for portal sessions over http, `None; Secure; Partitioned`
//! over HTTPS so the portal works in a product's iframe).
//!
//! A session is replaced only when the person asked for it: a portal link
//! exchanged by a browser whose cookie holds a live session of another app
//! or access answers `409 session_exists` and exchanges nothing, until the
//! page sends it again with `"replace": true` and the current session's CSRF
//! token (the person chose the link on the page). Whatever replaces a
//! session (that exchange, or a login) ends the replaced one on the server.
//! Because a portal cookie may travel on cross-site requests, every state
//! change made with the cookie must also carry `X-Fenix-CSRF`, whose value only
//! a page that could read `GET /console/api/session` knows: an HMAC-SHA-256 of
//! the session secret, so nothing more is stored and it dies with the session.
//! [`principal_from_cookie`] is what the authentication middleware calls.

use crate::api::code::Code;
use axum::{
    extract::State,
    http::{header, HeaderMap, HeaderValue, Method, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use cookie::{Cookie, SameSite};
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{error::ApiError, extract::ApiJson};
use crate::{
    access::{Access, Principal},
    ids::{AppId, ConsoleSessionId, PortalSessionId},
    settings::Settings,
    state::SharedState,
    store::{
        sessions::{Exchange, SessionRow},
        Store,
    },
    time,
};

/// The cookie that carries a console session's secret, over http.
pub const SESSION_COOKIE: &str = "fenix_session";
/// The same cookie where the console is served over HTTPS (`__Host-`: Secure, `Path=/`, no `Domain`).
pub const SESSION_COOKIE_HTTPS: &str = "__Host-fenix_session";

/// The session cookie's name for these settings: the one name every reader and writer uses.
pub fn cookie_name(settings: &Settings) -> &'static str {
    if settings.served_over_https() {
        SESSION_COOKIE_HTTPS
    } else {
        SESSION_COOKIE
    }
}
/// The header every state change made with the cookie must carry.
pub const CSRF_HEADER: &str = "x-fenix-csrf";
/// Prefix of a portal link's secret (in the link's URL fragment).
pub const LINK_PREFIX: &str = "fxp_";
/// Prefix of a session's secret (in the cookie).
const SESSION_PREFIX: &str = "fxs_";

/// A new secret: `prefix` + 32 random bytes in hex.
pub(super) fn new_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

/// The SHA-256 (hex) a secret is stored as.
pub(super) fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// The CSRF token of a session: derived from its secret, never stored.
fn csrf_token(session_secret: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(session_secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(b"fenix-console-csrf-v1");
    hex::encode(mac.finalize().into_bytes())
}

/// The session secret of the request's cookie named `name`, if any.
fn session_secret(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| Cookie::split_parse(v.to_string()))
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_string())
}

/// A session that holds, with the secret its cookie carries.
struct Live {
    row: SessionRow,
    /// Whom the row stands for, parsed once from its text columns.
    holder: Holder,
    secret: String,
}

/// Whom a stored console session stands for: the row's `kind`, `app_id` and
/// `access` (text in the database), parsed once when it is read. A stored
/// value this code does not know is an error, never a guess.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Holder {
    /// An operator's session (`kind` `operator`, `access` `admin`, no app).
    Operator { id: ConsoleSessionId },
    /// A portal session for one app, under the id of the link it was made from.
    Portal { id: PortalSessionId, app_id: AppId, access: Access },
}

impl Holder {
    fn of(row: &SessionRow) -> Result<Holder, ApiError> {
        match (row.kind.as_str(), &row.app_id, row.access.as_str()) {
            ("operator", None, "admin") => Ok(Holder::Operator { id: ConsoleSessionId::from_stored(row.id.clone()) }),
            ("portal", Some(app_id), access) => match Access::parse(access) {
                Some(access) => Ok(Holder::Portal {
                    id: PortalSessionId::from_stored(row.id.clone()),
                    app_id: app_id.clone(),
                    access,
                }),
                None => Err(anyhow::anyhow!("console session {} has an unknown access", row.id).into()),
            },
            _ => Err(anyhow::anyhow!("console session {} has an unknown kind or access", row.id).into()),
        }
    }

    /// The session's id, as logged.
    fn id(&self) -> &str {
        match self {
            Holder::Operator { id } => id.as_str(),
            Holder::Portal { id, .. } => id.as_str(),
        }
    }
}

/// Why the cookie's session cannot be used: 401 with a code the console can tell apart.
fn refused(code: Code, message: &str) -> ApiError {
    ApiError::new(code, message)
}

/// The session of the request's cookie (named `cookie`): `None` without a
/// cookie; an error when the cookie's session is unknown, expired or revoked.
async fn live_session(store: &Store, cookie: &str, headers: &HeaderMap) -> Result<Option<Live>, ApiError> {
    let Some(secret) = session_secret(headers, cookie) else { return Ok(None) };
    let row = match secret.starts_with(SESSION_PREFIX) {
        true => store.find_console_session(&digest(&secret), time::now_ms()).await?,
        false => None,
    };
    let Some(row) = row else {
        return Err(refused(Code::Unauthorized, "no such console session: log in again"));
    };
    let holder = Holder::of(&row)?;
    let operator = matches!(holder, Holder::Operator { .. });
    if row.revoked_at.is_some() || (operator && row.token_id.is_none()) {
        return Err(refused(Code::SessionRevoked, "this console session was ended or revoked"));
    }
    if row.expires_at <= time::now_ms() {
        return Err(refused(Code::SessionExpired, "this console session has expired"));
    }
    Ok(Some(Live { row, holder, secret }))
}

/// Who a stored session stands for.
fn principal_of(holder: &Holder) -> Principal {
    match holder {
        Holder::Operator { .. } => Principal::Admin,
        Holder::Portal { app_id, access, .. } => Principal::App { app_id: app_id.clone(), access: *access },
    }
}

/// Whether `method` changes nothing (and so needs no CSRF token).
fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// 403 `csrf_failed` unless the request carries the session's CSRF token.
fn check_csrf(headers: &HeaderMap, secret: &str) -> Result<(), ApiError> {
    let expected = csrf_token(secret);
    let given = headers.get(CSRF_HEADER).map(HeaderValue::as_bytes).unwrap_or_default();
    if bool::from(given.ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::new(
            Code::CsrfFailed,
            "a change made with the console cookie needs the header X-Fenix-CSRF with the session's csrf_token",
        ))
    }
}

/// The session the request's cookie holds, if it is live: a cookie of an
/// ended, expired or unknown session holds none (it is only replaced).
async fn holding_session(store: &Store, cookie: &str, headers: &HeaderMap) -> Result<Option<Live>, ApiError> {
    match live_session(store, cookie, headers).await {
        Ok(live) => Ok(live),
        Err(e) if e.status == StatusCode::UNAUTHORIZED => Ok(None),
        Err(e) => Err(e),
    }
}

/// The caller a request's session cookie (named `cookie`, see [`cookie_name`])
/// stands for: `Ok(None)` without the cookie; 401 (`unauthorized`,
/// `session_expired`, `session_revoked`) for a session that does not hold; 403
/// `csrf_failed` for any method but GET, HEAD and OPTIONS without the
/// session's `X-Fenix-CSRF`.
pub async fn principal_from_cookie(
    store: &Store,
    cookie: &str,
    headers: &HeaderMap,
    method: &Method,
) -> Result<Option<Principal>, ApiError> {
    let Some(live) = live_session(store, cookie, headers).await? else { return Ok(None) };
    if !is_safe(method) {
        check_csrf(headers, &live.secret)?;
    }
    Ok(Some(principal_of(&live.holder)))
}

/// The console's JSON calls (not in the OpenAPI document). No answer of them
/// may be kept by a cache: they say who the cookie stands for, refusals too.
pub fn console_api() -> Router<SharedState> {
    Router::new()
        .route("/console/api/login", post(login))
        .route("/console/api/portal/exchange", post(exchange))
        .route("/console/api/session", get(session))
        .route("/console/api/logout", post(logout))
        .layer(axum::middleware::map_response(|mut resp: Response| async move {
            resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            resp
        }))
}

/// Which kind of session a cookie is for: its `SameSite` differs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Operator,
    Portal,
}

/// The `Set-Cookie` of a session (`max_age_ms` 0 clears it).
/// How much longer than its session a session cookie is kept by the browser.
const COOKIE_OUTLIVES_SESSION_MS: i64 = 86_400_000;

fn set_cookie(settings: &Settings, kind: Kind, value: &str, max_age_ms: i64) -> HeaderValue {
    let https = settings.served_over_https();
    // The cookie outlives its session by a day: a browser that kept it can be
    // told that the session expired (and the page can say so), instead of
    // arriving with no cookie at all. The server decides when a session ends.
    let keep_ms = if max_age_ms > 0 { max_age_ms + COOKIE_OUTLIVES_SESSION_MS } else { 0 };
    // `__Host-` over HTTPS: both kinds are `Secure` there, on `Path=/`, with no `Domain`.
    let mut c = Cookie::build((cookie_name(settings), value.to_string()))
        .http_only(true)
        .path("/")
        .max_age(cookie::time::Duration::seconds((keep_ms + 999) / 1000));
    c = match (kind, https) {
        (Kind::Operator, _) => c.same_site(SameSite::Strict).secure(https),
        (Kind::Portal, false) => c.same_site(SameSite::Lax),
        // In a product's iframe the portal is a third-party context: only a
        // `SameSite=None` cookie is sent there, and browsers keep it per top
        // site (`Partitioned`, CHIPS), so it is no tracking cookie.
        (Kind::Portal, true) => c.same_site(SameSite::None).secure(true).partitioned(true),
    };
    HeaderValue::from_str(&c.build().to_string()).expect("a cookie of hex and fixed attributes is a valid header")
}

/// 204 with the cookie set (the router adds `Cache-Control: no-store`).
fn with_cookie(cookie: HeaderValue) -> Response {
    let mut resp = StatusCode::NO_CONTENT.into_response();
    resp.headers_mut().insert(header::SET_COOKIE, cookie);
    resp
}

/// Ends the session a new one replaces in this browser, so that it cannot be
/// used again with a copy of the old cookie.
async fn end_replaced(store: &Store, replaced: Option<Live>, by: &str) -> Result<(), ApiError> {
    let Some(old) = replaced else { return Ok(()) };
    store.end_console_session(&digest(&old.secret), time::now_ms()).await?;
    tracing::info!(session = %old.holder.id(), kind = %old.row.kind, by, "console session replaced and ended");
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Login {
    /// An admin token (`fxa_…`).
    token: String,
}

/// `POST /console/api/login`: an admin token for an operator session. A
/// session the browser held until then is ended (the person typed the token:
/// that is the choice).
async fn login(
    State(s): State<SharedState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Login>,
) -> Result<Response, ApiError> {
    let token_sha256 = crate::secrets::hash_admin_token(body.token.trim());
    // Straight from the database (the token check's cache is for requests).
    let principal = s.store.find_live_token(&token_sha256, time::now_ms()).await?.map(|row| row.principal);
    if body.token.trim().is_empty() || principal != Some(Principal::Admin) {
        return Err(ApiError::new(Code::Unauthorized, "this is not an admin token"));
    }
    let replaced = holding_session(&s.store, cookie_name(&s.settings), &headers).await?;
    let secret = new_secret(SESSION_PREFIX);
    let now = time::now_ms();
    let ttl = time::millis(s.settings.console_session_ttl);
    let expires_at = now.saturating_add(ttl);
    let id = ConsoleSessionId::new();
    s.store.insert_operator_session(&id, &digest(&secret), &token_sha256, expires_at, now).await?;
    tracing::info!(session = %id, "operator logged in to the console");
    end_replaced(&s.store, replaced, "an operator login").await?;
    Ok(with_cookie(set_cookie(&s.settings, Kind::Operator, &secret, ttl)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExchangeLink {
    /// The link's secret (`fxp_…`), from the portal URL's fragment.
    link: String,
    /// The person chose the link over the live session this browser holds
    /// (sent with that session's CSRF token). Without it, such a session is
    /// not replaced: `409 session_exists`.
    #[serde(default)]
    replace: bool,
}

/// Whether exchanging a link for (`app_id`, `access`) would change what the
/// browser's live session reaches: a session of the very app and access is
/// replaced without asking (an embedding product mints a fresh link for
/// every page view); an operator's, another app's or another access's is not.
fn changes_what_it_reaches(current: &Holder, app_id: &AppId, access: &str) -> bool {
    !matches!(current, Holder::Portal { app_id: a, access: x, .. } if a == app_id && x.as_str() == access)
}

/// `POST /console/api/portal/exchange`: a portal link's secret for a portal session, once.
async fn exchange(
    State(s): State<SharedState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<ExchangeLink>,
) -> Result<Response, ApiError> {
    let link = body.link.trim();
    let outcome = if link.starts_with(LINK_PREFIX) {
        let now = time::now_ms();
        let current = holding_session(&s.store, cookie_name(&s.settings), &headers).await?;
        if let Some(current) = &current {
            if body.replace {
                // Only the console's page, which read this session, knows its token.
                check_csrf(&headers, &current.secret)?;
            } else if let Some((app_id, access)) = s.store.find_exchangeable_portal_link(&digest(link), now).await? {
                if changes_what_it_reaches(&current.holder, &app_id, &access) {
                    return Err(ApiError::new(
                        Code::SessionExists,
                        "this browser holds another live console session: it is kept unless the link is \
                         exchanged again with \"replace\": true (the page asks which to keep)",
                    ));
                }
            }
        }
        let secret = new_secret(SESSION_PREFIX);
        match s.store.exchange_portal_link(&digest(link), &digest(&secret), now).await? {
            Exchange::Made { expires_at } => {
                end_replaced(&s.store, current, "a portal link").await?;
                let cookie = set_cookie(&s.settings, Kind::Portal, &secret, expires_at - now);
                return Ok(with_cookie(cookie));
            }
            other => other,
        }
    } else {
        Exchange::NotFound
    };
    let gone = |code, message| ApiError::new(code, message);
    Err(match outcome {
        Exchange::Used => gone(Code::LinkUsed, "this portal link was already used: ask for a new one"),
        Exchange::Expired => gone(Code::LinkExpired, "this portal link has expired: ask for a new one"),
        Exchange::Revoked => gone(Code::LinkRevoked, "this portal link was revoked"),
        Exchange::NotFound | Exchange::Made { .. } => ApiError::new(Code::LinkNotFound, "no such portal link"),
    })
}

/// Who the console session stands for, as `GET /console/api/session` answers.
#[derive(Serialize)]
struct SessionOut {
    /// `operator` or `portal`.
    kind: &'static str,
    /// The one app of a portal session; `null` for operators.
    app_id: Option<AppId>,
    app_name: Option<String>,
    /// `admin`, `manage` or `read`.
    access: String,
    expires_at: String,
    /// Send as `X-Fenix-CSRF` with every state change.
    csrf_token: String,
}

/// `GET /console/api/session`.
async fn session(State(s): State<SharedState>, headers: HeaderMap) -> Result<Json<SessionOut>, ApiError> {
    let Some(live) = live_session(&s.store, cookie_name(&s.settings), &headers).await? else {
        return Err(refused(Code::Unauthorized, "no console session: log in"));
    };
    let row = live.row;
    Ok(Json(SessionOut {
        kind: if matches!(live.holder, Holder::Portal { .. }) { "portal" } else { "operator" },
        app_id: row.app_id,
        app_name: row.app_name,
        access: row.access,
        expires_at: time::rfc3339_ms(row.expires_at),
        csrf_token: csrf_token(&live.secret),
    }))
}

/// `POST /console/api/logout`: ends a live session (which needs its CSRF
/// token, like every change made with the cookie) and clears the cookie; a
/// cookie whose session no longer holds is just cleared.
async fn logout(State(s): State<SharedState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let mut kind = Kind::Operator;
    if let Some(secret) = session_secret(&headers, cookie_name(&s.settings)) {
        let hash = digest(&secret);
        if let Some(row) = s.store.find_console_session(&hash, time::now_ms()).await? {
            if matches!(Holder::of(&row)?, Holder::Portal { .. }) {
                kind = Kind::Portal;
            }
            let live = row.revoked_at.is_none() && row.expires_at > time::now_ms();
            if live {
                check_csrf(&headers, &secret)?;
                s.store.end_console_session(&hash, time::now_ms()).await?;
            }
        }
    }
    Ok(with_cookie(set_cookie(&s.settings, kind, "", 0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csrf_token_is_bound_to_the_session_secret() {
        let (a, b) = (new_secret(SESSION_PREFIX), new_secret(SESSION_PREFIX));
        assert_eq!(csrf_token(&a), csrf_token(&a));
        assert_ne!(csrf_token(&a), csrf_token(&b));
        assert!(!csrf_token(&a).contains(&a[SESSION_PREFIX.len()..]));
        let mut headers = HeaderMap::new();
        assert_eq!(check_csrf(&headers, &a).unwrap_err().code, "csrf_failed");
        headers.insert(CSRF_HEADER, csrf_token(&b).parse().unwrap());
        assert_eq!(check_csrf(&headers, &a).unwrap_err().code, "csrf_failed");
        headers.insert(CSRF_HEADER, csrf_token(&a).parse().unwrap());
        assert!(check_csrf(&headers, &a).is_ok());
    }

    #[test]
    fn the_session_cookie_is_read_among_others() {
        let mut headers = HeaderMap::new();
        assert_eq!(session_secret(&headers, SESSION_COOKIE), None);
        headers.append(header::COOKIE, "theme=dark; fenix_session=fxs_abc; other=1".parse().unwrap());
        assert_eq!(session_secret(&headers, SESSION_COOKIE).as_deref(), Some("fxs_abc"));
        let mut split = HeaderMap::new();
        split.append(header::COOKIE, "a=1".parse().unwrap());
        split.append(header::COOKIE, "fenix_session=fxs_x".parse().unwrap());
        assert_eq!(session_secret(&split, SESSION_COOKIE).as_deref(), Some("fxs_x"));
    }

    #[test]
    fn cookies_carry_the_attributes_of_their_kind_and_scheme() {
        let http = Settings::default();
        let https = Settings { public_url: Some("https://fenix.example.com".into()), ..Settings::default() };
        let text = |s: &Settings, k| set_cookie(s, k, "fxs_1", 3_600_000).to_str().unwrap().to_string();
        let op = text(&http, Kind::Operator);
        assert!(op.contains("HttpOnly") && op.contains("SameSite=Strict") && op.contains("Path=/"), "{op}");
        assert!(!op.contains("Secure"), "{op}");
        assert!(text(&https, Kind::Operator).contains("Secure"));
        let portal = text(&http, Kind::Portal);
        assert!(portal.contains("SameSite=Lax") && !portal.contains("Secure"), "{portal}");
        let framed = text(&https, Kind::Portal);
        assert!(framed.contains("SameSite=None") && framed.contains("Secure") && framed.contains("Partitioned"));
    }

    #[test]
    fn over_https_the_cookie_is_a_host_cookie_and_only_that_name_is_read() {
        let http = Settings::default();
        let https = Settings { public_url: Some("https://fenix.example.com".into()), ..Settings::default() };
        assert_eq!(cookie_name(&http), "fenix_session");
        assert_eq!(cookie_name(&https), "__Host-fenix_session");
        for kind in [Kind::Operator, Kind::Portal] {
            let set = set_cookie(&https, kind, "fxs_1", 3_600_000).to_str().unwrap().to_string();
            assert!(set.starts_with("__Host-fenix_session=fxs_1;"), "{set}");
            assert!(set.contains("Secure") && set.contains("Path=/") && !set.contains("Domain"), "{set}");
            let plain = set_cookie(&http, kind, "fxs_1", 3_600_000).to_str().unwrap().to_string();
            assert!(plain.starts_with("fenix_session=fxs_1;"), "{plain}");
        }
        let mut planted = HeaderMap::new();
        planted.append(header::COOKIE, "fenix_session=fxs_planted".parse().unwrap());
        assert_eq!(session_secret(&planted, cookie_name(&https)), None, "over https the plain name is not read");
        planted.append(header::COOKIE, "__Host-fenix_session=fxs_own".parse().unwrap());
        assert_eq!(session_secret(&planted, cookie_name(&https)).as_deref(), Some("fxs_own"));
        assert_eq!(session_secret(&planted, cookie_name(&http)).as_deref(), Some("fxs_planted"));
    }
}
