//! Every `code` the API can answer, in one place: its wire text and its HTTP status.
//!
//! An error's `code` is the part of the answer clients branch on, so it is a
//! closed set: [`Code`] lists it, [`Code::as_str`] is the only place a code's
//! text is written, and [`Code::status`] the only place its status is (each
//! code has exactly one). The OpenAPI document lists the same set as the
//! `ErrorCode` schema, and each operation's error answers name the codes of
//! that status it may give (`openapi.rs`). Domain modules keep their own
//! enums (`event_types`, `catalogue`, `endpoint_policy`, `send_budgets`, the
//! destination policy); the `From` impls at the end of this file turn them
//! into a [`Code`], so the domain never depends on the HTTP layer.

use axum::http::StatusCode;

macro_rules! codes {
    ($($variant:ident = $text:literal, $status:ident;)*) => {
        /// A stable, machine-readable error code (`error.code` of every error answer).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as clients see it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }

            /// The status answers with this code have (but see [`Code::also_as`]).
            pub const fn status(self) -> StatusCode {
                match self {
                    $(Code::$variant => StatusCode::$status,)*
                }
            }
        }
    };
}

codes! {
    // 400: a request that cannot be understood.
    BadRequest = "bad_request", BAD_REQUEST;
    MalformedJson = "malformed_json", BAD_REQUEST;
    UnknownField = "unknown_field", BAD_REQUEST;
    UnreadableBody = "unreadable_body", BAD_REQUEST;
    InvalidQuery = "invalid_query", BAD_REQUEST;
    InvalidPath = "invalid_path", BAD_REQUEST;
    InvalidCursor = "invalid_cursor", BAD_REQUEST;
    InvalidLimit = "invalid_limit", BAD_REQUEST;
    InvalidInclude = "invalid_include", BAD_REQUEST;
    InvalidStatus = "invalid_status", BAD_REQUEST;
    InvalidTime = "invalid_time", BAD_REQUEST;
    InvalidWindow = "invalid_window", BAD_REQUEST;
    // 401, 403: who calls, and what they may do.
    Unauthorized = "unauthorized", UNAUTHORIZED;
    SessionRevoked = "session_revoked", UNAUTHORIZED;
    SessionExpired = "session_expired", UNAUTHORIZED;
    Forbidden = "forbidden", FORBIDDEN;
    CsrfFailed = "csrf_failed", FORBIDDEN;
    // 404: no such route or resource.
    NotFound = "not_found", NOT_FOUND;
    AppNotFound = "app_not_found", NOT_FOUND;
    EndpointNotFound = "endpoint_not_found", NOT_FOUND;
    EventNotFound = "event_not_found", NOT_FOUND;
    DeliveryNotFound = "delivery_not_found", NOT_FOUND;
    TaskNotFound = "task_not_found", NOT_FOUND;
    AttemptNotFound = "attempt_not_found", NOT_FOUND;
    NotTransformed = "not_transformed", NOT_FOUND;
    EventTypeNotFound = "event_type_not_found", NOT_FOUND;
    TokenNotFound = "token_not_found", NOT_FOUND;
    PortalSessionNotFound = "portal_session_not_found", NOT_FOUND;
    LinkNotFound = "link_not_found", NOT_FOUND;
    // 405, 408, 413, 415: the HTTP shell.
    MethodNotAllowed = "method_not_allowed", METHOD_NOT_ALLOWED;
    RequestTimeout = "request_timeout", REQUEST_TIMEOUT;
    PayloadTooLarge = "payload_too_large", PAYLOAD_TOO_LARGE;
    UnsupportedMediaType = "unsupported_media_type", UNSUPPORTED_MEDIA_TYPE;
    // 409: the current state does not allow the change.
    UidTaken = "uid_taken", CONFLICT;
    EndpointAlreadyActive = "endpoint_already_active", CONFLICT;
    EndpointAlreadyPaused = "endpoint_already_paused", CONFLICT;
    EndpointVerified = "endpoint_verified", CONFLICT;
    EventTypeExists = "event_type_exists", CONFLICT;
    EventTypeChanged = "event_type_changed", CONFLICT;
    LastAdminToken = "last_admin_token", CONFLICT;
    NotReplayable = "not_replayable", CONFLICT;
    NotSkippable = "not_skippable", CONFLICT;
    NothingToCancel = "nothing_to_cancel", CONFLICT;
    TaskEnded = "task_ended", CONFLICT;
    TaskNotCancellable = "task_not_cancellable", CONFLICT;
    PayloadExpired = "payload_expired", CONFLICT;
    SessionExists = "session_exists", CONFLICT;
    // 410: a portal link that cannot be used any more.
    LinkUsed = "link_used", GONE;
    LinkExpired = "link_expired", GONE;
    LinkRevoked = "link_revoked", GONE;
    // 422: a well-formed request with a value that breaks a rule.
    InvalidBody = "invalid_body", UNPROCESSABLE_ENTITY;
    UnstorableValue = "unstorable_value", UNPROCESSABLE_ENTITY;
    InvalidName = "invalid_name", UNPROCESSABLE_ENTITY;
    InvalidUid = "invalid_uid", UNPROCESSABLE_ENTITY;
    UidReserved = "uid_reserved", UNPROCESSABLE_ENTITY;
    InvalidRetention = "invalid_retention", UNPROCESSABLE_ENTITY;
    RetentionTooLong = "retention_too_long", UNPROCESSABLE_ENTITY;
    InvalidDescription = "invalid_description", UNPROCESSABLE_ENTITY;
    InvalidLabel = "invalid_label", UNPROCESSABLE_ENTITY;
    InvalidExpiresAt = "invalid_expires_at", UNPROCESSABLE_ENTITY;
    InvalidExpiresIn = "invalid_expires_in", UNPROCESSABLE_ENTITY;
    InvalidTokenScope = "invalid_token_scope", UNPROCESSABLE_ENTITY;
    UnknownApp = "unknown_app", UNPROCESSABLE_ENTITY;
    InvalidOrderingKey = "invalid_ordering_key", UNPROCESSABLE_ENTITY;
    InvalidChannels = "invalid_channels", UNPROCESSABLE_ENTITY;
    InvalidTags = "invalid_tags", UNPROCESSABLE_ENTITY;
    InvalidIdempotencyKey = "invalid_idempotency_key", UNPROCESSABLE_ENTITY;
    InvalidSchedule = "invalid_schedule", UNPROCESSABLE_ENTITY;
    InvalidData = "invalid_data", UNPROCESSABLE_ENTITY;
    EmptyBatch = "empty_batch", UNPROCESSABLE_ENTITY;
    BatchTooLarge = "batch_too_large", UNPROCESSABLE_ENTITY;
    FanoutLimitReached = "fanout_limit_reached", UNPROCESSABLE_ENTITY;
    EndpointLimitReached = "endpoint_limit_reached", UNPROCESSABLE_ENTITY;
    InvalidStatuses = "invalid_statuses", UNPROCESSABLE_ENTITY;
    InvalidTaskKind = "invalid_task_kind", UNPROCESSABLE_ENTITY;
    InvalidTaskFilter = "invalid_task_filter", UNPROCESSABLE_ENTITY;
    InvalidOverlap = "invalid_overlap", UNPROCESSABLE_ENTITY;
    InvalidSecret = "invalid_secret", UNPROCESSABLE_ENTITY;
    InvalidAuth = "invalid_auth", UNPROCESSABLE_ENTITY;
    InvalidTransformation = "invalid_transformation", UNPROCESSABLE_ENTITY;
    InvalidFilter = "invalid_filter", UNPROCESSABLE_ENTITY;
    InvalidSample = "invalid_sample", UNPROCESSABLE_ENTITY;
    TransformationFailed = "transformation_failed", UNPROCESSABLE_ENTITY;
    InvalidClientCertificate = "invalid_client_certificate", UNPROCESSABLE_ENTITY;
    InvalidClientKey = "invalid_client_key", UNPROCESSABLE_ENTITY;
    InvalidCaCertificates = "invalid_ca_certificates", UNPROCESSABLE_ENTITY;
    InvalidSignatureScheme = "invalid_signature_scheme", UNPROCESSABLE_ENTITY;
    InvalidRateLimit = "invalid_rate_limit", UNPROCESSABLE_ENTITY;
    InvalidSensitiveHeaders = "invalid_sensitive_headers", UNPROCESSABLE_ENTITY;
    InvalidHeaderName = "invalid_header_name", UNPROCESSABLE_ENTITY;
    InvalidHeaderValue = "invalid_header_value", UNPROCESSABLE_ENTITY;
    HopByHopHeader = "hop_by_hop_header", UNPROCESSABLE_ENTITY;
    ReservedHeader = "reserved_header", UNPROCESSABLE_ENTITY;
    DuplicateHeader = "duplicate_header", UNPROCESSABLE_ENTITY;
    TooManyHeaders = "too_many_headers", UNPROCESSABLE_ENTITY;
    HeadersTooLarge = "headers_too_large", UNPROCESSABLE_ENTITY;
    InvalidRetrySchedule = "invalid_retry_schedule", UNPROCESSABLE_ENTITY;
    InvalidFinalStatusCodes = "invalid_final_status_codes", UNPROCESSABLE_ENTITY;
    InvalidAttemptTimeout = "invalid_attempt_timeout", UNPROCESSABLE_ENTITY;
    InvalidEventType = "invalid_event_type", UNPROCESSABLE_ENTITY;
    InvalidEventTypes = "invalid_event_types", UNPROCESSABLE_ENTITY;
    UnknownEventType = "unknown_event_type", UNPROCESSABLE_ENTITY;
    InvalidSchema = "invalid_schema", UNPROCESSABLE_ENTITY;
    InvalidExample = "invalid_example", UNPROCESSABLE_ENTITY;
    ExampleMismatch = "example_mismatch", UNPROCESSABLE_ENTITY;
    SchemaMismatch = "schema_mismatch", UNPROCESSABLE_ENTITY;
    SchemaTooCostly = "schema_too_costly", UNPROCESSABLE_ENTITY;
    DuplicateKey = "duplicate_key", UNPROCESSABLE_ENTITY;
    DataTooDeep = "data_too_deep", UNPROCESSABLE_ENTITY;
    NumberOutOfRange = "number_out_of_range", UNPROCESSABLE_ENTITY;
    InvalidUnicode = "invalid_unicode", UNPROCESSABLE_ENTITY;
    UnreadableData = "unreadable_data", UNPROCESSABLE_ENTITY;
    // 422: a destination the policy refuses (`fenix-destination`).
    UrlInvalid = "url_invalid", UNPROCESSABLE_ENTITY;
    UrlAmbiguous = "url_ambiguous", UNPROCESSABLE_ENTITY;
    UrlTooLong = "url_too_long", UNPROCESSABLE_ENTITY;
    UrlSchemeNotHttps = "url_scheme_not_https", UNPROCESSABLE_ENTITY;
    UrlHasCredentials = "url_has_credentials", UNPROCESSABLE_ENTITY;
    UrlHasQuery = "url_has_query", UNPROCESSABLE_ENTITY;
    UrlHasFragment = "url_has_fragment", UNPROCESSABLE_ENTITY;
    UrlPortNotAllowed = "url_port_not_allowed", UNPROCESSABLE_ENTITY;
    UrlHostIsIp = "url_host_is_ip", UNPROCESSABLE_ENTITY;
    UrlHostNotPublic = "url_host_not_public", UNPROCESSABLE_ENTITY;
    DestinationUnresolvable = "destination_unresolvable", UNPROCESSABLE_ENTITY;
    DestinationNotPublic = "destination_not_public", UNPROCESSABLE_ENTITY;
    // 429: over a send budget (`send_budgets`), with `Retry-After`.
    ChallengeLimitReached = "challenge_limit_reached", TOO_MANY_REQUESTS;
    TestEventLimitReached = "test_event_limit_reached", TOO_MANY_REQUESTS;
    ReplayLimitReached = "replay_limit_reached", TOO_MANY_REQUESTS;
    // 500, 503: the server's side.
    InternalError = "internal_error", INTERNAL_SERVER_ERROR;
    DatabaseUnavailable = "database_unavailable", SERVICE_UNAVAILABLE;
    StorageFull = "storage_full", SERVICE_UNAVAILABLE;
    Overloaded = "overloaded", SERVICE_UNAVAILABLE;
    WorkerStalled = "worker_stalled", SERVICE_UNAVAILABLE;
}

