//! OAuth2 client credentials per endpoint (issue 31, item 3), against a token
//! server started here on loopback that checks the client's authentication
//! (HTTP Basic, the form body, or a JWT client assertion verified with the
//! public key), issues short-lived tokens and can revoke them, and a receiver
//! that accepts only the tokens currently valid. The client secret, the
//! private key and the access tokens never appear in an answer, in Fenix's
//! log or in clear in the database; a token endpoint that answers garbage or
//! too slowly fails the attempt `auth_token` while another app's endpoint
//! keeps receiving.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
    Json, Router,
};
use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde_json::{json, Value};

use super::common::{attempts, secret_of, wait_for_status};
use crate::support::{error_code, error_message, signed_v1_by, Backend, Fenix, Plan, Received, Receiver, TestDb};

const CLIENT_ID: &str = "fenix-client";
const CLIENT_SECRET: &str = "cs-5e1f0a9b8c7d-s3cret";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Method {
    Basic,
    Post,
    Jwt,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Good,
    Slow,
    Garbage,
}

struct Issuer {
    method: Method,
    /// SPKI PEM of the client's key (`Jwt`).
    public_key: Option<String>,
    url: String,
    mode: Mode,
    expires_in: u64,
    /// Tokens the receiver takes, until their expiry.
    valid: HashMap<String, Instant>,
    issued: Vec<String>,
    /// Why requests were refused (shown when a test fails).
    refusals: Vec<String>,
}

/// A token server on loopback.
struct TokenServer {
    url: String,
    issuer: Arc<Mutex<Issuer>>,
}

impl TokenServer {
    async fn start(method: Method, public_key: Option<String>) -> TokenServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/oauth/token", listener.local_addr().unwrap());
        let issuer = Arc::new(Mutex::new(Issuer {
            method,
            public_key,
            url: url.clone(),
            mode: Mode::Good,
            expires_in: 3600,
            valid: HashMap::new(),
            issued: Vec::new(),
            refusals: Vec::new(),
        }));
        let app = Router::new().route("/oauth/token", post(issue)).with_state(issuer.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        TokenServer { url, issuer }
    }

    fn issued(&self) -> Vec<String> {
        self.issuer.lock().unwrap().issued.clone()
    }

    fn refusals(&self) -> Vec<String> {
        self.issuer.lock().unwrap().refusals.clone()
    }

    fn revoke_all(&self) {
        self.issuer.lock().unwrap().valid.clear();
    }

    fn set_mode(&self, mode: Mode) {
        self.issuer.lock().unwrap().mode = mode;
    }

    fn set_expires_in(&self, seconds: u64) {
        self.issuer.lock().unwrap().expires_in = seconds;
    }

    /// Whether `token` is one the server issued and still holds valid.
    fn takes(&self, token: &str) -> bool {
        self.issuer.lock().unwrap().valid.get(token).is_some_and(|until| Instant::now() < *until)
    }
}

/// The client's authentication by its method, or why it is refused.
fn authenticate(issuer: &Issuer, headers: &HeaderMap, form: &HashMap<String, String>) -> Result<(), String> {
    if form.get("grant_type").map(String::as_str) != Some("client_credentials") {
        return Err(format!("grant_type {:?}", form.get("grant_type")));
    }
    let basic = headers.get("authorization").and_then(|v| v.to_str().ok());
    match issuer.method {
        Method::Basic => {
            let b64 = basic.and_then(|v| v.strip_prefix("Basic ")).ok_or("no Basic authorization")?;
            let pair = String::from_utf8(STANDARD.decode(b64).map_err(|e| e.to_string())?).unwrap();
            if pair != format!("{CLIENT_ID}:{CLIENT_SECRET}") || form.contains_key("client_secret") {
                return Err("wrong Basic credentials".into());
            }
        }
        Method::Post => {
            let ok = form.get("client_id").map(String::as_str) == Some(CLIENT_ID)
                && form.get("client_secret").map(String::as_str) == Some(CLIENT_SECRET);
            if !ok || basic.is_some() {
                return Err("wrong form credentials".into());
            }
        }
        Method::Jwt => {
            let kind = form.get("client_assertion_type").map(String::as_str);
            if kind != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer") || basic.is_some() {
                return Err(format!("client_assertion_type {kind:?}"));
            }
            let jwt = form.get("client_assertion").ok_or("no client_assertion")?;
            let key = jsonwebtoken::DecodingKey::from_ec_pem(issuer.public_key.as_deref().unwrap().as_bytes())
                .map_err(|e| e.to_string())?;
            let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
            validation.set_audience(&[issuer.url.as_str()]);
            validation.set_issuer(&[CLIENT_ID]);
            validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
            let claims = jsonwebtoken::decode::<Value>(jwt, &key, &validation).map_err(|e| e.to_string())?.claims;
            let lifetime = claims["exp"].as_i64().unwrap_or(0) - claims["iat"].as_i64().unwrap_or(0);
            if claims["sub"] != CLIENT_ID || claims["jti"].as_str().is_none_or(str::is_empty) || lifetime > 60 {
                return Err(format!("claims {claims}"));
            }
        }
    }
    Ok(())
}

