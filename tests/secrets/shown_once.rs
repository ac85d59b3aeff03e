//! A secret is shown to its owner in exactly two responses, the one that
//! creates the endpoint and the one that rotates its secret, and is found
//! nowhere else: not in any other API answer, not in the debug log, not in the
//! database (SQLite file and WAL bytes, every PostgreSQL row). Owner-supplied
//! secrets that do not qualify are refused without being echoed.

use std::time::Duration;

use base64::{engine::general_purpose::STANDARD, Engine};
use serde_json::{json, Value};

use super::{
    common::{random_bytes, random_secret, rotate, send, succeeded_delivery},
    support::{Backend, Fenix, Plan, Receiver, TestDb},
};

/// The forms a secret could leak in: the whole string, its base64 part, the
/// key bytes, and the hex of each.
fn needles(secret: &str) -> Vec<Vec<u8>> {
    let b64 = secret.strip_prefix("whsec_").unwrap_or(secret);
    let mut out = vec![secret.as_bytes().to_vec(), b64.as_bytes().to_vec()];
    if let Ok(key) = STANDARD.decode(b64) {
        if key.len() >= 16 {
            out.push(hex::encode(&key).into_bytes());
            out.push(key);
        }
    }
    out.push(hex::encode(secret).into_bytes());
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Panics if any form of any secret occurs in `haystack`.
fn assert_absent(what: &str, haystack: &[u8], secrets: &[String]) {
    for secret in secrets {
        for needle in needles(secret) {
            assert!(
                !contains(haystack, &needle),
                "{what} contains (a form of) the secret {}…",
                &secret[..10.min(secret.len())]
            );
        }
    }
}

/// Every row of every table of a PostgreSQL database, as text.
async fn postgres_rows(url: &str) -> String {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
    let tables: Vec<String> = sqlx::query_scalar("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'")
        .fetch_all(&mut conn)
        .await
        .expect("tables");
    assert!(tables.iter().any(|t| t == "endpoint_secrets"), "tables: {tables:?}");
    let mut all = String::new();
    for table in tables {
        let rows: Vec<String> = sqlx::query_scalar(&format!("SELECT CAST(t AS text) FROM \"{table}\" t"))
            .fetch_all(&mut conn)
            .await
            .expect("rows");
        for row in rows {
            all.push_str(&row);
            all.push('\n');
        }
    }
    all
}

/// The raw bytes of the SQLite database and its write-ahead log.
fn sqlite_bytes(db: &TestDb) -> Vec<u8> {
    let mut bytes = std::fs::read(db.path("fenix.db")).expect("database file");
    bytes.extend(std::fs::read(db.path("fenix.db-wal")).unwrap_or_default());
    bytes
}

/// A raw request; answers status and body text (whatever the status).
async fn raw(fenix: &Fenix, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut req = fenix.request(method, path);
    if let Some(b) = body {
        req = req.header("content-type", "application/json").body(b.to_string());
    }
    let resp = req.send().await.expect("request");
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

async fn a_secret_is_shown_only_when_it_is_created_or_rotated(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let mut responses: Vec<(String, String)> = Vec::new();
    let mut shown: Vec<(String, String)> = Vec::new();

    // Secrets made by Fenix and supplied by the owner, on create and on rotate.
    let (status, created) = raw(
        &fenix,
        "POST",
        &format!("/v1/apps/{app}/endpoints"),
        Some(&json!({"url": receiver.url, "description": "generated"}).to_string()),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let ep1: Value = serde_json::from_str(&created).unwrap();
    let ep1_id = ep1["id"].as_str().unwrap().to_string();
    let generated = ep1["secret"].as_str().unwrap().to_string();
    shown.push(("create".into(), created.clone()));

    let supplied = random_secret(32);
    let (status, created2) = raw(
        &fenix,
        "POST",
        &format!("/v1/apps/{app}/endpoints"),
        Some(&json!({"url": receiver.url, "signature_scheme": "standard-webhooks", "secret": supplied}).to_string()),
    )
    .await;
    assert_eq!(status, 201, "{created2}");
    let ep2: Value = serde_json::from_str(&created2).unwrap();
    let ep2_id = ep2["id"].as_str().unwrap().to_string();
    assert_eq!(ep2["secret"], supplied.as_str(), "a supplied secret is the endpoint's secret");
    shown.push(("create with a supplied secret".into(), created2.clone()));

    let rotated = rotate(&fenix, &app, &ep1_id, json!({"overlap_seconds": 3600})).await;
    let generated2 = rotated["secret"].as_str().unwrap().to_string();
    shown.push(("rotate".into(), rotated.to_string()));
    let supplied2 = random_secret(48);
    let rotated2 = rotate(&fenix, &app, &ep2_id, json!({"secret": supplied2})).await;
    assert_eq!(rotated2["secret"], supplied2.as_str());
    shown.push(("rotate with a supplied secret".into(), rotated2.to_string()));

    // Secrets that are refused, and secrets inside requests that fail for other reasons.
    let short = format!("whsec_{}", STANDARD.encode(random_bytes(16)));
    let unused = random_secret(32);
    for body in [
        json!({"url": receiver.url, "secret": short}).to_string(),
        json!({"url": receiver.url, "secret": unused, "colour": "blue"}).to_string(),
        json!({"url": "ftp://example.com/hook", "secret": unused}).to_string(),
        format!(r#"{{"url": "{}", "secret": "{unused}",}}"#, receiver.url),
    ] {
        let (status, out) = raw(&fenix, "POST", &format!("/v1/apps/{app}/endpoints"), Some(&body)).await;
        assert!((400..500).contains(&status), "refused: {status} {out}");
        responses.push(("a refused create".into(), out));
    }
    for body in [json!({"secret": short}), json!({"secret": unused, "overlap_seconds": -1})] {
        let (status, out) =
            raw(&fenix, "POST", &format!("/v1/apps/{app}/endpoints/{ep1_id}/secret/rotate"), Some(&body.to_string()))
                .await;
        assert!((400..500).contains(&status), "refused rotate: {status} {out}");
        responses.push(("a refused rotate".into(), out));
    }

    // Traffic, so the worker signs and logs (at debug).
    let e1 = send(&fenix, &app, 1).await;
    let (status, out) = raw(
        &fenix,
        "POST",
        &format!("/v1/apps/{app}/events"),
        Some(&json!({"type": "booking.confirmed", "data": {"n": 2}, "id": "order-2"}).to_string()),
    )
    .await;
    assert_eq!(status, 202, "{out}");
    responses.push(("ingest".into(), out));
    for ep in [&ep1_id, &ep2_id] {
        succeeded_delivery(&fenix, &app, &e1, ep).await;
    }
    crate::support::eventually("4 deliveries succeeded", Duration::from_secs(15), || async {
        fenix.deliveries(&app, "status=succeeded").await.len() == 4
    })
    .await;

    // Every read and list the API has, and the state-changing calls that answer an endpoint.
    let deliveries = fenix.deliveries(&app, "").await;
    let dlv = deliveries[0]["id"].as_str().unwrap().to_string();
    let mut paths = vec![
        ("GET", "/healthz".to_string(), None),
        ("GET", "/metrics".to_string(), None),
        ("GET", "/openapi.json".to_string(), None),
        ("GET", "/v1/apps".to_string(), None),
        ("GET", format!("/v1/apps/{app}"), None),
        ("GET", "/v1/apps/acme".to_string(), None),
        ("PATCH", format!("/v1/apps/{app}"), Some(json!({"name": "Acme"}).to_string())),
        ("GET", format!("/v1/apps/{app}/endpoints"), None),
        ("GET", format!("/v1/apps/{app}/endpoints?limit=1"), None),
        ("GET", format!("/v1/apps/{app}/events"), None),
        ("GET", format!("/v1/apps/{app}/events?include=payload"), None),
        ("GET", format!("/v1/apps/{app}/events/{e1}"), None),
        ("GET", format!("/v1/apps/{app}/events/{e1}?include=payload"), None),
        ("GET", format!("/v1/apps/{app}/deliveries"), None),
        ("GET", format!("/v1/apps/{app}/deliveries/{dlv}"), None),
        ("GET", format!("/v1/apps/{app}/deliveries/{dlv}/attempts"), None),
        ("POST", format!("/v1/apps/{app}/deliveries/{dlv}/replay"), None),
    ];
    for ep in [&ep1_id, &ep2_id] {
        paths.extend([
            ("GET", format!("/v1/apps/{app}/endpoints/{ep}"), None),
            ("GET", format!("/v1/apps/{app}/endpoints/{ep}/stats"), None),
            ("GET", format!("/v1/apps/{app}/endpoints/{ep}/state-changes"), None),
            ("PATCH", format!("/v1/apps/{app}/endpoints/{ep}"), Some(json!({"description": "patched"}).to_string())),
            ("POST", format!("/v1/apps/{app}/endpoints/{ep}/pause"), None),
            ("POST", format!("/v1/apps/{app}/endpoints/{ep}/resume"), Some("{}".to_string())),
            (
                "POST",
                format!("/v1/apps/{app}/endpoints/{ep}/replay"),
                Some(json!({"statuses": ["failed"]}).to_string()),
            ),
            ("GET", format!("/v1/apps/{app}/deliveries?endpoint_id={ep}"), None),
        ]);
    }
    for (method, path, body) in paths {
        let (status, out) = raw(&fenix, method, &path, body.as_deref()).await;
        assert!(status < 500, "{method} {path}: {status} {out}");
        responses.push((format!("{method} {path}"), out));
    }
    let (status, unauthorized) = fenix.call_as(None, "GET", &format!("/v1/apps/{app}/endpoints/{ep1_id}"), None).await;
    assert_eq!(status, 401);
    responses.push(("unauthorized".into(), unauthorized.to_string()));

    let secrets = vec![generated.clone(), generated2.clone(), supplied.clone(), supplied2.clone(), short, unused];

    // Shown exactly where it belongs.
    let expected_shown = [&generated, &supplied, &generated2, &supplied2];
    for ((what, body), secret) in shown.iter().zip(expected_shown) {
        assert!(body.contains(secret.as_str()), "the {what} response shows the secret");
    }
    for ((what, body), own) in shown.iter().zip(expected_shown) {
        let others: Vec<String> = secrets.iter().filter(|s| *s != own).cloned().collect();
        assert_absent(&format!("the {what} response (other secrets)"), body.as_bytes(), &others);
    }
    // Nowhere else.
    let everything: String = responses.iter().map(|(_, body)| body.as_str()).collect();
    assert!(everything.contains(&ep1_id) && everything.contains(&e1), "the reads answered the endpoint and event");
    for (what, body) in &responses {
        assert_absent(what, body.as_bytes(), &secrets);
    }
    // (Each search first finds something it must find, so a search that cannot see is noticed.)
    let logs = fenix.logs();
    assert!(logs.contains("DEBUG") && logs.contains(&ep1_id), "the log ran at debug level and names the endpoint");
    assert_absent("the debug log", logs.as_bytes(), &secrets);
    let stored = match backend {
        Backend::Sqlite => sqlite_bytes(&db),
        Backend::Postgres => postgres_rows(&db.url).await.into_bytes(),
    };
    assert!(contains(&stored, ep2_id.as_bytes()), "the database holds the endpoints");
    assert_absent("the database", &stored, &secrets);

    // Once stopped (the WAL checkpointed into the file), still nothing.
    let mut fenix = fenix;
    fenix.terminate().await;
    assert_absent("the debug log", fenix.logs().as_bytes(), &secrets);
    if backend == Backend::Sqlite {
        let stored = sqlite_bytes(&db);
        assert!(contains(&stored, ep2_id.as_bytes()), "the database holds the endpoints");
        assert_absent("the SQLite database after shutdown", &stored, &secrets);
    }
}

async fn a_supplied_secret_that_does_not_qualify_is_refused_with_invalid_secret(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep_id = ep["id"].as_str().unwrap();
    let original = ep["secret"].as_str().unwrap().to_string();

    let bad = [
        ("too short", format!("whsec_{}", STANDARD.encode(random_bytes(16)))),
        ("one byte short of 24", format!("whsec_{}", STANDARD.encode(random_bytes(23)))),
        ("not base64", format!("whsec_{}!", "not-base64-at-all_".repeat(3))),
        ("no whsec_ prefix", STANDARD.encode(random_bytes(32))),
        ("another platform's prefix", format!("sk_live_{}", STANDARD.encode(random_bytes(32)))),
        ("empty after the prefix", "whsec_".to_string()),
        ("empty", String::new()),
    ];
    for (why, secret) in &bad {
        let (status, out) = fenix
            .call("POST", &format!("/v1/apps/{app}/endpoints"), Some(json!({"url": receiver.url, "secret": secret})))
            .await;
        assert_eq!(status, 422, "create with a secret {why}: {out}");
        assert_eq!(out["error"]["code"], "invalid_secret", "{why}: {out}");
        let message = out["error"]["message"].as_str().unwrap();
        assert!(!message.is_empty());
        if secret.len() > 6 {
            assert_absent(&format!("the message for a secret {why}"), message.as_bytes(), std::slice::from_ref(secret));
        }
        let (status, out) = fenix
            .call("POST", &format!("/v1/apps/{app}/endpoints/{ep_id}/secret/rotate"), Some(json!({"secret": secret})))
            .await;
        assert_eq!(status, 422, "rotate to a secret {why}: {out}");
        assert_eq!(out["error"]["code"], "invalid_secret", "{why}: {out}");
        if secret.len() > 6 {
            assert_absent(
                &format!("the rotate answer for a secret {why}"),
                out.to_string().as_bytes(),
                std::slice::from_ref(secret),
            );
        }
    }
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "no endpoint was created: {list}");

    // The refused rotations changed nothing: one signature, the original secret.
    let event = send(&fenix, &app, 1).await;
    let got = super::snippets::wait_for(&receiver, 1).await;
    let request = super::common::request_for(&got, &event);
    assert_eq!(super::common::signatures(request).len(), 1);
    super::common::verify(request, &[&original]).expect("still signed with the original secret");
    assert_eq!(super::common::signed_with(&fenix, &app, &event, ep_id).await, json!([1]));

    // A secret that qualifies (24 random bytes, the least allowed) is accepted and used.
    let own = format!("whsec_{}", STANDARD.encode(random_bytes(24)));
    let rotated = rotate(&fenix, &app, ep_id, json!({"secret": own, "overlap_seconds": 0})).await;
    assert_eq!(rotated["secret"], own.as_str());
    let event = send(&fenix, &app, 2).await;
    let got = super::snippets::wait_for(&receiver, 2).await;
    super::common::verify(super::common::request_for(&got, &event), &[&own]).expect("signed with the supplied secret");
}

crate::on_both_backends!(
    a_secret_is_shown_only_when_it_is_created_or_rotated,
    a_supplied_secret_that_does_not_qualify_is_refused_with_invalid_secret
);