impl Code {
    /// The one other status a code is answered with, where it has one:
    /// `invalid_idempotency_key` is a `400` when the `Idempotency-Key`
    /// header is no visible ASCII (so no text at all), a `422` when the key
    /// is text that breaks a rule (too long, a control character).
    pub const fn also_as(self) -> Option<StatusCode> {
        match self {
            Code::InvalidIdempotencyKey => Some(StatusCode::BAD_REQUEST),
            _ => None,
        }
    }

    /// The code whose text is `text`, if any (the destination policy's codes
    /// are private to its crate and reach Fenix as their text).
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == text)
    }
}

/// Tests and logs compare a code with its text.
impl PartialEq<&str> for Code {
    fn eq(&self, text: &&str) -> bool {
        self.as_str() == *text
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// In the document: `ErrorCode`, a string `enum` of every code.
impl utoipa::PartialSchema for Code {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("Stable, machine-readable: branch on this."))
            .enum_values(Some(Code::ALL.iter().map(|c| c.as_str())))
            .examples([serde_json::json!("app_not_found")])
            .into()
    }
}

impl utoipa::ToSchema for Code {
    fn name() -> std::borrow::Cow<'static, str> {
        "ErrorCode".into()
    }
}

/// The kinds of resource a `404` names (`no such {kind}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    App,
    Endpoint,
    Event,
    Delivery,
    Task,
}

