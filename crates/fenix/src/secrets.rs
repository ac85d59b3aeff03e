//! Endpoint signing secrets: generation, owner-supplied secrets, and encryption
//! at rest under the master key.
//!
//! A secret is `whsec_` + standard base64 of 32 random bytes. Both signature
//! schemes can use it: fenix-v1 keys HMAC with the whole string, Standard
//! Webhooks with the decoded bytes. Stored secrets are sealed with
//! XChaCha20-Poly1305; the endpoint id is the associated data, so a ciphertext
//! copied onto another endpoint's row does not open.
//!
//! An endpoint may sign with Ed25519 instead ([`EndpointKey`]): its private
//! key is generated here (ed25519-dalek over the OS CSPRNG), sealed the same
//! way as `whsk_<base64 seed>` (so `fenix rekey` re-seals it with the rest),
//! and never shown; only its public key (`whpk_…`) leaves Fenix.

use std::{fmt, path::Path};

use anyhow::{bail, Context};
use base64::{engine::general_purpose::STANDARD, Engine};
use chacha20poly1305::{
    aead::{Aead, KeyInit, Payload},
    XChaCha20Poly1305, XNonce,
};
use fenix_signing::Ed25519SecretKey;
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::lifecycle::SigningAlgorithm;

const PREFIX: &str = "whsec_";
/// Bytes of randomness in a generated secret.
const GENERATED_BYTES: usize = 32;
/// Least entropy accepted from an owner-supplied secret.
const MIN_SUPPLIED_BYTES: usize = 24;
const MAX_SUPPLIED_BYTES: usize = 128;
/// Format byte of a sealed blob: 1 = key id (8) ‖ nonce (24) ‖ ciphertext.
const SEALED_V1: u8 = 1;

/// An endpoint's signing secret in clear. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret(String);

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret([redacted])")
    }
}

/// Why an owner-supplied secret was refused (the message never repeats it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSecret(&'static str);

impl SigningSecret {
    /// A fresh secret from the operating system's CSPRNG.
    pub fn generate() -> SigningSecret {
        let mut bytes = [0u8; GENERATED_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        SigningSecret(format!("{PREFIX}{}", STANDARD.encode(bytes)))
    }

    /// An owner-supplied secret (e.g. migrated from another platform): `whsec_`
    /// followed by base64 of 24 to 128 bytes.
    pub fn parse(s: &str) -> Result<SigningSecret, InvalidSecret> {
        let Some(b64) = s.strip_prefix(PREFIX) else {
            return Err(InvalidSecret(
                "a secret must start with whsec_ followed by base64 of at least 24 random bytes",
            ));
        };
        let decoded = STANDARD
            .decode(b64)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(b64))
            .map_err(|_| InvalidSecret("the part after whsec_ must be standard base64 (A-Z a-z 0-9 + / =)"))?;
        if decoded.len() < MIN_SUPPLIED_BYTES {
            return Err(InvalidSecret(
                "a secret must carry at least 24 bytes of entropy (32 or more base64 characters after whsec_)",
            ));
        }
        if decoded.len() > MAX_SUPPLIED_BYTES {
            return Err(InvalidSecret("a secret may carry at most 128 bytes"));
        }
        Ok(SigningSecret(s.to_string()))
    }

    /// The secret as sent to its owner and used for signing.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// One signing key version of an endpoint, in clear: an HMAC secret or an
/// Ed25519 private key. `Debug` shows neither.
#[derive(Clone, Debug)]
pub enum EndpointKey {
    /// A `whsec_` secret.
    Hmac(SigningSecret),
    /// An Ed25519 private key.
    Ed25519(Ed25519SecretKey),
}

/// The prefix of a sealed Ed25519 private key (Standard Webhooks' secret-key form).
const ED25519_PREFIX: &str = "whsk_";

impl EndpointKey {
    /// A fresh key of `algorithm` from the operating system's CSPRNG.
    pub fn generate(algorithm: SigningAlgorithm) -> EndpointKey {
        match algorithm {
            SigningAlgorithm::Hmac => EndpointKey::Hmac(SigningSecret::generate()),
            SigningAlgorithm::Ed25519 => {
                let key = ed25519_dalek::SigningKey::generate(&mut rand::rngs::OsRng);
                EndpointKey::Ed25519(Ed25519SecretKey::from_seed(key.to_bytes()))
            }
        }
    }

