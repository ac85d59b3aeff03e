//! Scoped access as callers meet it: every operation of the served OpenAPI
//! document tried with an admin token, a `manage` and a `read` token of app
//! A, and no token, on app A's and app B's real resources (by id and by
//! uid); the answer must be what the operation's declared scope says. Then
//! the rest of what an app token holder notices: the app list shows their app
//! only, a `read` token changes nothing, expired and revoked tokens stop, the
//! last admin token cannot be revoked through the API, and the CLI makes app
//! tokens.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::{eventually, fenix_cli, Backend, Fenix, Plan, Receiver, TestDb};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The body of a 404 for an app that does not exist: what an app token gets
/// for any other app, so it cannot tell one from the other.
fn unknown_app() -> Value {
    json!({"error": {"code": "app_not_found", "message": "no such app"}})
}

/// The event type the walk puts in the catalogue, so `/v1/event-types/{name}` resolves.
const CATALOGUED: &str = "order.paid";

/// One app's resources, made for real so every path of the document resolves.
struct AppFixture {
    id: String,
    uid: String,
    ep: String,
    evt: String,
    dlv: String,
}

async fn app_with_resources(fenix: &Fenix, uid: &str, receiver: &Receiver) -> AppFixture {
    let id = fenix.create_app(uid).await;
    let ep = fenix.create_endpoint(&id, json!({"url": receiver.url})).await["id"].as_str().unwrap().to_string();
    let evt = fenix.send_event(&id, json!({"type": "order.paid", "data": {"n": 1}})).await;
    let evt = evt["id"].as_str().unwrap().to_string();
    let dlv = fenix.deliveries(&id, "").await[0]["id"].as_str().unwrap().to_string();
    AppFixture { id, uid: uid.to_string(), ep, evt, dlv }
}

/// Makes a token through the API as admin; answers (id, token).
async fn make_token(fenix: &Fenix, name: &str, app: Option<&str>, access: &str) -> (String, String) {
    let (status, body) =
        fenix.call("POST", "/v1/tokens", Some(json!({"name": name, "app": app, "access": access}))).await;
    assert_eq!(status, 201, "create token: {body}");
    (body["id"].as_str().unwrap().to_string(), body["token"].as_str().unwrap().to_string())
}