async fn issue(State(issuer): State<Arc<Mutex<Issuer>>>, headers: HeaderMap, body: Bytes) -> Response {
    let mode = issuer.lock().unwrap().mode;
    match mode {
        Mode::Slow => tokio::time::sleep(Duration::from_secs(10)).await,
        Mode::Garbage => return (StatusCode::OK, "<html>this is no token</html>").into_response(),
        Mode::Good => {}
    }
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let mut issuer = issuer.lock().unwrap();
    if let Err(why) = authenticate(&issuer, &headers, &form) {
        issuer.refusals.push(why);
        return (StatusCode::UNAUTHORIZED, Json(json!({"error": "invalid_client"}))).into_response();
    }
    let token = format!("at-{}-{}", issuer.issued.len(), ulid::Ulid::new());
    let expires_in = issuer.expires_in;
    issuer.valid.insert(token.clone(), Instant::now() + Duration::from_secs(expires_in));
    issuer.issued.push(token.clone());
    Json(json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in})).into_response()
}

/// A receiver that accepts only a bearer token the issuer holds valid.
struct Gated {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
    refused: Arc<Mutex<usize>>,
}

impl Gated {
    async fn start(issuer: Arc<Mutex<Issuer>>) -> Gated {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let refused = Arc::new(Mutex::new(0));
        let (g, r) = (got.clone(), refused.clone());
        let app = Router::new().route(
            "/hook",
            post(move |headers: HeaderMap, body: Bytes| async move {
                let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
                let token = bearer.strip_prefix("Bearer ").unwrap_or("");
                let until = issuer.lock().unwrap().valid.get(token).copied();
                if until.is_none_or(|until| Instant::now() >= until) {
                    *r.lock().unwrap() += 1;
                    return (StatusCode::UNAUTHORIZED, String::new());
                }
                // An ownership challenge is answered by echoing it.
                let sent: Value = serde_json::from_slice(&body).unwrap_or_default();
                let echo = sent["data"]["challenge"].as_str().map(|c| json!({"challenge": c}).to_string());
                let headers = headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_ascii_lowercase(), v.to_str().unwrap_or("").to_string()))
                    .collect();
                g.lock().unwrap().push(Received {
                    method: "POST".into(),
                    path: "/hook".into(),
                    query: String::new(),
                    headers,
                    body: body.to_vec(),
                    at: Instant::now(),
                    version: "HTTP/1.1".into(),
                });
                (StatusCode::OK, echo.unwrap_or_default())
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Gated { url, got, refused }
    }

    fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    fn refused(&self) -> usize {
        *self.refused.lock().unwrap()
    }
}

fn auth_of(server: &TokenServer, method: &str) -> Value {
    json!({
        "type": "oauth2_client_credentials",
        "token_url": server.url,
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "scope": "hooks:write",
        "token_endpoint_auth_method": method,
    })
}

/// Every stored value that could hold a credential, as text (SQLite: the
/// database files' bytes; PostgreSQL: the endpoints' `auth` and the tokens).
async fn stored_text(db: &TestDb) -> String {
    use sqlx::Connection;
    let text = match db.backend {
        Backend::Sqlite => {
            let path = db.url.trim_start_matches("sqlite://").to_string();
            let mut all = Vec::new();
            for suffix in ["", "-wal"] {
                all.extend(std::fs::read(format!("{path}{suffix}")).unwrap_or_default());
            }
            String::from_utf8_lossy(&all).into_owned()
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            let auth: Vec<Option<String>> =
                sqlx::query_scalar("SELECT auth FROM endpoints").fetch_all(&mut conn).await.unwrap();
            let tokens: Vec<Vec<u8>> =
                sqlx::query_scalar("SELECT access_token_sealed FROM oauth_tokens").fetch_all(&mut conn).await.unwrap();
            let mut text = format!("{auth:?}");
            for t in tokens {
                text.push_str(&String::from_utf8_lossy(&t));
            }
            text
        }
    };
    assert!(text.contains(CLIENT_ID), "the stored auth option was read");
    text
}

/// None of `secrets` in `text` (named `what`).
fn assert_hidden(what: &str, text: &str, secrets: &[String]) {
    for s in secrets {
        assert!(!text.contains(s.as_str()), "{what} holds {s:?}");
    }
}

async fn tokens_are_shared_across_attempts_and_a_revoked_one_is_refreshed_once(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let server = TokenServer::start(Method::Basic, None).await;
    let receiver = Gated::start(server.issuer.clone()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix
        .create_endpoint(&app, json!({"url": receiver.url, "auth": auth_of(&server, "client_secret_basic")}))
        .await;
    let secret = secret_of(&ep);
    assert_eq!(ep["auth"]["client_secret_set"], true, "{ep}");
    assert_eq!(ep["auth"]["token_endpoint_auth_method"], "client_secret_basic", "{ep}");
    assert_eq!(ep["auth"]["token_url"], server.url.as_str(), "{ep}");
    let mut events = Vec::new();
    for n in 0..6 {
        events.push(fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": n}})).await);
    }
    for e in &events {
        wait_for_status(&fenix, &app, e["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    }
    assert_eq!(server.issued().len(), 1, "one token for every attempt: {:?}", server.refusals());
    let got = receiver.received();
    assert_eq!(got.len(), 6);
    assert!(got.iter().all(|r| signed_v1_by(&secret, r)), "every delivery verifies");
    assert!(got.iter().all(|r| r.header("authorization") == format!("Bearer {}", server.issued()[0])));

    // Revoked before its expiry: the receiver answers 401, Fenix fetches a
    // new token and sends again within the same attempt.
    server.revoke_all();
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 99}})).await;
    let event_id = evt["id"].as_str().unwrap();
    let delivery = wait_for_status(&fenix, &app, event_id, "succeeded", Duration::from_secs(20)).await;
    assert_eq!(server.issued().len(), 2);
    assert_eq!(receiver.refused(), 1, "one request with the revoked token");
    let tries = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(tries.len(), 1, "refreshed within the attempt: {tries:?}");
    let last = receiver.received().pop().unwrap();
    assert_eq!(last.json()["data"]["n"], 99);
    assert!(signed_v1_by(&secret, &last));

    // Another instance (here: the same database after a restart, its memory
    // gone) uses the token stored in the database: no fetch.
    let mut fenix = fenix;
    fenix.restart().await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 100}})).await;
    wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    assert_eq!(server.issued().len(), 2, "the stored token served the new instance");
    assert_eq!(receiver.refused(), 1);

    let mut hidden = server.issued();
    hidden.push(CLIENT_SECRET.to_string());
    let (_, read) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{}", ep["id"].as_str().unwrap()), None).await;
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!(read["auth"]["client_id"], CLIENT_ID, "{read}");
    for (what, text) in
        [("the create answer", ep.to_string()), ("a read", read.to_string()), ("a list", list.to_string())]
    {
        assert_hidden(what, &text, &hidden);
    }
    assert_hidden("Fenix's log", &fenix.logs(), &hidden);
    assert_hidden("the database", &stored_text(&db).await, &hidden);
}

