//! Client certificates (mTLS) and private CAs per endpoint (issue 31): real
//! TLS receivers on loopback, CAs and certificates made at test time by rcgen.
//! A receiver that requires a client certificate refuses an endpoint without
//! one (`tls`) and receives verified deliveries from one with it, also across
//! a rotation; a receiver whose server certificate comes from a private CA is
//! delivered when the endpoint names the CA (never through
//! `FENIX_EXTRA_CA_CERT`); the key never shows in an answer, the log or the
//! database.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{attempts, secret_of, wait_for_status};
use crate::support::{
    certs::{distinctive, Issued, TestCa},
    dns::TestDns,
    error_code, error_message, eventually, signed_v1_by, wait_for_state, Backend, Fenix, Plan, Received, Receiver,
    TestDb,
};

fn server_ca(receiver: &Receiver) -> String {
    std::fs::read_to_string(receiver.ca_pem_path.as_ref().expect("CA file")).expect("CA PEM")
}

async fn event(fenix: &Fenix, app: &str) -> String {
    let evt = fenix.send_event(app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;
    evt["id"].as_str().unwrap().to_string()
}

/// Every attempt of the failed delivery of `event_id` failed its handshake.
async fn fails_tls(fenix: &Fenix, app: &str, event_id: &str) {
    let delivery = wait_for_status(fenix, app, event_id, "failed", Duration::from_secs(15)).await;
    let logged = attempts(fenix, app, delivery["id"].as_str().unwrap()).await;
    assert!(!logged.is_empty());
    for a in &logged {
        assert_eq!(a["error"], "tls", "{a}");
        assert_eq!(a["response_status"], Value::Null);
    }
}

/// Everything the database holds, as bytes: the SQLite files, or a PostgreSQL dump.
fn database_bytes(db: &TestDb) -> Vec<u8> {
    match db.backend {
        Backend::Sqlite => {
            let mut bytes = std::fs::read(db.path("fenix.db")).expect("database file");
            bytes.extend(std::fs::read(db.path("fenix.db-wal")).unwrap_or_default());
            bytes
        }
        Backend::Postgres => {
            let bin = std::env::var("FENIX_TEST_PG_BIN").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin".into());
            let out = std::process::Command::new(format!("{bin}/pg_dump"))
                .arg(format!("--dbname={}", db.url))
                .output()
                .expect("pg_dump");
            assert!(out.status.success(), "pg_dump: {}", String::from_utf8_lossy(&out.stderr));
            out.stdout
        }
    }
}

const FAST: &[(&str, &str)] = &[("FENIX_RETRY_SCHEDULE", "100ms")];

async fn a_receiver_requiring_a_client_certificate_is_delivered_only_with_one(backend: Backend) {
    let db = TestDb::new(backend).await;
    let clients = TestCa::new("Acme client CA");
    let issued = clients.client("fenix.acme-client", 90);
    let receiver = Receiver::https_requiring_client_cert(db.dir.path(), &[], &clients.pem(), |_| Plan::ok()).await;
    let ca = server_ca(&receiver);
    let fenix = Fenix::start(&db, FAST).await;

    let without = fenix.create_app("without").await;
    fenix.create_endpoint(&without, json!({"url": receiver.url, "tls": {"ca_certificates": ca}})).await;
    let refused = event(&fenix, &without).await;
    fails_tls(&fenix, &without, &refused).await;
    assert_eq!(receiver.count(), 0, "no request got through the refused handshake");

    let with = fenix.create_app("with").await;
    let tls = json!({"client_certificate": issued.cert, "client_key": issued.key, "ca_certificates": ca});
    let created = fenix.create_endpoint(&with, json!({"url": receiver.url, "tls": tls})).await;
    let secret = secret_of(&created);
    let shown = &created["tls"]["client_certificate"];
    assert_eq!(shown["subject"], "CN=fenix.acme-client", "{created}");
    assert_eq!(shown["expires_soon"], false);
    let (_, health) =
        fenix.call("GET", &format!("/v1/apps/{with}/endpoints/{}/stats", created["id"].as_str().unwrap()), None).await;
    assert_eq!(health["client_certificate_expires_soon"], false, "{health}");
    assert_eq!(health["client_certificate_expires_at"], shown["not_after"]);
    assert_eq!(created["tls"]["ca_certificates"].as_array().unwrap().len(), 1);
    let delivered = event(&fenix, &with).await;
    wait_for_status(&fenix, &with, &delivered, "succeeded", Duration::from_secs(15)).await;
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("x-fenix-event-id"), delivered);
    assert!(signed_v1_by(&secret, &got[0]));

    // The key: in no answer, in no log line, nowhere in clear in the database.
    let secret_line = distinctive(&issued.key);
    let ep = created["id"].as_str().unwrap();
    let (_, read) = fenix.call("GET", &format!("/v1/apps/{with}/endpoints/{ep}"), None).await;
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{with}/endpoints"), None).await;
    for answer in [&created, &read, &list] {
        assert!(!answer.to_string().contains(&secret_line), "the key in an answer: {answer}");
        assert!(!answer.to_string().contains("PRIVATE KEY"), "{answer}");
    }
    assert_eq!(read["tls"]["client_certificate"]["sha256"], shown["sha256"]);
    assert!(!fenix.logs().contains(&secret_line), "the key in Fenix's log");
    let stored = database_bytes(&db);
    assert!(!String::from_utf8_lossy(&stored).contains(&secret_line), "the key in clear in the database");
    assert!(String::from_utf8_lossy(&stored).contains(&distinctive(&issued.cert)), "the chain is stored in clear");
}

