//! An endpoint's `auth` option: the API's body ([`AuthIn`]), checked and
//! sealed into the stored form ([`EndpointAuth`], the `auth` column's JSON),
//! and what reads answer ([`AuthOut`]).
//!
//! The client secret and the private key are sealed under the master key,
//! bound to the endpoint and to their use ([`context`]), and never answered:
//! a read says only whether one is set. A `PATCH` whose `auth` leaves the
//! credential out keeps the stored one, but only when the method needs the
//! same kind of credential and `token_url` and `client_id` are unchanged: a
//! stored secret is never sent to a token URL its owner did not give it for.

use base64::{engine::general_purpose::STANDARD, Engine as _};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::secrets::{Keyring, MasterKey};

/// Longest `client_id`.
const MAX_CLIENT_ID: usize = 256;
/// Longest `client_secret`.
const MAX_CLIENT_SECRET: usize = 1024;
/// Longest `scope` and `audience`.
const MAX_SCOPE: usize = 1024;
/// Longest `private_key` (PEM).
const MAX_PRIVATE_KEY: usize = 16 * 1024;

/// The grant: only client credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = EndpointAuthType)]
pub enum AuthType {
    /// RFC 6749 §4.4.
    Oauth2ClientCredentials,
}

/// How Fenix authenticates to the token endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = TokenEndpointAuthMethod)]
pub enum AuthMethod {
    /// HTTP Basic with `client_id` and `client_secret` (the default).
    #[default]
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A JWT client assertion signed with `private_key` (RFC 7523).
    PrivateKeyJwt,
}

impl AuthMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    fn uses_secret(self) -> bool {
        self != AuthMethod::PrivateKeyJwt
    }
}

/// What a private key signs client assertions with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyAlgorithm {
    RS256,
    ES256,
}

impl KeyAlgorithm {
    pub fn jwt(self) -> jsonwebtoken::Algorithm {
        match self {
            KeyAlgorithm::RS256 => jsonwebtoken::Algorithm::RS256,
            KeyAlgorithm::ES256 => jsonwebtoken::Algorithm::ES256,
        }
    }

    /// The signing key of `pem` for this algorithm.
    pub fn key(self, pem: &[u8]) -> jsonwebtoken::errors::Result<jsonwebtoken::EncodingKey> {
        match self {
            KeyAlgorithm::RS256 => jsonwebtoken::EncodingKey::from_rsa_pem(pem),
            KeyAlgorithm::ES256 => jsonwebtoken::EncodingKey::from_ec_pem(pem),
        }
    }
}

/// An endpoint's OAuth2 client as stored in its `auth` column: the
/// credential sealed (base64 of the blob).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointAuth {
    #[serde(rename = "type")]
    pub kind: AuthType,
    /// Checked by the destination policy when set, and before every fetch.
    pub token_url: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    pub token_endpoint_auth_method: AuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret_sealed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    private_key_sealed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_algorithm: Option<KeyAlgorithm>,
}

/// The credential of an [`EndpointAuth`], opened. `Debug` shows none of it.
pub enum Credential {
    Secret(String),
    Key { algorithm: KeyAlgorithm, pem: String },
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential([redacted])")
    }
}

/// What binds a sealed credential to its endpoint and use.
fn context(endpoint_id: &str, what: &str) -> String {
    format!("{endpoint_id}/oauth/{what}")
}

