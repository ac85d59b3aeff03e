//! What every admin handler reads requests with: the JSON, query and path
//! extractors that answer in our error shape, the path parameters, and
//! cursor pagination.

use crate::api::code::Code;
use axum::extract::{FromRequest, Request};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{
    error::ApiError,
    lookup::{IdKind, IdParam},
};
use crate::ids::{DeliveryId, EndpointId, EventId};

/// Largest request body accepted (events included).
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// `Json<T>` whose rejections use the API error shape.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(v) = axum::Json::<T>::from_request(req, state).await.map_err(body_rejection)?;
        Ok(ApiJson(v))
    }
}

/// `Query<T>` whose rejections use the API error shape.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        // Every query value may reach SQL (filters, cursors): a NUL would be stored
        // by SQLite and refused by PostgreSQL, so it is refused here on both.
        let query = parts.uri.query().unwrap_or_default();
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            if value.contains('\0') {
                return Err(ApiError::new(
                    Code::InvalidQuery,
                    format!("query parameter `{}` must not contain NUL characters", key.escape_debug()),
                ));
            }
        }
        // Every query struct denies unknown fields: a misspelt filter (`?staus=failed`)
        // is refused naming it, never ignored to answer an unfiltered list.
        let axum::extract::Query(v) =
            axum::extract::Query::<T>::from_request_parts(parts, state).await.map_err(|r| {
                let text = r.body_text();
                match text.find("unknown field `") {
                    Some(at) => {
                        let rest = &text[at + "unknown field `".len()..];
                        let name: String = rest.split('`').next().unwrap_or_default().chars().take(64).collect();
                        ApiError::new(Code::InvalidQuery, format!("unknown query parameter `{}`", name.escape_debug()))
                    }
                    None => ApiError::from(r),
                }
            })?;
        Ok(ApiQuery(v))
    }
}

/// For the calls that take no query parameter: any parameter (`?replay=true`
/// on `pause`, `?force=1` on a delete) is refused with 400 `invalid_query`
/// naming it, rather than ignored, as on the calls that take some.
pub struct NoQuery;

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for NoQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        match url::form_urlencoded::parse(query.as_bytes()).next() {
            None => Ok(NoQuery),
            Some((key, _)) => {
                let key: String = key.chars().take(64).collect();
                Err(ApiError::new(
                    Code::InvalidQuery,
                    format!("unknown query parameter `{}`: this call takes none", key.escape_debug()),
                ))
            }
        }
    }
}

/// `Path<T>` whose rejections use the API error shape: a segment that is not
/// UTF-8 once percent-decoded (`/v1/apps/%FF`), or that holds a control
/// character (`%00`, which PostgreSQL text cannot hold), is refused with 400
/// `invalid_path` naming the parameter, before any lookup.
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> axum::extract::FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        use axum::extract::{path::ErrorKind, rejection::PathRejection};
        // Typed first: its rejection names the parameter that is not UTF-8.
        let axum::extract::Path(v) = axum::extract::Path::<T>::from_request_parts(parts, state).await.map_err(|r| {
            let message = match &r {
                PathRejection::FailedToDeserializePathParams(e) => match e.kind() {
                    ErrorKind::InvalidUtf8InPathParam { key } => format!("path parameter `{key}` is not valid UTF-8"),
                    _ => r.body_text(),
                },
                _ => r.body_text(),
            };
            ApiError::new(Code::InvalidPath, message)
        })?;
        // Every value is UTF-8 now; look for control characters by name.
        let PlainPathParams(_) = PlainPathParams::from_request_parts(parts, state).await?;
        Ok(ApiPath(v))
    }
}

