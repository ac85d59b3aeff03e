//! Ed25519 (asymmetric) signatures, the `v1a` version of both schemes.
//!
//! With HMAC the receiver holds the same secret as the sender, so whoever can
//! verify can also forge. With Ed25519 the sender alone holds the private key
//! and receivers verify with the public key, which may be published.
//!
//! Serialization follows the Standard Webhooks specification: a private key is
//! `whsk_` + standard base64 of its 32-byte seed, a public key `whpk_` +
//! standard base64 of its 32 bytes, a signature standard base64 of its 64
//! bytes. The signed message is the scheme's own (`<timestamp>.<body>` for
//! fenix-v1, `<msg_id>.<timestamp>.<body>` for Standard Webhooks), so an
//! endpoint that moves from HMAC to Ed25519 signs the same bytes.

use std::fmt;

use base64::Engine as _;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};

use crate::standard_webhooks::BASE64;
use crate::SigningError;

const SECRET_PREFIX: &str = "whsk_";
const PUBLIC_PREFIX: &str = "whpk_";

/// An Ed25519 private key. `Debug` never shows it.
#[derive(Clone)]
pub struct Ed25519SecretKey(SigningKey);

impl fmt::Debug for Ed25519SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Ed25519SecretKey([redacted])")
    }
}

impl Ed25519SecretKey {
    /// The key whose seed is `seed`. The crate makes no randomness: the
    /// caller draws the 32 bytes from a CSPRNG (or uses
    /// `ed25519_dalek::SigningKey::generate` and passes its bytes).
    pub fn from_seed(seed: [u8; 32]) -> Ed25519SecretKey {
        Ed25519SecretKey(SigningKey::from_bytes(&seed))
    }

    /// Parses `whsk_<base64 of the 32-byte seed>`.
    pub fn parse(s: &str) -> Result<Ed25519SecretKey, SigningError> {
        let seed = decode_32(s, SECRET_PREFIX)?;
        Ok(Ed25519SecretKey::from_seed(seed))
    }

    /// The `whsk_…` form, for storing the key (sealed): never for showing it.
    pub fn to_whsk(&self) -> String {
        format!("{SECRET_PREFIX}{}", BASE64.encode(self.0.to_bytes()))
    }

    /// The matching public key.
    pub fn public_key(&self) -> Ed25519PublicKey {
        Ed25519PublicKey(self.0.verifying_key())
    }

    /// The 64-byte signature of `message`, base64.
    pub(crate) fn sign_base64(&self, message: &[u8]) -> String {
        BASE64.encode(self.0.sign(message).to_bytes())
    }
}

/// An Ed25519 public key: what receivers verify `v1a` signatures with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Ed25519PublicKey(VerifyingKey);

impl fmt::Debug for Ed25519PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ed25519PublicKey({})", self.to_whpk())
    }
}

impl Ed25519PublicKey {
    /// Parses `whpk_<base64 of the 32 bytes>`; refuses bytes that are not a
    /// point of the curve.
    pub fn parse(s: &str) -> Result<Ed25519PublicKey, SigningError> {
        Ed25519PublicKey::from_bytes(&decode_32(s, PUBLIC_PREFIX)?)
    }

    /// From the raw 32 bytes (e.g. a JWK's decoded `x`).
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Ed25519PublicKey, SigningError> {
        VerifyingKey::from_bytes(bytes).map(Ed25519PublicKey).map_err(|_| SigningError::InvalidKey)
    }

    /// The raw 32 bytes (a JWK's `x` is their unpadded base64url).
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// The `whpk_…` form, as Standard Webhooks shows public keys.
    pub fn to_whpk(&self) -> String {
        format!("{PUBLIC_PREFIX}{}", BASE64.encode(self.0.to_bytes()))
    }

    /// True when `signature` (64 bytes) is this key's signature of `message`.
    /// Strict verification: no malleable or small-order forms.
    pub(crate) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let Ok(bytes) = <[u8; 64]>::try_from(signature) else {
            return false;
        };
        self.0.verify_strict(message, &ed25519_dalek::Signature::from_bytes(&bytes)).is_ok()
    }
}

fn decode_32(s: &str, prefix: &str) -> Result<[u8; 32], SigningError> {
    let encoded = s.strip_prefix(prefix).ok_or(SigningError::MissingPrefix)?;
    if encoded.is_empty() {
        return Err(SigningError::Empty);
    }
    let bytes = BASE64.decode(encoded).map_err(|_| SigningError::InvalidBase64)?;
    bytes.try_into().map_err(|_| SigningError::InvalidKey)
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 8032 section 7.1, TEST 1 (empty message) and TEST 2 (one byte).
    const RFC_SEED_1: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const RFC_PUBLIC_1: &str = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
    const RFC_SIG_1: &str = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
    const RFC_SEED_2: &str = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
    const RFC_SIG_2: &str = "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00";

    fn key(seed_hex: &str) -> Ed25519SecretKey {
        Ed25519SecretKey::from_seed(hex::decode(seed_hex).unwrap().try_into().unwrap())
    }

    #[test]
    fn signatures_match_the_rfc_8032_test_vectors() {
        let k1 = key(RFC_SEED_1);
        assert_eq!(hex::encode(k1.public_key().to_bytes()), RFC_PUBLIC_1);
        assert_eq!(k1.sign_base64(b""), BASE64.encode(hex::decode(RFC_SIG_1).unwrap()));
        assert_eq!(key(RFC_SEED_2).sign_base64(&[0x72]), BASE64.encode(hex::decode(RFC_SIG_2).unwrap()));
        assert!(k1.public_key().verifies(b"", &hex::decode(RFC_SIG_1).unwrap()));
        assert!(!k1.public_key().verifies(b"x", &hex::decode(RFC_SIG_1).unwrap()));
    }

    #[test]
    fn keys_round_trip_through_their_text_forms() {
        let k = key(RFC_SEED_1);
        let whsk = k.to_whsk();
        assert!(whsk.starts_with("whsk_"));
        assert_eq!(Ed25519SecretKey::parse(&whsk).unwrap().public_key(), k.public_key());
        let whpk = k.public_key().to_whpk();
        assert!(whpk.starts_with("whpk_"));
        assert_eq!(Ed25519PublicKey::parse(&whpk), Ok(k.public_key()));
    }

    #[test]
    fn malformed_keys_are_refused_with_their_reason() {
        assert_eq!(Ed25519PublicKey::parse("whsec_AAAA").unwrap_err(), SigningError::MissingPrefix);
        assert_eq!(Ed25519PublicKey::parse("whpk_").unwrap_err(), SigningError::Empty);
        assert_eq!(Ed25519PublicKey::parse("whpk_%%%").unwrap_err(), SigningError::InvalidBase64);
        assert_eq!(Ed25519PublicKey::parse("whpk_AAAA").unwrap_err(), SigningError::InvalidKey);
        assert_eq!(Ed25519SecretKey::parse("whpk_AAAA").unwrap_err(), SigningError::MissingPrefix);
    }

    #[test]
    fn debug_never_shows_the_private_key() {
        let k = key(RFC_SEED_1);
        let seed_b64 = k.to_whsk()["whsk_".len()..].to_string();
        assert!(!format!("{k:?}").contains(&seed_b64));
        assert!(!format!("{k:?}").contains(RFC_SEED_1));
    }

    #[test]
    fn a_wrong_length_signature_never_verifies() {
        let k = key(RFC_SEED_1);
        assert!(!k.public_key().verifies(b"", &[0u8; 63]));
    }
}