impl Resource {
    /// The `404` code of the kind.
    pub const fn not_found(self) -> Code {
        match self {
            Resource::App => Code::AppNotFound,
            Resource::Endpoint => Code::EndpointNotFound,
            Resource::Event => Code::EventNotFound,
            Resource::Delivery => Code::DeliveryNotFound,
            Resource::Task => Code::TaskNotFound,
        }
    }

    /// The kind in the message.
    pub const fn noun(self) -> &'static str {
        match self {
            Resource::App => "app",
            Resource::Endpoint => "endpoint",
            Resource::Event => "event",
            Resource::Delivery => "delivery",
            Resource::Task => "task",
        }
    }
}

impl From<crate::send_budgets::Action> for Code {
    fn from(action: crate::send_budgets::Action) -> Code {
        use crate::send_budgets::Action;
        match action {
            Action::Challenge => Code::ChallengeLimitReached,
            Action::TestEvent => Code::TestEventLimitReached,
            Action::EndpointReplay | Action::DeliveryReplay => Code::ReplayLimitReached,
        }
    }
}

impl From<crate::catalogue::Unreadable> for Code {
    fn from(reason: crate::catalogue::Unreadable) -> Code {
        use crate::catalogue::Unreadable;
        match reason {
            Unreadable::DuplicateKey => Code::DuplicateKey,
            Unreadable::TooDeep => Code::DataTooDeep,
            Unreadable::NumberOutOfRange => Code::NumberOutOfRange,
            Unreadable::InvalidUnicode => Code::InvalidUnicode,
            Unreadable::Other => Code::UnreadableData,
        }
    }
}

