//! Ed25519 endpoints: Fenix signs with a private key it made and never shows;
//! receivers verify real deliveries with the public key read from the API and
//! from the app's public key document (JWKS, no token); a rotation's overlap
//! carries both signatures (also from HMAC to Ed25519); `fenix rekey` re-seals
//! the private keys; and the Ed25519 receivers of docs/receiving.md verify
//! what the binary sends.

use base64::{
    engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD},
    Engine,
};
use fenix_signing::{Ed25519PublicKey, Scheme, Verified, VerifyError, VerifyKey};
use serde_json::{json, Value};

use super::{
    common::{
        attempts, now_unix, rotate, run_fenix, scheme_of, send, signatures, signed_request, signed_with,
        succeeded_delivery, tampered, verify as verify_hmac, with_env, KEY_A, KEY_B,
    },
    snippets::{available, forward, wait_for, SnippetProcess},
    support::{fenix::base_env, Backend, Fenix, Plan, Received, Receiver, TestDb},
};

/// Verifies a received request with Ed25519 public keys (and nothing else).
fn verify_ed(req: &Received, keys: &[Ed25519PublicKey]) -> Result<Verified, VerifyError> {
    let signed = signed_request(req);
    let keys: Vec<VerifyKey<'_>> = keys.iter().map(VerifyKey::Ed25519).collect();
    fenix_signing::verify_with(&signed, &keys, fenix_signing::DEFAULT_TOLERANCE, now_unix())
}

fn whpk(value: &Value) -> Ed25519PublicKey {
    Ed25519PublicKey::parse(value.as_str().unwrap_or_else(|| panic!("a whpk_ key: {value}"))).expect("a public key")
}

/// Creates an Ed25519 endpoint of `scheme`; answers the create response.
async fn create_ed25519(fenix: &Fenix, app: &str, url: &str, scheme: Scheme) -> Value {
    let body = json!({"url": url, "signature_scheme": scheme.as_str(), "signing_algorithm": "ed25519"});
    let (status, out) = fenix.call("POST", &format!("/v1/apps/{app}/endpoints"), Some(body)).await;
    assert_eq!(status, 201, "create: {out}");
    out
}

/// The endpoint's live public keys as the API lists them.
async fn public_keys(fenix: &Fenix, app: &str, ep: &str) -> Vec<Value> {
    let (status, out) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}/public-keys"), None).await;
    assert_eq!(status, 200, "public keys: {out}");
    out["data"].as_array().expect("data").clone()
}

/// The app's key document, fetched like a receiver does: no token. Answers
/// status, `Cache-Control` and body.
async fn jwks(fenix: &Fenix, app: &str) -> (u16, String, Value) {
    let resp = reqwest::Client::new().get(format!("{}/v1/apps/{app}/jwks.json", fenix.base)).send().await.unwrap();
    let status = resp.status().as_u16();
    let cache = resp.headers().get("cache-control").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (status, cache, resp.json().await.unwrap_or(Value::Null))
}

/// The key id signatures and documents name an endpoint's key of `version` by (opaque).
fn kid(endpoint_id: &str, version: i64) -> String {
    ::fenix::secrets::key_id(endpoint_id, version)
}

/// The public key of a JWK, from its `x` alone (as a JOSE library reads it).
fn jwk_key(jwk: &Value) -> Ed25519PublicKey {
    assert_eq!(
        (jwk["kty"].as_str(), jwk["crv"].as_str(), jwk["alg"].as_str()),
        (Some("OKP"), Some("Ed25519"), Some("EdDSA"))
    );
    let x = URL_SAFE_NO_PAD.decode(jwk["x"].as_str().expect("x")).expect("base64url x");
    Ed25519PublicKey::from_bytes(&x.try_into().expect("32 bytes")).expect("a public key")
}