async fn a_token_is_not_sent_past_its_expiry(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let server = TokenServer::start(Method::Basic, None).await;
    server.set_expires_in(1);
    let receiver = Gated::start(server.issuer.clone()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url, "auth": auth_of(&server, "client_secret_basic")})).await;
    for n in 0..2 {
        let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": n}})).await;
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
        let first = server.issued()[0].clone();
        // Past the first token's lifetime (1 s) before the next event.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!server.takes(&first));
    }
    assert_eq!(server.issued().len(), 2, "a fresh token after the first expired");
    assert_eq!(receiver.refused(), 0, "an expired token was never sent");
    assert_eq!(receiver.received().len(), 2);
}

async fn ownership_challenges_and_test_events_carry_the_token(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_REQUIRE_ENDPOINT_VERIFICATION", "true")]).await;
    let server = TokenServer::start(Method::Basic, None).await;
    let receiver = Gated::start(server.issuer.clone()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix
        .create_endpoint(&app, json!({"url": receiver.url, "auth": auth_of(&server, "client_secret_basic")}))
        .await;
    assert_eq!(ep["state"], "pending_verification", "{ep}");
    let ep_id = ep["id"].as_str().unwrap();
    crate::support::wait_for_state(&fenix, &app, ep_id, "active", Duration::from_secs(20)).await;
    let (status, sent) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep_id}/test"), None).await;
    assert_eq!(status, 202, "{sent}");
    let event_id = sent["event_id"].as_str().unwrap();
    wait_for_status(&fenix, &app, event_id, "succeeded", Duration::from_secs(20)).await;
    let got = receiver.received();
    assert_eq!(got.len(), 2, "the challenge and the test event, each with the token");
    assert_eq!(got[1].header("x-fenix-event-id"), event_id);
    assert_eq!(got[1].header("x-fenix-event-type"), "fenix.test");
    assert_eq!((server.issued().len(), receiver.refused()), (1, 0));
}