impl From<&crate::catalogue::Refusal> for Code {
    fn from(refusal: &crate::catalogue::Refusal) -> Code {
        use crate::catalogue::Refusal;
        match refusal {
            Refusal::Mismatch { .. } => Code::SchemaMismatch,
            Refusal::Unchecked { reason, .. } => (*reason).into(),
            Refusal::TooCostly { .. } => Code::SchemaTooCostly,
            Refusal::Busy => Code::Overloaded,
            Refusal::Failed => Code::InternalError,
        }
    }
}

impl From<crate::event_types::Invalid> for Code {
    fn from(kind: crate::event_types::Invalid) -> Code {
        use crate::event_types::Invalid;
        match kind {
            Invalid::Type => Code::InvalidEventType,
            Invalid::Filter => Code::InvalidEventTypes,
            Invalid::NotCatalogued => Code::UnknownEventType,
        }
    }
}

impl From<&crate::catalogue::SchemaRefused> for Code {
    fn from(refused: &crate::catalogue::SchemaRefused) -> Code {
        use crate::catalogue::SchemaRefused;
        match refused {
            SchemaRefused::Invalid(_) => Code::InvalidSchema,
            SchemaRefused::TooCostly(_) => Code::SchemaTooCostly,
        }
    }
}

/// The destination policy's codes are its crate's stable text (its enum is
/// private by design); each one is a variant here, which the test below pins.
impl From<&fenix_destination::DestinationError> for Code {
    fn from(e: &fenix_destination::DestinationError) -> Code {
        Code::parse(e.code()).unwrap_or(Code::UrlInvalid)
    }
}