    /// Which algorithm this key signs with.
    pub fn algorithm(&self) -> SigningAlgorithm {
        match self {
            EndpointKey::Hmac(_) => SigningAlgorithm::Hmac,
            EndpointKey::Ed25519(_) => SigningAlgorithm::Ed25519,
        }
    }

    /// Sealed under `master` for the endpoint `endpoint_id`: the text form
    /// (`whsec_…` or `whsk_…`) inside, so the opened value says its algorithm.
    pub fn seal(&self, master: &MasterKey, endpoint_id: &str) -> Vec<u8> {
        match self {
            EndpointKey::Hmac(secret) => master.seal(secret.expose().as_bytes(), endpoint_id),
            EndpointKey::Ed25519(key) => master.seal(key.to_whsk().as_bytes(), endpoint_id),
        }
    }

    /// What the owner is shown once (create, rotate): an HMAC secret; never
    /// an Ed25519 private key.
    pub fn shown_secret(&self) -> Option<&str> {
        match self {
            EndpointKey::Hmac(secret) => Some(secret.expose()),
            EndpointKey::Ed25519(_) => None,
        }
    }

    /// The public key (`whpk_…`) of an Ed25519 key; `None` for HMAC.
    pub fn public_key(&self) -> Option<String> {
        match self {
            EndpointKey::Hmac(_) => None,
            EndpointKey::Ed25519(key) => Some(key.public_key().to_whpk()),
        }
    }
}

/// The id receivers look an Ed25519 key up by: `k_<ref>.v<version>`, e.g.
/// `k_3f1c9a0b5d7e2f4a6c8e.v2`, where `<ref>` (20 hex digits of a SHA-256
/// of the endpoint id) is the same for every version of one endpoint. Written
/// beside each fenix-v1 `v1a` signature and as `kid` in the app's public-key
/// document, which anyone holding the app's id may read: opaque, so that
/// document lists no endpoint id, while a receiver still tells its own
/// endpoint's keys (one `<ref>`) from the app's others. Stable across `fenix rekey`.
pub fn key_id(endpoint_id: &str, version: i64) -> String {
    let digest = Sha256::digest(format!("fenix-key-id-v1:{endpoint_id}").as_bytes());
    format!("k_{}.v{version}", &hex::encode(digest)[..20])
}

/// The 32-byte key that seals secrets at rest. `Debug` never shows it.
#[derive(Clone)]
pub struct MasterKey {
    key: [u8; 32],
    id: [u8; 8],
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MasterKey(id={})", hex::encode(self.id))
    }
}

