use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

use super::*;
use crate::secrets::{Keyring, MasterKey};

const NOW: Millis = 1_800_000_000_000;

fn ca() -> (KeyPair, rcgen::Certificate) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, "Unit CA");
    let cert = params.self_signed(&key).unwrap();
    (key, cert)
}

/// A leaf valid until `not_after` (seconds since the epoch), PEM cert and key.
fn leaf(cn: &str, not_after: i64) -> (String, String) {
    let (ca_key, ca) = ca();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    params.not_before = time::OffsetDateTime::from_unix_timestamp(0).unwrap();
    params.not_after = time::OffsetDateTime::from_unix_timestamp(not_after).unwrap();
    (params.signed_by(&key, &ca, &ca_key).unwrap().pem(), key.serialize_pem())
}

fn master(byte: u8) -> MasterKey {
    use base64::{engine::general_purpose::STANDARD, Engine};
    MasterKey::from_base64(&STANDARD.encode([byte; 32])).unwrap()
}

fn keyring() -> Keyring {
    Keyring { current: master(7), previous: Vec::new() }
}

#[test]
fn a_matching_pair_is_read_with_its_subject_expiry_and_digest() {
    let (cert, key) = leaf("client.example", NOW / 1000 + 86_400 * 90);
    let checked = parse_identity(&cert, &key, NOW).unwrap();
    let stored = checked.seal(&keyring().current, "ep_1");
    assert_eq!(stored.chain.len(), 1);
    let l = stored.leaf().unwrap();
    assert_eq!(l.subject, "CN=client.example");
    assert_eq!(l.not_after, (NOW / 1000 + 86_400 * 90) * 1000);
    assert_eq!(l.sha256.len(), 64);
    assert!(!stored.sealed_key.contains("PRIVATE"), "the key is sealed");
    let pem = stored.identity_pem(&keyring(), "ep_1").unwrap();
    assert!(String::from_utf8(pem).unwrap().starts_with(&key));
    assert!(stored.identity_pem(&keyring(), "ep_2").is_err(), "bound to its endpoint");
}

#[test]
fn refusals_name_the_field_and_never_quote_the_key() {
    let (cert, key) = leaf("a", NOW / 1000 + 86_400);
    let (_, other_key) = leaf("b", NOW / 1000 + 86_400);
    let e = parse_identity(&cert, &other_key, NOW).err().unwrap();
    assert!(matches!(e, InvalidTls::Key(_)) && e.to_string().starts_with("client_key does not match"), "{e}");
    let secret_line = other_key.lines().nth(1).unwrap();
    assert!(!e.to_string().contains(secret_line));
    let e = parse_identity("garbage", &key, NOW).err().unwrap();
    assert!(matches!(e, InvalidTls::Certificate(_)), "{e}");
    let e = parse_identity(&cert, "garbage", NOW).err().unwrap();
    assert!(matches!(e, InvalidTls::Key(_)), "{e}");
    let (old, old_key) = leaf("old", NOW / 1000 - 1);
    let e = parse_identity(&old, &old_key, NOW).err().unwrap();
    assert!(e.to_string().contains("expired"), "{e}");
    assert!(matches!(parse_ca_bundle(&old, NOW), Err(InvalidTls::Ca(_))));
    assert!(matches!(parse_ca_bundle("", NOW), Err(InvalidTls::Ca(_))));
    assert!(matches!(parse_ca_bundle(&"A".repeat(MAX_PEM_BYTES + 1), NOW), Err(InvalidTls::Ca(_))));
    assert_eq!(parse_ca_bundle(&cert, NOW).unwrap().certificates.len(), 1);
}

#[test]
fn material_reads_back_and_reseals_under_the_current_key() {
    let (cert, key) = leaf("a", NOW / 1000 + 86_400 * 10);
    let old = Keyring { current: master(1), previous: Vec::new() };
    let client = parse_identity(&cert, &key, NOW).unwrap().seal(&old.current, "ep_1");
    let tls = EndpointTls { client: Some(client.clone()), ca: None, previous: None };
    assert_eq!(EndpointTls::from_json(&tls.to_json()).unwrap(), tls);
    assert!(tls.expiring(NOW).is_some(), "10 days is within 14");
    let rotated = tls.rotated(client.clone(), NOW + 1000);
    assert_eq!(rotated.live_previous(NOW), Some(&client));
    assert_eq!(rotated.live_previous(NOW + 1000), None);
    let both = Keyring { current: master(2), previous: vec![master(1)] };
    let resealed = rotated.resealed(&both, "ep_1").unwrap().expect("changed");
    assert!(resealed.resealed(&both, "ep_1").unwrap().is_none(), "already under the current key");
    let only_new = Keyring { current: master(2), previous: Vec::new() };
    assert!(resealed.client.unwrap().identity_pem(&only_new, "ep_1").is_ok());
}
