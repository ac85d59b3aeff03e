//! Proof of endpoint ownership (`FENIX_REQUIRE_ENDPOINT_VERIFICATION`): a new
//! endpoint shows `pending_verification`, gets a signed `webhook.verification`
//! challenge, and is sent events only once it answered 2xx echoing it; events
//! meanwhile are `skipped` and can be replayed; a URL change starts over.

use std::time::Duration;

use serde_json::{json, Value};

use super::common::{secret_of, wait_for_status};
use crate::support::{
    endpoint, eventually, id_of, post_with_retry_after, receiver::CHALLENGE, signed_v1_by, wait_for_state, Backend,
    Fenix, Plan, Receiver, TestDb,
};

const PATIENCE: Duration = Duration::from_secs(15);

/// Proof required; one challenge attempt and then none for an hour, unless said otherwise.
const REQUIRED: (&str, &str) = ("FENIX_REQUIRE_ENDPOINT_VERIFICATION", "true");
const ONE_ATTEMPT: (&str, &str) = ("FENIX_VERIFICATION_RETRY_SCHEDULE", "1h");

/// Answers the challenge as receiving.md says: `{"challenge": "…"}`.
fn echo() -> Plan {
    Plan::ok().with_header("content-type", "application/json").with_body(format!(r#"{{"challenge":"{CHALLENGE}"}}"#))
}

/// Waits until the open challenge records `attempts` failed attempts.
async fn wait_for_failed_attempts(fenix: &Fenix, app: &str, ep: &str, attempts: i64) -> Value {
    eventually(&format!("{attempts} failed challenge attempts of {ep}"), PATIENCE, || async {
        endpoint(fenix, app, ep).await["verification"]["attempts"].as_i64() >= Some(attempts)
    })
    .await;
    endpoint(fenix, app, ep).await
}

async fn send(fenix: &Fenix, app: &str) -> String {
    fenix.send_event(app, json!({"type": "invoice.paid", "data": {"n": 1}})).await["id"].as_str().unwrap().to_string()
}

async fn an_endpoint_that_echoes_its_challenge_becomes_active_and_gets_events(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED]).await;
    // The echo waits a little, so the create answer is read before it lands.
    let receiver = Receiver::http(|_| echo().after(Duration::from_millis(300))).await;
    let app = fenix.create_app("acme").await;
    let created = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep = id_of(&created);
    assert_eq!(created["state"], "pending_verification", "{created}");
    assert_eq!(created["verification"]["status"], "pending", "{created}");

    let active = wait_for_state(&fenix, &app, &ep, "active", PATIENCE).await;
    assert!(active.get("verification").is_none(), "a verified endpoint has no open challenge: {active}");
    let challenge = &receiver.received()[0];
    assert_eq!(challenge.header("x-fenix-event-type"), "webhook.verification");
    assert!(signed_v1_by(&secret_of(&created), challenge), "the challenge is signed with the endpoint's secret");
    let body = challenge.json();
    assert_eq!(body["type"], "webhook.verification", "{body}");
    assert_eq!(body["data"]["challenge"].as_str().map(str::len), Some(43), "{body}");

    let (status, log) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}/state-changes"), None).await;
    assert_eq!(status, 200, "{log}");
    let states: Vec<&str> = log["data"].as_array().unwrap().iter().map(|c| c["state"].as_str().unwrap()).collect();
    assert!(states.contains(&"pending_verification") && states.contains(&"active"), "{log}");

    let event = send(&fenix, &app).await;
    wait_for_status(&fenix, &app, &event, "succeeded", PATIENCE).await;
    assert_eq!(receiver.count(), 2, "the challenge, then the event");
    assert_eq!(receiver.received()[1].json()["id"], event.as_str());

    let (status, body) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/verify"), None).await;
    assert_eq!((status, &body["error"]["code"]), (409, &json!("endpoint_verified")), "{body}");
}