async fn an_ed25519_endpoint_is_verified_with_the_public_key_from_the_api_and_from_the_jwks(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let hmac = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    assert_eq!(hmac["signing_algorithm"], "hmac");
    let mut eps = Vec::new();
    for scheme in [Scheme::FenixV1, Scheme::StandardWebhooks] {
        let ep = create_ed25519(&fenix, &app, &receiver.url, scheme).await;
        assert_eq!(ep["signing_algorithm"], "ed25519", "{ep}");
        assert!(ep.get("secret").is_none(), "no secret is shown for an Ed25519 endpoint: {ep}");
        eps.push((scheme, ep["id"].as_str().unwrap().to_string(), whpk(&ep["public_key"])));
    }

    let (status, cache, doc) = jwks(&fenix, &app).await;
    assert_eq!(status, 200, "{doc}");
    assert_eq!(cache, "public, max-age=300");
    let keys = doc["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 2, "the two Ed25519 endpoints' keys, not the HMAC one's: {doc}");
    let event = send(&fenix, &app, 1).await;
    let received = wait_for(&receiver, 3).await;
    for (scheme, ep, created_key) in &eps {
        let listed = public_keys(&fenix, &app, ep).await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0]["key_id"], kid(ep, 1));
        assert_eq!(whpk(&listed[0]["public_key"]), *created_key, "the API shows the key the create answer showed");
        let jwk = keys.iter().find(|k| k["kid"] == kid(ep, 1).as_str()).expect("the endpoint's JWK");
        let members: Vec<&str> = jwk.as_object().unwrap().keys().map(String::as_str).collect();
        let mut members = members;
        members.sort_unstable();
        assert_eq!(members, ["alg", "crv", "expires_at", "kid", "kty", "public_key", "use", "x"], "{jwk}");
        assert!(!doc.to_string().contains(ep.as_str()), "the public document names no endpoint: {doc}");
        assert_eq!(jwk["expires_at"], Value::Null);
        let from_jwks = jwk_key(jwk);
        assert_eq!(from_jwks, *created_key);

        let dlv = succeeded_delivery(&fenix, &app, &event, ep).await;
        let id = attempt_id(&fenix, &app, &dlv).await;
        let request = received.iter().find(|r| r.header("x-fenix-delivery-id") == id).expect("this endpoint's request");
        assert_eq!(scheme_of(request), *scheme);
        let entries = signatures(request);
        assert_eq!(entries.len(), 1, "{entries:?}");
        match scheme {
            Scheme::FenixV1 => assert!(entries[0].starts_with(&format!("v1a={}:", kid(ep, 1))), "{entries:?}"),
            Scheme::StandardWebhooks => assert!(entries[0].starts_with("v1a,"), "{entries:?}"),
        }
        assert_eq!(verify_ed(request, &[from_jwks]).map(|v| v.secret_index), Ok(0), "{scheme}: key from the JWKS");
        let mut tampered = request.clone();
        tampered.body = tampered.body.iter().map(|b| if *b == b'1' { b'2' } else { *b }).collect();
        assert_eq!(verify_ed(&tampered, &[from_jwks]), Err(VerifyError::NoMatch), "{scheme}: altered body");
        let other = eps.iter().find(|(s, _, _)| s != scheme).unwrap().2;
        assert_eq!(verify_ed(request, &[other]), Err(VerifyError::NoMatch), "another endpoint's key");
        assert_eq!(signed_with(&fenix, &app, &event, ep).await, json!([1]));
    }

    // An app without Ed25519 keys, an id that names no app and an app's uid all answer the
    // same: the public document cannot tell which app ids or uids exist. No token is checked.
    let empty = fenix.create_app("globex").await;
    let without_keys = jwks(&fenix, &empty).await;
    assert_eq!(without_keys, (200, "public, max-age=300".into(), json!({"keys": []})));
    for app in ["app_00000000000000000000000000", "acme", "globex"] {
        assert_eq!(jwks(&fenix, app).await, without_keys, "{app}");
    }
    assert_eq!(public_keys(&fenix, &app, hmac["id"].as_str().unwrap()).await, Vec::<Value>::new());
}

/// The `X-Fenix-Delivery-Id` of a delivery's last attempt.
async fn attempt_id(fenix: &Fenix, app: &str, delivery: &Value) -> String {
    let list = attempts(fenix, app, delivery["id"].as_str().unwrap()).await;
    list.last().expect("an attempt")["id"].as_str().unwrap().to_string()
}

