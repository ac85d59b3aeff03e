//! What every admin handler reads requests with: the JSON, query and path
//! extractors that answer in our error shape, the path parameters, and
//! cursor pagination.

use axum::extract::{FromRequest, Request};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::error::ApiError;

/// Largest request body accepted (events included).
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// `Json<T>` whose rejections use the API error shape.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(v) = axum::Json::<T>::from_request(req, state).await?;
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
                return Err(ApiError::bad_request(
                    "invalid_query",
                    format!("query parameter `{}` must not contain NUL characters", key.escape_debug()),
                ));
            }
        }
        let axum::extract::Query(v) = axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(ApiQuery(v))
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
        use axum::extract::{path::ErrorKind, rejection::PathRejection, RawPathParams};
        // Typed first: its rejection names the parameter that is not UTF-8.
        let axum::extract::Path(v) = axum::extract::Path::<T>::from_request_parts(parts, state).await.map_err(|r| {
            let message = match &r {
                PathRejection::FailedToDeserializePathParams(e) => match e.kind() {
                    ErrorKind::InvalidUtf8InPathParam { key } => format!("path parameter `{key}` is not valid UTF-8"),
                    _ => r.body_text(),
                },
                _ => r.body_text(),
            };
            ApiError::bad_request("invalid_path", message)
        })?;
        // Every value is UTF-8 now; look for control characters by name.
        let raw = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|r| ApiError::bad_request("invalid_path", r.body_text()))?;
        for (key, value) in &raw {
            if value.chars().any(char::is_control) {
                return Err(ApiError::bad_request(
                    "invalid_path",
                    format!("path parameter `{key}` must not contain NUL or other control characters"),
                ));
            }
        }
        Ok(ApiPath(v))
    }
}

/// Refuses text that PostgreSQL cannot store and no client means: NUL and the
/// other control characters (tab and line breaks included: every field checked
/// with this is a one-line name or key). `field` names the field in the message.
pub fn plain_text(field: &str, code: &'static str, value: &str) -> Result<(), ApiError> {
    if value.chars().any(char::is_control) {
        return Err(ApiError::invalid(code, format!("{field} must not contain NUL or other control characters")));
    }
    Ok(())
}

/// The raw request body (for optional JSON bodies), with the API error shape on rejection.
pub struct RawBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(b) => Ok(RawBody(b)),
            Err(r) if r.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => Err(super::error::payload_too_large()),
            Err(_) => Err(ApiError::bad_request("unreadable_body", "the request body could not be read")),
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
    pub ep: String,
}

/// `{app}/…/{evt}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EventPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The event's id (`evt_…`).
    pub evt: String,
}

/// `{app}/…/{dlv}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct DeliveryPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The delivery's id (`dlv_…`).
    pub dlv: String,
}

/// `?limit=&cursor=` of every list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Items per page, 1–250 (default 50).
    #[param(minimum = 1, maximum = 250)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

impl PageQuery {
    /// The limit to use (default 50, at most 250).
    pub fn limit(&self) -> Result<i64, ApiError> {
        match self.limit {
            None => Ok(50),
            Some(n) if (1..=250).contains(&n) => Ok(n),
            Some(_) => Err(ApiError::bad_request("invalid_limit", "limit must be between 1 and 250")),
        }
    }

    /// The cursor, checked to be an id of `kind` ([`decode_cursor`]).
    pub fn cursor(&self, kind: &str) -> Result<Option<String>, ApiError> {
        decode_cursor(kind, self.cursor.as_deref())
    }
}

/// Decodes a list's `cursor`: the id of the last item of the previous page,
/// so an id of this list's `kind` (`app`, `ep`, `evt`, `dlv`): `kind_` then
/// 1-26 characters of the upper-case Crockford base-32 alphabet that ULIDs
/// are written in (26 for every id Fenix makes; the operator app's fixed ids
/// are shorter and sort first). Anything else (garbage, an id of another
/// list, a lower-case id that would sort elsewhere) is refused with 400
/// `invalid_cursor` rather than answered with a wrong page.
pub fn decode_cursor(kind: &str, cursor: Option<&str>) -> Result<Option<String>, ApiError> {
    let Some(cursor) = cursor else { return Ok(None) };
    let valid = cursor.strip_prefix(kind).and_then(|rest| rest.strip_prefix('_')).is_some_and(|ulid| {
        (1..=26).contains(&ulid.len())
            && ulid
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'H' | b'J' | b'K' | b'M' | b'N' | b'P'..=b'T' | b'V'..=b'Z'))
            && (ulid.len() < 26 || ulid.as_bytes()[0] <= b'7')
    });
    if valid {
        Ok(Some(cursor.to_string()))
    } else {
        Err(ApiError::bad_request(
            "invalid_cursor",
            format!("cursor must be the next_cursor of a previous page of this list (an id starting with {kind}_)"),
        ))
    }
}