async fn wrong_failing_late_and_unreachable_answers_leave_the_endpoint_pending_with_the_reason(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT, ("FENIX_ATTEMPT_TIMEOUT", "1s")]).await;
    let wrong = Receiver::http(|_| Plan::ok().with_body(r#"{"challenge":"not-it"}"#)).await;
    let failing = Receiver::http(|_| Plan::status(500)).await;
    let late = Receiver::http(|_| echo().after(Duration::from_secs(4))).await;
    // A port nothing listens on: the connection is refused. On 127.0.0.4,
    // where no other test listens: a port freed on 127.0.0.1 was taken by
    // another test's receiver meanwhile, which then got this challenge.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.4:0").unwrap();
        format!("http://{}/hook", listener.local_addr().unwrap())
    };
    let app = fenix.create_app("acme").await;
    let cases = [
        (wrong.url.clone(), "challenge_mismatch", Some(200)),
        (failing.url.clone(), "http_status", Some(500)),
        (late.url.clone(), "timeout", None),
        (closed, "connect", None),
    ];
    for (url, error, status) in cases {
        let ep = id_of(&fenix.create_endpoint(&app, json!({"url": url})).await);
        let shown = wait_for_failed_attempts(&fenix, &app, &ep, 1).await;
        assert_eq!(shown["state"], "pending_verification", "{shown}");
        let v = &shown["verification"];
        assert_eq!((&v["last_error"], &v["last_status"]), (&json!(error), &json!(status)), "{url}: {shown}");
        assert!(v["last_error_detail"].as_str().is_some_and(|d| !d.is_empty()), "{shown}");
        assert_eq!(v["status"], "pending", "another attempt is coming (in an hour): {shown}");
    }

    // The wrong one learns to echo; `verify` sends a new challenge now.
    wrong.set_behaviour(|_| echo());
    let ep = id_of(&fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await.1["data"][3]);
    let (status, body) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/verify"), None).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!((&body["state"], &body["verification"]["attempts"]), (&json!("pending_verification"), &json!(0)));
    wait_for_state(&fenix, &app, &ep, "active", PATIENCE).await;
    assert_eq!(wrong.count(), 2, "the first challenge and the new one");
}

async fn events_sent_while_pending_are_skipped_and_replayable_once_verified(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED, ("FENIX_VERIFICATION_RETRY_SCHEDULE", "100ms")]).await;
    let receiver = Receiver::http(|_| Plan::status(503)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    // Two attempts, then the challenge expires.
    let expired = wait_for_failed_attempts(&fenix, &app, &ep, 2).await;
    assert_eq!(expired["verification"]["status"], "expired", "{expired}");
    assert_eq!(expired["verification"]["next_attempt_at"], Value::Null, "{expired}");

    let event = send(&fenix, &app).await;
    let skipped = wait_for_status(&fenix, &app, &event, "skipped", PATIENCE).await;
    assert_eq!(skipped["endpoint_id"], ep.as_str());
    assert_eq!(receiver.count(), 2, "only the two challenge attempts reached the endpoint, never the event");

    // After expiry, `verify` starts again; answered, the skipped event is replayed.
    receiver.set_behaviour(|_| echo());
    let (status, body) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/verify"), None).await;
    assert_eq!(status, 202, "{body}");
    wait_for_state(&fenix, &app, &ep, "active", PATIENCE).await;
    let (status, resumed) = fenix
        .call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/resume"), Some(json!({"replay_skipped": true})))
        .await;
    assert_eq!((status, &resumed["replayed"]), (200, &json!(1)), "{resumed}");
    wait_for_status(&fenix, &app, &event, "succeeded", PATIENCE).await;
    let got = receiver.received();
    assert_eq!(got.last().unwrap().json()["id"], event.as_str(), "the replayed event arrived last");
}

async fn a_url_change_sends_the_endpoint_back_to_pending_verification(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT]).await;
    let first = Receiver::http(|_| echo()).await;
    let second = Receiver::http(|_| Plan::status(404)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": first.url})).await);
    wait_for_state(&fenix, &app, &ep, "active", PATIENCE).await;

    let (status, moved) =
        fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep}"), Some(json!({"url": second.url}))).await;
    assert_eq!((status, &moved["state"]), (200, &json!("pending_verification")), "{moved}");
    let event = send(&fenix, &app).await;
    wait_for_status(&fenix, &app, &event, "skipped", PATIENCE).await;
    let failed = wait_for_failed_attempts(&fenix, &app, &ep, 1).await;
    assert_eq!(failed["verification"]["last_status"], 404, "{failed}");
    assert_eq!(first.count(), 1, "the old URL got only its own challenge");
    assert!(second.received().iter().all(|r| r.header("x-fenix-event-type") == "webhook.verification"));

    // The same URL again is no change: no new challenge.
    let (status, same) =
        fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep}"), Some(json!({"url": second.url}))).await;
    assert_eq!((status, &same["verification"]["attempts"]), (200, &json!(1)), "{same}");
}