async fn a_rotation_overlap_sends_both_signatures_also_from_hmac_to_ed25519(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;

    // Ed25519 → Ed25519.
    let ed = create_ed25519(&fenix, &app, &receiver.url, Scheme::FenixV1).await;
    let ed_id = ed["id"].as_str().unwrap().to_string();
    let old_key = whpk(&ed["public_key"]);
    let rotated = rotate(&fenix, &app, &ed_id, json!({"overlap_seconds": 3600})).await;
    assert_eq!(rotated["signing_algorithm"], "ed25519");
    assert_eq!(rotated["key_id"], kid(&ed_id, 2));
    assert!(rotated.get("secret").is_none(), "{rotated}");
    let new_key = whpk(&rotated["public_key"]);
    assert_ne!(new_key, old_key);
    let listed: Vec<_> = public_keys(&fenix, &app, &ed_id).await.iter().map(|k| whpk(&k["public_key"])).collect();
    assert_eq!(listed, [new_key, old_key], "both keys sign during the overlap, newest first");
    let (_, _, doc) = jwks(&fenix, &app).await;
    let kids: Vec<_> = doc["keys"].as_array().unwrap().iter().map(|k| k["kid"].clone()).collect();
    assert_eq!(kids, [json!(kid(&ed_id, 2)), json!(kid(&ed_id, 1))]);
    assert!(doc["keys"][1]["expires_at"].is_string(), "the old key's end is published: {doc}");

    // HMAC → Ed25519 (Standard Webhooks).
    let hm = fenix.create_endpoint(&app, json!({"url": receiver.url, "signature_scheme": "standard-webhooks"})).await;
    let hm_id = hm["id"].as_str().unwrap().to_string();
    let secret = hm["secret"].as_str().unwrap().to_string();
    let moved = rotate(&fenix, &app, &hm_id, json!({"overlap_seconds": 3600, "signing_algorithm": "ed25519"})).await;
    let moved_key = whpk(&moved["public_key"]);
    let (status, read) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{hm_id}"), None).await;
    assert_eq!((status, &read["signing_algorithm"]), (200, &json!("ed25519")), "{read}");

    let event = send(&fenix, &app, 1).await;
    let received = wait_for(&receiver, 2).await;
    for (ep, scheme) in [(&ed_id, Scheme::FenixV1), (&hm_id, Scheme::StandardWebhooks)] {
        let dlv = succeeded_delivery(&fenix, &app, &event, ep).await;
        let id = attempt_id(&fenix, &app, &dlv).await;
        let request = received.iter().find(|r| r.header("x-fenix-delivery-id") == id).expect("request");
        assert_eq!(scheme_of(request), scheme);
        assert_eq!(signed_with(&fenix, &app, &event, ep).await, json!([2, 1]));
        let entries = signatures(request);
        assert_eq!(entries.len(), 2, "two signatures during the overlap: {entries:?}");
        if *ep == ed_id {
            assert!(entries[0].starts_with(&format!("v1a={}:", kid(&ed_id, 2))), "newest first: {entries:?}");
            assert!(entries[1].starts_with(&format!("v1a={}:", kid(&ed_id, 1))), "{entries:?}");
            assert_eq!(verify_ed(request, &[old_key]).map(|v| v.secret_index), Ok(0), "the old key alone verifies");
            assert_eq!(verify_ed(request, &[new_key]).map(|v| v.secret_index), Ok(0), "the new key alone verifies");
        } else {
            assert!(entries[0].starts_with("v1a,") && entries[1].starts_with("v1,"), "{entries:?}");
            assert!(verify_hmac(request, &[&secret]).is_ok(), "an HMAC receiver keeps verifying");
            assert!(verify_ed(request, &[moved_key]).is_ok(), "an Ed25519 receiver verifies already");
        }
    }

    // No overlap: only the new key signs from then on.
    let last = rotate(&fenix, &app, &ed_id, json!({"overlap_seconds": 0})).await;
    let last_key = whpk(&last["public_key"]);
    let listed: Vec<_> = public_keys(&fenix, &app, &ed_id).await.iter().map(|k| whpk(&k["public_key"])).collect();
    assert_eq!(listed, [last_key]);
    let event = send(&fenix, &app, 2).await;
    let dlv = succeeded_delivery(&fenix, &app, &event, &ed_id).await;
    let id = attempt_id(&fenix, &app, &dlv).await;
    let received = wait_for(&receiver, 4).await;
    let request = received.iter().find(|r| r.header("x-fenix-delivery-id") == id).expect("request");
    assert_eq!(signatures(request).len(), 1);
    assert!(verify_ed(request, &[last_key]).is_ok());
    assert_eq!(verify_ed(request, &[new_key, old_key]), Err(VerifyError::NoMatch), "retired keys no longer sign");
}