/// The scope the issue gives each route, written out apart from the
/// annotations, so a route annotated with the wrong scope fails here.
fn contract_scope(method: &str, path: &str) -> &'static str {
    let admin_only = path == "/metrics"
        || path.starts_with("/v1/tokens")
        || path == "/v1/settings"
        || path.contains("/portal-sessions");
    match (method, path) {
        _ if admin_only => "admin",
        ("get", "/v1/apps" | "/v1/apps/{app}") => "app:read",
        // The event-type catalogue belongs to no app: every caller reads it, admins write it.
        ("get", p) if p.starts_with("/v1/event-types") => "app:read",
        (_, "/v1/apps" | "/v1/apps/{app}") => "admin",
        ("get", p) if p.starts_with("/v1/apps/{app}/") => "app:read",
        (_, p) if p.starts_with("/v1/apps/{app}/") => "app:manage",
        _ => "admin",
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Caller {
    Admin,
    Manage,
    Read,
    Nobody,
}

#[derive(Debug, PartialEq)]
enum Expect {
    Allowed,
    Unauthorized,
    Forbidden,
    NotFound,
}

/// What the declared scope promises `caller` on an app that is A's (`Some(true)`),
/// another's (`Some(false)`), or on a route that names no app (`None`).
fn expected(caller: Caller, scope: &str, own_app: Option<bool>) -> Expect {
    match caller {
        Caller::Nobody => Expect::Unauthorized,
        Caller::Admin => Expect::Allowed,
        _ if scope == "admin" => Expect::Forbidden,
        _ if own_app == Some(false) => Expect::NotFound,
        Caller::Read if scope == "app:manage" => Expect::Forbidden,
        _ => Expect::Allowed,
    }
}

/// A valid body for each operation that takes one, so a refused call is
/// refused for its caller, not its body.
fn valid_body(operation: &str, receiver: &Receiver) -> Option<Value> {
    Some(match operation {
        "create_app" => json!({"name": "walked"}),
        "update_app" => json!({"name": "renamed"}),
        "create_endpoint" => json!({"url": receiver.url}),
        "update_endpoint" => json!({"description": "changed"}),
        "send_event" => json!({"type": "order.paid", "data": {"n": 2}}),
        "create_token" => json!({"name": "walked", "access": "admin"}),
        "create_event_type" => json!({"name": "walked.type"}),
        "update_event_type" => json!({"description": "changed"}),
        "create_task" => json!({"kind": "replay", "dry_run": true}),
        "recover_endpoint" => json!({"since": "2026-01-01T00:00:00Z"}),
        "delete_app" | "delete_endpoint" | "delete_token" | "delete_event_type" => return None,
        _ if operation.starts_with("get_") || operation.starts_with("list_") || operation == "metrics" => return None,
        _ => json!({}),
    })
}

/// Fills a path template with `app_ref` and the resources of `app`; the
/// second value says whether a made-up id had to stand in (a route this walk
/// has no real resource for: it may answer that resource's 404).
fn fill(template: &str, app_ref: &str, app: &AppFixture, tok: &str) -> (String, bool) {
    // The fixture's endpoint has no transformation, so its delivery has no
    // transformed request: that route may answer its 404 (`not_transformed`).
    let mut made_up = template.ends_with("/{dlv}/request");
    let mut out = String::new();
    for seg in template.split('/').skip(1) {
        out.push('/');
        out.push_str(match seg {
            "{app}" => app_ref,
            "{ep}" => &app.ep,
            "{evt}" => &app.evt,
            "{dlv}" => &app.dlv,
            "{tok}" => tok,
            "{name}" => CATALOGUED,
            s if s.starts_with('{') => {
                made_up = true;
                "x_01JZZZZZZZZZZZZZZZZZZZZZZZ"
            }
            s => s,
        });
    }
    (out, made_up)
}

/// What admins see of both apps: a wrongful change by another caller shows here.
async fn snapshot(fenix: &Fenix, apps: &[&AppFixture]) -> Value {
    let mut out = json!({"apps": fenix.call("GET", "/v1/apps?limit=250", None).await.1,
        "tokens": fenix.call("GET", "/v1/tokens?limit=250", None).await.1,
        "event_types": fenix.call("GET", "/v1/event-types?limit=250", None).await.1});
    for app in apps {
        let id = &app.id;
        out[id] = json!({
            "endpoints": fenix.call("GET", &format!("/v1/apps/{id}/endpoints?limit=250"), None).await.1,
            "events": fenix.call("GET", &format!("/v1/apps/{id}/events?limit=250"), None).await.1,
            "deliveries": fenix.deliveries(id, "").await,
        });
    }
    out
}

async fn every_operation_answers_each_caller_as_its_declared_scope_says(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let a = app_with_resources(&fenix, "acme", &receiver).await;
    let b = app_with_resources(&fenix, "globex", &receiver).await;
    let (_, manage) = make_token(&fenix, "a-manage", Some(&a.id), "manage").await;
    let (_, read) = make_token(&fenix, "a-read", Some("acme"), "read").await;
    let (target_tok, _) = make_token(&fenix, "walk-target", Some(&b.id), "read").await;
    let (status, body) = fenix.call("POST", "/v1/event-types", Some(json!({"name": CATALOGUED}))).await;
    assert_eq!(status, 201, "{body}");
    let token_of = |c: Caller| match c {
        Caller::Admin => Some(fenix.token.clone()),
        Caller::Manage => Some(manage.clone()),
        Caller::Read => Some(read.clone()),
        Caller::Nobody => None,
    };
    // Deliveries settle first, so the snapshots compare a log that no longer moves.
    for app in [&a, &b] {
        eventually("the fixtures' deliveries succeed", Duration::from_secs(20), || async {
            fenix.deliveries(&app.id, "").await.iter().all(|d| d["status"] == "succeeded")
        })
        .await;
    }

    let (status, doc) = fenix.call_as(None, "GET", "/openapi.json", None).await;
    assert_eq!(status, 200);
    let mut operations = vec![];
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS.into_iter().filter(|m| item.get(*m).is_some()) {
            let op = &item[method];
            if op["security"] == json!([]) {
                continue; // public: /healthz, /readyz, /openapi.json
            }
            let declared = op["security"][0]["bearer"][0].as_str().unwrap_or("none");
            assert_eq!(declared, contract_scope(method, path), "declared scope of {method} {path}");
            assert!(op["responses"]["401"].is_object(), "{method} {path} documents 401");
            if declared != "app:read" {
                assert!(op["responses"]["403"].is_object(), "{method} {path} documents 403");
            }
            operations.push((method, path.clone(), declared, op["operationId"].as_str().unwrap().to_string()));
        }
    }
    assert!(operations.len() >= 27, "{} operations", operations.len());
    // Deletions last, so what they may remove is still there for the rest.
    operations.sort_by_key(|(method, ..)| *method == "delete");

    // Each call: (caller, method, concrete path, what the scope promises, made-up id?).
    let mut calls = vec![];
    for (method, template, scope, operation) in &operations {
        for caller in [Caller::Admin, Caller::Manage, Caller::Read, Caller::Nobody] {
            if !template.contains("{app}") {
                let (path, made_up) = fill(template, "", &a, &target_tok);
                calls.push((caller, *method, path, expected(caller, scope, None), made_up, operation.clone()));
                continue;
            }
            for (app, app_ref, own) in [(&a, &a.id, true), (&a, &a.uid, true), (&b, &b.id, false), (&b, &b.uid, false)]
            {
                let (path, made_up) = fill(template, app_ref, app, &target_tok);
                calls.push((caller, *method, path, expected(caller, scope, Some(own)), made_up, operation.clone()));
            }
        }
    }

    // Refused calls first, with valid bodies: afterwards nothing has changed.
    let before = snapshot(&fenix, &[&a, &b]).await;
    let mut refused = 0;
    for (caller, method, path, expect, _, operation) in calls.iter().filter(|c| c.3 != Expect::Allowed) {
        let token = token_of(*caller);
        let (status, body) =
            fenix.call_as(token.as_deref(), &method.to_uppercase(), path, valid_body(operation, &receiver)).await;
        let what = format!("{caller:?} {method} {path} (expected {expect:?}): {status} {body}");
        match expect {
            Expect::Unauthorized => {
                assert_eq!((status, &body["error"]["code"]), (401, &json!("unauthorized")), "{what}")
            }
            Expect::Forbidden => assert_eq!((status, &body["error"]["code"]), (403, &json!("forbidden")), "{what}"),
            Expect::NotFound => assert_eq!((status, &body), (404, &unknown_app()), "{what}"),
            Expect::Allowed => unreachable!(),
        }
        refused += 1;
    }
    assert!(refused > 200, "{refused} refused calls");
    assert_eq!(snapshot(&fenix, &[&a, &b]).await, before, "a refused call changed something");
    // The 404 an app token gets for app B is the one anybody gets for an app that does not exist.
    let (status, body) = fenix.call("GET", "/v1/apps/app_01JZZZZZZZZZZZZZZZZZZZZZZZ", None).await;
    assert_eq!((status, body), (404, unknown_app()));
    let (status, body) = fenix.call_as(Some(&read), "GET", "/v1/apps/no-such-app/endpoints", None).await;
    assert_eq!((status, body), (404, unknown_app()));

    // Admitted calls: reads for real; changes with an unknown query parameter,
    // which every handler refuses before it touches anything (400
    // `invalid_query`): the call got past the scope check and changed nothing.
    for (caller, method, path, _, made_up, _) in calls.iter().filter(|c| c.3 == Expect::Allowed) {
        let token = token_of(*caller);
        let what = format!("{caller:?} {method} {path}");
        if *method == "get" {
            let (status, body) = fenix.call_as(token.as_deref(), "GET", path, None).await;
            assert!((200..300).contains(&status) || (*made_up && status == 404), "{what}: {status} {body}");
        } else {
            let path = format!("{path}?scope_walk=1");
            let (status, body) = fenix.call_as(token.as_deref(), &method.to_uppercase(), &path, Some(json!({}))).await;
            assert!(
                (200..300).contains(&status)
                    || (400..500).contains(&status) && ![401, 403, 404].contains(&status)
                    || (*made_up && status == 404),
                "{what}: {status} {body}"
            );
        }
    }
}

