//! Hostile and careless input: huge numbers, NUL characters, paths that are
//! not UTF-8, cursors of another list, concurrent rotations, a tenant taking
//! the operator's names, and the limits on endpoints and fan-out. Every one is
//! answered with a JSON error naming what to change, the same on both
//! backends, never a dropped connection, a 5xx or a silently wrong answer.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{signing_crate_accepts, Signed};
use crate::support::{error_code, error_message, eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// A fresh Fenix with app `acme` and one endpoint (its id in `ep`) on a loopback receiver.
struct Acme {
    _db: TestDb,
    receiver: Receiver,
    fenix: Fenix,
    app: String,
    ep: String,
}

async fn acme(backend: Backend) -> Acme {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep = ep["id"].as_str().unwrap().to_string();
    Acme { _db: db, receiver, fenix, app, ep }
}

async fn a_huge_stats_window_is_refused_naming_the_field(backend: Backend) {
    let Acme { _db, receiver: _receiver, fenix, app, ep } = acme(backend).await;
    let stats = format!("/v1/apps/{app}/endpoints/{}/stats", ep);
    for window in ["300000000y", "18446744073709551615s", "0s", "400d"] {
        let (status, body) = fenix.call("GET", &format!("{stats}?window={window}"), None).await;
        assert_eq!((status, error_code(&body)), (400, "invalid_window"), "window={window}: {body}");
        assert!(error_message(&body).contains("window"), "{body}");
    }
    let (status, body) = fenix.call("GET", &format!("{stats}?window=366d"), None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["window_seconds"], 366 * 86_400);
}

async fn huge_numbers_are_refused_naming_the_field(backend: Backend) {
    let Acme { _db, receiver: _receiver, fenix, app, ep } = acme(backend).await;
    let ep_path = format!("/v1/apps/{app}/endpoints/{}", ep);
    let huge = "99999999999999999999999";
    let bodies = [
        ("POST", format!("{ep_path}/secret/rotate"), format!(r#"{{"overlap_seconds":{huge}}}"#), "overlap_seconds"),
        (
            "POST",
            format!("{ep_path}/secret/rotate"),
            format!(r#"{{"overlap_seconds":{}}}"#, i64::MAX),
            "overlap_seconds",
        ),
        ("POST", format!("{ep_path}/secret/rotate"), r#"{"overlap_seconds":-1}"#.to_string(), "overlap_seconds"),
        ("PATCH", ep_path.clone(), format!(r#"{{"rate_limit_per_sec":{huge}}}"#), "rate_limit_per_sec"),
        ("PATCH", ep_path.clone(), format!(r#"{{"rate_limit_per_sec":{}}}"#, i64::MIN), "rate_limit_per_sec"),
        ("POST", format!("{ep_path}/replay"), r#"{"since":"99999-01-01T00:00:00Z"}"#.to_string(), "since"),
    ];
    for (method, path, body, field) in bodies {
        let resp = fenix
            .request(method, &path)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("an answer");
        let status = resp.status().as_u16();
        let answer: Value = resp.json().await.unwrap();
        assert!(status == 400 || status == 422, "{method} {path} {body}: {status} {answer}");
        assert!(error_message(&answer).contains(field), "{method} {path} {body}: {answer}");
    }
    for query in [format!("limit={huge}"), "limit=0".into(), format!("limit={}", i64::MAX)] {
        let (status, answer) = fenix.call("GET", &format!("/v1/apps?{query}"), None).await;
        assert_eq!(status, 400, "{query}: {answer}");
        assert!(error_message(&answer).contains("limit"), "{query}: {answer}");
    }
    let (status, answer) = fenix.call("GET", &format!("/v1/apps/{app}/events?since=99999-01-01T00:00:00Z"), None).await;
    assert_eq!((status, error_code(&answer)), (400, "invalid_time"), "{answer}");
    assert!(error_message(&answer).contains("since"), "{answer}");
}

async fn nul_characters_in_text_inputs_are_refused_naming_the_field(backend: Backend) {
    let Acme { _db, receiver, fenix, app, ep } = acme(backend).await;
    let ep = ep.as_str();

    let bodies = [
        ("POST", "/v1/apps".to_string(), json!({"name": "a\u{0}b"}), "invalid_name", "name"),
        ("PATCH", format!("/v1/apps/{app}"), json!({"name": "a\u{0}b"}), "invalid_name", "name"),
        ("POST", "/v1/apps".to_string(), json!({"name": "x", "uid": "a\u{0}b"}), "invalid_uid", "uid"),
        (
            "POST",
            format!("/v1/apps/{app}/endpoints"),
            json!({"url": receiver.url, "description": "a\u{0}b"}),
            "invalid_description",
            "description",
        ),
        (
            "PATCH",
            format!("/v1/apps/{app}/endpoints/{ep}"),
            json!({"description": "\u{0}"}),
            "invalid_description",
            "description",
        ),
        (
            "POST",
            format!("/v1/apps/{app}/events"),
            json!({"type": "booking.confirmed", "data": {}, "id": "key\u{0}"}),
            "invalid_idempotency_key",
            "idempotency key",
        ),
        (
            "POST",
            format!("/v1/apps/{app}/events"),
            json!({"type": "booking\u{0}", "data": {}}),
            "invalid_event_type",
            "type",
        ),
        (
            "POST",
            format!("/v1/apps/{app}/endpoints"),
            json!({"url": receiver.url, "event_types": ["a\u{0}"]}),
            "invalid_event_types",
            "event type",
        ),
    ];
    for (method, path, body, expected, field) in bodies {
        let (status, answer) = fenix.call(method, &path, Some(body.clone())).await;
        assert_eq!((status, error_code(&answer)), (422, expected), "{method} {path} {body}: {answer}");
        assert!(error_message(&answer).contains(field), "{answer}");
    }
    let queries = [
        (format!("/v1/apps/{app}/events?event_type=a%00b"), "event_type"),
        (format!("/v1/apps/{app}/events?type=%00"), "type"),
        (format!("/v1/apps/{app}/deliveries?endpoint_id=ep_%00"), "endpoint_id"),
        (format!("/v1/apps/{app}/deliveries?event_id=%00"), "event_id"),
        (format!("/v1/apps/{app}/events?cursor=evt_%00"), "cursor"),
    ];
    for (path, field) in queries {
        let (status, answer) = fenix.call("GET", &path, None).await;
        assert_eq!((status, error_code(&answer)), (400, "invalid_query"), "{path}: {answer}");
        assert!(error_message(&answer).contains(field), "{answer}");
    }
    let paths = [
        ("GET", "/v1/apps/%00".to_string(), "app"),
        ("GET", format!("/v1/apps/{app}/endpoints/ep%00"), "ep"),
        ("GET", format!("/v1/apps/{app}/events/evt_%00"), "evt"),
        ("GET", format!("/v1/apps/{app}/deliveries/%00/attempts"), "dlv"),
        ("POST", "/v1/apps/a%00b/events".to_string(), "app"),
    ];
    for (method, path, param) in paths {
        let (status, answer) = fenix.call(method, &path, Some(json!({"type": "a.b", "data": {}}))).await;
        assert_eq!((status, error_code(&answer)), (400, "invalid_path"), "{method} {path}: {answer}");
        assert!(error_message(&answer).contains(&format!("`{param}`")), "{answer}");
    }
    let (_, apps) = fenix.call("GET", "/v1/apps", None).await;
    assert_eq!(apps["data"].as_array().unwrap().len(), 1, "nothing was stored: {apps}");
    let (_, events) = fenix.call("GET", &format!("/v1/apps/{app}/events"), None).await;
    assert_eq!(events["data"], json!([]), "nothing was stored");
}

/// The payload is stored as bytes on both backends, so an escaped NUL inside
/// `data` (valid JSON) is kept and sent as it came.
async fn an_escaped_nul_inside_event_data_is_stored_and_delivered_as_sent(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let raw = br#"{"type":"note.added","data":{"text":"a\u0000b"}}"#.to_vec();
    let resp = fenix
        .request("POST", &format!("/v1/apps/{app}/events"))
        .header("content-type", "application/json")
        .body(raw)
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status().as_u16(), 202);
    let evt: Value = resp.json().await.unwrap();
    let evt = evt["id"].as_str().unwrap();
    let (status, read) = fenix.call("GET", &format!("/v1/apps/{app}/events/{evt}?include=payload"), None).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["data"]["text"], "a\u{0}b");
    eventually("the event is delivered", Duration::from_secs(20), || async { receiver.count() == 1 }).await;
    let body = &receiver.received()[0].body;
    assert!(String::from_utf8_lossy(body).contains(r#""data":{"text":"a\u0000b"}"#), "the producer's bytes");
}

async fn a_path_that_is_not_utf8_gets_the_json_error(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    for (method, path, param) in [
        ("GET", "/v1/apps/%FF".to_string(), "app"),
        ("DELETE", "/v1/apps/%C3%28".to_string(), "app"),
        ("GET", format!("/v1/apps/{app}/endpoints/%FF/stats"), "ep"),
        ("GET", format!("/v1/apps/{app}/deliveries/%FE%FF"), "dlv"),
    ] {
        let resp = fenix.request(method, &path).send().await.expect("an answer");
        assert_eq!(resp.status().as_u16(), 400, "{method} {path}");
        assert_eq!(resp.headers()["content-type"], "application/json", "{method} {path}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(error_code(&body), "invalid_path", "{body}");
        assert!(
            error_message(&body).contains(&format!("`{param}`")) && error_message(&body).contains("UTF-8"),
            "{body}"
        );
    }
}

async fn a_cursor_of_another_list_or_garbage_is_refused(backend: Backend) {
    let Acme { _db, receiver: _receiver, fenix, app, ep } = acme(backend).await;
    let ep = ep.as_str();
    let evt = fenix.send_event(&app, json!({"type": "a.b", "data": {}})).await;
    let evt = evt["id"].as_str().unwrap();
    let lowercase = evt.to_lowercase();
    for path in [
        format!("/v1/apps/{app}/deliveries?cursor={evt}"),
        format!("/v1/apps/{app}/events?cursor={ep}"),
        format!("/v1/apps/{app}/events?cursor={lowercase}"),
        format!("/v1/apps/{app}/endpoints?cursor={app}"),
        format!("/v1/apps?cursor={evt}"),
        "/v1/apps?cursor=~".to_string(),
        "/v1/apps?cursor=".to_string(),
        "/v1/apps?cursor=app_%27%20OR%201%3D1".to_string(),
    ] {
        let (status, body) = fenix.call("GET", &path, None).await;
        assert_eq!((status, error_code(&body)), (400, "invalid_cursor"), "{path}: {body}");
    }
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/events?cursor={evt}"), None).await;
    assert_eq!((status, error_code(&body)), (400, "invalid_cursor"), "a bare id is not a cursor: {body}");
}

async fn statuses_are_taken_only_as_the_api_spells_them(backend: Backend) {
    let Acme { _db, receiver: _receiver, fenix, app, ep } = acme(backend).await;
    let ep = ep.as_str();
    for status in ["scheduled", "pending", "in_flight", "succeeded", "failed", "skipped", "failing"] {
        let (answer, body) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?status={status}"), None).await;
        assert_eq!(answer, 200, "{status}: {body}");
    }
    for status in ["", "Failed", "in-flight", "dead", "active"] {
        let (answer, body) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?status={status}"), None).await;
        assert_eq!((answer, error_code(&body)), (400, "invalid_status"), "{status:?}: {body}");
        assert_eq!(
            error_message(&body),
            "status must be one of scheduled, pending, in_flight, succeeded, failed, skipped, failing"
        );
    }
    let replay = format!("/v1/apps/{app}/endpoints/{ep}/replay");
    for statuses in [json!(["failed", "failed"]), json!(["skipped"]), json!(["skipped", "failed"])] {
        let (status, body) = fenix.call("POST", &replay, Some(json!({ "statuses": statuses }))).await;
        assert_eq!((status, body["replayed"].clone()), (200, json!(0)), "{statuses}: {body}");
    }
    for statuses in [json!([]), json!(["failed", "dead"]), json!(["in_flight"]), json!(["Failed"])] {
        let (status, body) = fenix.call("POST", &replay, Some(json!({ "statuses": statuses }))).await;
        assert_eq!((status, error_code(&body)), (422, "invalid_statuses"), "{statuses}: {body}");
        assert_eq!(error_message(&body), "statuses may contain only \"failed\" and \"skipped\"");
    }
}

async fn concurrent_rotations_answer_200_and_leave_a_consistent_set_of_secrets(backend: Backend) {
    let Acme { _db, receiver, fenix, app, ep } = acme(backend).await;
    let rotate = format!("/v1/apps/{app}/endpoints/{}/secret/rotate", ep);

    let requests: Vec<_> = (0..10).map(|_| tokio::spawn(fenix.request("POST", &rotate).send())).collect();
    let mut rotated = Vec::new();
    for r in requests {
        let resp = r.await.unwrap().expect("an answer");
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap();
        match status {
            200 => rotated.push((body["version"].as_i64().unwrap(), body["secret"].as_str().unwrap().to_string())),
            409 => assert!(!error_code(&body).is_empty()),
            other => panic!("a rotation answered {other}: {body}"),
        }
    }
    rotated.sort();
    let versions: Vec<i64> = rotated.iter().map(|(v, _)| *v).collect();
    let mut distinct = versions.clone();
    distinct.dedup();
    assert_eq!(versions, distinct, "no version given twice");
    let (_, newest) = rotated.last().expect("at least one rotation").clone();

    fenix.send_event(&app, json!({"type": "a.b", "data": {}})).await;
    eventually("the event is delivered", Duration::from_secs(20), || async { receiver.count() == 1 }).await;
    let req = &receiver.received()[0];
    let signatures = req.header("x-fenix-signature").split(',').count();
    assert!((1..=6).contains(&signatures), "the current secret and at most 5 older ones sign: {signatures}");
    assert!(signing_crate_accepts(&newest, &Signed::of(req)), "the newest secret signs");
}

async fn the_operator_uid_and_app_id_shaped_uids_are_refused(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let cases = [
        ("fenix-operator", "uid_reserved"),
        ("FENIX-OPERATOR", "uid_reserved"),
        ("app_0000000000000000000FENX0P", "invalid_uid"),
        ("app_01JZZZZZZZZZZZZZZZZZZZZZZZ", "invalid_uid"),
        ("APP_anything", "invalid_uid"),
    ];
    for (uid, expected) in cases {
        let (status, body) = fenix.call("POST", "/v1/apps", Some(json!({"name": "x", "uid": uid}))).await;
        assert_eq!((status, error_code(&body)), (422, expected), "create {uid}: {body}");
        let (status, body) = fenix.call("PATCH", &format!("/v1/apps/{app}"), Some(json!({"uid": uid}))).await;
        assert_eq!((status, error_code(&body)), (422, expected), "patch {uid}: {body}");
    }
    let (_, read) = fenix.call("GET", &format!("/v1/apps/{app}"), None).await;
    assert_eq!(read["uid"], "acme", "unchanged");
}

/// With operator webhooks configured, the operator app exists under its
/// reserved uid and fixed id; no tenant can be addressed in its place.
async fn a_tenant_cannot_take_the_operator_apps_names(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let env = [("FENIX_OPERATOR_WEBHOOK_URL", receiver.url.as_str()), ("FENIX_OPERATOR_WEBHOOK_SECRET", secret)];
    let mut fenix = Fenix::start(&db, &env).await;
    let (status, operator) = fenix.call("GET", "/v1/apps/fenix-operator", None).await;
    assert_eq!(status, 200, "{operator}");
    let operator_id = operator["id"].as_str().unwrap().to_string();
    for uid in ["fenix-operator", operator_id.as_str()] {
        let (status, body) = fenix.call("POST", "/v1/apps", Some(json!({"name": "tenant", "uid": uid}))).await;
        assert_eq!(status, 422, "{uid}: {body}");
    }
    fenix.restart().await;
    let (status, _) = fenix.call("GET", "/v1/apps/fenix-operator", None).await;
    assert_eq!(status, 200, "Fenix starts again with its operator app");
}

async fn an_app_cannot_have_more_endpoints_than_the_limit(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_MAX_ENDPOINTS_PER_APP", "3")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let create = format!("/v1/apps/{app}/endpoints");
    let requests: Vec<_> = (0..10)
        .map(|_| tokio::spawn(fenix.request("POST", &create).json(&json!({"url": receiver.url})).send()))
        .collect();
    let (mut created, mut refused) = (0, 0);
    for r in requests {
        let resp = r.await.unwrap().expect("an answer");
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap();
        match status {
            201 => created += 1,
            422 => {
                assert_eq!(error_code(&body), "endpoint_limit_reached");
                assert!(
                    error_message(&body).contains("FENIX_MAX_ENDPOINTS_PER_APP") && error_message(&body).contains('3')
                );
                refused += 1;
            }
            other => panic!("create answered {other}: {body}"),
        }
    }
    assert_eq!((created, refused), (3, 7));
    let (_, list) = fenix.call("GET", &create, None).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 3);
    let other = fenix.create_app("globex").await;
    fenix.create_endpoint(&other, json!({"url": receiver.url})).await;
}

async fn an_event_matching_more_endpoints_than_the_fanout_limit_is_refused(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_MAX_FANOUT_PER_EVENT", "2")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    for types in [json!(["booking.*"]), json!(["booking.*"]), json!(["booking.confirmed"]), json!(["invoice.paid"])] {
        fenix.create_endpoint(&app, json!({"url": receiver.url, "event_types": types})).await;
    }
    let (status, body) = fenix
        .call("POST", &format!("/v1/apps/{app}/events"), Some(json!({"type": "booking.confirmed", "data": {}})))
        .await;
    assert_eq!((status, error_code(&body)), (422, "fanout_limit_reached"), "{body}");
    assert!(
        error_message(&body).contains("FENIX_MAX_FANOUT_PER_EVENT") && error_message(&body).contains('3'),
        "{body}"
    );
    let (_, events) = fenix.call("GET", &format!("/v1/apps/{app}/events"), None).await;
    assert_eq!(events["data"], json!([]), "nothing was stored");

    let ok = fenix.send_event(&app, json!({"type": "booking.cancelled", "data": {}})).await;
    assert_eq!(ok["deliveries"], 2);
}

/// `forever` keeps payloads through maintenance passes (a huge retention once
/// wrapped around and purged them all on the first pass).
async fn a_retention_of_forever_keeps_payloads_through_maintenance(backend: Backend) {
    let db = TestDb::new(backend).await;
    let env = [
        ("FENIX_PAYLOAD_RETENTION", "forever"),
        ("FENIX_LOG_RETENTION", "1s"),
        ("FENIX_MAINTENANCE_INTERVAL", "200ms"),
    ];
    let fenix = Fenix::start(&db, &env).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "a.b", "data": {"keep": "me"}})).await;
    let evt = evt["id"].as_str().unwrap();
    eventually("the delivery succeeded and then left the log", Duration::from_secs(30), || async {
        receiver.count() == 1 && fenix.deliveries(&app, "").await.is_empty()
    })
    .await;
    let (status, read) = fenix.call("GET", &format!("/v1/apps/{app}/events/{evt}?include=payload"), None).await;
    assert_eq!(status, 200);
    assert_eq!(read["data"], json!({"keep": "me"}), "the payload outlived maintenance passes: {read}");
}

async fn an_idempotency_key_header_that_is_not_ascii_is_a_400_the_document_lists(backend: Backend) {
    let Acme { _db, receiver, fenix, app, ep: _ } = acme(backend).await;
    let resp = fenix
        .request("POST", &format!("/v1/apps/{app}/events"))
        .header("content-type", "application/json")
        .header("idempotency-key", reqwest::header::HeaderValue::from_bytes(b"cl\xc3\xa9").unwrap())
        .body(r#"{"type": "a.b", "data": {}}"#)
        .send()
        .await
        .expect("an answer");
    assert_eq!(resp.status().as_u16(), 400);
    let answer: Value = resp.json().await.unwrap();
    assert_eq!(error_code(&answer), "invalid_idempotency_key", "{answer}");
    assert!(error_message(&answer).contains("Idempotency-Key"), "{answer}");
    // A client generated from the document knows this answer.
    let (_, doc) = fenix.call("GET", "/openapi.json", None).await;
    let codes = &doc["components"]["schemas"]["SendEventError400"]["allOf"][1]["properties"]["error"]["properties"]
        ["code"]["enum"];
    assert!(codes.as_array().unwrap().contains(&json!("invalid_idempotency_key")), "{codes}");
    assert_eq!(receiver.count(), 0);
}

crate::on_both_backends!(
    a_huge_stats_window_is_refused_naming_the_field,
    huge_numbers_are_refused_naming_the_field,
    nul_characters_in_text_inputs_are_refused_naming_the_field,
    an_escaped_nul_inside_event_data_is_stored_and_delivered_as_sent,
    a_path_that_is_not_utf8_gets_the_json_error,
    a_cursor_of_another_list_or_garbage_is_refused,
    statuses_are_taken_only_as_the_api_spells_them,
    concurrent_rotations_answer_200_and_leave_a_consistent_set_of_secrets,
    the_operator_uid_and_app_id_shaped_uids_are_refused,
    a_tenant_cannot_take_the_operator_apps_names,
    an_app_cannot_have_more_endpoints_than_the_limit,
    an_event_matching_more_endpoints_than_the_fanout_limit_is_refused,
    a_retention_of_forever_keeps_payloads_through_maintenance,
    an_idempotency_key_header_that_is_not_ascii_is_a_400_the_document_lists,
);
