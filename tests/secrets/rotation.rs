//! Rotation without downtime: during the overlap every request carries the new
//! and the old signature (newest first), so a receiver knowing either secret
//! verifies it; after the overlap only the new one signs; at most 5 older
//! secrets sign at a time; each attempt records the versions that signed it.

use std::time::Duration;

use fenix_signing::VerifyError;
use serde_json::{json, Value};

use super::{
    common::{expected_signature, now_unix, request_for, rotate, send, signatures, signed_with, verify},
    snippets::wait_for,
    support::{eventually, Backend, Fenix, Plan, Receiver, TestDb},
};

/// Unix milliseconds of an RFC 3339 time the API answered.
fn unix_ms(rfc3339: &Value) -> i64 {
    let t = humantime::parse_rfc3339_weak(rfc3339.as_str().expect("a time")).expect("RFC 3339");
    t.duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_millis() as i64
}

/// A running Fenix with one app and one endpoint of `scheme` delivering to a recording receiver.
struct Setup {
    _db: TestDb,
    fenix: Fenix,
    receiver: Receiver,
    app: String,
    ep: String,
    first_secret: String,
}

async fn setup(backend: Backend, scheme: &str) -> Setup {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "signature_scheme": scheme})).await;
    Setup {
        ep: ep["id"].as_str().unwrap().to_string(),
        first_secret: ep["secret"].as_str().unwrap().to_string(),
        _db: db,
        fenix,
        receiver,
        app,
    }
}

