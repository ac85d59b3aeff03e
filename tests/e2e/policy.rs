//! Per-endpoint policy as an owner meets it: custom headers on every attempt,
//! credential values sealed in the database and redacted in every answer,
//! refused headers with their codes; the endpoint's own retry schedule, final
//! status codes and attempt timeout; a stored spec Fenix cannot read fails
//! its endpoint alone, never read as a default.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{attempts, wait_for_status};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

const BEARER: &str = "Bearer tok-9f8e7d6c5b4a-s3cret";
const API_KEY: &str = "key-0a1b2c3d4e5f-s3cret";

/// The `headers` column of an endpoint, read straight from the database.
async fn raw_headers_column(db: &TestDb, endpoint_id: &str) -> String {
    use sqlx::Connection;
    let query = "SELECT headers FROM endpoints WHERE id = $1";
    match db.backend {
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await.expect("open SQLite");
            sqlx::query_scalar(query).bind(endpoint_id).fetch_one(&mut conn).await.expect("headers column")
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            sqlx::query_scalar(query).bind(endpoint_id).fetch_one(&mut conn).await.expect("headers column")
        }
    }
}

/// Overwrites an endpoint's `headers` column (as someone with write access to the database could).
async fn set_headers_column(db: &TestDb, endpoint_id: &str, column: &str) {
    set_text_column(db, endpoint_id, "headers", column).await;
}

/// Overwrites one text column of an endpoint's row, straight in the database.
async fn set_text_column(db: &TestDb, endpoint_id: &str, name: &str, column: &str) {
    use sqlx::Connection;
    let query = format!("UPDATE endpoints SET {name} = $2 WHERE id = $1");
    let query = query.as_str();
    match db.backend {
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await.expect("open SQLite");
            sqlx::query(query).bind(endpoint_id).bind(column).execute(&mut conn).await.expect("update");
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            sqlx::query(query).bind(endpoint_id).bind(column).execute(&mut conn).await.expect("update");
        }
    }
}

fn assert_redacted(what: &str, ep: &Value) {
    assert_eq!(ep["headers"]["X-Tenant"], "acme", "{what}: {ep}");
    assert_eq!(ep["headers"]["Authorization"], "[redacted]", "{what}: {ep}");
    assert_eq!(ep["headers"]["X-Api-Key"], "[redacted]", "{what}: {ep}");
    assert_eq!(ep["sensitive_headers"], json!(["X-Api-Key"]), "{what}: {ep}");
    let text = ep.to_string();
    assert!(!text.contains("s3cret"), "{what} shows a credential: {text}");
}

