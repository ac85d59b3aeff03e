//! The admin API's behaviour a producer meets first: authentication, error
//! codes, validation of what is sent, pagination, apps addressed by uid.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::deliveries_of;
use crate::support::{error_code, fenix_cli_stdout, Backend, Fenix, Plan, Receiver, TestDb};

/// Posts raw bytes as JSON; answers status and the error code (or "").
async fn post_raw(fenix: &Fenix, path: &str, body: Vec<u8>) -> (u16, String) {
    let resp =
        fenix.request("POST", path).header("content-type", "application/json").body(body).send().await.expect("POST");
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    (status, body["error"]["code"].as_str().unwrap_or("").to_string())
}

async fn calls_without_a_valid_token_are_unauthorized(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    for token in [None, Some("fxa_wrong"), Some("")] {
        let (status, body) = fenix.call_as(token, "GET", "/v1/apps", None).await;
        assert_eq!((status, error_code(&body)), (401, "unauthorized"), "token {token:?}");
        let event = json!({"type": "booking.confirmed", "data": {}});
        let (status, body) = fenix.call_as(token, "POST", &format!("/v1/apps/{app}/events"), Some(event)).await;
        assert_eq!((status, error_code(&body)), (401, "unauthorized"), "token {token:?}");
    }
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/events"), None).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"], json!([]), "no unauthorized event was stored");
    let (status, _) = fenix.call_as(None, "GET", "/healthz", None).await;
    assert_eq!(status, 200, "health needs no token");
}

async fn unknown_resources_answer_404_with_their_own_code(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let missing_app = "app_01JZZZZZZZZZZZZZZZZZZZZZZZ";
    let cases = [
        ("GET", format!("/v1/apps/{missing_app}"), "app_not_found"),
        ("GET", "/v1/apps/no-such-uid".to_string(), "app_not_found"),
        ("GET", "/v1/apps/no-such-uid/endpoints".to_string(), "app_not_found"),
        ("GET", format!("/v1/apps/{app}/endpoints/ep_01JZZZZZZZZZZZZZZZZZZZZZZZ"), "endpoint_not_found"),
        ("GET", format!("/v1/apps/{app}/events/evt_01JZZZZZZZZZZZZZZZZZZZZZZZ"), "event_not_found"),
        ("GET", format!("/v1/apps/{app}/deliveries/dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ"), "delivery_not_found"),
        ("GET", format!("/v1/apps/{app}/deliveries/dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ/attempts"), "delivery_not_found"),
        ("POST", format!("/v1/apps/{app}/deliveries/dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ/replay"), "delivery_not_found"),
    ];
    for (method, path, expected) in cases {
        let (status, body) = fenix.call(method, &path, None).await;
        assert_eq!((status, error_code(&body)), (404, expected), "{method} {path}: {body}");
    }
    let event = json!({"type": "booking.confirmed", "data": {}});
    let (status, body) = fenix.call("POST", "/v1/apps/no-such-uid/events", Some(event)).await;
    assert_eq!((status, error_code(&body)), (404, "app_not_found"));
}

