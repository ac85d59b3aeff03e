//! Resolving the path's `{app}` and `{ep}` to rows, or answering 404: what
//! every resource's handlers start with.

use super::error::ApiError;
use crate::api::code::Resource;
use crate::{
    ids::{AppId, EndpointId},
    state::AppState,
    store::{apps::AppRow, endpoints::EndpointRow, Store},
};

/// Resolves `{app}` (id or uid) or answers 404.
pub async fn app(store: &Store, id_or_uid: &str) -> Result<AppRow, ApiError> {
    store.find_app(id_or_uid).await?.ok_or_else(|| ApiError::not_found(Resource::App))
}

/// [`app`] through the state's short-lived app cache, for ingestion. An app
/// deleted meanwhile (by another instance) makes the insert fail on its
/// foreign key, which the caller answers as 404 like an unknown app.
pub async fn app_cached(s: &AppState, id_or_uid: &str) -> Result<AppRow, ApiError> {
    s.find_app_cached(id_or_uid).await?.ok_or_else(|| ApiError::not_found(Resource::App))
}

/// An ingestion write that failed: an app deleted meanwhile (by another
/// instance, after a cached lookup) fails the insert on its foreign key and is
/// answered as the unknown app it now is; anything else as itself.
pub fn app_deleted_meanwhile(e: crate::store::Error) -> ApiError {
    match &e {
        crate::store::Error::ForeignKeyViolation(_) => ApiError::not_found(Resource::App),
        _ => ApiError::from(e),
    }
}

/// Resolves `{app}/{ep}` or answers 404. The app is resolved first, so an
/// unknown app answers `app_not_found` whatever `{ep}` is; text that is no
/// endpoint id answers 404 as an unknown endpoint does.
pub async fn endpoint(s: &AppState, app_id_or_uid: &str, ep: &str) -> Result<EndpointRow, ApiError> {
    let app = app(&s.store, app_id_or_uid).await?;
    let Some(ep) = endpoint_id(ep) else { return Err(ApiError::not_found(Resource::Endpoint)) };
    s.store.get_endpoint(&app.id, &ep).await?.ok_or_else(|| ApiError::not_found(Resource::Endpoint))
}

/// An endpoint id received from outside (path, query), parsed; `None` for
/// text that is none. The operator endpoint's fixed id (shorter than a ULID)
/// is one too.
pub fn endpoint_id(text: &str) -> Option<EndpointId> {
    EndpointId::parse(text).ok().or_else(|| crate::operator::fixed_endpoint_id(text))
}

/// An app id received from outside, parsed (the operator app's fixed id too);
/// `None` for text that is none.
pub fn app_id(text: &str) -> Option<AppId> {
    AppId::parse(text).ok().or_else(|| crate::operator::fixed_app_id(text))
}

/// An id of kind `T` received from outside (path, query), parsed; `None`
/// for text that is none, which the caller answers as it answers an id it
/// does not know (404, or an empty list).
pub fn id<T: std::str::FromStr>(text: &str) -> Option<T> {
    text.parse().ok()
}
