//! What a user reads and writes: limits counted the way the docs state them
//! (characters, not bytes), error messages without the framework's preamble,
//! time filters in any RFC 3339 offset, one time format (milliseconds) in the
//! API and in the envelope, and answers whose keys come in the documented order.

use std::time::Duration;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{json, Value};

use crate::support::{error_code, error_message, eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// The top-level keys of a JSON object, in the order they were written.
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                    keys.push(k);
                }
                Ok(Keys(keys))
            }
        }
        d.deserialize_map(V)
    }
}

/// Sends a request; answers the status and the raw body.
async fn raw(fenix: &Fenix, method: &str, path: &str, body: Option<Value>) -> (u16, String) {
    let mut req = fenix.request(method, path);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("an answer");
    (resp.status().as_u16(), resp.text().await.expect("a body"))
}

fn keys_of(text: &str) -> Vec<String> {
    serde_json::from_str::<Keys>(text).unwrap_or_else(|e| panic!("not a JSON object ({e}): {text}")).0
}

/// An instant (RFC 3339 from the API) moved by `ms` and written in the offset `offset_min`.
fn in_offset(api_time: &str, ms: i64, offset_min: i32) -> String {
    use time::format_description::well_known::Rfc3339;
    let t = time::OffsetDateTime::parse(api_time, &Rfc3339).expect("an API time") + time::Duration::milliseconds(ms);
    let t = t.to_offset(time::UtcOffset::from_whole_seconds(offset_min * 60).unwrap());
    let sign = if offset_min < 0 { '-' } else { '+' };
    let (h, m) = (offset_min.abs() / 60, offset_min.abs() % 60);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{sign}{h:02}:{m:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// A query value, with the `+` of an offset percent-encoded.
fn q(v: &str) -> String {
    v.replace('+', "%2B")
}

async fn limits_stated_in_characters_are_counted_in_characters(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let (e256, e257) = ("é".repeat(256), "é".repeat(257));

    let (status, app) = fenix.call("POST", "/v1/apps", Some(json!({"name": e256}))).await;
    assert_eq!(status, 201, "256 characters (512 bytes) are within the limit: {app}");
    assert_eq!(app["name"], e256.as_str());
    let (status, body) = fenix.call("POST", "/v1/apps", Some(json!({"name": e257}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_name"), "{body}");
    assert!(error_message(&body).contains("256 characters"), "{body}");
    let app = app["id"].as_str().unwrap();
    let (status, body) = fenix.call("PATCH", &format!("/v1/apps/{app}"), Some(json!({"name": e257}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_name"), "{body}");
    let (status, body) = fenix.call("PATCH", &format!("/v1/apps/{app}"), Some(json!({"name": "ü".repeat(256)}))).await;
    assert_eq!(status, 200, "{body}");

    let events = format!("/v1/apps/{app}/events");
    let (status, body) = fenix.call("POST", &events, Some(json!({"id": e256, "type": "t", "data": {}}))).await;
    assert_eq!(status, 202, "an idempotency key of 256 characters is taken: {body}");
    assert_eq!(body["idempotency_key"], e256.as_str());
    let (status, body) = fenix.call("POST", &events, Some(json!({"id": e257, "type": "t", "data": {}}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_idempotency_key"), "{body}");
    assert!(error_message(&body).contains("256 characters"), "{body}");
}

async fn a_body_error_names_the_field_without_the_frameworks_preamble(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let (status, body) = fenix.call("POST", "/v1/apps", Some(json!({"name": 5}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_body"), "{body}");
    assert_eq!(error_message(&body), "name: invalid type: integer `5`, expected a string at line 1 column 9");

    let resp = fenix
        .request("POST", "/v1/apps")
        .header("content-type", "application/json")
        .body(r#"{"name": "acme""#)
        .send()
        .await
        .expect("an answer");
    assert_eq!(resp.status().as_u16(), 400);
    let body: Value = resp.json().await.expect("a JSON error");
    assert_eq!(error_code(&body), "malformed_json", "{body}");
    assert!(error_message(&body).starts_with("the body is not valid JSON: EOF while parsing"), "{body}");
    assert!(!error_message(&body).contains("Failed to"), "{body}");
}

async fn time_filters_take_any_rfc3339_offset(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {}})).await;
    let at = evt["created_at"].as_str().unwrap();

    let events = |query: String| {
        let fenix = &fenix;
        let path = format!("/v1/apps/{app}/events?{query}");
        async move {
            let (status, body) = fenix.call("GET", &path, None).await;
            assert_eq!(status, 200, "{path}: {body}");
            body["data"].as_array().unwrap().len()
        }
    };
    // The issue's example, and the event's own instant written in +01:00 (since is inclusive).
    assert_eq!(events(format!("since={}", q("2026-11-30T10:00:00+01:00"))).await, 1);
    assert_eq!(events(format!("since={}", q(&in_offset(at, 0, 60)))).await, 1, "since = the event's time in +01:00");
    assert_eq!(events(format!("since={}", q(&in_offset(at, 1, 60)))).await, 0, "since = 1 ms after it, in +01:00");
    assert_eq!(events(format!("until={}", q(&in_offset(at, 0, -330)))).await, 0, "until is exclusive, in -05:30");
    assert_eq!(events(format!("until={}", in_offset(at, 1, -330))).await, 1, "until 1 ms after it, in -05:30");
    let lower = at.replace('T', "t").replace('Z', "z");
    assert_eq!(events(format!("since={lower}")).await, 1, "lowercase t and z");

    let deliveries = fenix.deliveries(&app, &format!("since={}", q(&in_offset(at, 0, 9 * 60)))).await;
    assert_eq!(deliveries.len(), 1, "the deliveries list takes offsets too");

    let (status, body) =
        fenix.call("GET", &format!("/v1/apps/{app}/events?since={}", q("2026-11-30T10:00:00+0100")), None).await;
    assert_eq!(
        (status, error_code(&body)),
        (400, "invalid_time"),
        "an offset without its colon is not RFC 3339: {body}"
    );
}

async fn the_envelope_created_at_is_the_apis_with_milliseconds(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    eventually("the receiver got the event", Duration::from_secs(10), || async { receiver.count() == 1 }).await;
    let envelope = receiver.received()[0].json();
    assert_eq!(envelope["created_at"], evt["created_at"], "envelope {envelope} vs API {evt}");
    let at = envelope["created_at"].as_str().unwrap();
    assert!(at.len() == 24 && at.as_bytes()[19] == b'.' && at.ends_with('Z'), "milliseconds, UTC: {at}");
}

async fn answers_list_their_keys_in_the_documented_order(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep = format!("/v1/apps/{app}/endpoints/{}", ep["id"].as_str().unwrap());

    let (status, read) = raw(&fenix, "GET", &ep, None).await;
    assert_eq!(status, 200, "{read}");
    let endpoint_keys = keys_of(&read);
    assert_eq!(endpoint_keys[..2], ["id", "app_id"], "{read}");

    let (status, paused) = raw(&fenix, "POST", &format!("{ep}/pause"), None).await;
    assert_eq!((status, keys_of(&paused)), (200, endpoint_keys.clone()), "{paused}");
    let (status, resumed) = raw(&fenix, "POST", &format!("{ep}/resume"), None).await;
    let mut expected = endpoint_keys.clone();
    expected.push("replayed".into());
    assert_eq!((status, keys_of(&resumed)), (200, expected), "the endpoint's keys, then replayed: {resumed}");

    let (status, rotated) = raw(&fenix, "POST", &format!("{ep}/secret/rotate"), None).await;
    assert_eq!(
        (status, keys_of(&rotated)),
        (200, ["version", "signing_algorithm", "secret", "previous_expires_at"].map(String::from).to_vec())
    );

    let (status, stats) = raw(&fenix, "GET", &format!("{ep}/stats"), None).await;
    let documented = [
        "endpoint_id",
        "state",
        "state_reason",
        "window_seconds",
        "since",
        "attempts",
        "successes",
        "failures",
        "success_rate",
        "dead_letter",
        "skipped",
        "client_certificate_expires_at",
        "client_certificate_expires_soon",
    ];
    assert_eq!((status, keys_of(&stats)), (200, documented.map(String::from).to_vec()), "{stats}");

    let (status, changes) = raw(&fenix, "GET", &format!("{ep}/state-changes"), None).await;
    assert_eq!(status, 200, "{changes}");
    #[derive(serde::Deserialize)]
    struct KeysPage {
        data: Vec<Keys>,
    }
    let page: KeysPage = serde_json::from_str(&changes).expect("a page");
    assert_eq!(page.data[0].0, ["id", "state", "reason", "created_at"].map(String::from).to_vec(), "{changes}");
}

crate::on_both_backends!(
    limits_stated_in_characters_are_counted_in_characters,
    a_body_error_names_the_field_without_the_frameworks_preamble,
    time_filters_take_any_rfc3339_offset,
    the_envelope_created_at_is_the_apis_with_milliseconds,
    answers_list_their_keys_in_the_documented_order,
);
