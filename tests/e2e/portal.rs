//! Portal links and console sessions as a product and its customers meet
//! them: a link minted by an admin, exchanged once for a cookie, refused when
//! used, expired or revoked; operators' sessions that end at logout or when
//! their admin token is revoked; the cookie's attributes; the CSRF header on
//! every change made with the cookie; no secret in the server's log or in
//! `GET /v1/settings`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::on_both_backends;
use crate::support::{error_code_or_empty, eventually, fenix_cli_stdout, Backend, Fenix, TestDb};

/// Mints a portal link for `app`; answers its JSON.
async fn mint(fenix: &Fenix, app: &str, body: Value) -> Value {
    let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/portal-sessions"), Some(body)).await;
    assert_eq!(status, 201, "mint a portal link: {out}");
    out
}

/// The link secret of a minted link (its URL's fragment).
fn secret_of(link: &Value) -> String {
    let url = link["url"].as_str().expect("url");
    url.split_once('#').expect("a fragment").1.to_string()
}

/// An answer of the console API: status, the `Set-Cookie` value (if any), the JSON body.
struct Answer {
    status: u16,
    set_cookie: Option<String>,
    body: Value,
}

impl Answer {
    /// `name=value` of the session cookie set, to send back as `Cookie`.
    fn cookie(&self) -> String {
        let set = self.set_cookie.as_deref().expect("a Set-Cookie");
        set.split(';').next().expect("name=value").trim().to_string()
    }
}

async fn answer(resp: reqwest::Response) -> Answer {
    let status = resp.status().as_u16();
    let set_cookie = resp.headers().get("set-cookie").map(|v| v.to_str().expect("ascii").to_string());
    let text = resp.text().await.expect("body");
    let body = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).expect("JSON") };
    Answer { status, set_cookie, body }
}