async fn an_app_token_lists_only_its_app_and_an_admin_every_app(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let a = fenix.create_app("acme").await;
    let b = fenix.create_app("globex").await;
    for access in ["read", "manage"] {
        let (_, token) = make_token(&fenix, "t", Some("acme"), access).await;
        let (status, body) = fenix.call_as(Some(&token), "GET", "/v1/apps", None).await;
        assert_eq!(status, 200, "{body}");
        let ids: Vec<&str> = body["data"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [a.as_str()], "{access}: {body}");
        assert_eq!(body["next_cursor"], Value::Null);
        // An admin's cursor continues an admin's list only.
        let (_, page) = fenix.call("GET", "/v1/apps?limit=1", None).await;
        let cursor = page["next_cursor"].as_str().unwrap();
        let (status, body) = fenix.call_as(Some(&token), "GET", &format!("/v1/apps?cursor={cursor}"), None).await;
        assert_eq!((status, &body["error"]["code"]), (400, &json!("invalid_cursor")), "{body}");
    }
    let (_, body) = fenix.call("GET", "/v1/apps", None).await;
    let mut ids: Vec<&str> = body["data"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
    // Two apps made in one millisecond have ids in no set order: compare the sets.
    ids.sort();
    let mut both = [a.as_str(), b.as_str()];
    both.sort();
    assert_eq!(ids, both);
}

async fn a_manage_token_runs_its_app_and_a_read_token_only_reads_it(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let (_, manage) = make_token(&fenix, "ops", Some(&app), "manage").await;
    let (_, read) = make_token(&fenix, "dashboard", Some(&app), "read").await;
    assert!(manage.starts_with("fxk_") && read.starts_with("fxk_"), "app tokens are fxk_");

    let (status, ep) =
        fenix.call_as(Some(&manage), "POST", "/v1/apps/acme/endpoints", Some(json!({"url": receiver.url}))).await;
    assert_eq!(status, 201, "{ep}");
    let (status, evt) = fenix
        .call_as(Some(&manage), "POST", "/v1/apps/acme/events", Some(json!({"type": "order.paid", "data": {}})))
        .await;
    assert_eq!(status, 202, "{evt}");
    eventually("the receiver gets the event", Duration::from_secs(20), || async { receiver.count() == 1 }).await;

    let ep = ep["id"].as_str().unwrap();
    let (status, list) = fenix.call_as(Some(&read), "GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!((status, list["data"][0]["id"].as_str()), (200, Some(ep)));
    let (status, body) =
        fenix.call_as(Some(&read), "POST", &format!("/v1/apps/{app}/endpoints/{ep}/pause"), None).await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!("forbidden")), "{body}");
    let (_, endpoint) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}"), None).await;
    assert_eq!(endpoint["state"], "active", "the refused pause changed nothing");
    // Neither kind of app token makes apps or tokens.
    for token in [&manage, &read] {
        let (status, _) = fenix.call_as(Some(token), "POST", "/v1/apps", Some(json!({"name": "mine"}))).await;
        assert_eq!(status, 403);
        let body = json!({"name": "more", "app": app, "access": "manage"});
        let (status, _) = fenix.call_as(Some(token), "POST", "/v1/tokens", Some(body)).await;
        assert_eq!(status, 403);
    }
}