impl From<&crate::endpoint_tls::InvalidTls> for Code {
    fn from(e: &crate::endpoint_tls::InvalidTls) -> Code {
        use crate::endpoint_tls::InvalidTls;
        match e {
            InvalidTls::Certificate(_) => Code::InvalidClientCertificate,
            InvalidTls::Key(_) => Code::InvalidClientKey,
            InvalidTls::Ca(_) => Code::InvalidCaCertificates,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn every_code_has_its_own_snake_case_text() {
        let texts: BTreeSet<_> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(texts.len(), Code::ALL.len(), "a text is used twice");
        for text in texts {
            assert!(text.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{text}");
            assert_eq!(Code::parse(text).map(Code::as_str), Some(text));
        }
        assert_eq!(serde_json::to_value(Code::AppNotFound).unwrap(), "app_not_found");
    }

    /// Literal codes of a domain module's source, after `marker`.
    fn literals_after<'a>(source: &'a str, marker: &str) -> Vec<&'a str> {
        source.split(marker).skip(1).filter_map(|rest| rest.trim_start().strip_prefix('"')?.split('"').next()).collect()
    }

    #[test]
    fn the_codes_domain_modules_write_as_text_are_each_a_code() {
        // The endpoint's policy and the destination policy name their codes as text.
        let policy = literals_after(include_str!("../endpoint_policy.rs"), "invalid(");
        let destination = literals_after(include_str!("../../../fenix-destination/src/error.rs"), "=>");
        assert!(policy.len() >= 11 && destination.len() >= 12, "{policy:?} {destination:?}");
        for text in policy.into_iter().chain(destination).filter(|t| !t.contains(' ')) {
            if text == "dns" || text == "destination_blocked" {
                continue; // attempt error classes, not API codes
            }
            assert!(Code::parse(text).is_some(), "{text} is no Code");
        }
    }

    #[test]
    fn every_status_is_a_client_or_server_error() {
        for code in Code::ALL {
            assert!(code.status().is_client_error() || code.status().is_server_error(), "{code}");
        }
    }
}