async fn an_ed25519_private_key_is_never_answered_nor_logged_and_rekey_reseals_it(backend: Backend) {
    let db = TestDb::new(backend).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let mut fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_A)]).await;
    let app = fenix.create_app("acme").await;
    let mut answers = Vec::new();
    let created = create_ed25519(&fenix, &app, &receiver.url, Scheme::FenixV1).await;
    let ep = created["id"].as_str().unwrap().to_string();
    let public = whpk(&created["public_key"]);
    answers.push(created.to_string());
    let rotated = rotate(&fenix, &app, &ep, json!({"overlap_seconds": 3600})).await;
    answers.push(rotated.to_string());
    let (status, refused) = fenix
        .call("POST", &format!("/v1/apps/{app}/endpoints"), Some(json!({"url": receiver.url, "signing_algorithm": "ed25519", "secret": super::common::random_secret(32)})))
        .await;
    assert_eq!((status, &refused["error"]["code"]), (422, &json!("invalid_secret")), "{refused}");
    let (status, refused) = fenix
        .call(
            "POST",
            &format!("/v1/apps/{app}/endpoints"),
            Some(json!({"url": receiver.url, "signing_algorithm": "rsa"})),
        )
        .await;
    assert_eq!(status, 422, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("signing_algorithm"), "{refused}");
    let event = send(&fenix, &app, 1).await;
    succeeded_delivery(&fenix, &app, &event, &ep).await;
    for path in [
        format!("/v1/apps/{app}/endpoints"),
        format!("/v1/apps/{app}/endpoints/{ep}"),
        format!("/v1/apps/{app}/endpoints/{ep}/public-keys"),
        format!("/v1/apps/{app}/deliveries"),
        "/v1/settings".to_string(),
    ] {
        let (status, out) = fenix.call("GET", &path, None).await;
        assert_eq!(status, 200, "{path}: {out}");
        answers.push(out.to_string());
    }
    answers.push(jwks(&fenix, &app).await.2.to_string());

    // The private keys, opened from the database with the master key (as only Fenix can).
    let keyring = ::fenix::secrets::Keyring {
        current: ::fenix::secrets::MasterKey::from_base64(KEY_A).unwrap(),
        previous: vec![],
    };
    let sealed = sealed_keys(&db, &ep).await;
    assert_eq!(sealed.len(), 2, "two key versions");
    let mut needles = Vec::new();
    for blob in &sealed {
        let ::fenix::secrets::EndpointKey::Ed25519(key) = keyring.open_key(blob, &ep).expect("opens") else {
            panic!("an Ed25519 key")
        };
        let whsk = key.to_whsk();
        let seed = STANDARD.decode(&whsk["whsk_".len()..]).unwrap();
        needles.extend([whsk.clone(), whsk["whsk_".len()..].trim_end_matches('=').to_string(), hex::encode(&seed)]);
        needles.push(URL_SAFE_NO_PAD.encode(&seed));
    }
    let logs = fenix.logs();
    assert!(!logs.is_empty());
    for needle in &needles {
        for answer in &answers {
            assert!(!answer.contains(needle.as_str()), "an API answer shows a private key: {answer}");
        }
        assert!(!logs.contains(needle.as_str()), "the log shows a private key");
    }

    // `fenix rekey` re-seals both versions under the new master key; the public key is unchanged and still verifies.
    fenix.kill9();
    let env =
        with_env(with_env(base_env(&db), "FENIX_MASTER_KEY", Some(KEY_B)), "FENIX_PREVIOUS_MASTER_KEYS", Some(KEY_A));
    let rekey = run_fenix(&env, &["rekey"], std::time::Duration::from_secs(30)).await;
    assert!(rekey.status.success(), "rekey: {}\n{}", rekey.stdout, rekey.stderr);
    assert!(rekey.stdout.contains("re-encrypted 2 secret"), "{}", rekey.stdout);
    let resealed = sealed_keys(&db, &ep).await;
    let new_ring = ::fenix::secrets::Keyring {
        current: ::fenix::secrets::MasterKey::from_base64(KEY_B).unwrap(),
        previous: vec![],
    };
    for (old, new) in sealed.iter().zip(&resealed) {
        assert_ne!(old, new, "re-sealed");
        assert!(new_ring.is_current(new));
        let (a, b) = (keyring.open_key(old, &ep).unwrap(), new_ring.open_key(new, &ep).unwrap());
        assert_eq!(a.public_key(), b.public_key(), "the same key, sealed again");
    }
    let fenix = Fenix::start(&db, &[("FENIX_MASTER_KEY", KEY_B)]).await;
    let event = send(&fenix, &app, 2).await;
    let dlv = succeeded_delivery(&fenix, &app, &event, &ep).await;
    let id = attempt_id(&fenix, &app, &dlv).await;
    let received = wait_for(&receiver, 2).await;
    let request = received.iter().find(|r| r.header("x-fenix-delivery-id") == id).expect("request");
    assert_eq!(
        verify_ed(request, &[public]).map(|v| v.secret_index),
        Ok(0),
        "the first key still verifies after rekey"
    );
    assert!(!fenix.logs().contains("cannot open endpoint secret"));
}

