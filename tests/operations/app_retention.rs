//! Retention per app: an app's own `payload_retention` and `log_retention`
//! purge its payloads and its finished deliveries sooner than the
//! operator's, and leave every other app's alone; an app cannot keep
//! anything longer than the operator does.

use serde_json::json;

use super::common::{id_of, wait_for_delivery, PATIENCE};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

async fn an_app_with_a_shorter_payload_retention_loses_its_payloads_while_another_apps_stay(backend: Backend) {
    let db = TestDb::new(backend).await;
    // The operator's payload retention is its default, 30 days.
    let fenix = Fenix::start(&db, &[("FENIX_MAINTENANCE_INTERVAL", "200ms")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (status, brief) =
        fenix.call("POST", "/v1/apps", Some(json!({"name": "Brief", "uid": "brief", "payload_retention": "1s"}))).await;
    assert_eq!(status, 201, "{brief}");
    assert_eq!(brief["payload_retention"], "1s", "{brief}");
    assert!(brief["log_retention"].is_null(), "the operator's: {brief}");
    let brief = id_of(&brief);
    let keeper = fenix.create_app("keeper").await;
    let mut events = vec![];
    for app in [&brief, &keeper] {
        let ep = id_of(&fenix.create_endpoint(app, json!({"url": receiver.url})).await);
        let event = id_of(&fenix.send_event(app, json!({"type": "note.sent", "data": {"note": "kept?"}})).await);
        wait_for_delivery(&fenix, app, &event, &ep, "succeeded").await;
        events.push(format!("/v1/apps/{app}/events/{event}?include=payload"));
    }

    eventually("the brief app's payload is purged", PATIENCE, || async {
        fenix.call("GET", &events[0], None).await.1["payload_purged"] == true
    })
    .await;
    let (_, kept) = fenix.call("GET", &events[1], None).await;
    assert_eq!(kept["data"], json!({"note": "kept?"}), "the other app keeps its payload: {kept}");
    assert!(kept.get("payload_purged").is_none(), "{kept}");

    // Back to the operator's retention.
    let (status, patched) = fenix.call("PATCH", "/v1/apps/brief", Some(json!({"payload_retention": null}))).await;
    assert_eq!(status, 200, "{patched}");
    assert!(patched["payload_retention"].is_null(), "{patched}");
}

async fn an_app_with_a_shorter_log_retention_loses_its_finished_deliveries_while_another_apps_stay(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_LOG_RETENTION", "1h"), ("FENIX_MAINTENANCE_INTERVAL", "200ms")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let brief = fenix.create_app("brief").await;
    let (status, patched) =
        fenix.call("PATCH", &format!("/v1/apps/{brief}"), Some(json!({"log_retention": "1s"}))).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["log_retention"], "1s", "{patched}");
    let (_, listed) = fenix.call("GET", "/v1/apps", None).await;
    let shown = listed["data"].as_array().unwrap().iter().find(|a| a["id"] == brief.as_str()).cloned().unwrap();
    assert_eq!(shown["log_retention"], "1s", "the list shows it too: {shown}");
    let keeper = fenix.create_app("keeper").await;
    let mut delivered = vec![];
    for app in [&brief, &keeper] {
        let ep = id_of(&fenix.create_endpoint(app, json!({"url": receiver.url})).await);
        let event = id_of(&fenix.send_event(app, json!({"type": "note.sent", "data": {}})).await);
        let done = id_of(&wait_for_delivery(&fenix, app, &event, &ep, "succeeded").await);
        delivered.push(format!("/v1/apps/{app}/deliveries/{done}"));
    }

    eventually("the brief app's finished delivery leaves the log", PATIENCE, || async {
        fenix.call("GET", &delivered[0], None).await.0 == 404
    })
    .await;
    let (status, kept) = fenix.call("GET", &delivered[1], None).await;
    assert_eq!(status, 200, "the other app keeps its log: {kept}");
    let (status, attempts) = fenix.call("GET", &format!("{}/attempts", delivered[1]), None).await;
    assert_eq!(status, 200, "{attempts}");
    assert_eq!(attempts["data"].as_array().unwrap().len(), 1, "{attempts}");
}

async fn an_app_retention_longer_than_the_operators_is_refused(backend: Backend) {
    let db = TestDb::new(backend).await;
    // The operator's payload retention is its default, 30 days.
    let fenix = Fenix::start(&db, &[("FENIX_LOG_RETENTION", "30d")]).await;
    let body = json!({"name": "Greedy", "payload_retention": "31d"});
    let (status, refused) = fenix.call("POST", "/v1/apps", Some(body)).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["code"], "retention_too_long", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("FENIX_PAYLOAD_RETENTION"), "the message names the bound: {message}");
    let (_, apps) = fenix.call("GET", "/v1/apps", None).await;
    assert_eq!(apps["data"].as_array().unwrap().len(), 0, "nothing was created: {apps}");

    let app = fenix.create_app("modest").await;
    let path = format!("/v1/apps/{app}");
    let (status, refused) = fenix.call("PATCH", &path, Some(json!({"log_retention": "31d"}))).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["error"]["code"], "retention_too_long", "{refused}");
    for wrong in [json!("soon"), json!("0s"), json!(true)] {
        let (status, refused) = fenix.call("PATCH", &path, Some(json!({"payload_retention": wrong}))).await;
        assert_eq!(status, 422, "{wrong}: {refused}");
        assert_eq!(refused["error"]["code"], "invalid_retention", "{wrong}: {refused}");
    }
    let (status, app) =
        fenix.call("PATCH", &path, Some(json!({"log_retention": "30d", "payload_retention": "7d"}))).await;
    assert_eq!(status, 200, "the operator's own retention fits, a shorter one too: {app}");
    assert_eq!((app["payload_retention"].as_str(), app["log_retention"].as_str()), (Some("7d"), Some("30d")));
    let (_, read) = fenix.call("GET", &path, None).await;
    assert_eq!(read["payload_retention"], "7d", "{read}");
}

async fn a_scheduled_event_keeps_its_payload_past_a_shorter_app_retention_until_it_is_sent(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_MAINTENANCE_INTERVAL", "200ms")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (status, brief) =
        fenix.call("POST", "/v1/apps", Some(json!({"name": "Brief", "uid": "brief", "payload_retention": "1s"}))).await;
    assert_eq!(status, 201, "{brief}");
    let app = id_of(&brief);
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let later = json!({"type": "note.sent", "data": {"note": "later"}, "delay": "4s"});
    let event = id_of(&fenix.send_event(&app, later).await);
    // Maintenance passes run every 200 ms past the app's 1 s retention while the delivery waits.
    wait_for_delivery(&fenix, &app, &event, &ep, "succeeded").await;
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].json()["data"], json!({"note": "later"}), "the receiver got the payload");
    // Sent, it goes at the next pass.
    eventually("the payload is purged once its delivery ended", PATIENCE, || async {
        fenix.call("GET", &format!("/v1/apps/{app}/events/{event}?include=payload"), None).await.1["payload_purged"]
            == true
    })
    .await;
}

crate::on_both_backends!(
    an_app_with_a_shorter_payload_retention_loses_its_payloads_while_another_apps_stay,
    an_app_with_a_shorter_log_retention_loses_its_finished_deliveries_while_another_apps_stay,
    an_app_retention_longer_than_the_operators_is_refused,
    a_scheduled_event_keeps_its_payload_past_a_shorter_app_retention_until_it_is_sent,
);