async fn a_paused_pending_endpoint_gets_no_challenge_until_resumed(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    wait_for_failed_attempts(&fenix, &app, &ep, 1).await;
    let (status, paused) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/pause"), None).await;
    assert_eq!((status, &paused["state"]), (200, &json!("paused")), "{paused}");

    // A new challenge while paused waits; the event is skipped; nothing is sent.
    // (The echo waits a little, so the resume answer is read before it lands.)
    receiver.set_behaviour(|_| echo().after(Duration::from_millis(300)));
    let (status, body) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/verify"), None).await;
    assert_eq!((status, &body["state"]), (202, &json!("paused")), "{body}");
    let event = send(&fenix, &app).await;
    wait_for_status(&fenix, &app, &event, "skipped", PATIENCE).await;
    assert_eq!(receiver.count(), 1, "a paused endpoint is sent neither challenges nor events");

    // Resumed, it is pending again, is sent the challenge, and answers it.
    let (status, resumed) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/resume"), None).await;
    assert_eq!((status, &resumed["state"]), (200, &json!("pending_verification")), "{resumed}");
    wait_for_state(&fenix, &app, &ep, "active", PATIENCE).await;
    assert_eq!(receiver.count(), 2);
}

async fn without_the_setting_endpoints_are_active_at_once_and_get_no_challenge(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let created = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    assert_eq!(created["state"], "active", "{created}");
    assert!(created.get("verification").is_none(), "{created}");
    let event = send(&fenix, &app).await;
    wait_for_status(&fenix, &app, &event, "succeeded", PATIENCE).await;
    assert_eq!(receiver.count(), 1, "the event only");
    let ep = id_of(&created);
    let (status, body) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/verify"), None).await;
    assert_eq!((status, &body["error"]["code"]), (409, &json!("endpoint_verified")), "{body}");
}

async fn several_instances_on_one_database_send_each_challenge_attempt_once(backend: Backend) {
    let db = TestDb::new(backend).await;
    let settings = [REQUIRED, ONE_ATTEMPT];
    let (a, b, c) =
        (Fenix::start(&db, &settings).await, Fenix::start(&db, &settings).await, Fenix::start(&db, &settings).await);
    // A slow failure: the other instances look for due challenges (every
    // second at most) while the first attempt is still in flight.
    let receiver = Receiver::http(|_| Plan::status(500).after(Duration::from_millis(2500))).await;
    let app = a.create_app("acme").await;
    let ep = id_of(&a.create_endpoint(&app, json!({"url": receiver.url})).await);
    let failed = wait_for_failed_attempts(&b, &app, &ep, 1).await;
    assert_eq!(failed["verification"]["attempts"], 1, "{failed}");
    assert_eq!(receiver.count(), 1, "one attempt, sent by one of three instances");

    receiver.set_behaviour(|_| echo());
    let (status, body) = c.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/verify"), None).await;
    assert_eq!(status, 202, "{body}");
    wait_for_state(&a, &app, &ep, "active", PATIENCE).await;
    assert_eq!(receiver.count(), 2, "the new challenge, once");
}