async fn client_secret_post_and_private_key_jwt_authenticate_as_their_methods(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;

    let post = TokenServer::start(Method::Post, None).await;
    let post_receiver = Gated::start(post.issuer.clone()).await;
    fenix.create_endpoint(&app, json!({"url": post_receiver.url, "auth": auth_of(&post, "client_secret_post")})).await;

    let pair = rcgen::KeyPair::generate().unwrap();
    let private_key = pair.serialize_pem();
    let jwt = TokenServer::start(Method::Jwt, Some(pair.public_key_pem())).await;
    let jwt_receiver = Gated::start(jwt.issuer.clone()).await;
    let auth = json!({"type": "oauth2_client_credentials", "token_url": jwt.url, "client_id": CLIENT_ID,
        "token_endpoint_auth_method": "private_key_jwt", "private_key": private_key});
    let ep = fenix.create_endpoint(&app, json!({"url": jwt_receiver.url, "auth": auth})).await;
    assert_eq!(ep["auth"]["private_key_set"], true, "{ep}");
    assert_eq!(ep["auth"]["client_secret_set"], false, "{ep}");

    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    let event_id = evt["id"].as_str().unwrap();
    let what = "both endpoints received the event";
    crate::support::eventually(what, Duration::from_secs(20), || async {
        post_receiver.received().len() == 1 && jwt_receiver.received().len() == 1
    })
    .await;
    assert_eq!((post.issued().len(), post.refusals()), (1, vec![]));
    assert_eq!((jwt.issued().len(), jwt.refusals()), (1, vec![]));
    assert_eq!(jwt_receiver.received()[0].header("x-fenix-event-id"), event_id);
    let mut hidden = post.issued();
    hidden.extend(jwt.issued());
    hidden.push(CLIENT_SECRET.into());
    let key_body: String = private_key.lines().filter(|l| !l.starts_with("-----")).collect();
    hidden.push(key_body[..40].to_string());
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_hidden("a list", &list.to_string(), &hidden);
    assert_hidden("Fenix's log", &fenix.logs(), &hidden);
    assert_hidden("the database", &stored_text(&db).await, &hidden);
}

