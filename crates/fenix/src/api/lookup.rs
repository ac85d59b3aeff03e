//! Resolving the path's `{app}` and `{ep}` to rows, or answering 404: what
//! every resource's handlers start with.

use super::error::ApiError;
use crate::api::code::Resource;

use crate::{
    ids::{self, AppId, EndpointId},
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
pub async fn endpoint(s: &AppState, app_id_or_uid: &str, ep: &IdParam<EndpointId>) -> Result<EndpointRow, ApiError> {
    let app = app(&s.store, app_id_or_uid).await?;
    let Some(ep) = ep.id() else { return Err(ApiError::not_found(Resource::Endpoint)) };
    s.store.get_endpoint(&app.id, ep).await?.ok_or_else(|| ApiError::not_found(Resource::Endpoint))
}

/// An endpoint id received from outside (path, query), parsed; `None` for
/// text that is none. The operator endpoint's fixed id (shorter than a ULID)
/// is one too.
pub fn endpoint_id(text: &str) -> Option<EndpointId> {
    EndpointId::from_outside(text)
}

/// An app id received from outside, parsed (the operator app's fixed id too);
/// `None` for text that is none.
pub fn app_id(text: &str) -> Option<AppId> {
    AppId::from_outside(text)
}

/// An id of kind `T` received from outside (path, query), parsed; `None`
/// for text that is none, which the caller answers as it answers an id it
/// does not know (404, or an empty list).
pub fn id<T: IdKind>(text: &str) -> Option<T> {
    T::from_outside(text)
}

/// A kind of id as the API takes it from outside: its prefix, its parse
/// (the kind's own check, plus the operator's fixed ids for apps and
/// endpoints), and the text the store wrote (a cursor's id, checked by the
/// cursor's own digest).
pub trait IdKind: Sized {
    /// The kind's prefix (`tok`, `ps`, …), which also names its lists' cursors.
    const PREFIX: &'static str;
    /// Text received from outside, parsed; `None` for text that is no id of the kind.
    fn from_outside(text: &str) -> Option<Self>;
    /// Text the store wrote, taken as it is.
    fn from_stored(text: String) -> Self;
}

/// The kinds whose only outside form is the kind's own parse.
macro_rules! parsed_kinds {
    ($($kind:ident),*) => {$(
        impl IdKind for ids::$kind {
            const PREFIX: &'static str = ids::$kind::PREFIX;
            fn from_outside(text: &str) -> Option<Self> {
                ids::$kind::parse(text).ok()
            }
            fn from_stored(text: String) -> Self {
                ids::$kind::from_stored(text)
            }
        }
    )*};
}
parsed_kinds!(EventId, DeliveryId, AttemptId, EventTypeId, TokenId, PortalSessionId, TaskId);

impl IdKind for AppId {
    const PREFIX: &'static str = AppId::PREFIX;
    fn from_outside(text: &str) -> Option<Self> {
        AppId::parse(text).ok().or_else(|| crate::operator::fixed_app_id(text))
    }
    fn from_stored(text: String) -> Self {
        AppId::from_stored(text)
    }
}

impl IdKind for EndpointId {
    const PREFIX: &'static str = EndpointId::PREFIX;
    fn from_outside(text: &str) -> Option<Self> {
        EndpointId::parse(text).ok().or_else(|| crate::operator::fixed_endpoint_id(text))
    }
    fn from_stored(text: String) -> Self {
        EndpointId::from_stored(text)
    }
}

/// An id of kind `T` in a path segment or a query filter, parsed once by the
/// extractor. Text that is no id of the kind is kept, not refused: the handler
/// answers it as it answers an id it does not know (404 of its kind, or an
/// empty page), and a list's cursor is bound to the filter's text as given.
#[derive(Debug, Clone)]
pub struct IdParam<T> {
    text: String,
    id: Option<T>,
}

impl<T> IdParam<T> {
    /// The id, if the text is one of this kind.
    pub fn id(&self) -> Option<&T> {
        self.id.as_ref()
    }

    /// The id, or the 404 of `resource` for text that is none.
    pub fn known(self, resource: Resource) -> Result<T, ApiError> {
        self.id.ok_or_else(|| ApiError::not_found(resource))
    }

    /// The text as received.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<'de, T: IdKind> serde::Deserialize<'de> for IdParam<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(IdParam { id: T::from_outside(&text), text })
    }
}
