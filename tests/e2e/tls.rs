//! HTTPS receivers: delivered when their certificate chains to a trusted CA
//! (here the test CA given as FENIX_EXTRA_CA_CERT), a `tls` failure otherwise.

use std::time::Duration;

use serde_json::json;

use super::common::{attempts, node_accepts, python_accepts, secret_of, wait_for_status, Signed};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

async fn an_https_receiver_signed_by_the_extra_ca_gets_its_events(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::https(db.dir.path(), |_| Plan::ok()).await;
    let ca = receiver.ca_pem_path.clone().expect("CA file");
    let fenix = Fenix::start(&db, &[("FENIX_EXTRA_CA_CERT", ca.to_str().unwrap())]).await;
    let app = fenix.create_app("acme").await;
    assert!(receiver.url.starts_with("https://"));
    let secret = secret_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery =
        wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "succeeded", Duration::from_secs(10)).await;
    assert_eq!(delivery["attempt_count"], 1);
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("x-fenix-event-id"), evt["id"].as_str().unwrap());
    assert!(python_accepts(&secret, &Signed::of(&got[0])).await);
    assert!(node_accepts(&secret, &Signed::of(&got[0])).await);
}

async fn an_https_receiver_with_an_untrusted_certificate_is_a_tls_failure(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::https(db.dir.path(), |_| Plan::ok()).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "100ms")]).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let evt = fenix.send_event(&app, json!({"type": "booking.confirmed", "data": {"n": 1}})).await;

    let delivery = wait_for_status(&fenix, &app, evt["id"].as_str().unwrap(), "failed", Duration::from_secs(10)).await;
    let logged = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(logged.len(), 2);
    for a in &logged {
        assert_eq!(a["error"], "tls", "{a}");
        assert_eq!(a["response_status"], serde_json::Value::Null);
    }
    assert_eq!(receiver.count(), 0, "no request got through the failed handshake");
}

crate::on_both_backends!(
    an_https_receiver_signed_by_the_extra_ca_gets_its_events,
    an_https_receiver_with_an_untrusted_certificate_is_a_tls_failure,
);