async fn custom_headers_reach_every_attempt_and_credentials_are_sealed_and_redacted(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|n| if n == 0 { Plan::status(500) } else { Plan::ok() }).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix
        .create_endpoint(
            &app,
            json!({
                "url": receiver.url,
                "headers": {"X-Tenant": "acme", "Authorization": BEARER, "X-Api-Key": API_KEY},
                "sensitive_headers": ["X-Api-Key"],
            }),
        )
        .await;
    assert_redacted("the create answer", &ep);
    let ep_id = ep["id"].as_str().unwrap();

    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    let delivery =
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(15)).await;
    assert_eq!(delivery["attempt_count"], 2, "a failed attempt, then a success");
    let got = receiver.received();
    assert_eq!(got.len(), 2);
    for r in &got {
        assert_eq!(r.header("x-tenant"), "acme");
        assert_eq!(r.header("authorization"), BEARER);
        assert_eq!(r.header("x-api-key"), API_KEY);
        assert!(!r.header("x-fenix-signature").is_empty(), "Fenix's own headers are still sent");
    }

    // Every read redacts: the endpoint, the list.
    let (status, read) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep_id}"), None).await;
    assert_eq!(status, 200);
    assert_redacted("GET", &read);
    let (status, list) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!(status, 200);
    assert_redacted("the list", &list["data"][0]);

    // The database holds the plain header as it is and no credential in clear.
    let column = raw_headers_column(&db, ep_id).await;
    assert!(column.contains("acme"), "{column}");
    assert!(
        !column.contains("s3cret") && !column.contains("tok-9f8e"),
        "plaintext credential in the database: {column}"
    );
    assert!(!fenix.logs().contains("s3cret"), "a credential in the log");

    // A PATCH replaces the set; "[redacted]" keeps a stored credential as it is.
    let (status, patched) = fenix
        .call(
            "PATCH",
            &format!("/v1/apps/{app}/endpoints/{ep_id}"),
            Some(json!({"headers": {"X-Tenant": "beta", "Authorization": "[redacted]", "X-Api-Key": "[redacted]"}})),
        )
        .await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["headers"]["X-Tenant"], "beta");
    assert_eq!(patched["sensitive_headers"], json!(["X-Api-Key"]), "what was sensitive stays so");
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
    wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(15)).await;
    let last = receiver.received().pop().unwrap();
    assert_eq!(last.header("x-tenant"), "beta");
    assert_eq!(last.header("authorization"), BEARER);
    assert_eq!(last.header("x-api-key"), API_KEY);

    // Un-marking a sensitive header takes its value again; "[redacted]" is not one.
    let (status, out) = fenix
        .call(
            "PATCH",
            &format!("/v1/apps/{app}/endpoints/{ep_id}"),
            Some(json!({"headers": {"X-Api-Key": "[redacted]"}, "sensitive_headers": []})),
        )
        .await;
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_header_value")), "{out}");

    // `{}` removes every custom header.
    let (status, cleared) =
        fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep_id}"), Some(json!({"headers": {}}))).await;
    assert_eq!(status, 200, "{cleared}");
    assert_eq!(cleared["headers"], json!({}));
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 3}})).await;
    wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(15)).await;
    let last = receiver.received().pop().unwrap();
    assert_eq!(last.header("authorization"), "");
    assert_eq!(last.header("x-tenant"), "");
}

async fn refused_headers_answer_422_with_a_code_naming_the_header(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let many: serde_json::Map<String, Value> = (0..21).map(|i| (format!("X-H{i}"), json!("v"))).collect();
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({"X-Tenant": "acme\r\nX-Injected: 1"}), "invalid_header_value", "X-Tenant"),
        (json!({"X-Tenant": "a\nb"}), "invalid_header_value", "X-Tenant"),
        (json!({"X-Tenant": "a\u{0}b"}), "invalid_header_value", "X-Tenant"),
        // Visible ASCII, space and tab only: nothing sent as raw bytes beyond ASCII.
        (json!({"X-Tenant": "café"}), "invalid_header_value", "X-Tenant"),
        (json!({"X-Tenant": "a\u{85}b"}), "invalid_header_value", "X-Tenant"),
        // The text reads show for a hidden value, with no stored secret behind it.
        (json!({"X-Tenant": "[redacted]"}), "invalid_header_value", "X-Tenant"),
        (json!({"Authorization": "[REDACTED]"}), "invalid_header_value", "Authorization"),
        (json!({"X Bad": "v"}), "invalid_header_name", "X Bad"),
        (json!({"X-Bad\r\nX-Injected": "v"}), "invalid_header_name", "X-Bad"),
        (json!({"Connection": "close"}), "hop_by_hop_header", "Connection"),
        (json!({"Transfer-Encoding": "chunked"}), "hop_by_hop_header", "Transfer-Encoding"),
        (json!({"Proxy-Authorization": "Basic x"}), "hop_by_hop_header", "Proxy-Authorization"),
        (json!({"Upgrade": "websocket"}), "hop_by_hop_header", "Upgrade"),
        (json!({"X-Fenix-Signature": "v1=forged"}), "reserved_header", "X-Fenix-Signature"),
        (json!({"webhook-signature": "v1,forged"}), "reserved_header", "webhook-signature"),
        (json!({"Host": "evil.example"}), "reserved_header", "Host"),
        (json!({"Content-Length": "0"}), "reserved_header", "Content-Length"),
        (json!({"Content-Type": "text/plain"}), "reserved_header", "Content-Type"),
        (json!({"Idempotency-Key": "k"}), "reserved_header", "Idempotency-Key"),
        (json!({"User-Agent": "me"}), "reserved_header", "User-Agent"),
        (json!({"X-A": "1", "x-a": "2"}), "duplicate_header", "x-a"),
        (Value::Object(many), "too_many_headers", "at most 20"),
        (json!({"X-Big": "v".repeat(8 * 1024)}), "headers_too_large", "8192"),
    ];
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep_id = ep["id"].as_str().unwrap();
    for (headers, code, named) in cases {
        for (method, path) in
            [("POST", format!("/v1/apps/{app}/endpoints")), ("PATCH", format!("/v1/apps/{app}/endpoints/{ep_id}"))]
        {
            let body = if method == "POST" {
                json!({"url": receiver.url, "headers": headers})
            } else {
                json!({"headers": headers})
            };
            let (status, out) = fenix.call(method, &path, Some(body)).await;
            assert_eq!(status, 422, "{method} {headers}: {out}");
            assert_eq!(out["error"]["code"], code, "{method} {headers}: {out}");
            let message = out["error"]["message"].as_str().unwrap();
            assert!(message.contains(named), "{method}: the message names {named}: {message}");
            assert!(!message.contains("acme") && !message.contains("forged"), "the value is not echoed: {message}");
        }
    }
    let (status, out) = fenix
        .call(
            "POST",
            &format!("/v1/apps/{app}/endpoints"),
            Some(json!({"url": receiver.url, "headers": {"X-A": "1"}, "sensitive_headers": ["X-B"]})),
        )
        .await;
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_sensitive_headers")), "{out}");
    let (status, out) = fenix
        .call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep_id}"), Some(json!({"headers": {"Cookie": "[redacted]"}})))
        .await;
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_header_value")), "nothing to keep: {out}");
    // Nothing refused was stored: the endpoint is as it was created.
    let (_, read) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep_id}"), None).await;
    assert_eq!(read["headers"], json!({}));
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "no refused endpoint was created");
}