async fn rotate(fenix: &Fenix, app: &str, ep: &str, issued: &Issued) -> Value {
    let body = json!({"client_certificate": issued.cert, "client_key": issued.key, "expires_in": "1h"});
    let (status, answer) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/tls/rotate"), Some(body)).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

async fn deliveries_keep_arriving_across_a_client_certificate_rotation(backend: Backend) {
    let db = TestDb::new(backend).await;
    let (old_ca, new_ca) = (TestCa::new("Old client CA"), TestCa::new("New client CA"));
    let (first, second, third) = (old_ca.client("first", 90), new_ca.client("second", 90), new_ca.client("third", 90));
    // Trusts the old CA only: a new certificate it does not trust yet.
    let receiver = Receiver::https_requiring_client_cert(db.dir.path(), &[], &old_ca.pem(), |_| Plan::ok()).await;
    let ca = server_ca(&receiver);
    let fenix = Fenix::start(&db, FAST).await;
    let app = fenix.create_app("acme").await;
    let tls = json!({"client_certificate": first.cert, "client_key": first.key, "ca_certificates": ca});
    let created = fenix.create_endpoint(&app, json!({"url": receiver.url, "tls": tls})).await;
    let ep = created["id"].as_str().unwrap();
    let before = event(&fenix, &app).await;
    wait_for_status(&fenix, &app, &before, "succeeded", Duration::from_secs(15)).await;

    let rotated = rotate(&fenix, &app, ep, &second).await;
    assert_eq!(rotated["client_certificate"]["subject"], "CN=second", "{rotated}");
    assert_eq!(rotated["previous_client_certificate"]["subject"], "CN=first", "{rotated}");
    assert!(rotated["previous_client_certificate"]["expires_at"].is_string());
    assert!(!rotated.to_string().contains(&distinctive(&second.key)));
    // The new certificate fails the handshake; the previous one serves the
    // same attempt during the overlap.
    let during = event(&fenix, &app).await;
    let delivery = wait_for_status(&fenix, &app, &during, "succeeded", Duration::from_secs(15)).await;
    assert_eq!(delivery["attempt_count"], 1, "{delivery}");
    assert_eq!(receiver.count(), 2);

    // A receiver that trusts the new CA only gets the new certificate at once.
    let next = Receiver::https_requiring_client_cert(db.dir.path(), &[], &new_ca.pem(), |_| Plan::ok()).await;
    let patch = json!({"url": next.url, "tls": {"client_certificate": second.cert, "client_key": second.key, "ca_certificates": server_ca(&next)}});
    let (status, patched) = fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep}"), Some(patch)).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["tls"]["previous_client_certificate"], Value::Null, "a PATCH replaces the whole material");
    let after = event(&fenix, &app).await;
    wait_for_status(&fenix, &app, &after, "succeeded", Duration::from_secs(15)).await;
    assert_eq!(next.count(), 1);

    // Rotated again, the first certificate is no longer presented anywhere:
    // the old receiver refuses both the new and the previous one.
    let back = json!({"url": receiver.url, "tls": {"client_certificate": second.cert, "client_key": second.key, "ca_certificates": ca}});
    let (status, _) = fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep}"), Some(back)).await;
    assert_eq!(status, 200);
    rotate(&fenix, &app, ep, &third).await;
    let refused = event(&fenix, &app).await;
    fails_tls(&fenix, &app, &refused).await;
    assert_eq!(receiver.count(), 2);
}