/// Every path parameter, checked as [`ApiPath`] checks them (UTF-8 once
/// percent-decoded, no control character), else 400 `invalid_path` naming it.
/// For what reads the path before any handler (the token check, which looks
/// up the app it names): a malformed path must answer there what it answers
/// an admin, not the 404 of a lookup that could never match.
pub struct PlainPathParams(pub axum::extract::RawPathParams);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for PlainPathParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        use axum::extract::{rejection::RawPathParamsRejection, RawPathParams};
        let raw = RawPathParams::from_request_parts(parts, state).await.map_err(|r| {
            let message = match &r {
                // "Invalid UTF-8 in `key`": the key is the part worth keeping.
                RawPathParamsRejection::InvalidUtf8InPathParam(e) => match e.body_text().split_once('`') {
                    Some((_, rest)) => format!("path parameter `{}` is not valid UTF-8", rest.trim_end_matches('`')),
                    None => e.body_text(),
                },
                _ => r.body_text(),
            };
            ApiError::new(Code::InvalidPath, message)
        })?;
        for (key, value) in &raw {
            if value.chars().any(char::is_control) {
                return Err(ApiError::new(
                    Code::InvalidPath,
                    format!("path parameter `{key}` must not contain NUL or other control characters"),
                ));
            }
        }
        Ok(PlainPathParams(raw))
    }
}

/// Refuses text that PostgreSQL cannot store and no client means: NUL and the
/// other control characters (tab and line breaks included: every field checked
/// with this is a one-line name or key). `field` names the field in the message.
pub fn plain_text(field: &str, code: Code, value: &str) -> Result<(), ApiError> {
    if value.chars().any(char::is_control) {
        return Err(ApiError::new(code, format!("{field} must not contain NUL or other control characters")));
    }
    Ok(())
}

/// The body of a `POST` that takes no options (`pause`, a delivery's
/// `replay`): empty or `{}`. Malformed JSON or any field is refused rather
/// than ignored, as on every other body.
#[derive(Debug, Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoOptions {}

/// For a `PATCH` field that cannot be null (`#[serde(default, deserialize_with
/// = "non_null")]`): left out is `None` (unchanged), a value is `Some`, and an
/// explicit `null` is refused naming the field, rather than read as "unchanged"
/// and answered 200 for a change that did not happen.
pub fn non_null<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    match Option::<T>::deserialize(d)? {
        Some(v) => Ok(Some(v)),
        None => Err(serde::de::Error::custom("must not be null (leave the field out to keep its value)")),
    }
}

/// For a `PATCH` field that may be null (`#[serde(default, deserialize_with =
/// "nullable")]`): left out is `None` (unchanged), `null` is `Some(None)`
/// (cleared), a value is `Some(Some(v))`.
pub fn nullable<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// The raw request body (for optional JSON bodies), with the API error shape on rejection.
pub struct RawBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(b) => Ok(RawBody(b)),
            Err(r) if r.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => Err(super::error::payload_too_large()),
            Err(_) => Err(ApiError::new(Code::UnreadableBody, "the request body could not be read")),
        }
    }
}

/// `{app}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct AppPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
}

/// `{app}/…/{ep}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EndpointPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The endpoint's id (`ep_…`).
    #[param(value_type = String)]
    pub ep: IdParam<EndpointId>,
}

/// `{app}/…/{evt}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EventPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The event's id (`evt_…`).
    #[param(value_type = String)]
    pub evt: IdParam<EventId>,
}

/// `{app}/…/{dlv}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct DeliveryPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The delivery's id (`dlv_…`).
    #[param(value_type = String)]
    pub dlv: IdParam<DeliveryId>,
}

/// `?limit=&cursor=` of every list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// Items per page, 1–250 (default 50).
    #[param(minimum = 1, maximum = 250)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page of the same list, with the same filters.
    pub cursor: Option<String>,
}

impl PageQuery {
    /// The limit to use (default 50, at most 250).
    pub fn limit(&self) -> Result<i64, ApiError> {
        page_limit(self.limit)
    }

    /// The id to continue after, from a cursor of this `list` ([`decode_cursor`]).
    pub fn cursor(&self, list: &ListScope) -> Result<Option<String>, ApiError> {
        decode_cursor(list, self.cursor.as_deref())
    }

    /// [`cursor`](Self::cursor) as an id of kind `T` (the cursor's check
    /// already holds it to the list's kind).
    pub fn cursor_id<T: IdKind>(&self, list: &ListScope) -> Result<Option<T>, ApiError> {
        Ok(self.cursor(list)?.map(T::from_stored))
    }
}