async fn an_app_can_ask_for_proof_of_ownership_on_its_own(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[ONE_ATTEMPT]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let (status, strict) =
        fenix.call("POST", "/v1/apps", Some(json!({"name": "Strict", "require_endpoint_verification": true}))).await;
    assert_eq!((status, &strict["require_endpoint_verification"]), (201, &json!(true)), "{strict}");
    let strict = id_of(&strict);
    let relaxed = fenix.create_app("relaxed").await;

    let pending = fenix.create_endpoint(&strict, json!({"url": receiver.url})).await;
    assert_eq!(pending["state"], "pending_verification", "{pending}");
    let active = fenix.create_endpoint(&relaxed, json!({"url": receiver.url})).await;
    assert_eq!(active["state"], "active", "{active}");
    let (_, apps) = fenix.call("GET", "/v1/apps", None).await;
    let flags: Vec<(&str, bool)> = apps["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap(), a["require_endpoint_verification"].as_bool().unwrap()))
        .collect();
    assert!(flags.contains(&(strict.as_str(), true)) && flags.contains(&(relaxed.as_str(), false)), "{apps}");

    // Turned off: endpoints made from then on are active at once; the pending one still has to answer.
    let (status, off) =
        fenix.call("PATCH", &format!("/v1/apps/{strict}"), Some(json!({"require_endpoint_verification": false}))).await;
    assert_eq!((status, &off["require_endpoint_verification"]), (200, &json!(false)), "{off}");
    let later = fenix.create_endpoint(&strict, json!({"url": receiver.url})).await;
    assert_eq!(later["state"], "active", "{later}");
    let still = endpoint(&fenix, &strict, &id_of(&pending)).await;
    assert_eq!(still["state"], "pending_verification", "{still}");
}

/// Every challenge request is checked like a delivery: a name that now
/// resolves to a private address is refused, with the reason shown, and no
/// request is made.
async fn a_challenge_to_a_destination_that_turned_private_is_refused(backend: Backend) {
    let db = TestDb::new(backend).await;
    let dns = crate::support::dns::TestDns::with_zone(&[("owner.dest-test.com", &["127.0.0.1"])]).await;
    let server = dns.server();
    let fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT, ("FENIX_DNS_SERVERS", &server)]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let port = receiver.url.rsplit(':').next().unwrap().to_string();
    let app = fenix.create_app("acme").await;
    let url = format!("http://owner.dest-test.com:{port}");
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": url})).await);
    wait_for_failed_attempts(&fenix, &app, &ep, 1).await;
    assert_eq!(receiver.count(), 1);

    // The name now points at a private address: the new challenge is refused before any request.
    dns.set("owner.dest-test.com", &["10.0.0.7"]);
    receiver.set_behaviour(|_| echo());
    let (status, body) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{ep}/verify"), None).await;
    assert_eq!(status, 202, "{body}");
    let refused = wait_for_failed_attempts(&fenix, &app, &ep, 1).await;
    let v = &refused["verification"];
    assert!(v["last_error"].as_str().is_some_and(|e| e.starts_with("destination_")), "{refused}");
    assert_eq!((&refused["state"], &v["last_status"]), (&json!("pending_verification"), &Value::Null), "{refused}");
    assert_eq!(receiver.count(), 1, "no request reached the old address");
}

/// Asserts a `429 challenge_limit_reached` with a `Retry-After` within the cooldown.
fn assert_over_the_challenge_limit((status, retry_after, body): &(u16, Option<u64>, Value)) {
    assert_eq!((*status, &body["error"]["code"]), (429, &json!("challenge_limit_reached")), "{body}");
    assert!(retry_after.is_some_and(|s| (1..=60).contains(&s)), "Retry-After {retry_after:?}");
}

async fn verify_calls_in_a_burst_send_a_few_challenges_then_answer_429_with_retry_after(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    wait_for_failed_attempts(&fenix, &app, &ep, 1).await;

    let verify = format!("/v1/apps/{app}/endpoints/{ep}/verify");
    let started = std::time::Instant::now();
    let mut answers = Vec::new();
    for _ in 0..50 {
        answers.push(post_with_retry_after(&fenix, &verify, json!({})).await);
    }
    let accepted = answers.iter().filter(|a| a.0 == 202).count();
    // (On a machine slow enough to take minutes, the cooldown gives one more a minute.)
    let refills = (started.elapsed().as_secs() / 60) as usize;
    assert!(
        (2..=2 + refills).contains(&accepted),
        "{accepted}: the creation's challenge and two more, then the cooldown"
    );
    answers.iter().filter(|a| a.0 != 202).for_each(assert_over_the_challenge_limit);
    let last = wait_for_failed_attempts(&fenix, &app, &ep, 1).await;
    assert_eq!(last["state"], "pending_verification", "{last}");
    assert!(receiver.count() <= 3 + refills, "50 calls sent {} challenge requests", receiver.count());
}