/// A call with a cookie (and optionally a CSRF header), without a bearer token.
async fn with_cookie(
    fenix: &Fenix,
    method: &str,
    path: &str,
    cookie: &str,
    csrf: Option<&str>,
    body: Option<Value>,
) -> Answer {
    let mut req = reqwest::Client::new()
        .request(method.parse().expect("method"), format!("{}{path}", fenix.base))
        .header("cookie", cookie);
    if let Some(token) = csrf {
        req = req.header("x-fenix-csrf", token);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    answer(req.send().await.expect("request")).await
}

/// `POST /console/api/portal/exchange` of a link secret.
async fn exchange(fenix: &Fenix, link: &str) -> Answer {
    let url = format!("{}/console/api/portal/exchange", fenix.base);
    answer(reqwest::Client::new().post(url).json(&json!({ "link": link })).send().await.expect("exchange")).await
}

/// `POST /console/api/login` with a token.
async fn login(fenix: &Fenix, token: &str) -> Answer {
    let url = format!("{}/console/api/login", fenix.base);
    answer(reqwest::Client::new().post(url).json(&json!({ "token": token })).send().await.expect("login")).await
}

/// `GET /console/api/session` with a cookie.
async fn session(fenix: &Fenix, cookie: &str) -> Answer {
    with_cookie(fenix, "GET", "/console/api/session", cookie, None, None).await
}

fn seconds_between(from: &Value, to: &Value) -> i64 {
    let t = |v: &Value| humantime::parse_rfc3339(v.as_str().expect("a time")).expect("RFC 3339");
    t(to).duration_since(t(from)).expect("to after from").as_secs() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_lives_an_hour_by_default_and_at_most_the_configured_maximum() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let link = mint(&fenix, "acme", json!({"access": "read", "label": "ticket 4711"})).await;
    assert!(link["id"].as_str().unwrap().starts_with("ps_"), "{link}");
    assert_eq!((link["app_id"].as_str(), link["access"].as_str()), (Some(app.as_str()), Some("read")));
    assert_eq!(link["label"], "ticket 4711");
    assert_eq!(seconds_between(&link["created_at"], &link["expires_at"]), 3600);
    let url = link["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("{}/console/portal#fxp_", fenix.base)), "{url}");
    let longest = mint(&fenix, &app, json!({"access": "manage", "expires_in": 86_400})).await;
    assert_eq!(seconds_between(&longest["created_at"], &longest["expires_at"]), 86_400);
    // The settings' and the CLI's duration syntax too.
    let written = mint(&fenix, &app, json!({"access": "read", "expires_in": "30m"})).await;
    assert_eq!(seconds_between(&written["created_at"], &written["expires_at"]), 1800);
    let (_, out) = fenix
        .call("POST", &format!("/v1/apps/{app}/portal-sessions"), Some(json!({"access": "read", "expires_in": "soon"})))
        .await;
    let message = out["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("expires_in") && message.contains("1h"), "the field and an example are named: {out}");

    let refused = [
        (json!({"access": "read", "expires_in": 86_401}), 422, "invalid_expires_in"),
        (json!({"access": "read", "expires_in": 0}), 422, "invalid_expires_in"),
        (json!({"access": "read", "expires_in": -5}), 422, "invalid_expires_in"),
        (json!({"access": "read", "expires_in": "soon"}), 422, "invalid_expires_in"),
        (json!({"access": "read", "expires_in": "25h"}), 422, "invalid_expires_in"),
        (json!({"access": "admin"}), 422, "invalid_body"),
        (json!({}), 422, "invalid_body"),
        (json!({"access": "read", "label": "two\nlines"}), 422, "invalid_label"),
        (json!({"access": "read", "label": ""}), 422, "invalid_label"),
        (json!({"access": "read", "secret": "mine"}), 400, "unknown_field"),
    ];
    for (body, status, expected) in refused {
        let (got, out) = fenix.call("POST", &format!("/v1/apps/{app}/portal-sessions"), Some(body.clone())).await;
        assert_eq!((got, error_code_or_empty(&out)), (status, expected), "{body}: {out}");
    }
    let (status, out) = fenix.call("POST", "/v1/apps/nobody/portal-sessions", Some(json!({"access": "read"}))).await;
    assert_eq!((status, error_code_or_empty(&out)), (404, "app_not_found"));
    let (status, _) = fenix.call_as(None, "POST", &format!("/v1/apps/{app}/portal-sessions"), None).await;
    assert_eq!(status, 401, "minting needs the admin token");

    // A lower maximum caps the default too; a public URL is the links' base.
    let db = TestDb::new(Backend::Sqlite).await;
    let short =
        Fenix::start(&db, &[("FENIX_PORTAL_MAX_TTL", "30m"), ("FENIX_PUBLIC_URL", "https://fenix.example.com/")]).await;
    let app = short.create_app("acme").await;
    let link = mint(&short, &app, json!({"access": "read"})).await;
    assert_eq!(seconds_between(&link["created_at"], &link["expires_at"]), 1800);
    assert!(link["url"].as_str().unwrap().starts_with("https://fenix.example.com/console/portal#fxp_"), "{link}");
    let (status, out) = short
        .call("POST", &format!("/v1/apps/{app}/portal-sessions"), Some(json!({"access": "read", "expires_in": 1801})))
        .await;
    assert_eq!((status, error_code_or_empty(&out)), (422, "invalid_expires_in"), "{out}");
    assert!(out["error"]["message"].as_str().unwrap().contains("1800"), "{out}");
}

async fn a_link_is_exchanged_once_for_a_session_of_its_app(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let link = mint(&fenix, &app, json!({"access": "manage"})).await;
    let first = exchange(&fenix, &secret_of(&link)).await;
    assert_eq!(first.status, 204, "{:?}", first.body);
    let me = session(&fenix, &first.cookie()).await;
    assert_eq!(me.status, 200, "{:?}", me.body);
    assert_eq!(me.body["kind"], "portal");
    assert_eq!(me.body["app_id"], app.as_str());
    assert_eq!(me.body["app_name"], "acme");
    assert_eq!(me.body["access"], "manage");
    assert_eq!(me.body["expires_at"], link["expires_at"], "the session ends with the link");
    assert!(me.body["csrf_token"].as_str().is_some_and(|t| t.len() >= 32), "{:?}", me.body);

    let again = exchange(&fenix, &secret_of(&link)).await;
    assert_eq!((again.status, error_code_or_empty(&again.body)), (410, "link_used"));
    assert!(again.set_cookie.is_none(), "no second session");
    for unknown in ["fxp_0000000000000000000000000000000000000000000000000000000000000000", "garbage", ""] {
        let out = exchange(&fenix, unknown).await;
        assert_eq!((out.status, error_code_or_empty(&out.body)), (404, "link_not_found"), "{unknown:?}");
    }
    let (status, list) = fenix.call("GET", &format!("/v1/apps/{app}/portal-sessions"), None).await;
    assert_eq!(status, 200);
    let listed = &list["data"][0];
    assert_eq!(listed["id"], link["id"]);
    assert!(listed["used_at"].is_string() && listed["revoked_at"].is_null(), "{listed}");
    assert!(listed.get("url").is_none() && !list.to_string().contains(&secret_of(&link)), "no secret in lists");
}

async fn of_concurrent_exchanges_of_one_link_exactly_one_wins(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    for round in 0..5 {
        let secret = secret_of(&mint(&fenix, &app, json!({"access": "read"})).await);
        let tries = (0..8).map(|_| exchange(&fenix, &secret));
        let answers = futures::future::join_all(tries).await;
        let won = answers.iter().filter(|a| a.status == 204).count();
        let used = answers.iter().filter(|a| a.status == 410 && error_code_or_empty(&a.body) == "link_used").count();
        assert_eq!((won, used), (1, 7), "round {round}: {:?}", answers.iter().map(|a| a.status).collect::<Vec<_>>());
    }
}

async fn an_expired_link_and_an_expired_session_are_refused(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    // `unused` is minted first, so it expires no later than `used`.
    let unused = mint(&fenix, &app, json!({"access": "read", "expires_in": 1})).await;
    let used = mint(&fenix, &app, json!({"access": "read", "expires_in": 1})).await;
    let made = exchange(&fenix, &secret_of(&used)).await;
    assert_eq!(made.status, 204);
    let cookie = made.cookie();
    eventually("the portal session expires with its link", Duration::from_secs(20), || async {
        let out = session(&fenix, &cookie).await;
        assert!(out.status == 200 || out.status == 401, "{}", out.status);
        out.status == 401 && error_code_or_empty(&out.body) == "session_expired"
    })
    .await;
    let out = with_cookie(&fenix, "GET", &format!("/v1/apps/{app}/endpoints"), &cookie, None, None).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (401, "session_expired"));
    let late = exchange(&fenix, &secret_of(&unused)).await;
    assert_eq!((late.status, error_code_or_empty(&late.body)), (410, "link_expired"), "{:?}", late.body);
}

async fn a_revoked_link_and_the_session_made_from_it_are_refused(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let other = fenix.create_app("globex").await;
    let exchanged = mint(&fenix, &app, json!({"access": "manage"})).await;
    let unused = mint(&fenix, &app, json!({"access": "read"})).await;
    let cookie = exchange(&fenix, &secret_of(&exchanged)).await.cookie();
    assert_eq!(session(&fenix, &cookie).await.status, 200);

    let path = |app: &str, link: &Value| format!("/v1/apps/{app}/portal-sessions/{}", link["id"].as_str().unwrap());
    let (status, out) = fenix.call("DELETE", &path(&other, &exchanged), None).await;
    assert_eq!((status, error_code_or_empty(&out)), (404, "portal_session_not_found"), "not through another app");
    assert_eq!(session(&fenix, &cookie).await.status, 200);

    assert_eq!(fenix.call("DELETE", &path(&app, &exchanged), None).await.0, 204);
    let out = session(&fenix, &cookie).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (401, "session_revoked"));
    assert_eq!(fenix.call("DELETE", &path("acme", &unused), None).await.0, 204);
    let out = exchange(&fenix, &secret_of(&unused)).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (410, "link_revoked"));
    assert_eq!(fenix.call("DELETE", &path(&app, &unused), None).await.0, 204, "revoking again is no error");
    let (status, out) = fenix.call("DELETE", &format!("/v1/apps/{app}/portal-sessions/ps_nothing"), None).await;
    assert_eq!((status, error_code_or_empty(&out)), (404, "portal_session_not_found"));

    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/portal-sessions?limit=1"), None).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    assert!(list["data"][0]["revoked_at"].is_string(), "{list}");
    let cursor = list["next_cursor"].as_str().expect("a second page");
    let (_, rest) = fenix.call("GET", &format!("/v1/apps/{app}/portal-sessions?cursor={cursor}"), None).await;
    // Both links, one a page (two made in one millisecond may list in either order).
    let mut both = vec![list["data"][0]["id"].clone(), rest["data"][0]["id"].clone()];
    both.sort_by_key(|v| v.to_string());
    let mut minted = vec![exchanged["id"].clone(), unused["id"].clone()];
    minted.sort_by_key(|v| v.to_string());
    assert_eq!(both, minted);
    assert!(rest["data"][0]["revoked_at"].is_string() && rest["next_cursor"].is_null(), "{rest}");
    let (status, _) = fenix.call("GET", &format!("/v1/apps/{other}/portal-sessions?cursor={cursor}"), None).await;
    assert_eq!(status, 400, "a cursor of another app's list");
}