/// The sealed key versions of `ep`, newest first, read straight from the database.
async fn sealed_keys(db: &TestDb, ep: &str) -> Vec<Vec<u8>> {
    use sqlx::Connection;
    let sql = "SELECT sealed FROM endpoint_secrets WHERE endpoint_id = $1 ORDER BY version DESC";
    match db.backend {
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await.expect("connect");
            sqlx::query_scalar(sql).bind(ep).fetch_all(&mut conn).await.expect("sealed keys")
        }
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.expect("connect");
            sqlx::query_scalar(sql).bind(ep).fetch_all(&mut conn).await.expect("sealed keys")
        }
    }
}

crate::on_both_backends!(
    an_ed25519_endpoint_is_verified_with_the_public_key_from_the_api_and_from_the_jwks,
    a_rotation_overlap_sends_both_signatures_also_from_hmac_to_ed25519,
    an_ed25519_private_key_is_never_answered_nor_logged_and_rekey_reseals_it,
);

/// A documented Ed25519 receiver, running.
enum Running {
    Process(SnippetProcess),
    Rust(String, tokio::task::JoinHandle<()>),
}

impl Running {
    async fn start(snippet: &str, scheme: Scheme, keys: &[&str]) -> Running {
        if snippet != "rust-ed25519" {
            return Running::Process(SnippetProcess::start(snippet, keys).await);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/webhooks", listener.local_addr().expect("addr"));
        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        let router = super::rust_ed25519_receiver::router(scheme, &keys);
        Running::Rust(
            url,
            tokio::spawn(async move {
                let _ = axum::serve(listener, router).await;
            }),
        )
    }

    fn url(&self) -> &str {
        match self {
            Running::Process(p) => &p.url,
            Running::Rust(url, _) => url,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Running::Rust(_, task) = self {
            task.abort();
        }
    }
}

/// Fenix delivers from an Ed25519 endpoint before and during a rotation's
/// overlap; the documented receiver, given the old or the new public key (as
/// the JWKS serves them), accepts what it should and refuses altered bodies;
/// then Fenix delivers to the documented receiver itself.
async fn documented_ed25519_receiver_verifies_what_fenix_sends(snippet: &str, scheme: Scheme) {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let recorder = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = create_ed25519(&fenix, &app, &recorder.url, scheme).await;
    let ep_id = ep["id"].as_str().unwrap();
    fenix.send_event(&app, json!({"type": "invoice.paid", "data": {"amount": 100, "note": "ünïcødé ✓"}})).await;
    let before = wait_for(&recorder, 1).await[0].clone();
    rotate(&fenix, &app, ep_id, json!({"overlap_seconds": 3600})).await;
    fenix.send_event(&app, json!({"type": "invoice.paid", "data": {"amount": 100, "n": 2}})).await;
    let during = wait_for(&recorder, 2).await[1].clone();
    assert_eq!(signatures(&during).len(), 2, "two signatures during the overlap");
    let (_, _, doc) = jwks(&fenix, &app).await;
    let whpk_of = |kid: String| {
        let jwk = doc["keys"].as_array().unwrap().iter().find(|k| k["kid"] == kid.as_str()).expect("kid").clone();
        jwk["public_key"].as_str().unwrap().to_string()
    };
    let (new, old) = (whpk_of(kid(ep_id, 2)), whpk_of(kid(ep_id, 1)));

    let knows_old = Running::start(snippet, scheme, &[&old]).await;
    assert_eq!(forward(knows_old.url(), &before, &before.body).await, (200, "ok".into()), "{snippet}: old key");
    assert_eq!(forward(knows_old.url(), &during, &during.body).await, (200, "ok".into()), "{snippet}: overlap");
    assert_eq!(forward(knows_old.url(), &before, &before.body).await, (200, "duplicate".into()), "{snippet}: again");
    assert_eq!(forward(knows_old.url(), &during, &tampered(&during.body)).await.0, 401, "{snippet}: tampered body");
    let knows_new = Running::start(snippet, scheme, &[&new]).await;
    assert_eq!(forward(knows_new.url(), &before, &before.body).await.0, 401, "{snippet}: signed by the old key only");
    assert_eq!(forward(knows_new.url(), &during, &during.body).await, (200, "ok".into()), "{snippet}: overlap");
    assert_eq!(forward(knows_new.url(), &during, &tampered(&during.body)).await.0, 401, "{snippet}: tampered body");

    let (status, out) =
        fenix.call("PATCH", &format!("/v1/apps/{app}/endpoints/{ep_id}"), Some(json!({"url": knows_new.url()}))).await;
    assert_eq!(status, 200, "{out}");
    let event = send(&fenix, &app, 3).await;
    let delivery = succeeded_delivery(&fenix, &app, &event, ep_id).await;
    let list = attempts(&fenix, &app, delivery["id"].as_str().unwrap()).await;
    assert_eq!(list.len(), 1, "{snippet}: accepted at the first attempt: {list:?}");
    assert_eq!((list[0]["response_status"].clone(), list[0]["response_excerpt"].clone()), (json!(200), json!("ok")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_ed25519_receiver_verifies_fenix_v1_and_standard_webhooks_deliveries() {
    documented_ed25519_receiver_verifies_what_fenix_sends("rust-ed25519", Scheme::FenixV1).await;
    documented_ed25519_receiver_verifies_what_fenix_sends("rust-ed25519", Scheme::StandardWebhooks).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_ed25519_receiver_with_built_in_crypto_verifies_both_schemes() {
    if available("node", &["--version"], "node") {
        documented_ed25519_receiver_verifies_what_fenix_sends("ed25519-node", Scheme::FenixV1).await;
        documented_ed25519_receiver_verifies_what_fenix_sends("ed25519-node", Scheme::StandardWebhooks).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_ed25519_receiver_with_cryptography_verifies_both_schemes() {
    if available("python3", &["-c", "import cryptography"], "the cryptography Python package") {
        documented_ed25519_receiver_verifies_what_fenix_sends("ed25519-python", Scheme::FenixV1).await;
        documented_ed25519_receiver_verifies_what_fenix_sends("ed25519-python", Scheme::StandardWebhooks).await;
    }
}

/// The official Python `standardwebhooks` package skips `v1a` entries: during
/// a move from HMAC to Ed25519 it still verifies the `v1` one beside them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_package_verifies_the_hmac_signature_beside_an_ed25519_one() {
    if !available("python3", &["-c", "import standardwebhooks"], "the standardwebhooks Python package") {
        return;
    }
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let recorder = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": recorder.url, "signature_scheme": "standard-webhooks"})).await;
    let (ep_id, secret) = (ep["id"].as_str().unwrap(), ep["secret"].as_str().unwrap());
    rotate(&fenix, &app, ep_id, json!({"overlap_seconds": 3600, "signing_algorithm": "ed25519"})).await;
    fenix.send_event(&app, json!({"type": "invoice.paid", "data": {"amount": 100}})).await;
    let during = wait_for(&recorder, 1).await[0].clone();
    assert_eq!(signatures(&during).len(), 2);
    let official = SnippetProcess::start("standard-webhooks-python", &[secret]).await;
    assert_eq!(forward(&official.url, &during, &during.body).await, (200, "ok".into()));
    assert_eq!(forward(&official.url, &during, &tampered(&during.body)).await.0, 401);
}