async fn another_apps_resources_are_not_found_through_this_app(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let owner = fenix.create_app("acme").await;
    let stranger = fenix.create_app("globex").await;
    let ep = fenix.create_endpoint(&owner, json!({"url": receiver.url})).await;
    let ep = ep["id"].as_str().unwrap();
    let evt = fenix.send_event(&owner, json!({"type": "booking.confirmed", "data": {"secret": "of acme"}})).await;
    let evt = evt["id"].as_str().unwrap();
    let dlv = deliveries_of(&fenix, &owner, evt).await[0]["id"].as_str().unwrap().to_string();

    let cases = [
        ("GET", format!("/v1/apps/{stranger}/endpoints/{ep}"), "endpoint_not_found"),
        ("PATCH", format!("/v1/apps/{stranger}/endpoints/{ep}"), "endpoint_not_found"),
        ("DELETE", format!("/v1/apps/{stranger}/endpoints/{ep}"), "endpoint_not_found"),
        ("POST", format!("/v1/apps/{stranger}/endpoints/{ep}/secret/rotate"), "endpoint_not_found"),
        ("GET", format!("/v1/apps/{stranger}/events/{evt}?include=payload"), "event_not_found"),
        ("GET", format!("/v1/apps/{stranger}/deliveries/{dlv}"), "delivery_not_found"),
        ("GET", format!("/v1/apps/{stranger}/deliveries/{dlv}/attempts"), "delivery_not_found"),
        ("POST", format!("/v1/apps/{stranger}/deliveries/{dlv}/replay"), "delivery_not_found"),
    ];
    for (method, path, expected) in cases {
        let body = (method == "PATCH").then(|| json!({"description": "taken over"}));
        let (status, answer) = fenix.call(method, &path, body).await;
        assert_eq!((status, error_code(&answer)), (404, expected), "{method} {path}: {answer}");
    }
    for list in ["endpoints", "events", "deliveries"] {
        let (status, answer) = fenix.call("GET", &format!("/v1/apps/{stranger}/{list}"), None).await;
        assert_eq!(status, 200);
        assert_eq!(answer["data"], json!([]), "{list} of another app leak: {answer}");
    }
    let (status, answer) =
        fenix.call("GET", &format!("/v1/apps/{stranger}/deliveries?event_id={evt}&endpoint_id={ep}"), None).await;
    assert_eq!((status, &answer["data"]), (200, &json!([])), "{answer}");
    let (status, still) = fenix.call("GET", &format!("/v1/apps/{owner}/endpoints/{ep}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(still["description"], json!(""), "the endpoint was not changed through another app");
}

async fn bad_requests_are_refused_with_a_stable_code_and_store_nothing(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let events = format!("/v1/apps/{app}/events");

    assert_eq!(
        post_raw(&fenix, &events, br#"{"type": "booking.confirmed", "data": {"#.to_vec()).await,
        (400, "malformed_json".into())
    );
    assert_eq!(post_raw(&fenix, &events, b"not json at all".to_vec()).await, (400, "malformed_json".into()));

    let blob = "a".repeat(300 * 1024);
    let huge = serde_json::to_vec(&json!({"type": "booking.confirmed", "data": {"blob": blob}})).unwrap();
    assert_eq!(post_raw(&fenix, &events, huge.clone()).await, (413, "payload_too_large".into()));
    // The same without Content-Length (chunked): the limit holds while reading.
    // (A client of its own: what happens to the connection afterwards is a test of its own.)
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = huge.chunks(16 * 1024).map(|c| Ok(c.to_vec())).collect();
    let resp = reqwest::Client::new()
        .post(format!("{}{events}", fenix.base))
        .bearer_auth(&fenix.token)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .expect("chunked POST");
    assert_eq!(resp.status(), 413);
    let body: Value = resp.json().await.expect("error JSON");
    assert_eq!(error_code(&body), "payload_too_large");

    for bad_type in ["", "has space", ".leading", "trailing.", "semi;colon"] {
        let (status, body) = fenix.call("POST", &events, Some(json!({"type": bad_type, "data": {}}))).await;
        assert_eq!((status, error_code(&body)), (422, "invalid_event_type"), "type {bad_type:?}");
    }
    let (status, _) = fenix.call("POST", &events, Some(json!({"type": "booking.confirmed", "data": [1, 2]}))).await;
    assert_eq!(status, 422, "data must be an object");
    let (status, _) = fenix.call("POST", &events, Some(json!({"data": {}}))).await;
    assert_eq!(status, 422, "type is required");

    let endpoints = format!("/v1/apps/{app}/endpoints");
    for (url, expected) in
        [("https://user:pw@example.com/x", "url_has_credentials"), ("ftp://example.com/x", "url_scheme_not_https")]
    {
        let (status, body) = fenix.call("POST", &endpoints, Some(json!({"url": url}))).await;
        assert_eq!((status, error_code(&body)), (422, expected), "url {url}: {body}");
        assert!(!body["error"]["message"].as_str().unwrap().contains("pw@"), "the message repeats the credentials");
    }

    let (_, listed) = fenix.call("GET", &events, None).await;
    assert_eq!(listed["data"], json!([]), "no refused event was stored");
    let (_, listed) = fenix.call("GET", &endpoints, None).await;
    assert_eq!(listed["data"], json!([]), "no refused endpoint was stored");
}

/// Reads one HTTP/1.1 response (headers and a Content-Length body) from `conn`;
/// None when the server closed the connection first.
async fn read_response(conn: &mut tokio::net::TcpStream) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().expect("content-length"))
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(String::from_utf8_lossy(&buf[..end + 4 + length]).into_owned());
            }
        }
        match tokio::time::timeout(Duration::from_secs(10), conn.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return None,
            Ok(Ok(n)) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => panic!("no answer within 10 s"),
        }
    }
}