/// The attributes of a `Set-Cookie` value, lower-cased, without the `name=value`.
fn attributes(set_cookie: &str) -> Vec<String> {
    set_cookie.split(';').skip(1).map(|a| a.trim().to_ascii_lowercase()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_are_http_only_same_site_on_path_root_and_secure_only_over_https() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let operator = login(&fenix, &fenix.token).await;
    assert_eq!(operator.status, 204);
    let set = operator.set_cookie.clone().unwrap();
    assert!(set.starts_with("fenix_session=fxs_"), "{set}");
    let attrs = attributes(&set);
    for wanted in ["httponly", "samesite=strict", "path=/"] {
        assert!(attrs.contains(&wanted.to_string()), "{wanted} in {set}");
    }
    assert!(!attrs.contains(&"secure".to_string()), "no Secure over http: {set}");
    let portal = exchange(&fenix, &secret_of(&mint(&fenix, &app, json!({"access": "read"})).await)).await;
    let set = portal.set_cookie.clone().unwrap();
    let attrs = attributes(&set);
    for wanted in ["httponly", "samesite=lax", "path=/"] {
        assert!(attrs.contains(&wanted.to_string()), "{wanted} in {set}");
    }
    assert!(!attrs.contains(&"secure".to_string()) && !attrs.contains(&"partitioned".to_string()), "{set}");

    let db = TestDb::new(Backend::Sqlite).await;
    let https = Fenix::start(&db, &[("FENIX_PUBLIC_URL", "https://fenix.example.com")]).await;
    let app = https.create_app("acme").await;
    let set = login(&https, &https.token).await.set_cookie.unwrap();
    let attrs = attributes(&set);
    for wanted in ["httponly", "samesite=strict", "path=/", "secure"] {
        assert!(attrs.contains(&wanted.to_string()), "{wanted} in {set}");
    }
    let link = mint(&https, &app, json!({"access": "read"})).await;
    let set = exchange(&https, &secret_of(&link)).await.set_cookie.unwrap();
    let attrs = attributes(&set);
    for wanted in ["httponly", "samesite=none", "path=/", "secure", "partitioned"] {
        assert!(attrs.contains(&wanted.to_string()), "{wanted} in {set}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_log_line_holds_a_link_or_session_secret() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_LOG", "trace,sqlx=trace,hyper=trace")]).await;
    let app = fenix.create_app("acme").await;
    let link = mint(&fenix, &app, json!({"access": "manage"})).await;
    let secret = secret_of(&link);
    let made = exchange(&fenix, &secret).await;
    assert_eq!(made.status, 204);
    assert_eq!(exchange(&fenix, &secret).await.status, 410);
    let cookie = made.cookie();
    assert_eq!(session(&fenix, &cookie).await.status, 200);
    let operator = login(&fenix, &fenix.token).await.cookie();
    assert_eq!(session(&fenix, &operator).await.status, 200);
    let logs = fenix.logs();
    assert!(logs.contains("portal link minted"), "the log is the server's: {logs}");
    let hex = |s: &str| s.split_once('_').map(|(_, h)| h.to_string()).unwrap();
    for (what, value) in [
        ("link secret", hex(&secret)),
        ("portal session secret", hex(&cookie)),
        ("operator session secret", hex(&operator)),
        ("admin token", fenix.token.clone()),
    ] {
        assert!(!logs.contains(&value), "the {what} is in the server's log");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_with_the_cookie_needs_the_csrf_header() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let cookie = login(&fenix, &fenix.token).await.cookie();
    let me = session(&fenix, &cookie).await;
    assert_eq!((me.body["kind"].as_str(), me.body["access"].as_str()), (Some("operator"), Some("admin")));
    assert!(me.body["app_id"].is_null(), "{:?}", me.body);
    let csrf = me.body["csrf_token"].as_str().unwrap().to_string();
    let app = json!({"name": "Acme", "uid": "acme"});

    for header in [None, Some("wrong"), Some("")] {
        let out = with_cookie(&fenix, "POST", "/v1/apps", &cookie, header, Some(app.clone())).await;
        assert_eq!((out.status, error_code_or_empty(&out.body)), (403, "csrf_failed"), "{header:?}");
    }
    let list = with_cookie(&fenix, "GET", "/v1/apps", &cookie, None, None).await;
    assert_eq!(list.status, 200, "reading needs no CSRF header");
    assert_eq!(list.body["data"], json!([]), "nothing was created");

    let made = with_cookie(&fenix, "POST", "/v1/apps", &cookie, Some(&csrf), Some(app)).await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    let out = with_cookie(&fenix, "DELETE", "/v1/apps/acme", &cookie, None, None).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (403, "csrf_failed"));
    let out = with_cookie(&fenix, "PATCH", "/v1/apps/acme", &cookie, Some("x"), Some(json!({"name": "Evil"}))).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (403, "csrf_failed"));
    let (status, still) = fenix.call("GET", "/v1/apps/acme", None).await;
    assert_eq!((status, still["name"].as_str()), (200, Some("Acme")), "nothing changed");

    // Another session's token does not do.
    let other = login(&fenix, &fenix.token).await.cookie();
    let other_csrf = session(&fenix, &other).await.body["csrf_token"].as_str().unwrap().to_string();
    assert_ne!(other_csrf, csrf);
    let out = with_cookie(&fenix, "DELETE", "/v1/apps/acme", &cookie, Some(&other_csrf), None).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (403, "csrf_failed"));
    let out = with_cookie(&fenix, "POST", "/console/api/logout", &cookie, None, None).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (403, "csrf_failed"), "logout too");
    assert_eq!(session(&fenix, &cookie).await.status, 200, "still logged in");
    let out = with_cookie(&fenix, "DELETE", "/v1/apps/acme", &cookie, Some(&csrf), None).await;
    assert_eq!(out.status, 202, "the deletion began: {}", out.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logout_ends_the_session_and_clears_the_cookie() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let cookie = login(&fenix, &fenix.token).await.cookie();
    let csrf = session(&fenix, &cookie).await.body["csrf_token"].as_str().unwrap().to_string();
    let out = with_cookie(&fenix, "POST", "/console/api/logout", &cookie, Some(&csrf), None).await;
    assert_eq!(out.status, 204);
    let cleared = out.set_cookie.expect("the cookie is cleared");
    assert!(cleared.starts_with("fenix_session=;") && attributes(&cleared).contains(&"max-age=0".into()), "{cleared}");
    let out = session(&fenix, &cookie).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (401, "session_revoked"));
    let out = with_cookie(&fenix, "GET", "/v1/apps", &cookie, None, None).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (401, "session_revoked"));
    let out = with_cookie(&fenix, "POST", "/console/api/logout", &cookie, None, None).await;
    assert_eq!(out.status, 204, "logging out of an ended session just clears the cookie");
    let none = answer(reqwest::get(format!("{}/console/api/session", fenix.base)).await.unwrap()).await;
    assert_eq!((none.status, error_code_or_empty(&none.body)), (401, "unauthorized"));
    let forged = session(&fenix, "fenix_session=fxs_forged").await;
    assert_eq!((forged.status, error_code_or_empty(&forged.body)), (401, "unauthorized"));
    let wrong_method = answer(reqwest::get(format!("{}/console/api/logout", fenix.base)).await.unwrap()).await;
    assert_eq!((wrong_method.status, error_code_or_empty(&wrong_method.body)), (405, "method_not_allowed"));
}