async fn url_changes_back_and_forth_spend_the_same_challenge_budget(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT]).await;
    let (a, b) = (Receiver::http(|_| Plan::status(500)).await, Receiver::http(|_| Plan::status(500)).await);
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": a.url})).await);
    let path = format!("/v1/apps/{app}/endpoints/{ep}");
    for url in [&b.url, &a.url] {
        let (status, moved) = fenix.call("PATCH", &path, Some(json!({"url": url}))).await;
        assert_eq!(status, 200, "{moved}");
    }
    let refused = {
        let resp = fenix.request("PATCH", &path).json(&json!({"url": b.url})).send().await.unwrap();
        let retry_after = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().parse().unwrap());
        (resp.status().as_u16(), retry_after, resp.json().await.unwrap())
    };
    assert_over_the_challenge_limit(&refused);
    assert_eq!(endpoint(&fenix, &app, &ep).await["url"], a.url.as_str(), "a refused change changes nothing");
    // A change that starts no challenge (not the URL) is not limited.
    let (status, body) = fenix.call("PATCH", &path, Some(json!({"description": "still here"}))).await;
    assert_eq!(status, 200, "{body}");
    wait_for_failed_attempts(&fenix, &app, &ep, 1).await;
    assert!(a.count() + b.count() <= 3, "{} challenge requests", a.count() + b.count());
}

async fn deleting_and_recreating_endpoints_gets_no_fresh_challenge_budget(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let started = std::time::Instant::now();
    let mut created = 0;
    let refused = loop {
        let answer =
            post_with_retry_after(&fenix, &format!("/v1/apps/{app}/endpoints"), json!({"url": receiver.url})).await;
        if answer.0 != 201 {
            break answer;
        }
        created += 1;
        assert!(created <= 60, "the app's challenges never ran out");
        let (status, _) = fenix.call("DELETE", &format!("/v1/apps/{app}/endpoints/{}", id_of(&answer.2)), None).await;
        assert_eq!(status, 204);
    };
    let refills = started.elapsed().as_secs() / 60;
    assert!((50..=50 + refills).contains(&created), "{created}: the app's burst of challenges, then one a minute");
    assert_over_the_challenge_limit(&refused);
    let (_, list) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints"), None).await;
    assert_eq!(list["data"], json!([]), "the refused create stored nothing: {list}");
    assert!(receiver.count() as u64 <= 50 + refills, "{} challenge requests", receiver.count());
    // Another app is not held back by this one.
    let other = fenix.create_app("globex").await;
    fenix.create_endpoint(&other, json!({"url": receiver.url})).await;
}

async fn the_challenge_budget_holds_across_a_restart_and_across_instances(backend: Backend) {
    let db = TestDb::new(backend).await;
    let mut fenix = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT]).await;
    let receiver = Receiver::http(|_| Plan::status(500)).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);
    let verify = format!("/v1/apps/{app}/endpoints/{ep}/verify");
    for _ in 0..2 {
        assert_eq!(post_with_retry_after(&fenix, &verify, json!({})).await.0, 202);
    }
    fenix.restart().await;
    assert_over_the_challenge_limit(&post_with_retry_after(&fenix, &verify, json!({})).await);
    if backend == Backend::Postgres {
        let other = Fenix::start(&db, &[REQUIRED, ONE_ATTEMPT]).await;
        assert_over_the_challenge_limit(&post_with_retry_after(&other, &verify, json!({})).await);
    }
}

crate::on_both_backends!(
    verify_calls_in_a_burst_send_a_few_challenges_then_answer_429_with_retry_after,
    url_changes_back_and_forth_spend_the_same_challenge_budget,
    deleting_and_recreating_endpoints_gets_no_fresh_challenge_budget,
    the_challenge_budget_holds_across_a_restart_and_across_instances,
    a_challenge_to_a_destination_that_turned_private_is_refused,
    an_app_can_ask_for_proof_of_ownership_on_its_own,
    several_instances_on_one_database_send_each_challenge_attempt_once,
    an_endpoint_that_echoes_its_challenge_becomes_active_and_gets_events,
    wrong_failing_late_and_unreachable_answers_leave_the_endpoint_pending_with_the_reason,
    events_sent_while_pending_are_skipped_and_replayable_once_verified,
    a_url_change_sends_the_endpoint_back_to_pending_verification,
    a_paused_pending_endpoint_gets_no_challenge_until_resumed,
    without_the_setting_endpoints_are_active_at_once_and_get_no_challenge,
);