impl MasterKey {
    /// Parses base64 of exactly 32 bytes.
    pub fn from_base64(s: &str) -> anyhow::Result<MasterKey> {
        let bytes = STANDARD.decode(s.trim()).context("the master key is not valid base64")?;
        let key: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| anyhow::anyhow!("the master key must be 32 bytes, this one is {} bytes", b.len()))?;
        Ok(MasterKey::from_bytes(key))
    }

    fn from_bytes(key: [u8; 32]) -> MasterKey {
        let digest = Sha256::digest([b"fenix-master-key-id".as_slice(), &key].concat());
        let mut id = [0u8; 8];
        id.copy_from_slice(&digest[..8]);
        MasterKey { key, id }
    }

    /// A new random key.
    pub fn generate() -> MasterKey {
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        MasterKey::from_bytes(key)
    }

    /// Base64 form, as written to a key file or `FENIX_MASTER_KEY`.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.key)
    }

    /// Reads the key file at `path`, creating it (mode 0600) when it does not exist.
    /// Returns the key and whether it was created. A key file that group or
    /// others may read or write is refused: whoever reads it can open every
    /// endpoint secret in the database, and whoever writes it can swap the key.
    pub fn load_or_create_file(path: &Path) -> anyhow::Result<(MasterKey, bool)> {
        match std::fs::File::open(path) {
            Ok(file) => {
                let text = read_private(path, file)?;
                Ok((MasterKey::from_base64(&text).with_context(|| format!("in key file {}", path.display()))?, false))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let key = MasterKey::generate();
                write_private(path, format!("{}\n", key.to_base64()).as_bytes())
                    .with_context(|| format!("creating key file {}", path.display()))?;
                Ok((key, true))
            }
            Err(e) => Err(e).with_context(|| format!("reading key file {}", path.display())),
        }
    }

    /// Seals `plaintext`, bound to `context` (the owning row's id).
    pub fn seal(&self, plaintext: &[u8], context: &str) -> Vec<u8> {
        let cipher = XChaCha20Poly1305::new((&self.key).into());
        let mut nonce = [0u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let ct = cipher
            .encrypt(XNonce::from_slice(&nonce), Payload { msg: plaintext, aad: context.as_bytes() })
            .expect("XChaCha20-Poly1305 encryption cannot fail for in-memory buffers");
        let mut out = Vec::with_capacity(1 + 8 + 24 + ct.len());
        out.push(SEALED_V1);
        out.extend_from_slice(&self.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        out
    }

    /// The key's id as hex: what errors and `master_key_canaries` name a key
    /// by (a digest of the key, so it tells nothing of the key itself).
    pub fn id_hex(&self) -> String {
        hex::encode(self.id)
    }

    /// The key id a sealed blob was made with.
    pub fn blob_key_id(blob: &[u8]) -> Option<[u8; 8]> {
        (blob.len() > 33 && blob[0] == SEALED_V1).then(|| blob[1..9].try_into().expect("8 bytes"))
    }

    /// Opens a blob sealed with this very key, bound to `context`.
    pub fn open(&self, blob: &[u8], context: &str) -> anyhow::Result<Vec<u8>> {
        if MasterKey::blob_key_id(blob) != Some(self.id) {
            bail!("sealed with another master key");
        }
        let cipher = XChaCha20Poly1305::new((&self.key).into());
        cipher
            .decrypt(XNonce::from_slice(&blob[9..33]), Payload { msg: &blob[33..], aad: context.as_bytes() })
            .map_err(|_| anyhow::anyhow!("the sealed value does not open (wrong key or tampered row)"))
    }
}

/// The current master key plus older ones still accepted while `fenix rekey` runs.
#[derive(Clone, Debug)]
pub struct Keyring {
    /// Seals every new value.
    pub current: MasterKey,
    /// Open-only keys.
    pub previous: Vec<MasterKey>,
}

impl Keyring {
    /// Opens a blob with whichever key made it.
    pub fn open(&self, blob: &[u8], context: &str) -> anyhow::Result<Vec<u8>> {
        let id = MasterKey::blob_key_id(blob).context("not a sealed value")?;
        let key = std::iter::once(&self.current)
            .chain(&self.previous)
            .find(|k| k.id == id)
            .context("this value was sealed with a master key Fenix was not given (set FENIX_MASTER_KEY or FENIX_PREVIOUS_MASTER_KEYS)")?;
        key.open(blob, context)
    }

    /// Opens a sealed signing secret.
    pub fn open_secret(&self, blob: &[u8], context: &str) -> anyhow::Result<SigningSecret> {
        let bytes = self.open(blob, context)?;
        Ok(SigningSecret(String::from_utf8(bytes).context("sealed secret is not UTF-8")?))
    }

    /// Opens a sealed endpoint key of either algorithm.
    pub fn open_key(&self, blob: &[u8], context: &str) -> anyhow::Result<EndpointKey> {
        let secret = self.open_secret(blob, context)?;
        if secret.0.starts_with(ED25519_PREFIX) {
            let key = Ed25519SecretKey::parse(&secret.0).map_err(|e| anyhow::anyhow!("sealed Ed25519 key: {e}"))?;
            return Ok(EndpointKey::Ed25519(key));
        }
        Ok(EndpointKey::Hmac(secret))
    }

    /// True when the blob is sealed with the current key (nothing for `rekey` to do).
    pub fn is_current(&self, blob: &[u8]) -> bool {
        MasterKey::blob_key_id(blob) == Some(self.current.id)
    }
}

/// Reads the opened key `file`, which only its owner may read or write
/// (checked on the open file, so a swap between check and read cannot slip through).
#[cfg(unix)]
fn read_private(path: &Path, mut file: std::fs::File) -> anyhow::Result<String> {
    use std::{io::Read, os::unix::fs::PermissionsExt};
    let reading = || format!("reading key file {}", path.display());
    let mode = file.metadata().with_context(reading)?.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        bail!(
            "master key file {path} has mode {mode:04o}: group or others may read or write it. \
             Make it owner-only with `chmod 600 {path}` (and check who could have copied it)",
            path = path.display()
        );
    }
    let mut text = String::new();
    file.read_to_string(&mut text).with_context(reading)?;
    Ok(text)
}