/// A list's `limit`: default 50, 1–250, anything else `400 invalid_limit`.
pub fn page_limit(limit: Option<i64>) -> Result<i64, ApiError> {
    match limit {
        None => Ok(50),
        Some(n) if (1..=250).contains(&n) => Ok(n),
        Some(_) => Err(ApiError::new(Code::InvalidLimit, "limit must be between 1 and 250")),
    }
}

/// Which list a cursor belongs to: the kind of its items and everything that
/// selects its rows (the app, the filters; not `limit`, which may change from
/// page to page). A cursor carries a digest of it, so one from another list,
/// another app or other filters is refused instead of answering a wrong page.
#[derive(Debug, Clone)]
pub struct ListScope {
    kind: &'static str,
    digest: [u8; 8],
}

impl ListScope {
    /// `kind` is the id prefix of the list's items (`app`, `ep`, `evt`, `dlv`);
    /// `parts` the app id and each filter in a fixed order (`None` = not given).
    pub fn new(kind: &'static str, parts: &[Option<&str>]) -> ListScope {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"fenix-cursor-v1\0");
        h.update(kind.as_bytes());
        for part in parts {
            // Length-prefixed, so no two different lists of parts hash alike.
            match part {
                None => h.update([0u8]),
                Some(p) => {
                    h.update([1u8]);
                    h.update((p.len() as u64).to_be_bytes());
                    h.update(p.as_bytes());
                }
            }
        }
        let mut digest = [0u8; 8];
        digest.copy_from_slice(&h.finalize()[..8]);
        ListScope { kind, digest }
    }

    /// The opaque cursor that continues this list after `last_id`.
    pub fn encode(&self, last_id: &str) -> String {
        use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
        let mut bytes = Vec::with_capacity(1 + self.digest.len() + last_id.len());
        bytes.push(CURSOR_VERSION);
        bytes.extend_from_slice(&self.digest);
        bytes.extend_from_slice(last_id.as_bytes());
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

/// First byte of every cursor, so the format can change without misreading old ones.
const CURSOR_VERSION: u8 = 1;

/// Decodes a list's `cursor` into the id of the last item of the previous
/// page. A cursor is opaque (base64url of a version byte, the digest of its
/// [`ListScope`] and that id): anything that is not one Fenix made for this
/// very list and these filters (garbage, a bare id, a cursor of another list
/// or app, the same list with other filters) is refused with 400
/// `invalid_cursor` rather than answered with a wrong page.
pub fn decode_cursor(list: &ListScope, cursor: Option<&str>) -> Result<Option<String>, ApiError> {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
    let Some(cursor) = cursor else { return Ok(None) };
    let refused = |why: &str| {
        ApiError::new(
            Code::InvalidCursor,
            format!("cursor {why}: pass the next_cursor of the previous page of this list, with the same filters"),
        )
    };
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| refused("is not one Fenix made"))?;
    let [version, rest @ ..] = bytes.as_slice() else { return Err(refused("is not one Fenix made")) };
    if *version != CURSOR_VERSION || rest.len() <= list.digest.len() {
        return Err(refused("is not one Fenix made"));
    }
    let (digest, id) = rest.split_at(list.digest.len());
    if digest != list.digest {
        return Err(refused("belongs to another list or to other filters"));
    }
    match std::str::from_utf8(id) {
        Ok(id) if is_id_of(list.kind, id) => Ok(Some(id.to_string())),
        _ => Err(refused("is not one Fenix made")),
    }
}

/// An id of `kind`: `kind_` then 1-26 characters of the upper-case Crockford
/// base-32 alphabet that ULIDs are written in (26 for every id Fenix makes;
/// the operator app's fixed ids are shorter and sort first).
fn is_id_of(kind: &str, id: &str) -> bool {
    id.strip_prefix(kind).and_then(|rest| rest.strip_prefix('_')).is_some_and(|ulid| {
        (1..=26).contains(&ulid.len())
            && ulid
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'H' | b'J' | b'K' | b'M' | b'N' | b'P'..=b'T' | b'V'..=b'Z'))
            && (ulid.len() < 26 || ulid.as_bytes()[0] <= b'7')
    })
}