async fn during_an_overlap_receivers_knowing_only_the_old_or_only_the_new_secret_both_verify(backend: Backend) {
    let s = setup(backend, "fenix-v1").await;
    let old = s.first_secret.clone();
    let before = send(&s.fenix, &s.app, 0).await;
    assert_eq!(signed_with(&s.fenix, &s.app, &before, &s.ep).await, json!([1]));

    let rotated = rotate(&s.fenix, &s.app, &s.ep, json!({"overlap_seconds": 3600})).await;
    let new = rotated["secret"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    assert_eq!(rotated["version"], 2);
    let overlap_left = unix_ms(&rotated["previous_expires_at"]) / 1000 - now_unix();
    assert!((3500..=3600).contains(&overlap_left), "the old secret expires in an hour: {rotated}");

    let mut events = Vec::new();
    for n in 1..=3 {
        events.push(send(&s.fenix, &s.app, n).await);
    }
    let received = wait_for(&s.receiver, 4).await;
    for event in &events {
        let request = request_for(&received, event);
        let entries = signatures(request);
        assert_eq!(entries, [expected_signature(request, &new), expected_signature(request, &old)], "newest first");
        assert_eq!(verify(request, &[&old]).expect("the old secret alone verifies").secret_index, 0);
        assert_eq!(verify(request, &[&new]).expect("the new secret alone verifies").secret_index, 0);
        assert_eq!(signed_with(&s.fenix, &s.app, event, &s.ep).await, json!([2, 1]));
    }
    let request = request_for(&received, &before);
    assert_eq!(verify(request, &[&new]), Err(VerifyError::NoMatch), "a request sent before the rotation");
}

async fn after_a_rotation_with_no_overlap_only_the_new_secret_verifies(backend: Backend) {
    let s = setup(backend, "fenix-v1").await;
    let rotated = rotate(&s.fenix, &s.app, &s.ep, json!({"overlap_seconds": 0})).await;
    let new = rotated["secret"].as_str().unwrap().to_string();
    let event = send(&s.fenix, &s.app, 1).await;
    let received = wait_for(&s.receiver, 1).await;
    let request = request_for(&received, &event);
    assert_eq!(signatures(request), [expected_signature(request, &new)]);
    verify(request, &[&new]).expect("the new secret verifies");
    assert_eq!(verify(request, &[&s.first_secret]), Err(VerifyError::NoMatch), "the old secret is retired");
    assert_eq!(signed_with(&s.fenix, &s.app, &event, &s.ep).await, json!([2]));
}

async fn once_a_short_overlap_has_passed_the_old_secret_no_longer_verifies(backend: Backend) {
    let s = setup(backend, "fenix-v1").await;
    let rotated = rotate(&s.fenix, &s.app, &s.ep, json!({"overlap_seconds": 1})).await;
    let new = rotated["secret"].as_str().unwrap().to_string();
    let expires_ms = unix_ms(&rotated["previous_expires_at"]);
    eventually("the overlap has passed", Duration::from_secs(5), || async { now_unix() * 1000 > expires_ms + 100 })
        .await;

    let event = send(&s.fenix, &s.app, 1).await;
    let received = wait_for(&s.receiver, 1).await;
    let request = request_for(&received, &event);
    assert_eq!(signatures(request).len(), 1, "one signature after the overlap");
    verify(request, &[&new]).expect("the new secret verifies");
    assert_eq!(verify(request, &[&s.first_secret]), Err(VerifyError::NoMatch));
    assert_eq!(signed_with(&s.fenix, &s.app, &event, &s.ep).await, json!([2]));
}

async fn several_rotations_in_a_row_keep_at_most_five_old_secrets_signing(backend: Backend) {
    let s = setup(backend, "fenix-v1").await;
    let mut secrets = vec![s.first_secret.clone()];
    for version in 2..=8 {
        let rotated = rotate(&s.fenix, &s.app, &s.ep, json!({"overlap_seconds": 3600})).await;
        assert_eq!(rotated["version"], version);
        secrets.push(rotated["secret"].as_str().unwrap().to_string());
    }
    let event = send(&s.fenix, &s.app, 1).await;
    let received = wait_for(&s.receiver, 1).await;
    let request = request_for(&received, &event);
    let live: Vec<&String> = secrets.iter().rev().take(6).collect();
    let expected: Vec<String> = live.iter().map(|secret| expected_signature(request, secret)).collect();
    assert_eq!(signatures(request), expected, "the newest and the 5 before it, newest first");
    for secret in &live {
        verify(request, &[secret]).expect("every live secret verifies alone");
    }
    for retired in &secrets[..2] {
        assert_eq!(verify(request, &[retired]), Err(VerifyError::NoMatch), "versions 1 and 2 are retired");
    }
    assert_eq!(signed_with(&s.fenix, &s.app, &event, &s.ep).await, json!([8, 7, 6, 5, 4, 3]));
}

async fn a_standard_webhooks_endpoint_sends_every_live_signature_space_separated(backend: Backend) {
    let s = setup(backend, "standard-webhooks").await;
    let first = send(&s.fenix, &s.app, 1).await;
    let received = wait_for(&s.receiver, 1).await;
    let request = request_for(&received, &first);
    assert_eq!(request.header("webhook-id"), first, "webhook-id is the event id");
    assert_eq!(request.header("idempotency-key"), first);
    assert!(request.header("webhook-timestamp").parse::<i64>().is_ok());
    assert!(request.header("x-fenix-signature").is_empty() && request.header("x-fenix-timestamp").is_empty());
    assert_eq!(signatures(request), [expected_signature(request, &s.first_secret)]);
    assert!(signatures(request)[0].starts_with("v1,"));

    let second =
        rotate(&s.fenix, &s.app, &s.ep, json!({"overlap_seconds": 3600})).await["secret"].as_str().unwrap().to_string();
    let during = send(&s.fenix, &s.app, 2).await;
    let received = wait_for(&s.receiver, 2).await;
    let request = request_for(&received, &during);
    assert_eq!(
        request.header("webhook-signature"),
        format!("{} {}", expected_signature(request, &second), expected_signature(request, &s.first_secret)),
        "space-separated, newest first"
    );
    verify(request, &[&s.first_secret]).expect("the old secret alone verifies");
    verify(request, &[&second]).expect("the new secret alone verifies");
    assert_eq!(signed_with(&s.fenix, &s.app, &during, &s.ep).await, json!([2, 1]));

    let third =
        rotate(&s.fenix, &s.app, &s.ep, json!({"overlap_seconds": 0})).await["secret"].as_str().unwrap().to_string();
    let after = send(&s.fenix, &s.app, 3).await;
    let received = wait_for(&s.receiver, 3).await;
    let request = request_for(&received, &after);
    assert_eq!(signatures(request), [expected_signature(request, &third)]);
    for retired in [&s.first_secret, &second] {
        assert_eq!(verify(request, &[retired]), Err(VerifyError::NoMatch));
    }
    assert_eq!(signed_with(&s.fenix, &s.app, &after, &s.ep).await, json!([3]));
}

async fn an_event_accepted_before_a_rotation_is_signed_with_the_secrets_live_when_it_is_sent(backend: Backend) {
    let s = setup(backend, "fenix-v1").await;
    let (status, out) = s.fenix.call("POST", &format!("/v1/apps/{}/endpoints/{}/pause", s.app, s.ep), None).await;
    assert_eq!(status, 200, "{out}");
    let event = send(&s.fenix, &s.app, 1).await;
    eventually("the delivery was skipped while paused", Duration::from_secs(10), || async {
        s.fenix.deliveries(&s.app, &format!("event_id={event}&status=skipped")).await.len() == 1
    })
    .await;

    let new =
        rotate(&s.fenix, &s.app, &s.ep, json!({"overlap_seconds": 3600})).await["secret"].as_str().unwrap().to_string();
    let (status, out) = s
        .fenix
        .call("POST", &format!("/v1/apps/{}/endpoints/{}/resume", s.app, s.ep), Some(json!({"replay_skipped": true})))
        .await;
    assert_eq!(status, 200, "{out}");
    let received = wait_for(&s.receiver, 1).await;
    let request = request_for(&received, &event);
    assert_eq!(signatures(request), [expected_signature(request, &new), expected_signature(request, &s.first_secret)]);
    assert_eq!(signed_with(&s.fenix, &s.app, &event, &s.ep).await, json!([2, 1]));
}

crate::on_both_backends!(
    during_an_overlap_receivers_knowing_only_the_old_or_only_the_new_secret_both_verify,
    after_a_rotation_with_no_overlap_only_the_new_secret_verifies,
    once_a_short_overlap_has_passed_the_old_secret_no_longer_verifies,
    several_rotations_in_a_row_keep_at_most_five_old_secrets_signing,
    a_standard_webhooks_endpoint_sends_every_live_signature_space_separated,
    an_event_accepted_before_a_rotation_is_signed_with_the_secrets_live_when_it_is_sent,
);