async fn a_final_status_code_fails_the_delivery_at_once(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let strict = Receiver::http(|_| Plan::status(404)).await;
    let lenient = Receiver::http(|_| Plan::status(404)).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": strict.url, "final_status_codes": [404, 400, 404]})).await;
    assert_eq!(ep["final_status_codes"], json!([400, 404]));
    let other = fenix.create_endpoint(&app, json!({"url": lenient.url})).await;
    assert_eq!(other["final_status_codes"], json!([]), "off by default");
    fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let failed_to = |id: &str| format!("endpoint_id={id}&status=failed");
    let ep_id = ep["id"].as_str().unwrap();
    let other_id = other["id"].as_str().unwrap();
    crate::support::eventually("both deliveries failed", Duration::from_secs(20), || async {
        !fenix.deliveries(&app, &failed_to(ep_id)).await.is_empty()
            && !fenix.deliveries(&app, &failed_to(other_id)).await.is_empty()
    })
    .await;
    let d = fenix.deliveries(&app, &failed_to(ep_id)).await.remove(0);
    assert_eq!(d["attempt_count"], 1, "a final status is not retried: {d}");
    assert_eq!(strict.count(), 1);
    let d = fenix.deliveries(&app, &failed_to(other_id)).await.remove(0);
    assert_eq!(d["attempt_count"], 5, "without it, the whole global schedule: {d}");

    for bad in [json!([500]), json!([408]), json!([429]), json!([410]), json!([200])] {
        let (status, out) = fenix
            .call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep_id}"), Some(json!({"final_status_codes": bad})))
            .await;
        assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_final_status_codes")), "{bad}: {out}");
    }
}

