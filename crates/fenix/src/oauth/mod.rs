//! OAuth2 client credentials per endpoint (RFC 6749 §4.4; `private_key_jwt`
//! per RFC 7523): an endpoint's `auth` option, and the access tokens Fenix
//! fetches with it and sends as `Authorization: Bearer`.
//!
//! | file | holds |
//! |---|---|
//! | `spec.rs` | the typed option as stored (credentials sealed), the API's body and answer, their checks |
//! | `fetch.rs` | one token request: the client's authentication, the bounded answer, its checks |
//! | `cache.rs` | the tokens kept until shortly before expiry: in memory, one fetch per endpoint at a time, and sealed in `oauth_tokens` for every instance |
//!
//! The client secret and the private key are sealed under the master key,
//! bound to the endpoint and their use; the access token likewise in the
//! database. None of them is ever answered, logged or stored in clear.

pub mod cache;
pub mod fetch;
pub mod spec;