async fn a_refused_chunked_body_leaves_the_connection_usable_or_says_it_closes(backend: Backend) {
    use tokio::io::AsyncWriteExt;
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let huge =
        serde_json::to_vec(&json!({"type": "booking.confirmed", "data": {"blob": "a".repeat(300 * 1024)}})).unwrap();
    let head = |extra: &str| {
        format!(
            "POST /v1/apps/{app}/events HTTP/1.1\r\nhost: fenix\r\nauthorization: Bearer {}\r\n\
             content-type: application/json\r\n{extra}\r\n",
            fenix.token
        )
    };
    let mut conn = tokio::net::TcpStream::connect(fenix.base.trim_start_matches("http://")).await.expect("connect");
    let mut request = head("transfer-encoding: chunked\r\n").into_bytes();
    for c in huge.chunks(16 * 1024) {
        request.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        request.extend_from_slice(c);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    // The server may stop reading early; what matters is its answer.
    let _ = conn.write_all(&request).await;
    let refused = read_response(&mut conn).await.expect("an answer to the oversized request");
    assert!(refused.starts_with("HTTP/1.1 413"), "{refused}");
    if refused.to_ascii_lowercase().contains("\r\nconnection: close") {
        return;
    }
    // Without `Connection: close` a client may reuse the connection for its next request.
    let small = br#"{"type":"booking.confirmed","data":{}}"#;
    let mut next = head(&format!("content-length: {}\r\n", small.len())).into_bytes();
    next.extend_from_slice(small);
    let sent = conn.write_all(&next).await;
    let answer = match sent {
        Ok(()) => read_response(&mut conn).await,
        Err(_) => None,
    };
    let answer = answer.unwrap_or_else(|| {
        panic!("the 413 did not say `Connection: close`, yet the connection was closed under the next request")
    });
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
}

/// Reads every page of `path` with `limit`; answers the ids page by page.
async fn pages(fenix: &Fenix, path: &str, limit: usize) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut url = format!("{path}{sep}limit={limit}");
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let (status, body) = fenix.call("GET", &url, None).await;
        assert_eq!(status, 200, "{url}: {body}");
        let ids: Vec<String> =
            body["data"].as_array().unwrap().iter().map(|v| v["id"].as_str().unwrap().to_string()).collect();
        assert!(ids.len() <= limit, "a page holds at most `limit` items");
        out.push(ids);
        match body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return out,
        }
        assert!(out.len() < 100, "pagination does not end");
    }
}

async fn lists_are_newest_first_and_paginate_with_a_cursor(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    // Distinct milliseconds between creations, so "newest first" has one right answer.
    let gap = || tokio::time::sleep(Duration::from_millis(3));
    let mut apps = Vec::new();
    for i in 0..5 {
        apps.push(fenix.create_app(&format!("tenant-{i}")).await);
        gap().await;
    }
    let (app, other) = (apps[0].clone(), apps[1].clone());
    let mut endpoints = Vec::new();
    for i in 0..5 {
        let ep = fenix.create_endpoint(&other, json!({"url": format!("{}/{i}", receiver.url)})).await;
        endpoints.push(ep["id"].as_str().unwrap().to_string());
        gap().await;
    }
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let mut events = Vec::new();
    for i in 0..5 {
        let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"i": i}})).await;
        events.push(evt["id"].as_str().unwrap().to_string());
        gap().await;
    }
    let mut deliveries = Vec::new();
    for evt in &events {
        deliveries.push(deliveries_of(&fenix, &app, evt).await[0]["id"].as_str().unwrap().to_string());
    }

    for (path, mut created) in [
        ("/v1/apps".to_string(), apps),
        (format!("/v1/apps/{other}/endpoints"), endpoints),
        (format!("/v1/apps/{app}/events"), events),
        (format!("/v1/apps/{app}/deliveries"), deliveries),
    ] {
        let pages = pages(&fenix, &path, 2).await;
        assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1], "{path}: {pages:?}");
        created.reverse();
        assert_eq!(pages.concat(), created, "{path} lists newest first, each item once");
    }

    let (status, body) = fenix.call("GET", "/v1/apps?limit=0", None).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = fenix.call("GET", "/v1/apps?limit=5", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"].as_array().unwrap().len(), 5);
    assert_eq!(body["next_cursor"], Value::Null, "the last page has no cursor");
}