/// One page of a list, newest first. Pass `next_cursor` as `cursor` for the next page.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T> {
    pub data: Vec<T>,
    /// Opaque; absent (null) on the last page.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// Builds a page of `list` from `limit + 1` fetched rows: the extra row only says there is more.
    pub fn from_rows<R>(
        mut rows: Vec<R>,
        limit: i64,
        list: &ListScope,
        id: impl Fn(&R) -> String,
        map: impl Fn(R) -> T,
    ) -> Page<T> {
        let more = rows.len() as i64 > limit;
        rows.truncate(limit as usize);
        let next_cursor = if more { rows.last().map(|r| list.encode(&id(r))) } else { None };
        Page { data: rows.into_iter().map(map).collect(), next_cursor }
    }
}

/// Parses an optional JSON body: empty means all defaults.
pub fn optional_json<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    // Through axum's JSON reader, so a value of the wrong type or out of range
    // is named by its field (`overlap_seconds: invalid value …`), as in `ApiJson`.
    axum::Json::<T>::from_bytes(body).map(|axum::Json(v)| v).map_err(body_rejection)
}

/// A JSON body's rejection in the API error shape. A field the body type does
/// not have (every body denies unknown fields) is a request that cannot be
/// understood: `400 unknown_field` naming it, like a misspelt query parameter,
/// rather than a value to fix (`422 invalid_body`).
fn body_rejection(r: axum::extract::rejection::JsonRejection) -> ApiError {
    use axum::extract::rejection::JsonRejection;
    if let JsonRejection::JsonDataError(e) = &r {
        // serde's own wording (`unknown field `x`, expected one of …`), behind the
        // path of the object that holds it; the field name is user input, so it
        // is shown escaped and cut short.
        let text = e.body_text();
        if let Some(at) = text.find("unknown field `") {
            let rest = &text[at + "unknown field `".len()..];
            let name: String = rest.split('`').next().unwrap_or_default().chars().take(64).collect();
            return ApiError::new(Code::UnknownField, format!("unknown field `{}`", name.escape_debug()));
        }
    }
    ApiError::from(r)
}

#[cfg(test)]
mod tests {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
    use proptest::prelude::*;

    use super::*;

    const KINDS: [&str; 4] = ["app", "ep", "evt", "dlv"];

    fn refused(list: &ListScope, cursor: &str) -> bool {
        matches!(decode_cursor(list, Some(cursor)), Err(e) if (e.status.as_u16(), e.code.as_str()) == (400, "invalid_cursor"))
    }

    #[test]
    fn a_cursor_continues_only_its_own_list_with_its_own_filters() {
        let evt = crate::ids::EventId::new().into_string();
        let list = ListScope::new("evt", &[Some("app_A"), Some("a.b"), None]);
        let cursor = list.encode(&evt);
        assert_eq!(decode_cursor(&list, Some(&cursor)).unwrap(), Some(evt.clone()));
        assert!(!cursor.contains(&evt), "opaque: {cursor}");
        for other in [
            ListScope::new("evt", &[Some("app_B"), Some("a.b"), None]),
            ListScope::new("evt", &[Some("app_A"), Some("a.c"), None]),
            ListScope::new("evt", &[Some("app_A"), None, Some("a.b")]),
            ListScope::new("evt", &[Some("app_A"), None, None]),
            ListScope::new("evt", &[Some("app_Aa.b"), None, None]),
            ListScope::new("dlv", &[Some("app_A"), Some("a.b"), None]),
        ] {
            assert!(refused(&other, &cursor), "{other:?}");
        }
        for bad in ["", "garbage", "~", &evt, &cursor[..cursor.len() - 2], &format!("{cursor}A"), "AQ"] {
            assert!(refused(&list, bad), "{bad:?}");
        }
        assert_eq!(decode_cursor(&list, None).unwrap(), None);
        // The operator app's fixed id is shorter than a ULID and still pages.
        let apps = ListScope::new("app", &[]);
        let op = "app_0000000000000000000FENX0P";
        assert_eq!(decode_cursor(&apps, Some(&apps.encode(op))).unwrap().as_deref(), Some(op));
    }