impl EndpointAuth {
    /// Reads the column; text that is not the stored shape, or a credential
    /// that does not fit the method, is an error (never quoting the text).
    pub fn from_json(json: &str) -> Result<EndpointAuth, &'static str> {
        let auth: EndpointAuth = serde_json::from_str(json).map_err(|_| "is not a stored auth object")?;
        let sealed_ok = |s: &Option<String>| s.as_deref().is_some_and(|b| STANDARD.decode(b).is_ok());
        let fits = if auth.token_endpoint_auth_method.uses_secret() {
            sealed_ok(&auth.client_secret_sealed) && auth.private_key_sealed.is_none()
        } else {
            sealed_ok(&auth.private_key_sealed) && auth.key_algorithm.is_some() && auth.client_secret_sealed.is_none()
        };
        if !fits {
            return Err("holds no sealed credential of its method");
        }
        Ok(auth)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("strings serialize")
    }

    /// Names this client and its credential (hex of SHA-256 of the stored
    /// form): a token cached for another one is not used.
    pub fn fingerprint(&self) -> String {
        hex::encode(Sha256::digest(self.to_json().as_bytes()))
    }

    /// The credential in clear (for a token fetch only).
    pub fn open(&self, keyring: &Keyring, endpoint_id: &str) -> anyhow::Result<Credential> {
        let open = |sealed: &str, what: &str| -> anyhow::Result<String> {
            let clear = keyring.open(&STANDARD.decode(sealed)?, &context(endpoint_id, what))?;
            Ok(String::from_utf8(clear)?)
        };
        match (&self.client_secret_sealed, &self.private_key_sealed, self.key_algorithm) {
            (Some(s), _, _) => Ok(Credential::Secret(open(s, "client_secret")?)),
            (None, Some(k), Some(algorithm)) => Ok(Credential::Key { algorithm, pem: open(k, "private_key")? }),
            _ => anyhow::bail!("the auth option holds no credential"),
        }
    }

    /// The same option with its credential under the keyring's current key
    /// (for `fenix rekey`); `None` when it is already.
    pub fn resealed(&self, keyring: &Keyring, endpoint_id: &str) -> anyhow::Result<Option<EndpointAuth>> {
        let mut out = self.clone();
        let (slot, what) = match (&mut out.client_secret_sealed, &mut out.private_key_sealed) {
            (Some(s), _) => (s, "client_secret"),
            (None, Some(k)) => (k, "private_key"),
            (None, None) => return Ok(None),
        };
        let blob = STANDARD.decode(&*slot)?;
        if keyring.is_current(&blob) {
            return Ok(None);
        }
        let ctx = context(endpoint_id, what);
        *slot = STANDARD.encode(keyring.current.seal(&keyring.open(&blob, &ctx)?, &ctx));
        Ok(Some(out))
    }

    /// The key id of the sealed credential, when no key of `keyring` made it.
    pub fn unknown_key_id(&self, keyring: &Keyring) -> Option<String> {
        let sealed = self.client_secret_sealed.as_ref().or(self.private_key_sealed.as_ref())?;
        let id = MasterKey::blob_key_id(&STANDARD.decode(sealed).ok()?).map(hex::encode)?;
        let known = std::iter::once(&keyring.current).chain(&keyring.previous).any(|k| k.id_hex() == id);
        (!known).then_some(id)
    }
}

/// An endpoint's `auth` as a request gives it.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = EndpointAuthRequest)]
pub struct AuthIn {
    #[serde(rename = "type")]
    kind: AuthType,
    /// The token endpoint: the destination policy of endpoint URLs applies
    /// (HTTPS, a public address), here and before every fetch.
    #[schema(example = "https://auth.example.com/oauth/token")]
    token_url: String,
    /// At most 256 characters.
    client_id: String,
    /// `client_secret_basic` and `client_secret_post` only; never answered.
    /// Left out of a `PATCH`, the stored one is kept (same method kind,
    /// `token_url` and `client_id`).
    #[serde(default)]
    client_secret: Option<String>,
    /// Sent as `scope` when set (at most 1024 characters).
    #[serde(default)]
    scope: Option<String>,
    /// Sent as `audience` when set (at most 1024 characters).
    #[serde(default)]
    audience: Option<String>,
    /// Default `client_secret_basic`.
    #[serde(default)]
    token_endpoint_auth_method: AuthMethod,
    /// `private_key_jwt` only: an RSA (RS256) or EC P-256 (ES256) private key,
    /// PEM; never answered. Kept by a `PATCH` like `client_secret`.
    #[serde(default)]
    private_key: Option<String>,
}

/// Why an `auth` object was refused: names the field, never quotes a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidAuth(pub String);

fn invalid(message: impl Into<String>) -> InvalidAuth {
    InvalidAuth(message.into())
}

/// Reads a request's `auth` value into its typed body.
pub fn parse_input(value: serde_json::Value) -> Result<AuthIn, InvalidAuth> {
    serde_json::from_value(value).map_err(|e| {
        // serde's messages name fields and expected shapes; a string value
        // is never quoted (every credential field takes any string).
        invalid(format!("auth is not a valid auth object: {e}"))
    })
}

/// Checks text for `field`: 1 to `max` characters of visible ASCII or space.
fn check_text(field: &str, value: &str, max: usize) -> Result<(), InvalidAuth> {
    if value.is_empty() || value.len() > max {
        return Err(invalid(format!("auth.{field} must be 1 to {max} characters")));
    }
    if !value.chars().all(|c| (' '..='~').contains(&c)) {
        return Err(invalid(format!("auth.{field} may hold visible ASCII characters and spaces only")));
    }
    Ok(())
}

/// The algorithm a PEM private key signs with: RS256 for RSA, ES256 for EC
/// P-256 (tried by signing, so a key of another curve is refused here).
pub fn key_algorithm(pem: &str) -> Result<KeyAlgorithm, InvalidAuth> {
    if pem.len() > MAX_PRIVATE_KEY {
        return Err(invalid(format!("auth.private_key must be at most {MAX_PRIVATE_KEY} bytes")));
    }
    for algorithm in [KeyAlgorithm::RS256, KeyAlgorithm::ES256] {
        let Ok(key) = algorithm.key(pem.as_bytes()) else { continue };
        let header = jsonwebtoken::Header::new(algorithm.jwt());
        if jsonwebtoken::encode(&header, &serde_json::json!({"probe": true}), &key).is_ok() {
            return Ok(algorithm);
        }
    }
    Err(invalid("auth.private_key must be an RSA or EC P-256 private key in PEM (PKCS#1, SEC1 or PKCS#8)"))
}