async fn a_failing_token_endpoint_fails_the_attempt_auth_token_and_others_keep_receiving(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", &["300ms"; 16].join(","))]).await;
    let server = TokenServer::start(Method::Basic, None).await;
    let gated = Gated::start(server.issuer.clone()).await;
    let plain = Receiver::http(|_| Plan::ok()).await;
    let (app_a, app_b) = (fenix.create_app("acme").await, fenix.create_app("other").await);
    fenix.create_endpoint(&app_a, json!({"url": gated.url, "auth": auth_of(&server, "client_secret_basic")})).await;
    fenix.create_endpoint(&app_b, json!({"url": plain.url})).await;

    for (mode, detail) in [(Mode::Garbage, "not a JSON object"), (Mode::Slow, "no token within the attempt's time")] {
        server.set_mode(mode);
        let evt = fenix.send_event(&app_a, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
        let before = plain.count();
        let other = fenix.send_event(&app_b, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
        let other_id = other["id"].as_str().unwrap();
        wait_for_status(&fenix, &app_b, other_id, "succeeded", Duration::from_secs(10)).await;
        assert_eq!(plain.count(), before + 1);
        let event_id = evt["id"].as_str().unwrap().to_string();
        let what = format!("an attempt of {event_id} failed auth_token");
        crate::support::eventually(&what, Duration::from_secs(20), || async {
            let d = super::common::deliveries_of(&fenix, &app_a, &event_id).await;
            let id = d[0]["id"].as_str().unwrap().to_string();
            attempts(&fenix, &app_a, &id).await.iter().any(|a| a["error"] == "auth_token")
        })
        .await;
        let d = super::common::deliveries_of(&fenix, &app_a, &event_id).await;
        let tries = attempts(&fenix, &app_a, d[0]["id"].as_str().unwrap()).await;
        let failed = tries.iter().find(|a| a["error"] == "auth_token").unwrap();
        let text = failed["error_detail"].as_str().unwrap();
        assert!(text.contains(detail), "{text}");
        assert!(!text.contains(CLIENT_SECRET), "{text}");
        assert!(gated.received().is_empty(), "nothing reached the receiver without a token");
    }
    // Good again: the retries on the endpoint's schedule deliver.
    server.set_mode(Mode::Good);
    crate::support::eventually("the gated receiver got both", Duration::from_secs(30), || async {
        gated.received().len() == 2
    })
    .await;
    assert_hidden("Fenix's log", &fenix.logs(), &[CLIENT_SECRET.into()]);
}

/// The first `auth_token` attempt of `event_id`'s delivery to `ep`: its detail.
async fn auth_token_detail(fenix: &Fenix, app: &str, event_id: &str, ep: &str) -> String {
    let what = format!("an attempt of {event_id} to {ep} failed auth_token");
    let detail = std::sync::Mutex::new(String::new());
    crate::support::eventually(&what, Duration::from_secs(20), || async {
        let d = super::common::deliveries_of(fenix, app, event_id).await;
        let Some(d) = d.iter().find(|d| d["endpoint_id"] == ep) else { return false };
        let tries = attempts(fenix, app, d["id"].as_str().unwrap()).await;
        let failed = tries.iter().find(|a| a["error"] == "auth_token");
        *detail.lock().unwrap() = failed.map(|a| a["error_detail"].as_str().unwrap().to_string()).unwrap_or_default();
        failed.is_some()
    })
    .await;
    detail.into_inner().unwrap()
}

async fn a_refusing_or_unreachable_token_endpoint_fails_auth_token(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let server = TokenServer::start(Method::Basic, None).await;
    let receiver = Gated::start(server.issuer.clone()).await;
    let app = fenix.create_app("acme").await;
    let mut wrong = auth_of(&server, "client_secret_basic");
    wrong["client_secret"] = "wrong-0f9e8d7c-s3cret".into();
    let mut closed = auth_of(&server, "client_secret_basic");
    closed["token_url"] = format!("http://127.0.0.1:{}/token", crate::support::free_port()).into();
    let mut eps = Vec::new();
    for auth in [wrong, closed] {
        let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "auth": auth})).await;
        eps.push(ep["id"].as_str().unwrap().to_string());
    }
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    let mut details = Vec::new();
    for ep in &eps {
        details.push(auth_token_detail(&fenix, &app, evt["id"].as_str().unwrap(), ep).await);
    }
    assert_eq!(details[0], "the token endpoint answered 401 (invalid_client)");
    assert!(details[1].starts_with("the token request failed: could not connect"), "{}", details[1]);
    assert!(receiver.received().is_empty() && receiver.refused() == 0, "no request without a token");
    assert_hidden("Fenix's log", &fenix.logs(), &["wrong-0f9e8d7c-s3cret".into(), CLIENT_SECRET.into()]);
}