    #[test]
    fn a_cursor_made_with_the_right_digest_still_needs_an_id_of_the_lists_kind() {
        let list = ListScope::new("evt", &[Some("app_A")]);
        let evt = crate::ids::EventId::new().into_string();
        for id in [
            crate::ids::DeliveryId::new().into_string(),
            evt.to_lowercase(),
            "evt_".into(),
            "evt_8ZZZZZZZZZZZZZZZZZZZZZZZZZ".into(),
            "evt_01JZZZZZZZZZZZZZZZZZZZZZZZZ".into(),
            "evt_01JZZZZZZZZZZZZZZZZZZZZZ\0".into(),
            "evt_' OR 1=1".into(),
        ] {
            assert!(refused(&list, &list.encode(&id)), "{id:?}");
        }
    }

    proptest! {
        /// Any string either decodes to an id of the list's kind or is refused; never a panic.
        #[test]
        fn any_string_decodes_to_an_id_of_the_kind_or_is_refused(kind in prop::sample::select(&KINDS[..]), s in any::<String>()) {
            let list = ListScope::new(kind, &[Some("app_A")]);
            match decode_cursor(&list, Some(&s)) {
                Ok(Some(id)) => {
                    prop_assert_eq!(list.encode(&id), s);
                    let prefix = format!("{kind}_");
                    prop_assert!(id.starts_with(&prefix));
                }
                Ok(None) => prop_assert!(false, "a given cursor never decodes to none"),
                Err(e) => prop_assert_eq!(e.code, "invalid_cursor"),
            }
        }

        /// Any bytes behind the right version and digest decode only to a canonical id of the kind.
        #[test]
        fn any_payload_decodes_only_to_a_canonical_id(kind in prop::sample::select(&KINDS[..]), body in "[0-9A-Za-z]{0,30}") {
            let list = ListScope::new(kind, &[]);
            let id = format!("{kind}_{body}");
            match decode_cursor(&list, Some(&list.encode(&id))) {
                Ok(Some(decoded)) => {
                    prop_assert_eq!(&decoded, &id);
                    prop_assert!(!body.is_empty() && body.len() <= 26 && body == body.to_uppercase());
                    prop_assert!(body.len() < 26 || ulid::Ulid::from_string(&body).is_ok());
                }
                Ok(None) => prop_assert!(false, "a given cursor never decodes to none"),
                Err(_) => prop_assert!(body.is_empty() || body.len() > 26 || body != body.to_uppercase()
                    || body.contains(['I', 'L', 'O', 'U']) || (body.len() == 26 && body.as_bytes()[0] > b'7')),
            }
        }

        /// Every id Fenix makes round-trips through its own list's cursor and no other list's.
        #[test]
        fn ids_round_trip_through_their_own_list_only(kind in prop::sample::select(&KINDS[..]), ms in 0u64..(1 << 48), rand in any::<u128>(), filter in proptest::option::of("[a-z.]{0,8}")) {
            let id = format!("{kind}_{}", ulid::Ulid::from_parts(ms, rand));
            let list = ListScope::new(kind, &[Some("app_A"), filter.as_deref()]);
            let cursor = list.encode(&id);
            prop_assert_eq!(decode_cursor(&list, Some(&cursor)).unwrap(), Some(id.clone()));
            for other in KINDS.iter().filter(|k| **k != kind) {
                prop_assert!(decode_cursor(&ListScope::new(other, &[Some("app_A"), filter.as_deref()]), Some(&cursor)).is_err());
            }
            let changed = Some(filter.as_ref().map_or(String::new(), |f| format!("{f}x")));
            prop_assert!(decode_cursor(&ListScope::new(kind, &[Some("app_A"), changed.as_deref()]), Some(&cursor)).is_err());
            prop_assert!(decode_cursor(&list, Some(&id)).is_err(), "a bare id is not a cursor");
            // A cursor whose version or digest was tampered with is refused.
            for at in 0..9 {
                let mut bytes = URL_SAFE_NO_PAD.decode(&cursor).unwrap();
                bytes[at] ^= 1;
                prop_assert!(decode_cursor(&list, Some(&URL_SAFE_NO_PAD.encode(&bytes))).is_err());
            }
        }
    }
}
