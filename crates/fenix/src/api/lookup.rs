//! Resolving the path's `{app}` and `{ep}` to rows, or answering 404: what
//! every resource's handlers start with.

use super::error::ApiError;
use crate::api::code::Resource;
use crate::{
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

/// Resolves `{app}/{ep}` or answers 404.
pub async fn endpoint(s: &AppState, app_id_or_uid: &str, ep: &str) -> Result<EndpointRow, ApiError> {
    let app = app(&s.store, app_id_or_uid).await?;
    s.store.get_endpoint(&app.id, ep).await?.ok_or_else(|| ApiError::not_found(Resource::Endpoint))
}