async fn revoking_the_admin_token_ends_the_operator_sessions_it_opened(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let token = fenix_cli_stdout(&db, &["token", "create", "--name", "night-shift"]).trim().to_string();
    let wrong = login(&fenix, "fxa_not_a_token").await;
    assert_eq!((wrong.status, error_code_or_empty(&wrong.body)), (401, "unauthorized"));
    assert!(wrong.set_cookie.is_none());
    let cookie = login(&fenix, &token).await.cookie();
    let other = login(&fenix, &fenix.token).await.cookie();
    assert_eq!(with_cookie(&fenix, "GET", "/v1/apps", &cookie, None, None).await.status, 200);

    let list = fenix_cli_stdout(&db, &["token", "list"]);
    let id = list.lines().find(|l| l.contains("night-shift")).and_then(|l| l.split_whitespace().next()).unwrap();
    fenix_cli_stdout(&db, &["token", "revoke", id]);
    let out = session(&fenix, &cookie).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (401, "session_revoked"));
    let out = with_cookie(&fenix, "GET", "/v1/apps", &cookie, None, None).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (401, "session_revoked"));
    assert_eq!(login(&fenix, &token).await.status, 401, "the revoked token logs in no more");
    assert_eq!(session(&fenix, &other).await.status, 200, "sessions of other tokens go on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_in_force_show_no_secret() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_PORTAL_MAX_TTL", "2h")]).await;
    let (status, body) = fenix.call("GET", "/v1/settings", None).await;
    assert_eq!(status, 200, "{body}");
    let value = |name: &str| {
        body["data"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{name}"))["value"]
            .clone()
    };
    assert_eq!(value("FENIX_PORTAL_MAX_TTL"), "2h");
    assert_eq!(value("FENIX_CONSOLE_SESSION_TTL"), "12h");
    assert_eq!(value("FENIX_ADMIN_TOKEN"), "[redacted]");
    assert_eq!(value("FENIX_MASTER_KEY"), "[redacted]");
    assert!(value("FENIX_PUBLIC_URL").is_null());
    let text = body.to_string();
    let master_key = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=";
    assert!(!text.contains(&fenix.token) && !text.contains(master_key), "{text}");
    let (status, _) = fenix.call_as(None, "GET", "/v1/settings", None).await;
    assert_eq!(status, 401);
    let (status, _) = fenix.call("GET", "/v1/settings?verbose=1", None).await;
    assert_eq!(status, 400);
}

