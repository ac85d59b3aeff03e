//! The one error type of the admin API.
//!
//! Use [`ApiError`] for everything a request can fail with. Errors a client can
//! cause carry a stable machine-readable `code` and a human message saying what
//! to change; database and other internal errors are logged with context and
//! answered with a generic body (they may contain data that must not leak).
//! Off the request path (startup, worker loops) use `anyhow` with context.

use axum::{
    extract::rejection::{JsonRejection, QueryRejection},
    http::StatusCode,
    response::{IntoResponse, Response},
    Json,
};
use serde::Serialize;
use utoipa::ToSchema;

pub use super::code::{Code, Resource};
use crate::catalogue::SchemaViolation;

/// An error answered as `{"error":{"code":…,"message":…}}`, with `details`
/// when one value broke several rules (today: `schema_mismatch`). Its status
/// is its code's ([`Code::status`]).
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: Code,
    pub message: String,
    pub details: Option<Vec<SchemaViolation>>,
    /// Whole seconds answered as `Retry-After` (a `429`, a `503 storage_full`).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// Any client error: its code (which says its status) and message.
    pub fn new(code: Code, message: impl Into<String>) -> ApiError {
        ApiError { status: code.status(), code, message: message.into(), details: None, retry_after: None }
    }

    /// The same error answered with its code's other status ([`Code::also_as`]).
    pub fn with_other_status(self) -> ApiError {
        ApiError { status: self.code.also_as().unwrap_or(self.status), ..self }
    }

    /// The same error with the list of what failed where (`details` of the body).
    pub fn with_details(self, details: Vec<SchemaViolation>) -> ApiError {
        ApiError { details: Some(details), ..self }
    }

    /// 422 `invalid_filter` for the content filter in `field`: the line and
    /// column in the message and in `details` (`path` `/{field}`).
    pub fn invalid_filter(field: &str, e: crate::filter::InvalidFilter) -> ApiError {
        let place = SchemaViolation {
            path: format!("/{field}"),
            message: e.message.clone(),
            line: Some(e.line),
            column: Some(e.column),
        };
        ApiError::new(Code::InvalidFilter, format!("{field}: {e}")).with_details(vec![place])
    }

    /// 404 for an unknown resource of a kind.
    pub fn not_found(what: Resource) -> ApiError {
        ApiError::new(what.not_found(), format!("no such {}", what.noun()))
    }

    /// 429 for a call over one of its budgets (`send_budgets`): come back after the `Retry-After`.
    pub fn over_budget(over: crate::send_budgets::OverBudget) -> ApiError {
        ApiError {
            retry_after: Some(crate::send_budgets::retry_seconds(over.retry_after)),
            ..ApiError::new(over.action.into(), over.message())
        }
    }

    /// 401 for a missing or wrong token.
    pub fn unauthorized() -> ApiError {
        ApiError::new(
            Code::Unauthorized,
            "missing, unknown, revoked or expired token: send Authorization: Bearer <token>",
        )
    }
}

/// The body of every error answer: `{"error":{"code":…,"message":…}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable: branch on this.
    pub code: Code,
    /// For people: says what to change.
    #[schema(example = "no such app")]
    pub message: String,
    /// Only with `schema_mismatch` (and an example that fails its schema):
    /// each place the value breaks the schema, at most 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<SchemaViolation>>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body =
            Json(ErrorBody { error: ErrorDetail { code: self.code, message: self.message, details: self.details } });
        let mut resp = (self.status, body).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert("www-authenticate", axum::http::HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = self.retry_after {
            resp.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(seconds));
        }
        resp
    }
}

/// Seconds a client is told to wait after `503 storage_full`: space comes
/// back only when someone frees it, so not at once.
pub const STORAGE_FULL_RETRY_AFTER: u64 = 30;

impl From<crate::store::Error> for ApiError {
    fn from(e: crate::store::Error) -> ApiError {
        if e.is_storage_full() {
            // The process says it once (`store::disk_full`); each refusal is a warning.
            tracing::warn!(code = ?e.database_code(), "storage full: a write was refused");
            return ApiError {
                retry_after: Some(STORAGE_FULL_RETRY_AFTER),
                ..ApiError::new(
                    Code::StorageFull,
                    "the database's disk is full; nothing was stored, retry after Retry-After",
                )
            };
        }
        if e.is_unavailable() {
            tracing::warn!(error = %e, "database unavailable");
            return ApiError::new(
                Code::DatabaseUnavailable,
                "the database is unavailable; nothing was stored, retry later",
            );
        }
        if e.is_data_error() {
            // The value itself is not logged: it came from the request and may be a payload.
            tracing::warn!(code = ?e.database_code(), "the database refused a value of a request");
            return ApiError::new(
                Code::UnstorableValue,
                "a value of the request cannot be stored (e.g. text with a NUL character); nothing was stored",
            );
        }
        tracing::error!(error = %e, "database error");
        ApiError::new(Code::InternalError, "internal error; nothing was stored")
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        tracing::error!(error = format!("{e:#}"), "internal error");
        ApiError::new(Code::InternalError, "internal error")
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> ApiError {
        match r {
            JsonRejection::JsonSyntaxError(e) => {
                ApiError::new(Code::MalformedJson, format!("the body is not valid JSON: {}", short(&detail(&e))))
            }
            JsonRejection::JsonDataError(e) => ApiError::new(Code::InvalidBody, short(&detail(&e))),
            JsonRejection::MissingJsonContentType(_) => {
                ApiError::new(Code::UnsupportedMediaType, "send the body as JSON with Content-Type: application/json")
            }
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => payload_too_large(),
            other => ApiError::new(Code::BadRequest, short(&detail(&other))),
        }
    }
}

/// What went wrong, without the framework's preamble ("Failed to deserialize
/// the JSON body into the target type: "): the rejection's source is serde's
/// own error, which starts with the field's path (`name: invalid type: …`).
fn detail(rejection: &(dyn std::error::Error + 'static)) -> String {
    rejection.source().map_or_else(|| rejection.to_string(), ToString::to_string)
}

impl From<crate::event_types::InvalidEventType> for ApiError {
    fn from(e: crate::event_types::InvalidEventType) -> ApiError {
        ApiError::new(e.kind.into(), e.message)
    }
}

/// A type's check refused an event's data: `422` with its code and the
/// places in `details` (`503` with `Retry-After` when no check slot was free).
impl From<crate::catalogue::Refusal> for ApiError {
    fn from(r: crate::catalogue::Refusal) -> ApiError {
        let error = ApiError::new(Code::from(&r), r.message());
        let retry_after = (error.status == StatusCode::SERVICE_UNAVAILABLE).then_some(1);
        let details = r.details();
        let error = if details.is_empty() { error } else { error.with_details(details) };
        ApiError { retry_after, ..error }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> ApiError {
        ApiError::new(Code::InvalidQuery, short(&r.body_text()))
    }
}

/// 413 for a body over the limit.
pub fn payload_too_large() -> ApiError {
    ApiError::new(Code::PayloadTooLarge, "the request body is larger than 256 KiB")
}

/// Rejection messages from serde quote the offending input; keep them short so
/// a payload never travels far in an error message.
fn short(s: &str) -> String {
    let s = s.replace('\n', " ");
    if s.len() > 200 {
        let mut end = 200;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    } else {
        s
    }
}