async fn challenges_and_test_events_go_through_the_client_certificate(backend: Backend) {
    let db = TestDb::new(backend).await;
    let clients = TestCa::new("Acme client CA");
    let issued = clients.client("fenix.acme-client", 90);
    let echo = || {
        let body = format!(r#"{{"challenge":"{}"}}"#, crate::support::receiver::CHALLENGE);
        Plan::ok().with_header("content-type", "application/json").with_body(body)
    };
    let receiver = Receiver::https_requiring_client_cert(db.dir.path(), &[], &clients.pem(), move |_| echo()).await;
    let ca = server_ca(&receiver);
    let fenix = Fenix::start(&db, &[("FENIX_REQUIRE_ENDPOINT_VERIFICATION", "true")]).await;
    let app = fenix.create_app("acme").await;
    let tls = json!({"client_certificate": issued.cert, "client_key": issued.key, "ca_certificates": ca});
    let created = fenix.create_endpoint(&app, json!({"url": receiver.url, "tls": tls})).await;
    let ep = created["id"].as_str().unwrap();
    // The ownership challenge is answered only through the handshake with the certificate.
    wait_for_state(&fenix, &app, ep, "active", Duration::from_secs(15)).await;
    let (status, sent) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/test"), None).await;
    assert_eq!(status, 202, "{sent}");
    let event_id = sent["event_id"].as_str().unwrap();
    wait_for_status(&fenix, &app, event_id, "succeeded", Duration::from_secs(15)).await;
    let got = receiver.received();
    assert_eq!(got.len(), 2, "the challenge and the test event");
    assert_eq!(got[1].header("x-fenix-event-id"), event_id);
}

const NAME: &str = "hooks.mtls-wrong-name-test.com";

async fn a_private_ca_named_by_the_endpoint_verifies_its_receiver(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = TestDns::with_zone(&[(NAME, &["127.0.0.1"])]).await;
    let receiver = Receiver::https(db.dir.path(), |_| Plan::ok()).await;
    let ca = server_ca(&receiver);
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms"), ("FENIX_DNS_SERVERS", &dns.server())]).await;

    let trusted = fenix.create_app("trusted").await;
    let created = fenix.create_endpoint(&trusted, json!({"url": receiver.url, "tls": {"ca_certificates": ca}})).await;
    assert_eq!(created["tls"]["client_certificate"], Value::Null);
    assert_eq!(created["tls"]["ca_certificates"][0]["subject"], "CN=Fenix test CA", "{created}");
    let delivered = event(&fenix, &trusted).await;
    wait_for_status(&fenix, &trusted, &delivered, "succeeded", Duration::from_secs(15)).await;
    assert_eq!(receiver.count(), 1);

    // Without the CA: the public roots alone do not trust it.
    let untrusted = fenix.create_app("untrusted").await;
    let plain = fenix.create_endpoint(&untrusted, json!({"url": receiver.url})).await;
    assert_eq!(plain["tls"], Value::Null);
    let refused = event(&fenix, &untrusted).await;
    fails_tls(&fenix, &untrusted, &refused).await;

    // With the CA, a name the certificate is not for still fails: hostname verification stays on.
    let port = url::Url::parse(&receiver.url).unwrap().port().unwrap();
    let renamed = fenix.create_app("renamed").await;
    let url = format!("https://{NAME}:{port}/hook");
    fenix.create_endpoint(&renamed, json!({"url": url, "tls": {"ca_certificates": ca}})).await;
    let mismatched = event(&fenix, &renamed).await;
    fails_tls(&fenix, &renamed, &mismatched).await;
    assert_eq!(receiver.count(), 1);
}

async fn a_key_that_does_not_open_fails_its_endpoint_only(backend: Backend) {
    let db = TestDb::new(backend).await;
    let clients = TestCa::new("Acme client CA");
    let (a, b) = (clients.client("a", 90), clients.client("b", 90));
    let receiver = Receiver::https_requiring_client_cert(db.dir.path(), &[], &clients.pem(), |_| Plan::ok()).await;
    let ca = server_ca(&receiver);
    let fenix = Fenix::start(&db, FAST).await;
    let (broken, fine) = (fenix.create_app("broken").await, fenix.create_app("fine").await);
    let tls = |i: &Issued| json!({"client_certificate": i.cert, "client_key": i.key, "ca_certificates": ca});
    let moved = fenix.create_endpoint(&broken, json!({"url": receiver.url, "tls": tls(&a)})).await;
    let donor = fenix.create_endpoint(&fine, json!({"url": receiver.url, "tls": tls(&b)})).await;
    // The other endpoint's sealed key, moved into this one's column: sealed
    // for that endpoint, it does not open for this one.
    let (moved_id, donor_id) = (moved["id"].as_str().unwrap(), donor["id"].as_str().unwrap());
    let donor_tls = db.texts("SELECT tls FROM endpoints WHERE id = $1", &[donor_id]).await.remove(0);
    let mut stolen: Value = serde_json::from_str(&donor_tls).unwrap();
    stolen["client"]["chain_pem"] = json!(a.cert);
    db.texts("UPDATE endpoints SET tls = $1 WHERE id = $2 RETURNING id", &[&stolen.to_string(), moved_id]).await;

    let (refused, sent) = (event(&fenix, &broken).await, event(&fenix, &fine).await);
    wait_for_status(&fenix, &fine, &sent, "succeeded", Duration::from_secs(15)).await;
    let delivery = wait_for_status(&fenix, &broken, &refused, "failed", Duration::from_secs(15)).await;
    for attempt in attempts(&fenix, &broken, delivery["id"].as_str().unwrap()).await {
        assert_eq!(attempt["error"], "client_certificate", "{attempt}");
    }
    assert_eq!(receiver.count(), 1, "only the other endpoint's request arrived");
    assert!(fenix.logs().contains("an endpoint's TLS material cannot be used"));
}

async fn refused_tls(fenix: &Fenix, app: &str, tls: Value) -> (String, String) {
    let body = json!({"url": "https://127.0.0.1:9/hook", "tls": tls});
    let (status, answer) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints"), Some(body)).await;
    assert_eq!(status, 422, "{answer}");
    (error_code(&answer).to_string(), error_message(&answer).to_string())
}

async fn creation_refuses_material_that_cannot_serve(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let ca = TestCa::new("Acme client CA");
    let (good, other, expired) = (ca.client("good", 90), ca.client("other", 90), ca.client("expired", -1));

    let (code, message) =
        refused_tls(&fenix, &app, json!({"client_certificate": good.cert, "client_key": other.key})).await;
    assert_eq!(code, "invalid_client_key");
    assert!(message.contains("client_key") && message.contains("does not match"), "{message}");
    assert!(!message.contains(&distinctive(&other.key)));
    let (code, message) =
        refused_tls(&fenix, &app, json!({"client_certificate": expired.cert, "client_key": expired.key})).await;
    assert_eq!(code, "invalid_client_certificate");
    assert!(message.contains("expired"), "{message}");
    let garbage = json!({"client_certificate": "not a certificate", "client_key": good.key});
    assert_eq!(refused_tls(&fenix, &app, garbage).await.0, "invalid_client_certificate");
    let garbage_key = json!({"client_certificate": good.cert, "client_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"});
    assert_eq!(refused_tls(&fenix, &app, garbage_key).await.0, "invalid_client_key");
    assert_eq!(refused_tls(&fenix, &app, json!({"client_certificate": good.cert})).await.0, "invalid_client_key");
    assert_eq!(refused_tls(&fenix, &app, json!({"client_key": good.key})).await.0, "invalid_client_certificate");
    assert_eq!(refused_tls(&fenix, &app, json!({"ca_certificates": "garbage"})).await.0, "invalid_ca_certificates");
    assert_eq!(refused_tls(&fenix, &app, json!({"ca_certificates": expired.cert})).await.0, "invalid_ca_certificates");
    let huge = "A".repeat(70 * 1024);
    assert_eq!(refused_tls(&fenix, &app, json!({"ca_certificates": huge})).await.0, "invalid_ca_certificates");
    // Nothing was created; no key material in the log.
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!(list["data"].as_array().unwrap().len(), 0);
    assert!(!fenix.logs().contains(&distinctive(&other.key)));

    // A rotation is checked the same way.
    let created = fenix
        .create_endpoint(&app, json!({"url": "https://127.0.0.1:9/hook", "tls": {"client_certificate": good.cert, "client_key": good.key}}))
        .await;
    let ep = created["id"].as_str().unwrap();
    let body = json!({"client_certificate": good.cert, "client_key": other.key});
    let (status, answer) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/tls/rotate"), Some(body)).await;
    assert_eq!((status, error_code(&answer)), (422, "invalid_client_key"), "{answer}");
    let body = json!({"client_certificate": other.cert, "client_key": other.key, "expires_in": "90d"});
    let (status, answer) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/tls/rotate"), Some(body)).await;
    assert_eq!((status, error_code(&answer)), (422, "invalid_expires_in"), "{answer}");
}

async fn a_client_certificate_expiring_within_14_days_shows(backend: Backend) {
    let db = TestDb::new(backend).await;
    let operator = Receiver::http(|_| Plan::ok()).await;
    let settings = [
        ("FENIX_MAINTENANCE_INTERVAL", "100ms"),
        ("FENIX_OPERATOR_WEBHOOK_URL", operator.url.as_str()),
        ("FENIX_OPERATOR_WEBHOOK_SECRET", "whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="),
    ];
    let fenix = Fenix::start(&db, &settings).await;
    let app = fenix.create_app("acme").await;
    let ca = TestCa::new("Acme client CA");
    let soon = ca.client("soon", 7);
    let tls = json!({"client_certificate": soon.cert, "client_key": soon.key});
    let created = fenix.create_endpoint(&app, json!({"url": "https://127.0.0.1:9/hook", "tls": tls})).await;
    let ep = created["id"].as_str().unwrap();
    let (_, read) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}"), None).await;
    assert_eq!(read["tls"]["client_certificate"]["expires_soon"], true, "{read}");
    let (_, health) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}/stats"), None).await;
    assert_eq!(health["client_certificate_expires_soon"], true, "{health}");
    assert_eq!(health["client_certificate_expires_at"], read["tls"]["client_certificate"]["not_after"]);
    let scrape = || async { fenix.request("GET", "/metrics").send().await.unwrap().text().await.unwrap() };
    eventually("the gauge counts the certificate", Duration::from_secs(10), || async {
        scrape().await.contains("\nfenix_client_certificates_expiring 1\n")
    })
    .await;
    // The operator hears of it once, however many passes see it.
    let reported = |r: &Received| r.json()["type"] == "endpoint.client_certificate_expiring";
    eventually("the operator event", Duration::from_secs(10), || async { operator.received().iter().any(reported) })
        .await;
    let note = operator.received().into_iter().find(reported).unwrap().json();
    assert_eq!(note["data"]["endpoint_id"], ep, "{note}");
    assert_eq!(note["data"]["subject"], "CN=soon");
    assert!(!note.to_string().contains(&distinctive(&soon.key)));
    // A second one, reported at a later pass: by then the first was seen again.
    let later = ca.client("later", 3);
    let tls = json!({"client_certificate": later.cert, "client_key": later.key});
    fenix.create_endpoint(&app, json!({"url": "https://127.0.0.1:9/hook", "tls": tls})).await;
    let about = |r: &Received, cn: &str| reported(r) && r.json()["data"]["subject"] == format!("CN={cn}");
    eventually("the second certificate's event", Duration::from_secs(10), || async {
        operator.received().iter().any(|r| about(r, "later"))
    })
    .await;
    assert_eq!(operator.received().iter().filter(|r| about(r, "soon")).count(), 1);
    eventually("the gauge counts both", Duration::from_secs(10), || async {
        scrape().await.contains("\nfenix_client_certificates_expiring 2\n")
    })
    .await;
}

crate::on_both_backends!(
    a_receiver_requiring_a_client_certificate_is_delivered_only_with_one,
    deliveries_keep_arriving_across_a_client_certificate_rotation,
    a_private_ca_named_by_the_endpoint_verifies_its_receiver,
    creation_refuses_material_that_cannot_serve,
    a_client_certificate_expiring_within_14_days_shows,
    a_key_that_does_not_open_fails_its_endpoint_only,
    challenges_and_test_events_go_through_the_client_certificate,
);