async fn an_endpoints_own_schedule_replaces_the_global_one(backend: Backend) {
    let db = TestDb::new(backend).await;
    // The global schedule would wait an hour after the first failure.
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1h")]).await;
    let receiver = Receiver::http(|_| Plan::status(503)).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "retry_schedule": ["100ms", "300ms"]})).await;
    assert_eq!(ep["retry_schedule"], json!(["100ms", "300ms"]));
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery = wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "failed", Duration::from_secs(20)).await;
    assert_eq!(delivery["attempt_count"], 3, "two waits, three attempts: {delivery}");
    let got = receiver.received();
    assert_eq!(got.len(), 3);
    assert!(got[1].at - got[0].at >= Duration::from_millis(100), "the first wait is the endpoint's");
    assert!(got[2].at - got[1].at >= Duration::from_millis(300), "the second wait is the endpoint's");

    let ep_id = ep["id"].as_str().unwrap();
    let path = format!("/v1/apps/{app}/endpoints/{ep_id}");
    let (status, out) = fenix.call("PATCH", &path, Some(json!({"retry_schedule": ["1s", "forever"]}))).await;
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_retry_schedule")), "{out}");
    let too_many: Vec<&str> = vec!["1s"; 21];
    let (status, out) = fenix.call("PATCH", &path, Some(json!({"retry_schedule": too_many}))).await;
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_retry_schedule")), "{out}");
    // null goes back to the global schedule: the next failure waits an hour.
    let (status, out) = fenix.call("PATCH", &path, Some(json!({"retry_schedule": null}))).await;
    assert_eq!((status, &out["retry_schedule"]), (200, &Value::Null), "{out}");
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
    let evt_id = evt["id"].as_str().unwrap();
    crate::support::eventually("the first attempt failed", Duration::from_secs(15), || async {
        fenix.deliveries(&app, &format!("event_id={evt_id}")).await[0]["attempt_count"] == 1
    })
    .await;
    let d = fenix.deliveries(&app, &format!("event_id={evt_id}")).await.remove(0);
    assert_eq!(d["status"], "pending", "{d}");
    let retry_in = chrono_ms(&d["next_attempt_at"]) - chrono_ms(&d["last_attempt_at"]);
    assert!(retry_in > 30 * 60 * 1000, "the global one-hour wait: {d}");
}

/// Milliseconds of an RFC 3339 time in an answer.
fn chrono_ms(v: &Value) -> i64 {
    let t = humantime::parse_rfc3339(v.as_str().expect("a time")).expect("RFC 3339");
    t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

async fn an_endpoints_own_attempt_timeout_cuts_a_slow_answer(backend: Backend) {
    let db = TestDb::new(backend).await;
    // The global timeout (2 s in the harness) would wait for the answer.
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok().after(Duration::from_millis(1500))).await;
    let app = fenix.create_app("acme").await;
    let (status, out) = fenix
        .call("POST", &format!("/v1/apps/{app}/endpoints"), Some(json!({"url": receiver.url, "attempt_timeout": "3s"})))
        .await;
    assert_eq!((status, out["error"]["code"].as_str()), (422, Some("invalid_attempt_timeout")), "{out}");
    assert!(out["error"]["message"].as_str().unwrap().contains("FENIX_ATTEMPT_TIMEOUT"), "{out}");
    let ep = fenix
        .create_endpoint(&app, json!({"url": receiver.url, "attempt_timeout": "300ms", "retry_schedule": []}))
        .await;
    assert_eq!(ep["attempt_timeout"], "300ms");
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery = wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "failed", Duration::from_secs(15)).await;
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 1, "an empty schedule: one attempt");
    assert_eq!(logged[0]["error"], "timeout", "{logged:?}");
    assert!(logged[0]["error_detail"].as_str().unwrap().contains("300ms"), "{logged:?}");

    // Back to the global timeout: the same answer now arrives in time.
    let ep_id = ep["id"].as_str().unwrap();
    let (status, out) =
        fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep_id}"), Some(json!({"attempt_timeout": null}))).await;
    assert_eq!((status, &out["attempt_timeout"]), (200, &Value::Null), "{out}");
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 2}})).await;
    wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(15)).await;
}