async fn an_app_is_addressable_by_its_uid(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let id = fenix.create_app("acme-corp").await;

    let (status, by_uid) = fenix.call("GET", "/v1/apps/acme-corp", None).await;
    assert_eq!(status, 200);
    assert_eq!(by_uid["id"], id.as_str());
    assert_eq!(by_uid["uid"], "acme-corp");
    let (_, by_id) = fenix.call("GET", &format!("/v1/apps/{id}"), None).await;
    assert_eq!(by_id, by_uid);

    let evt = fenix.send_event("acme-corp", json!({"type": "booking.confirmed", "data": {}})).await;
    assert_eq!(evt["app_id"], id.as_str());
    let (status, read) =
        fenix.call("GET", &format!("/v1/apps/{id}/events/{}", evt["id"].as_str().unwrap()), None).await;
    assert_eq!(status, 200, "the event is found under the app's id: {read}");

    let (status, renamed) = fenix.call("PATCH", "/v1/apps/acme-corp", Some(json!({"name": "Acme Corporation"}))).await;
    assert_eq!((status, &renamed["name"]), (200, &json!("Acme Corporation")));
    let (status, body) = fenix.call("POST", "/v1/apps", Some(json!({"name": "again", "uid": "acme-corp"}))).await;
    assert_eq!((status, error_code(&body)), (409, "uid_taken"));
    let (status, deletion) = fenix.call("DELETE", "/v1/apps/acme-corp", None).await;
    assert_eq!((status, &deletion["kind"]), (202, &json!("delete_app")), "{deletion}");
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{id}"), None).await;
    assert_eq!((status, error_code(&body)), (404, "app_not_found"));
    // Its uid is free at once, while its rows are still being erased.
    let (status, again) = fenix.call("POST", "/v1/apps", Some(json!({"name": "again", "uid": "acme-corp"}))).await;
    assert_eq!(status, 201, "{again}");
}

async fn a_token_made_with_the_cli_works_until_it_is_revoked(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let token = fenix_cli_stdout(&db, &["token", "create", "--name", "ci-robot"]).trim().to_string();
    assert!(token.starts_with("fxa_"), "{token}");
    let (status, _) = fenix.call_as(Some(&token), "GET", "/v1/apps", None).await;
    assert_eq!(status, 200);
    let list = fenix_cli_stdout(&db, &["token", "list"]);
    assert!(!list.contains(&token), "the list never shows a token");
    let id = list.lines().find(|l| l.contains("ci-robot")).and_then(|l| l.split_whitespace().next()).expect("listed");
    assert!(fenix_cli_stdout(&db, &["token", "revoke", id]).contains("revoked"));
    crate::support::eventually("the revoked token is refused", Duration::from_secs(20), || async {
        fenix.call_as(Some(&token), "GET", "/v1/apps", None).await.0 == 401
    })
    .await;
    let (status, _) = fenix.call("GET", "/v1/apps", None).await;
    assert_eq!(status, 200, "the other tokens still work");
}

/// The served document and the router come from one registration: every
/// operation it lists is routed (never the 404 `not_found` / 405 fallbacks),
/// and needs the admin token exactly when the document says so.
async fn every_documented_operation_is_routed_and_guarded_as_documented(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let (status, doc) = fenix.call_as(None, "GET", "/openapi.json", None).await;
    assert_eq!(status, 200);
    let mut operations = 0;
    for (template, item) in doc["paths"].as_object().expect("paths") {
        // No such app: nothing a call could change exists, so none changes anything.
        let path = template
            .replace("{app}", "no-such-app")
            .replace("{ep}", "ep_01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .replace("{evt}", "evt_01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .replace("{dlv}", "dlv_01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .replace("{tok}", "tok_01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .replace("{ps}", "ps_01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .replace("{att}", "att_01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .replace("{task}", "tsk_01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .replace("{name}", "no.such.type");
        assert!(!path.contains('{'), "a path parameter this test does not know: {template}");
        for (method, op) in item.as_object().expect("path item") {
            operations += 1;
            let method = method.to_uppercase();
            let public = op["security"] == json!([]);
            let (status, body) = fenix.call_as(None, &method, &path, None).await;
            if public {
                // A public route answers without a token; under an app (its JWKS) an unknown
                // app is answered as an app without keys, so it cannot tell which apps exist.
                assert_eq!(status, 200, "{method} {template} is public: {body}");
            } else {
                assert_eq!((status, error_code(&body)), (401, "unauthorized"), "{method} {template} without a token");
            }
            let (status, body) = fenix.call(&method, &path, None).await;
            assert!(
                status != 405 && !(status == 404 && error_code(&body) == "not_found"),
                "{method} {template} is documented but not routed: {status} {body}"
            );
        }
    }
    assert!(operations > 20, "only {operations} operations in the document");
}

crate::on_both_backends!(
    a_token_made_with_the_cli_works_until_it_is_revoked,
    calls_without_a_valid_token_are_unauthorized,
    unknown_resources_answer_404_with_their_own_code,
    another_apps_resources_are_not_found_through_this_app,
    bad_requests_are_refused_with_a_stable_code_and_store_nothing,
    a_refused_chunked_body_leaves_the_connection_usable_or_says_it_closes,
    lists_are_newest_first_and_paginate_with_a_cursor,
    an_app_is_addressable_by_its_uid,
    every_documented_operation_is_routed_and_guarded_as_documented,
);
