//! The `auth` object of the create and update bodies (OAuth2 client
//! credentials, `crate::oauth::spec`): read from the body's JSON, its token
//! URL through the destination policy, checked and sealed for the endpoint.
//! Every refusal is `422 invalid_auth`, naming the field.

use crate::{
    api::{code::Code, error::ApiError},
    oauth::spec::{self, EndpointAuth, InvalidAuth},
    state::SharedState,
    store::endpoints::EndpointRow,
};

fn invalid(e: InvalidAuth) -> ApiError {
    ApiError::new(Code::InvalidAuth, e.0)
}

/// A create's `auth` for endpoint `id` (`None`: left out or null).
pub(super) async fn created(
    s: &SharedState,
    id: &str,
    given: Option<&serde_json::Value>,
) -> Result<Option<EndpointAuth>, ApiError> {
    match given {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => build(s, id, value, None).await.map(Some),
    }
}

/// A patch's `auth` for `row`: `None` unchanged, `Some(None)` removed. A
/// credential left out keeps the stored one (`oauth::spec`'s rule).
pub(super) async fn patched(
    s: &SharedState,
    row: &EndpointRow,
    given: Option<&Option<serde_json::Value>>,
) -> Result<Option<Option<EndpointAuth>>, ApiError> {
    match given {
        None => Ok(None),
        Some(None) => Ok(Some(None)),
        Some(Some(value)) => build(s, row.id.as_str(), value, row.spec.auth.as_ref()).await.map(|a| Some(Some(a))),
    }
}

async fn build(
    s: &SharedState,
    id: &str,
    value: &serde_json::Value,
    previous: Option<&EndpointAuth>,
) -> Result<EndpointAuth, ApiError> {
    let input = spec::parse_input(value.clone()).map_err(invalid)?;
    let url = s.destinations.check_destination(input.token_url()).await.map_err(|e| {
        ApiError::new(
            Code::InvalidAuth,
            format!("auth.token_url is refused by the destination policy ({}): {e}", e.code()),
        )
    })?;
    input.build(url.to_string(), previous, &s.keyring.current, id).map_err(invalid)
}