async fn a_bad_auth_object_is_refused_naming_the_field(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let server = TokenServer::start(Method::Basic, None).await;
    let app = fenix.create_app("acme").await;
    let create = |auth: Value| {
        let (fenix, app) = (&fenix, &app);
        async move {
            fenix
                .call(
                    "POST",
                    &format!("/v1/apps/{app}/endpoints"),
                    Some(json!({"url": "http://127.0.0.1:9/h", "auth": auth})),
                )
                .await
        }
    };
    let mut no_secret = auth_of(&server, "client_secret_post");
    no_secret.as_object_mut().unwrap().remove("client_secret");
    let mut bad_method = auth_of(&server, "client_secret_jwt");
    bad_method["client_secret"] = "another-s3cret-value".into();
    let mut refused_url = auth_of(&server, "client_secret_basic");
    refused_url["token_url"] = "https://10.0.0.1/token".into();
    let mut bad_key = auth_of(&server, "private_key_jwt");
    bad_key.as_object_mut().unwrap().remove("client_secret");
    bad_key["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".into();
    for (auth, field) in [
        (no_secret, "auth.client_secret"),
        (bad_method, "client_secret_jwt"),
        (refused_url, "auth.token_url"),
        (bad_key, "auth.private_key"),
        (json!({"type": "password"}), "auth"),
    ] {
        let (status, body) = create(auth).await;
        assert_eq!((status, error_code(&body)), (422, "invalid_auth"), "{body}");
        assert!(error_message(&body).contains(field), "{body}");
        assert!(!body.to_string().contains("s3cret"), "{body}");
    }
    assert!(server.issued().is_empty() && server.refusals().is_empty(), "no token request at creation");

    // A patch that leaves the secret out keeps it; null removes the option.
    let ep = fenix
        .create_endpoint(&app, json!({"url": "http://127.0.0.1:9/h", "auth": auth_of(&server, "client_secret_basic")}))
        .await;
    let path = format!("/v1/apps/{app}/endpoints/{}", ep["id"].as_str().unwrap());
    let mut kept = auth_of(&server, "client_secret_post");
    kept.as_object_mut().unwrap().remove("client_secret");
    let (status, body) = fenix.call("PATCH", &path, Some(json!({"auth": kept}))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["auth"]["token_endpoint_auth_method"].as_str(), body["auth"]["client_secret_set"].as_bool()),
        (Some("client_secret_post"), Some(true))
    );
    let mut moved = kept.clone();
    moved["token_url"] = "http://127.0.0.1:10/token".into();
    let (status, body) = fenix.call("PATCH", &path, Some(json!({"auth": moved}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_auth"), "a secret never follows a new token URL: {body}");
    // The bearer token is the Authorization header: never a custom one beside it.
    let (status, body) = fenix.call("PATCH", &path, Some(json!({"headers": {"Authorization": "Bearer mine"}}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_auth"), "{body}");
    assert!(error_message(&body).contains("Authorization"), "{body}");
    let (status, body) = fenix.call("PATCH", &path, Some(json!({"auth": null}))).await;
    assert_eq!((status, body["auth"].clone()), (200, Value::Null), "{body}");
    let (status, body) = fenix.call("PATCH", &path, Some(json!({"headers": {"authorization": "Bearer mine"}}))).await;
    assert_eq!(status, 200, "without auth a custom Authorization header is the owner's: {body}");
    let (status, body) =
        fenix.call("PATCH", &path, Some(json!({"auth": auth_of(&server, "client_secret_basic")}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_auth"), "{body}");
    let (status, body) = create(json!(null)).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = fenix
        .call(
            "POST",
            &format!("/v1/apps/{app}/endpoints"),
            Some(json!({"url": "http://127.0.0.1:9/h", "headers": {"AUTHORIZATION": "x"},
                        "auth": auth_of(&server, "client_secret_basic")})),
        )
        .await;
    assert_eq!((status, error_code(&body)), (422, "invalid_auth"), "{body}");
}

/// The master key that sealed the endpoint's client secret (its key id), and
/// how many access tokens are stored.
async fn sealed_state(db: &TestDb, endpoint_id: &str) -> (Vec<u8>, i64) {
    let auth = db.texts("SELECT auth FROM endpoints WHERE id = $1", &[endpoint_id]).await.remove(0);
    let tokens = db.texts("SELECT CAST(COUNT(*) AS TEXT) FROM oauth_tokens", &[]).await[0].parse().expect("a count");
    assert!(!auth.contains(CLIENT_SECRET), "a secret in clear: {auth}");
    let stored: Value = serde_json::from_str(&auth).unwrap();
    let blob = STANDARD.decode(stored["client_secret_sealed"].as_str().unwrap()).unwrap();
    (blob[1..9].to_vec(), tokens)
}

/// `fenix rekey` (`args` after it) with `current` and the previous key `previous`.
fn rekey(db: &TestDb, current: &str, previous: &str, args: &[&str]) -> String {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_fenix"));
    for (k, v) in crate::support::fenix::base_env(db) {
        cmd.env(k, v);
    }
    cmd.env("FENIX_MASTER_KEY", current).env("FENIX_PREVIOUS_MASTER_KEYS", previous).arg("rekey").args(args);
    let out = cmd.output().expect("run fenix rekey");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "fenix rekey {args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

async fn rekey_reseals_the_client_secret_and_drops_tokens_under_the_old_key(backend: Backend) {
    const KEY_A: &str = "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=";
    const KEY_B: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let db = TestDb::new(backend).await;
    let server = TokenServer::start(Method::Basic, None).await;
    let receiver = Gated::start(server.issuer.clone()).await;
    let mut fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_A)]).await;
    let app = fenix.create_app("acme").await;
    let auth = auth_of(&server, "client_secret_basic");
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "auth": auth})).await;
    let ep_id = ep["id"].as_str().unwrap().to_string();
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    let (before, tokens) = sealed_state(&db, &ep_id).await;
    assert_eq!(tokens, 1, "the token is stored for other instances");

    rekey(&db, KEY_B, KEY_A, &["--prepare"]);
    fenix.kill9();
    let out = rekey(&db, KEY_B, KEY_A, &[]);
    assert!(out.contains("OAuth2 client secrets or private keys of 1 endpoint"), "{out}");
    let (after, tokens) = sealed_state(&db, &ep_id).await;
    assert_ne!(after, before, "re-sealed under the new master key");
    assert_eq!(tokens, 0, "the token sealed under the old key is dropped");
    let again = rekey(&db, KEY_B, KEY_A, &[]);
    assert!(!again.contains("OAuth2"), "nothing left to re-seal: {again}");

    // The new master key alone opens the secret: a fresh token, a delivery.
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B)]).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
    wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(20)).await;
    assert_eq!((server.issued().len(), receiver.received().len()), (2, 2), "{:?}", server.refusals());
}

crate::on_both_backends!(
    tokens_are_shared_across_attempts_and_a_revoked_one_is_refreshed_once,
    a_token_is_not_sent_past_its_expiry,
    ownership_challenges_and_test_events_carry_the_token,
    client_secret_post_and_private_key_jwt_authenticate_as_their_methods,
    a_failing_token_endpoint_fails_the_attempt_auth_token_and_others_keep_receiving,
    a_bad_auth_object_is_refused_naming_the_field,
    a_refusing_or_unreachable_token_endpoint_fails_auth_token,
    rekey_reseals_the_client_secret_and_drops_tokens_under_the_old_key,
);