async fn expired_and_revoked_tokens_are_refused(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;

    // Expiry holds even for a token the server has just verified (and cached).
    let expires = std::time::SystemTime::now() + Duration::from_millis(1500);
    let at = humantime::format_rfc3339_millis(expires).to_string();
    let body = json!({"name": "short", "app": app, "access": "read", "expires_at": at});
    let (status, made) = fenix.call("POST", "/v1/tokens", Some(body)).await;
    assert_eq!(status, 201, "{made}");
    let short = made["token"].as_str().unwrap();
    assert_eq!(fenix.call_as(Some(short), "GET", "/v1/apps/acme", None).await.0, 200);
    let wait = expires.duration_since(std::time::SystemTime::now()).unwrap_or_default();
    tokio::time::sleep(wait + Duration::from_millis(50)).await; // until the known instant of expiry
    let (status, body) = fenix.call_as(Some(short), "GET", "/v1/apps/acme", None).await;
    assert_eq!((status, &body["error"]["code"]), (401, &json!("unauthorized")), "{body}");
    let (_, list) = fenix.call("GET", "/v1/tokens", None).await;
    let listed = list["data"].as_array().unwrap().iter().find(|t| t["id"] == made["id"]).unwrap();
    assert_eq!((listed["expired"].as_bool(), listed["expires_at"].as_str()), (Some(true), made["expires_at"].as_str()));
    assert!(listed.get("token").is_none() && !list.to_string().contains(short), "no secret in the list");

    // Revoked through the API: refused at once, even just after a verified call.
    let (id, token) = make_token(&fenix, "revoked", Some(&app), "manage").await;
    assert_eq!(fenix.call_as(Some(&token), "GET", "/v1/apps/acme/endpoints", None).await.0, 200);
    assert_eq!(fenix.call("DELETE", &format!("/v1/tokens/{id}"), None).await.0, 204);
    assert_eq!(fenix.call_as(Some(&token), "GET", "/v1/apps/acme/endpoints", None).await.0, 401);
    let (status, body) = fenix.call("DELETE", &format!("/v1/tokens/{id}"), None).await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("token_not_found")));

    // Deleting the app takes its tokens with it.
    let (_, token) = make_token(&fenix, "of a gone app", Some(&app), "read").await;
    assert_eq!(fenix.call("DELETE", "/v1/apps/acme", None).await.0, 202);
    eventually("a deleted app's token stops", Duration::from_secs(20), || async {
        fenix.call_as(Some(&token), "GET", "/v1/apps", None).await.0 == 401
    })
    .await;
}

