use super::*;
use crate::secrets::MasterKey;

fn key(byte: u8) -> MasterKey {
    use base64::{engine::general_purpose::STANDARD, Engine as _};
    MasterKey::from_base64(&STANDARD.encode([byte; 32])).unwrap()
}

fn keyring() -> Keyring {
    Keyring { current: key(7), previous: Vec::new() }
}

fn input(json: serde_json::Value) -> AuthIn {
    parse_input(json).unwrap()
}

fn basic() -> serde_json::Value {
    serde_json::json!({"type": "oauth2_client_credentials", "token_url": "https://a.example/t",
        "client_id": "fenix", "client_secret": "s3cret-value", "scope": "hooks:write"})
}

fn built(json: serde_json::Value, previous: Option<&EndpointAuth>) -> Result<EndpointAuth, InvalidAuth> {
    let k = keyring();
    input(json).build("https://a.example/t".into(), previous, &k.current, "ep_1")
}

#[test]
fn a_secret_is_sealed_bound_to_its_endpoint_and_reads_back() {
    let auth = built(basic(), None).unwrap();
    let json = auth.to_json();
    assert!(!json.contains("s3cret-value"), "{json}");
    let back = EndpointAuth::from_json(&json).unwrap();
    assert_eq!(back, auth);
    let Credential::Secret(secret) = back.open(&keyring(), "ep_1").unwrap() else { panic!("a secret") };
    assert_eq!(secret, "s3cret-value");
    assert!(back.open(&keyring(), "ep_2").is_err(), "bound to its endpoint");
    let out = serde_json::to_value(AuthOut::from(&back)).unwrap();
    assert_eq!(out["client_secret_set"], true);
    assert_eq!(out["token_endpoint_auth_method"], "client_secret_basic");
    assert!(!out.to_string().contains("s3cret"));
}

#[test]
fn a_missing_or_misplaced_credential_is_refused_naming_the_field() {
    let mut j = basic();
    j.as_object_mut().unwrap().remove("client_secret");
    assert_eq!(built(j, None).unwrap_err().0, "auth.client_secret is required for client_secret_basic");
    let mut j = basic();
    j["token_endpoint_auth_method"] = "private_key_jwt".into();
    assert!(built(j, None).unwrap_err().0.contains("auth.client_secret is for"));
    let mut j = basic();
    j["client_id"] = "".into();
    assert!(built(j, None).unwrap_err().0.starts_with("auth.client_id"));
    let mut j = basic();
    j["client_secret"] = "x".repeat(2000).into();
    let e = built(j, None).unwrap_err().0;
    assert!(e.starts_with("auth.client_secret") && !e.contains("xxx"), "{e}");
    let mut j = basic();
    j["type"] = "password".into();
    assert!(parse_input(j).unwrap_err().0.starts_with("auth is not"));
    let mut j = basic();
    j["token_endpoint_auth_method"] = "private_key_jwt".into();
    j.as_object_mut().unwrap().remove("client_secret");
    j["private_key"] = "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----".into();
    assert!(built(j, None).unwrap_err().0.starts_with("auth.private_key must be an RSA or EC P-256"));
}

#[test]
fn a_patch_keeps_the_stored_secret_only_for_the_same_client_and_token_url() {
    let first = built(basic(), None).unwrap();
    let mut j = basic();
    j.as_object_mut().unwrap().remove("client_secret");
    j["token_endpoint_auth_method"] = "client_secret_post".into();
    let kept = built(j.clone(), Some(&first)).unwrap();
    assert_eq!(kept.client_secret_sealed, first.client_secret_sealed);
    let k = keyring();
    let moved = input(j.clone()).build("https://b.example/t".into(), Some(&first), &k.current, "ep_1");
    assert!(moved.unwrap_err().0.contains("client_secret is required"));
    j["client_id"] = "other".into();
    assert!(built(j, Some(&first)).is_err());
}

#[test]
fn an_ec_p256_key_signs_es256_and_is_sealed() {
    let pair = rcgen::KeyPair::generate().unwrap();
    let mut j = basic();
    j.as_object_mut().unwrap().remove("client_secret");
    j["token_endpoint_auth_method"] = "private_key_jwt".into();
    j["private_key"] = pair.serialize_pem().into();
    let auth = built(j, None).unwrap();
    assert_eq!(auth.key_algorithm, Some(KeyAlgorithm::ES256));
    assert!(!auth.to_json().contains("PRIVATE KEY"));
    let out = serde_json::to_value(AuthOut::from(&auth)).unwrap();
    assert_eq!((out["private_key_set"].as_bool(), out["client_secret_set"].as_bool()), (Some(true), Some(false)));
}

#[test]
fn a_stored_option_without_its_credential_does_not_read() {
    let auth = built(basic(), None).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&auth.to_json()).unwrap();
    v.as_object_mut().unwrap().remove("client_secret_sealed");
    assert!(EndpointAuth::from_json(&v.to_string()).is_err());
    assert!(EndpointAuth::from_json("{}").is_err());
}

#[test]
fn rekey_reseals_the_credential_under_the_current_key() {
    let old = keyring();
    let auth = built(basic(), None).unwrap();
    let new = Keyring { current: key(9), previous: vec![old.current.clone()] };
    let resealed = auth.resealed(&new, "ep_1").unwrap().expect("re-sealed");
    assert!(resealed.resealed(&new, "ep_1").unwrap().is_none());
    let Credential::Secret(s) = resealed.open(&new, "ep_1").unwrap() else { panic!() };
    assert_eq!(s, "s3cret-value");
    assert!(resealed.open(&old, "ep_1").is_err());
    assert!(auth.unknown_key_id(&Keyring { current: key(1), previous: vec![] }).is_some());
}

const RSA_KEY: &str = include_str!("testdata/rsa_key.pem");
const RSA_PUBLIC: &str = include_str!("testdata/rsa_pub.pem");

#[test]
fn an_rsa_key_signs_rs256_assertions_for_the_token_url() {
    assert_eq!(key_algorithm(RSA_KEY).unwrap(), KeyAlgorithm::RS256);
    let jwt = crate::oauth::fetch::assertion(KeyAlgorithm::RS256, RSA_KEY, "fenix", "https://a.example/t").unwrap();
    let key = jsonwebtoken::DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&["https://a.example/t"]);
    validation.set_issuer(&["fenix"]);
    let claims = jsonwebtoken::decode::<serde_json::Value>(&jwt, &key, &validation).unwrap().claims;
    assert_eq!(claims["sub"], "fenix");
    assert_eq!(claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(), 60);
    let other = crate::oauth::fetch::assertion(KeyAlgorithm::RS256, RSA_KEY, "fenix", "https://a.example/t").unwrap();
    let jti = |t: &str| jsonwebtoken::decode::<serde_json::Value>(t, &key, &validation).unwrap().claims["jti"].clone();
    assert_ne!(jti(&jwt), jti(&other), "a fresh jti each time");
}

#[test]
fn an_ec_key_of_another_curve_is_refused() {
    let e = key_algorithm(include_str!("testdata/p384_key.pem")).unwrap_err();
    assert!(e.0.starts_with("auth.private_key must be an RSA or EC P-256"), "{e}");
}