on_both_backends!(
    a_link_is_exchanged_once_for_a_session_of_its_app,
    of_concurrent_exchanges_of_one_link_exactly_one_wins,
    an_expired_link_and_an_expired_session_are_refused,
    a_revoked_link_and_the_session_made_from_it_are_refused,
    revoking_the_admin_token_ends_the_operator_sessions_it_opened,
    a_portal_link_replaces_another_live_session_only_when_asked_and_ends_it,
);

/// `used_at` of the portal link `ps` of `app`, as the admin API lists it.
async fn used_at(fenix: &Fenix, app: &str, ps: &Value) -> Value {
    let (status, list) = fenix.call("GET", &format!("/v1/apps/{app}/portal-sessions"), None).await;
    assert_eq!(status, 200, "{list}");
    let row = list["data"].as_array().unwrap().iter().find(|r| r["id"] == ps["id"]).cloned();
    row.unwrap_or_else(|| panic!("{ps} in {list}"))["used_at"].clone()
}

/// The CSRF token of a live session's cookie.
async fn csrf_of(fenix: &Fenix, cookie: &str) -> String {
    let me = session(fenix, cookie).await;
    assert_eq!(me.status, 200, "{:?}", me.body);
    me.body["csrf_token"].as_str().unwrap().to_string()
}