async fn token_input_is_checked_and_the_last_admin_token_stays(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    fenix.create_app("acme").await;
    for (body, status, code) in [
        (json!({"name": "x", "access": "read"}), 422, "invalid_token_scope"),
        (json!({"name": "x", "app": "acme", "access": "admin"}), 422, "invalid_token_scope"),
        (json!({"name": "x", "app": "nope", "access": "read"}), 422, "unknown_app"),
        (json!({"name": "", "app": "acme", "access": "read"}), 422, "invalid_name"),
        (json!({"name": "x", "app": "acme", "access": "write"}), 422, "invalid_body"),
        (json!({"name": "x", "app": "acme", "access": "read", "expires_at": "tomorrow"}), 422, "invalid_expires_at"),
        (
            json!({"name": "x", "app": "acme", "access": "read", "expires_at": "2001-01-01T00:00:00Z"}),
            422,
            "invalid_expires_at",
        ),
        (json!({"name": "x", "app": "acme", "access": "read", "expires_in": "soon"}), 422, "invalid_expires_in"),
        (json!({"name": "x", "app": "acme", "access": "read", "expires_in": 0}), 422, "invalid_expires_in"),
        (
            json!({"name": "x", "app": "acme", "access": "read", "expires_in": "1h", "expires_at": "2099-01-01T00:00:00Z"}),
            422,
            "invalid_expires_in",
        ),
        (json!({"name": "x", "app": "acme", "access": "read", "scope": "all"}), 400, "unknown_field"),
    ] {
        let (got, answer) = fenix.call("POST", "/v1/tokens", Some(body.clone())).await;
        assert_eq!((got, answer["error"]["code"].as_str()), (status, Some(code)), "{body}: {answer}");
    }

    // `expires_in` in the settings' syntax, or whole seconds, counts from now.
    for (expires_in, seconds) in [(json!("30d"), 30 * 86_400), (json!(90), 90)] {
        let body = json!({"name": "timed", "app": "acme", "access": "read", "expires_in": expires_in});
        let (status, made) = fenix.call("POST", "/v1/tokens", Some(body)).await;
        assert_eq!(status, 201, "{made}");
        let at = humantime::parse_rfc3339(made["expires_at"].as_str().unwrap()).unwrap();
        let left = at.duration_since(std::time::SystemTime::now()).unwrap().as_secs();
        assert!((seconds - 60..=seconds).contains(&left), "{expires_in}: {left}s left");
        let id = made["id"].as_str().unwrap();
        assert_eq!(fenix.call("DELETE", &format!("/v1/tokens/{id}"), None).await.0, 204);
    }

    // The bootstrap token is the only admin token: it cannot be revoked here.
    let (_, list) = fenix.call("GET", "/v1/tokens", None).await;
    let bootstrap = list["data"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(list["data"][0]["access"], "admin");
    let (status, body) = fenix.call("DELETE", &format!("/v1/tokens/{bootstrap}"), None).await;
    assert_eq!((status, &body["error"]["code"]), (409, &json!("last_admin_token")), "{body}");
    // With a second admin token, it can; then the second is the last.
    let (second_id, second) = make_token(&fenix, "second admin", None, "admin").await;
    assert!(second.starts_with("fxa_"));
    let (status, _) = fenix.call_as(Some(&second), "DELETE", &format!("/v1/tokens/{bootstrap}"), None).await;
    assert_eq!(status, 204);
    assert_eq!(fenix.call("GET", "/v1/apps", None).await.0, 401, "the revoked bootstrap token stops");
    let (status, body) = fenix.call_as(Some(&second), "DELETE", &format!("/v1/tokens/{second_id}"), None).await;
    assert_eq!((status, &body["error"]["code"]), (409, &json!("last_admin_token")));
}

async fn the_cli_makes_lists_and_revokes_app_tokens(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let out = fenix_cli(
        &db,
        &["token", "create", "--name", "ci", "--app", "acme", "--access", "read", "--expires-in", "30d"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(token.starts_with("fxk_"), "{token}");
    assert_eq!(fenix.call_as(Some(&token), "GET", "/v1/apps/acme", None).await.0, 200);
    let (status, _) =
        fenix.call_as(Some(&token), "POST", "/v1/apps/acme/events", Some(json!({"type": "a", "data": {}}))).await;
    assert_eq!(status, 403, "a read token sends no event");

    let out = fenix_cli(&db, &["token", "list"]);
    let listing = String::from_utf8(out.stdout).unwrap();
    let line = listing.lines().find(|l| l.contains("  ci  ")).unwrap_or_else(|| panic!("{listing}"));
    assert!(line.contains(&format!("read {app}")) && line.contains("expires 20"), "{line}");
    assert!(listing.lines().any(|l| l.contains("  admin  never expires")), "{listing}");
    assert!(!listing.contains(&token));

    for bad in [
        vec!["token", "create", "--name", "x", "--access", "read"],
        vec!["token", "create", "--name", "x", "--app", "acme"],
        vec!["token", "create", "--name", "x", "--app", "acme", "--access", "admin"],
        vec!["token", "create", "--name", "x", "--app", "nope", "--access", "read"],
        vec!["token", "create", "--name", "x", "--expires-in", "0s"],
    ] {
        let out = fenix_cli(&db, &bad);
        assert!(!out.status.success(), "{bad:?} was accepted");
        assert!(out.stdout.is_empty(), "{bad:?} printed a token");
    }

    let id = line.split_whitespace().next().unwrap();
    assert!(fenix_cli(&db, &["token", "revoke", id]).status.success());
    eventually("a token revoked by the CLI stops", Duration::from_secs(20), || async {
        fenix.call_as(Some(&token), "GET", "/v1/apps/acme", None).await.0 == 401
    })
    .await;
}

async fn a_malformed_path_is_invalid_path_for_every_caller_whatever_app_it_names(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let a = app_with_resources(&fenix, "acme", &receiver).await;
    let b = app_with_resources(&fenix, "globex", &receiver).await;
    let (_, manage) = make_token(&fenix, "a-manage", Some(&a.id), "manage").await;
    let (_, read) = make_token(&fenix, "a-read", Some(&a.id), "read").await;
    let paths = [
        ("GET", "/v1/apps/x%00/endpoints".to_string()),
        ("GET", "/v1/apps/%FF/endpoints".to_string()),
        ("GET", format!("/v1/apps/{}/events/%FF", a.id)),
        ("GET", format!("/v1/apps/{}/events/evt%00", a.uid)),
        ("GET", format!("/v1/apps/{}/endpoints/%C0%AF", a.id)),
        ("POST", format!("/v1/apps/{}/endpoints/ep%01/pause", a.id)),
        // Another app's, or none at all: the same answer, so it tells nothing about the app.
        ("GET", format!("/v1/apps/{}/events/%FF", b.id)),
        ("GET", "/v1/apps/app_01JZZZZZZZZZZZZZZZZZZZZZZZ/deliveries/%FF".to_string()),
    ];
    for (method, path) in &paths {
        for (who, token) in [("admin", fenix.token.as_str()), ("manage", manage.as_str()), ("read", read.as_str())] {
            let (status, body) = fenix.call_as(Some(token), method, path, None).await;
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (400, Some("invalid_path")),
                "{who} {method} {path}: {body}"
            );
        }
    }
    // A well-formed path of another app is still the unknown app's 404.
    let (status, body) = fenix.call_as(Some(&read), "GET", &format!("/v1/apps/{}/events/{}", b.id, b.evt), None).await;
    assert_eq!((status, body), (404, unknown_app()));
}

crate::on_both_backends!(
    every_operation_answers_each_caller_as_its_declared_scope_says,
    a_malformed_path_is_invalid_path_for_every_caller_whatever_app_it_names,
    an_app_token_lists_only_its_app_and_an_admin_every_app,
    a_manage_token_runs_its_app_and_a_read_token_only_reads_it,
    expired_and_revoked_tokens_are_refused,
    token_input_is_checked_and_the_last_admin_token_stays,
    the_cli_makes_lists_and_revokes_app_tokens,
);