/// One page of a list, newest first. Pass `next_cursor` as `cursor` for the next page.
#[derive(Debug, Serialize, ToSchema)]
pub struct Page<T> {
    pub data: Vec<T>,
    /// Absent (null) on the last page.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// Builds a page from `limit + 1` fetched rows: the extra row only says there is more.
    pub fn from_rows<R>(mut rows: Vec<R>, limit: i64, id: impl Fn(&R) -> String, map: impl Fn(R) -> T) -> Page<T> {
        let more = rows.len() as i64 > limit;
        rows.truncate(limit as usize);
        let next_cursor = if more { rows.last().map(&id) } else { None };
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
    axum::Json::<T>::from_bytes(body).map(|axum::Json(v)| v).map_err(ApiError::from)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const KINDS: [&str; 4] = ["app", "ep", "evt", "dlv"];

    #[test]
    fn a_cursor_of_another_list_or_garbage_is_refused() {
        let evt = crate::ids::new_id("evt");
        assert_eq!(decode_cursor("evt", Some(&evt)).unwrap(), Some(evt.clone()));
        for (kind, bad) in [
            ("dlv", evt.as_str()),
            ("evt", "garbage"),
            ("evt", ""),
            ("evt", "evt_"),
            ("evt", &evt.to_lowercase()),
            ("evt", "evt_01jzzzzzzzzzzzzzzzzzzzzzzz"),
            ("evt", "evt_8ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
            ("evt", "evt_01JZZZZZZZZZZZZZZZZZZZZZZZZ"),
            ("evt", "evt_01JZZZZZZZZZZZZZZZZZZZZZ\0"),
        ] {
            let err = decode_cursor(kind, Some(bad)).unwrap_err();
            assert_eq!((err.status.as_u16(), err.code), (400, "invalid_cursor"), "{kind} {bad:?}");
        }
        assert_eq!(
            decode_cursor("app", Some("app_0000000000000000000FENX0P")).unwrap().as_deref(),
            Some("app_0000000000000000000FENX0P")
        );
        assert_eq!(decode_cursor("app", None).unwrap(), None);
    }

    proptest! {
        /// Any string either decodes to an id of the list's kind, unchanged, or is refused; never a panic.
        #[test]
        fn any_string_decodes_to_an_id_of_the_kind_or_is_refused(kind in prop::sample::select(&KINDS[..]), s in any::<String>()) {
            match decode_cursor(kind, Some(&s)) {
                Ok(Some(id)) => {
                    prop_assert_eq!(&id, &s);
                    let prefix = format!("{kind}_");
                    prop_assert!(id.starts_with(&prefix));
                    let ulid = &id[kind.len() + 1..];
                    prop_assert!(ulid.len() < 26 || ulid::Ulid::from_string(ulid).is_ok());
                }
                Ok(None) => prop_assert!(false, "a given cursor never decodes to none"),
                Err(e) => prop_assert_eq!(e.code, "invalid_cursor"),
            }
        }

        /// Strings shaped like ids (right prefix, ULID alphabet in any case) never panic either.
        #[test]
        fn id_shaped_strings_decode_only_in_their_canonical_form(kind in prop::sample::select(&KINDS[..]), body in "[0-9A-Za-z]{0,30}") {
            let s = format!("{kind}_{body}");
            match decode_cursor(kind, Some(&s)) {
                Ok(Some(id)) => prop_assert_eq!(body.to_uppercase(), id[kind.len() + 1..].to_string()),
                Ok(None) => prop_assert!(false, "a given cursor never decodes to none"),
                Err(_) => prop_assert!(body.is_empty() || body.len() > 26 || body != body.to_uppercase()
                    || body.contains(['I', 'L', 'O', 'U']) || (body.len() == 26 && body.as_bytes()[0] > b'7')),
            }
        }

        /// Every id Fenix makes round-trips through its own list's cursor and no other.
        #[test]
        fn ids_round_trip_through_their_own_list_only(kind in prop::sample::select(&KINDS[..]), ms in 0u64..(1 << 48), rand in any::<u128>()) {
            let id = format!("{kind}_{}", ulid::Ulid::from_parts(ms, rand));
            prop_assert_eq!(decode_cursor(kind, Some(&id)).unwrap(), Some(id.clone()));
            for other in KINDS.iter().filter(|k| **k != kind) {
                prop_assert!(decode_cursor(other, Some(&id)).is_err());
            }
        }
    }
}