/// `POST /console/api/portal/exchange` from a browser that holds `cookie`.
async fn exchange_beside(fenix: &Fenix, cookie: &str, csrf: Option<&str>, body: Value) -> Answer {
    with_cookie(fenix, "POST", "/console/api/portal/exchange", cookie, csrf, Some(body)).await
}

async fn a_portal_link_replaces_another_live_session_only_when_asked_and_ends_it(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let acme = fenix.create_app("acme").await;
    let globex = fenix.create_app("globex").await;
    let operator = login(&fenix, &fenix.token).await.cookie();
    let operator_csrf = csrf_of(&fenix, &operator).await;

    // Another page sends the operator's browser to a link of its own: nothing is exchanged.
    let link = mint(&fenix, &acme, json!({"access": "manage"})).await;
    let secret = secret_of(&link);
    let asked = exchange_beside(&fenix, &operator, None, json!({ "link": secret })).await;
    assert_eq!((asked.status, error_code_or_empty(&asked.body)), (409, "session_exists"), "{:?}", asked.body);
    assert!(asked.set_cookie.is_none(), "the operator's cookie is left alone");
    assert_eq!(used_at(&fenix, &acme, &link).await, Value::Null, "the link is still unused");
    assert_eq!(session(&fenix, &operator).await.body["kind"], "operator");
    // Replacing needs the current session's CSRF token: only the console's page knows it.
    for csrf in [None, Some("wrong")] {
        let out = exchange_beside(&fenix, &operator, csrf, json!({"link": secret, "replace": true})).await;
        assert_eq!((out.status, error_code_or_empty(&out.body)), (403, "csrf_failed"), "{csrf:?}");
    }
    assert_eq!(used_at(&fenix, &acme, &link).await, Value::Null, "still unused");

    // The person chose the link: the operator's session ends on the server.
    let made = exchange_beside(&fenix, &operator, Some(&operator_csrf), json!({"link": secret, "replace": true})).await;
    assert_eq!(made.status, 204, "{:?}", made.body);
    let portal = made.cookie();
    assert_eq!(session(&fenix, &portal).await.body["app_id"], acme.as_str());
    let old = session(&fenix, &operator).await;
    assert_eq!(
        (old.status, error_code_or_empty(&old.body)),
        (401, "session_revoked"),
        "the replaced operator session is over"
    );
    let old = with_cookie(&fenix, "GET", "/v1/apps", &operator, None, None).await;
    assert_eq!((old.status, error_code_or_empty(&old.body)), (401, "session_revoked"));

    // A customer's session is not swapped for another app's, or another access, without asking.
    for (app, access) in [(&globex, "manage"), (&acme, "read")] {
        let other = mint(&fenix, app, json!({ "access": access })).await;
        let out = exchange_beside(&fenix, &portal, None, json!({"link": secret_of(&other)})).await;
        assert_eq!((out.status, error_code_or_empty(&out.body)), (409, "session_exists"), "{app} {access}");
        assert_eq!(used_at(&fenix, app, &other).await, Value::Null);
    }
    // The same app with the same access changes nothing the person sees: no question, and
    // the session it replaces ends.
    let fresh = mint(&fenix, &acme, json!({"access": "manage"})).await;
    let out = exchange_beside(&fenix, &portal, None, json!({"link": secret_of(&fresh)})).await;
    assert_eq!(out.status, 204, "{:?}", out.body);
    assert_eq!(session(&fenix, &out.cookie()).await.status, 200);
    assert_eq!(error_code_or_empty(&session(&fenix, &portal).await.body), "session_revoked");
    // A cookie whose session is over holds nothing to keep.
    let globex_link = mint(&fenix, &globex, json!({"access": "read"})).await;
    let out = exchange_beside(&fenix, &operator, None, json!({"link": secret_of(&globex_link)})).await;
    assert_eq!(out.status, 204, "{:?}", out.body);
    // Nor is a used or unknown link a choice: it is refused as before.
    let out = exchange_beside(&fenix, &out.cookie(), None, json!({"link": secret_of(&globex_link)})).await;
    assert_eq!((out.status, error_code_or_empty(&out.body)), (410, "link_used"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_ends_the_session_it_replaces() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let portal = exchange(&fenix, &secret_of(&mint(&fenix, &app, json!({"access": "manage"})).await)).await.cookie();
    let url = format!("{}/console/api/login", fenix.base);
    let resp = reqwest::Client::new().post(url).header("cookie", &portal).json(&json!({"token": fenix.token}));
    let operator = answer(resp.send().await.unwrap()).await;
    assert_eq!(operator.status, 204);
    assert_eq!(session(&fenix, &operator.cookie()).await.body["kind"], "operator");
    let old = session(&fenix, &portal).await;
    assert_eq!(
        (old.status, error_code_or_empty(&old.body)),
        (401, "session_revoked"),
        "the portal session it replaced is over"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_https_the_cookie_is_a_host_cookie_and_every_reader_takes_that_name_only() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_PUBLIC_URL", "https://fenix.example.com")]).await;
    let app = fenix.create_app("acme").await;
    let link = mint(&fenix, &app, json!({"access": "manage"})).await;
    for made in [login(&fenix, &fenix.token).await, exchange(&fenix, &secret_of(&link)).await] {
        let set = made.set_cookie.clone().expect("a cookie");
        assert!(set.starts_with("__Host-fenix_session=fxs_"), "{set}");
        let attrs = attributes(&set);
        assert!(attrs.contains(&"secure".into()) && attrs.contains(&"path=/".into()), "{set}");
        assert!(!attrs.iter().any(|a| a.starts_with("domain")), "{set}");
        let cookie = made.cookie();
        let csrf = csrf_of(&fenix, &cookie).await;
        assert_eq!(with_cookie(&fenix, "GET", "/v1/apps", &cookie, None, None).await.status, 200);
        // The same secret under the plain name (a cookie another host or plain http could plant) is no session.
        let plain = cookie.replacen("__Host-fenix_session=", "fenix_session=", 1);
        assert_eq!(error_code_or_empty(&session(&fenix, &plain).await.body), "unauthorized");
        let out = with_cookie(&fenix, "GET", "/v1/apps", &plain, None, None).await;
        assert_eq!((out.status, error_code_or_empty(&out.body)), (401, "unauthorized"));
        let out = with_cookie(&fenix, "POST", "/console/api/logout", &cookie, Some(&csrf), None).await;
        assert_eq!(out.status, 204);
        let cleared = out.set_cookie.expect("cleared");
        assert!(cleared.starts_with("__Host-fenix_session=;") && cleared.contains("Secure"), "{cleared}");
        assert_eq!(
            error_code_or_empty(&session(&fenix, &cookie).await.body),
            "session_revoked",
            "logout read the cookie"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_of_the_console_api_may_be_cached_refusals_included() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let client = reqwest::Client::new();
    let base = &fenix.base;
    let answers = [
        client.get(format!("{base}/console/api/session")).send().await.unwrap(),
        client.get(format!("{base}/console/api/session")).header("cookie", "fenix_session=fxs_x").send().await.unwrap(),
        client.post(format!("{base}/console/api/login")).json(&json!({"token": "fxa_no"})).send().await.unwrap(),
        client
            .post(format!("{base}/console/api/portal/exchange"))
            .json(&json!({"link": "fxp_no"}))
            .send()
            .await
            .unwrap(),
        client.post(format!("{base}/console/api/login")).json(&json!({"token": fenix.token})).send().await.unwrap(),
    ];
    for resp in answers {
        let (status, cache) = (resp.status(), resp.headers().get("cache-control").cloned());
        assert_eq!(cache.as_ref().and_then(|v| v.to_str().ok()), Some("no-store"), "{status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_and_a_resume_are_recorded_as_made_by_whoever_made_them() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": "http://127.0.0.1:9/hooks"})).await;
    let ep = format!("/v1/apps/{app}/endpoints/{}", ep["id"].as_str().unwrap());
    let (status, made) =
        fenix.call("POST", "/v1/tokens", Some(json!({"name": "ci", "app": app, "access": "manage"}))).await;
    assert_eq!(status, 201, "{made}");
    let app_token = made["token"].as_str().unwrap().to_string();
    let portal = exchange(&fenix, &secret_of(&mint(&fenix, &app, json!({"access": "manage"})).await)).await.cookie();
    let portal_csrf = csrf_of(&fenix, &portal).await;
    let operator = login(&fenix, &fenix.token).await.cookie();
    let operator_csrf = csrf_of(&fenix, &operator).await;

    let reason = || async {
        let (status, body) = fenix.call("GET", &ep, None).await;
        assert_eq!(status, 200, "{body}");
        body["state_reason"].as_str().unwrap_or_default().to_string()
    };
    // Each pauses, then resumes (a pause of a paused endpoint changes nothing and records nothing).
    for who in ["an operator", "an operator's console", "an app token", "a portal customer"] {
        for (action, done) in [("pause", "paused"), ("resume", "resumed")] {
            let path = format!("{ep}/{action}");
            let status = match who {
                "an operator" => fenix.call("POST", &path, None).await.0,
                "an operator's console" => {
                    with_cookie(&fenix, "POST", &path, &operator, Some(&operator_csrf), None).await.status
                }
                "an app token" => fenix.call_as(Some(&app_token), "POST", &path, None).await.0,
                _ => with_cookie(&fenix, "POST", &path, &portal, Some(&portal_csrf), None).await.status,
            };
            assert_eq!(status, 200, "{who} {action}");
            let by = if who == "an operator's console" { "an operator" } else { who };
            assert_eq!(reason().await, format!("{done} by {by}"), "{who} {action}");
        }
    }
    let (_, changes) = fenix.call("GET", &format!("{ep}/state-changes"), None).await;
    let reasons: Vec<&str> = changes["data"].as_array().unwrap().iter().filter_map(|c| c["reason"].as_str()).collect();
    assert!(
        reasons.contains(&"paused by a portal customer") && reasons.contains(&"paused by an app token"),
        "{reasons:?}"
    );
}
