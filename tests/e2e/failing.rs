//! A failure investigated in one call: a delivery answers its latest
//! attempt's status code and error, and `?status=failing` finds the
//! deliveries still being retried after a failed attempt (they are `pending`
//! meanwhile, so `?status=failed` cannot).

use std::time::Duration;

use serde_json::{json, Value};

use crate::on_both_backends;
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

async fn a_failing_delivery_shows_its_last_status_and_error_and_is_found_while_retries_continue(backend: Backend) {
    let db = TestDb::new(backend).await;
    // Long waits between attempts: the delivery stays pending after its first failure.
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "1h,2h")]).await;
    let down = Receiver::http(|_| Plan::status(503).with_body("down for maintenance")).await;
    let up = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": down.url})).await;
    let healthy = fenix.create_endpoint(&app, json!({"url": up.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    let event_id = evt["id"].as_str().unwrap().to_string();

    let log = format!("/v1/apps/{app}/deliveries?status=failing");
    eventually("the failed delivery is listed as failing", Duration::from_secs(20), || async {
        let (status, page) = fenix.call("GET", &log, None).await;
        status == 200 && page["data"].as_array().is_some_and(|rows| rows.len() == 1)
    })
    .await;
    let (_, page) = fenix.call("GET", &log, None).await;
    let failing = page["data"][0].clone();
    assert_eq!((failing["status"].as_str(), failing["event_id"].as_str()), (Some("pending"), Some(event_id.as_str())));

    // One call says what went wrong.
    let (status, delivery) =
        fenix.call("GET", &format!("/v1/apps/{app}/deliveries/{}", failing["id"].as_str().unwrap()), None).await;
    assert_eq!(status, 200, "{delivery}");
    assert_eq!(delivery["last_status_code"], 503, "{delivery}");
    let error = delivery["last_error"].as_str().unwrap_or_default();
    assert!(!error.is_empty(), "the last error is named: {delivery}");
    assert!(delivery["last_attempt_at"].is_string(), "{delivery}");
    assert_eq!(failing["last_status_code"], 503, "the list answers the same: {failing}");

    // `failed` finds nothing yet; the delivery that succeeded shows its 200 and no error.
    let (_, failed) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?status=failed"), None).await;
    assert_eq!(failed["data"].as_array().map(Vec::len), Some(0), "{failed}");
    // The healthy endpoint's delivery runs beside the failing one: wait for its answer.
    let succeeded =
        format!("/v1/apps/{app}/deliveries?status=succeeded&endpoint_id={}", healthy["id"].as_str().unwrap());
    eventually("the healthy delivery succeeds", Duration::from_secs(20), || async {
        let (status, page) = fenix.call("GET", &succeeded, None).await;
        status == 200 && page["data"].as_array().is_some_and(|rows| rows.len() == 1)
    })
    .await;
    let (_, ok) = fenix.call("GET", &succeeded, None).await;
    let ok = &ok["data"][0];
    assert_eq!((ok["last_status_code"].clone(), ok["last_error"].clone()), (json!(200), Value::Null), "{ok}");

    // A status outside the closed set is refused, naming `failing` among the choices.
    let (status, refused) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?status=broken"), None).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("invalid_status")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap_or_default().contains("failing"), "{refused}");
}

async fn a_delivery_not_yet_attempted_has_no_last_status_or_error(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": "http://127.0.0.1:9/hook"})).await;
    let (status, _) =
        fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{}/pause", ep["id"].as_str().unwrap()), None).await;
    assert_eq!(status, 200);
    fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {}})).await;
    let (_, page) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries"), None).await;
    let d = &page["data"][0];
    assert_eq!(
        (d["last_status_code"].clone(), d["last_error"].clone(), d["last_attempt_at"].clone()),
        (Value::Null, Value::Null, Value::Null),
        "{d}"
    );
    let (_, failing) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?status=failing"), None).await;
    assert_eq!(failing["data"].as_array().map(Vec::len), Some(0), "not attempted is not failing: {failing}");
}

on_both_backends!(
    a_failing_delivery_shows_its_last_status_and_error_and_is_found_while_retries_continue,
    a_delivery_not_yet_attempted_has_no_last_status_or_error,
);