impl AuthIn {
    /// The raw token URL, for the caller's destination check.
    pub fn token_url(&self) -> &str {
        &self.token_url
    }

    /// Checks the body and seals its credential for endpoint `endpoint_id`.
    /// `token_url` is the URL after the destination policy; `previous` is the
    /// stored option a `PATCH` replaces (its credential may be kept).
    pub fn build(
        self,
        token_url: String,
        previous: Option<&EndpointAuth>,
        master: &MasterKey,
        endpoint_id: &str,
    ) -> Result<EndpointAuth, InvalidAuth> {
        check_text("client_id", &self.client_id, MAX_CLIENT_ID)?;
        if let Some(scope) = &self.scope {
            check_text("scope", scope, MAX_SCOPE)?;
        }
        if let Some(audience) = &self.audience {
            check_text("audience", audience, MAX_SCOPE)?;
        }
        let method = self.token_endpoint_auth_method;
        let keep = previous.filter(|p| {
            p.token_url == token_url
                && p.client_id == self.client_id
                && p.token_endpoint_auth_method.uses_secret() == method.uses_secret()
        });
        let seal =
            |clear: &str, what: &str| STANDARD.encode(master.seal(clear.as_bytes(), &context(endpoint_id, what)));
        let (client_secret_sealed, private_key_sealed, key_algorithm) =
            sealed_credential(method, self.client_secret, self.private_key, keep, seal)?;
        let auth = EndpointAuth {
            kind: self.kind,
            token_url,
            client_id: self.client_id,
            scope: self.scope,
            audience: self.audience,
            token_endpoint_auth_method: method,
            client_secret_sealed,
            private_key_sealed,
            key_algorithm,
        };
        Ok(auth)
    }
}

/// An option's sealed credential: the secret or the key sealed, and the key's algorithm.
type SealedCredential = (Option<String>, Option<String>, Option<KeyAlgorithm>);

/// The credential `method` needs, sealed by `seal`: the one given, or else
/// the one of `kept` (the stored option a `PATCH` may keep it from).
fn sealed_credential(
    method: AuthMethod,
    secret: Option<String>,
    key: Option<String>,
    kept: Option<&EndpointAuth>,
    seal: impl Fn(&str, &str) -> String,
) -> Result<SealedCredential, InvalidAuth> {
    if method.uses_secret() {
        if key.is_some() {
            return Err(invalid(format!("auth.private_key is for private_key_jwt only, not {}", method.as_str())));
        }
        return match (secret, kept) {
            (Some(secret), _) => {
                check_text("client_secret", &secret, MAX_CLIENT_SECRET)?;
                Ok((Some(seal(&secret, "client_secret")), None, None))
            }
            (None, Some(p)) => Ok((p.client_secret_sealed.clone(), None, None)),
            (None, None) => Err(invalid(format!("auth.client_secret is required for {}", method.as_str()))),
        };
    }
    if secret.is_some() {
        return Err(invalid("auth.client_secret is for client_secret_basic and client_secret_post only"));
    }
    match (key, kept) {
        (Some(pem), _) => {
            let algorithm = key_algorithm(&pem)?;
            Ok((None, Some(seal(&pem, "private_key")), Some(algorithm)))
        }
        (None, Some(p)) => Ok((None, p.private_key_sealed.clone(), p.key_algorithm)),
        (None, None) => Err(invalid("auth.private_key is required for private_key_jwt")),
    }
}

/// An endpoint's `auth` as reads answer it: never the secret or the key.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = EndpointAuth)]
pub struct AuthOut {
    #[serde(rename = "type")]
    kind: AuthType,
    token_url: String,
    client_id: String,
    scope: Option<String>,
    audience: Option<String>,
    token_endpoint_auth_method: AuthMethod,
    /// A client secret is stored (sealed); it is never answered.
    client_secret_set: bool,
    /// A private key is stored (sealed); it is never answered.
    private_key_set: bool,
}

impl From<&EndpointAuth> for AuthOut {
    fn from(a: &EndpointAuth) -> AuthOut {
        AuthOut {
            kind: a.kind,
            token_url: a.token_url.clone(),
            client_id: a.client_id.clone(),
            scope: a.scope.clone(),
            audience: a.audience.clone(),
            token_endpoint_auth_method: a.token_endpoint_auth_method,
            client_secret_set: a.client_secret_sealed.is_some(),
            private_key_set: a.private_key_sealed.is_some(),
        }
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