#[cfg(not(unix))]
fn read_private(path: &Path, mut file: std::fs::File) -> anyhow::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    file.read_to_string(&mut text).with_context(|| format!("reading key file {}", path.display()))?;
    Ok(text)
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::{io::Write, os::unix::fs::OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

/// SHA-256 of an API token (admin or app), hex: what the database keeps instead of the token.
pub fn hash_admin_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new random admin token (`fxa_` + 32 bytes hex).
pub fn generate_admin_token() -> String {
    random_token("fxa_")
}

/// A new random app-scoped token (`fxk_` + 32 bytes hex). Its own prefix, so a
/// token found in a log or a repository says at once how much it reaches.
pub fn generate_app_token() -> String {
    random_token("fxk_")
}

/// Makes a token for `principal` and stores its hash: `fxa_…` for an admin,
/// `fxk_…` for an app. Answers the stored row and the token, which exists
/// nowhere else: show it once. Shared by `POST /v1/tokens` and `fenix token create`.
pub async fn issue_token(
    store: &crate::store::Store,
    name: &str,
    principal: crate::access::Principal,
    expires_at: Option<crate::time::Millis>,
) -> crate::store::Result<(crate::store::tokens::TokenRow, String)> {
    let token = match principal {
        crate::access::Principal::Admin => generate_admin_token(),
        crate::access::Principal::App { .. } => generate_app_token(),
    };
    let row = crate::store::tokens::NewToken {
        id: crate::ids::TokenId::new(),
        name: name.to_string(),
        sha256: hash_admin_token(&token),
        principal,
        expires_at,
        created_at: crate::time::now_ms(),
    };
    store.insert_token(&row).await?;
    let stored = crate::store::tokens::TokenRow {
        id: row.id,
        name: row.name,
        principal: row.principal,
        expires_at: row.expires_at,
        created_at: row.created_at,
    };
    Ok((stored, token))
}

fn random_token(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_id_hides_its_endpoint_but_keeps_one_ref_per_endpoint() {
        let (ep, other) = ("ep_01JD0000000000000000000000", "ep_01JD0000000000000000000001");
        let v1 = key_id(ep, 1);
        assert!(v1.starts_with("k_") && v1.ends_with(".v1") && v1.len() == "k_.v1".len() + 20, "{v1}");
        assert!(!v1.contains("01JD"), "{v1}");
        let stem = |id: &str| id.rsplit_once(".v").unwrap().0.to_string();
        assert_eq!(stem(&key_id(ep, 7)), stem(&v1), "one ref for every version of an endpoint");
        assert_ne!(stem(&key_id(other, 1)), stem(&v1));
        assert_eq!(key_id(ep, 1), v1, "stable");
    }

    #[test]
    fn admin_and_app_tokens_say_their_kind_and_carry_32_random_bytes() {
        for (token, prefix) in [(generate_admin_token(), "fxa_"), (generate_app_token(), "fxk_")] {
            let body = token.strip_prefix(prefix).unwrap_or_else(|| panic!("{token} lacks {prefix}"));
            assert_eq!(hex::decode(body).unwrap().len(), 32);
        }
        assert_ne!(generate_app_token(), generate_app_token());
    }

    #[test]
    fn generated_secrets_are_whsec_and_32_bytes() {
        let s = SigningSecret::generate();
        assert!(s.expose().starts_with("whsec_"));
        assert_eq!(STANDARD.decode(&s.expose()[6..]).unwrap().len(), 32);
        assert_ne!(s, SigningSecret::generate());
        assert!(!format!("{s:?}").contains(&s.expose()[6..]));
    }

    #[test]
    fn ed25519_keys_seal_open_and_show_only_their_public_half() {
        let master = MasterKey::generate();
        let ring = Keyring { current: master.clone(), previous: vec![] };
        let key = EndpointKey::generate(SigningAlgorithm::Ed25519);
        assert_eq!(key.shown_secret(), None);
        let public = key.public_key().expect("a public key");
        assert!(public.starts_with("whpk_"));
        let opened = ring.open_key(&key.seal(&master, "ep_1"), "ep_1").unwrap();
        assert_eq!(opened.algorithm(), SigningAlgorithm::Ed25519);
        assert_eq!(opened.public_key().as_deref(), Some(public.as_str()));
        let EndpointKey::Ed25519(private) = &key else { unreachable!() };
        assert!(!format!("{key:?}").contains(&private.to_whsk()[5..]));
        assert!(ring.open_key(&key.seal(&master, "ep_1"), "ep_2").is_err());
        assert_ne!(EndpointKey::generate(SigningAlgorithm::Ed25519).public_key(), Some(public));
    }

    #[test]
    fn hmac_keys_open_as_the_secret_they_were() {
        let master = MasterKey::generate();
        let ring = Keyring { current: master.clone(), previous: vec![] };
        let key = EndpointKey::generate(SigningAlgorithm::Hmac);
        let EndpointKey::Hmac(opened) = ring.open_key(&key.seal(&master, "ep_1"), "ep_1").unwrap() else {
            panic!("an HMAC key")
        };
        assert_eq!(Some(opened.expose()), key.shown_secret());
        assert_eq!(key.public_key(), None);
    }

    #[test]
    fn supplied_secrets_need_the_prefix_and_enough_entropy() {
        assert!(SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_ok());
        assert!(SigningSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_err());
        assert!(SigningSecret::parse("whsec_c2hvcnQ=").is_err());
        assert!(SigningSecret::parse("whsec_not base64 at all!!!!!!!!!!!!!!!!!").is_err());
    }

    #[test]
    fn sealed_secrets_open_only_with_their_key_and_row() {
        let key = MasterKey::generate();
        let ring = Keyring { current: key.clone(), previous: vec![] };
        let blob = key.seal(b"whsec_abc", "ep_1");
        assert_eq!(ring.open(&blob, "ep_1").unwrap(), b"whsec_abc");
        assert!(ring.open(&blob, "ep_2").is_err());
        let other = Keyring { current: MasterKey::generate(), previous: vec![] };
        assert!(other.open(&blob, "ep_1").is_err());
        let rotated = Keyring { current: MasterKey::generate(), previous: vec![key] };
        assert_eq!(rotated.open(&blob, "ep_1").unwrap(), b"whsec_abc");
        assert!(!rotated.is_current(&blob));
    }

    #[test]
    fn a_created_key_file_is_private_and_reloads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fenix.key");
        let (k1, created) = MasterKey::load_or_create_file(&path).unwrap();
        assert!(created);
        let (k2, created) = MasterKey::load_or_create_file(&path).unwrap();
        assert!(!created);
        assert_eq!(k1.to_base64(), k2.to_base64());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_open_to_group_or_others_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fenix.key");
        let (key, _) = MasterKey::load_or_create_file(&path).unwrap();
        for mode in [0o644, 0o640, 0o604, 0o620, 0o602] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let err = format!("{:#}", MasterKey::load_or_create_file(&path).unwrap_err());
            assert!(err.contains(&format!("chmod 600 {}", path.display())), "{mode:o}: {err}");
            assert!(!err.contains(&key.to_base64()), "the key is never in the error");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
        assert_eq!(MasterKey::load_or_create_file(&path).unwrap().0.to_base64(), key.to_base64(), "0400 is private");
    }
}