async fn a_sealed_header_that_does_not_open_stops_the_attempt_instead_of_sending_without_it(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let first = Receiver::http(|_| Plan::ok()).await;
    let second = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let body = |url: &str, token: &str| json!({"url": url, "headers": {"Authorization": token}, "retry_schedule": []});
    let ep1 = fenix.create_endpoint(&app, body(&first.url, "Bearer first-s3cret")).await;
    let ep2 = fenix.create_endpoint(&app, body(&second.url, "Bearer second-s3cret")).await;
    let (ep1_id, ep2_id) = (ep1["id"].as_str().unwrap(), ep2["id"].as_str().unwrap());
    // The second endpoint's sealed value copied onto the first: bound to its
    // endpoint, it does not open there.
    set_headers_column(&db, ep1_id, &raw_headers_column(&db, ep2_id).await).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    let evt_id = evt["id"].as_str().unwrap();

    let query = format!("event_id={evt_id}&endpoint_id={ep1_id}&status=failed");
    crate::support::eventually("the first endpoint's delivery failed", Duration::from_secs(15), || async {
        !fenix.deliveries(&app, &query).await.is_empty()
    })
    .await;
    let d = fenix.deliveries(&app, &query).await.remove(0);
    let logged = attempts(&fenix, &app, d["id"].as_str().unwrap()).await;
    assert_eq!(logged[0]["error"], "sealed_header", "{logged:?}");
    assert_eq!(first.count(), 0, "nothing was sent without its credential");
    // The second endpoint is untouched.
    let query = format!("event_id={evt_id}&endpoint_id={ep2_id}&status=succeeded");
    crate::support::eventually("the second endpoint's delivery succeeded", Duration::from_secs(15), || async {
        !fenix.deliveries(&app, &query).await.is_empty()
    })
    .await;
    assert_eq!(second.received()[0].header("authorization"), "Bearer second-s3cret");
    assert!(!fenix.logs().contains("s3cret"), "a credential in the log");
}

async fn an_unreadable_stored_spec_fails_its_endpoint_alone_and_is_never_read_as_a_default(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let first = Receiver::http(|_| Plan::ok()).await;
    let second = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let body = |url: &str| json!({"url": url, "headers": {"Authorization": BEARER}});
    let ep1 = fenix.create_endpoint(&app, body(&first.url)).await;
    let ep2 = fenix.create_endpoint(&app, body(&second.url)).await;
    let (ep1_id, ep2_id) = (ep1["id"].as_str().unwrap(), ep2["id"].as_str().unwrap());
    // A scheme this Fenix does not know (written by a newer one, or by hand).
    set_text_column(&db, ep1_id, "signature_scheme", "xyz").await;

    let (status, out) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep1_id}"), None).await;
    assert_eq!((status, out["error"]["code"].as_str()), (500, Some("internal_error")), "{out}");
    assert!(!out.to_string().contains("s3cret"), "{out}");
    let (status, out) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep2_id}"), None).await;
    assert_eq!(status, 200, "the other endpoint reads as before: {out}");

    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    let evt_id = evt["id"].as_str().unwrap();
    let failed = format!("event_id={evt_id}&endpoint_id={ep1_id}&status=failed");
    crate::support::eventually("the unreadable endpoint's delivery failed", Duration::from_secs(15), || async {
        !fenix.deliveries(&app, &failed).await.is_empty()
    })
    .await;
    let sent = format!("event_id={evt_id}&endpoint_id={ep2_id}&status=succeeded");
    crate::support::eventually("the other endpoint's delivery succeeded", Duration::from_secs(15), || async {
        !fenix.deliveries(&app, &sent).await.is_empty()
    })
    .await;
    assert_eq!(first.count(), 0, "nothing was sent under a scheme its owner did not choose");
    assert_eq!(second.count(), 1);
    let logs = fenix.logs();
    assert!(logs.contains(&format!("endpoint {ep1_id}: stored signature_scheme")), "the log names the endpoint");
    assert!(!logs.contains("s3cret"), "a credential in the log");
}

crate::on_both_backends!(
    custom_headers_reach_every_attempt_and_credentials_are_sealed_and_redacted,
    refused_headers_answer_422_with_a_code_naming_the_header,
    a_final_status_code_fails_the_delivery_at_once,
    an_endpoints_own_schedule_replaces_the_global_one,
    an_endpoints_own_attempt_timeout_cuts_a_slow_answer,
    a_sealed_header_that_does_not_open_stops_the_attempt_instead_of_sending_without_it,
    an_unreadable_stored_spec_fails_its_endpoint_alone_and_is_never_read_as_a_default,
);
