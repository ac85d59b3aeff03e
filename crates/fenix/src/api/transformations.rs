//! `POST /v1/apps/{app}/transformations/test`: runs a transformation on an
//! event the caller gives, as the worker would run it for an endpoint (its
//! URL and custom headers when `endpoint_id` is given), and answers the
//! request it makes. Stores nothing; the script need not be saved anywhere.

use std::{collections::BTreeMap, sync::Arc};

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    code::Code,
    error::{ApiError, ErrorBody},
    extract::{ApiJson, ApiPath, AppPath, NoQuery},
    lookup::{self, IdParam},
};
use crate::{
    endpoint_policy::REDACTED,
    event_types::EventType,
    ids::{EndpointId, EventId},
    state::SharedState,
    time,
    transform::{self, request::Webhook, Failure, FailureKind},
};

/// The URL a test without an endpoint runs against.
const TEST_URL: &str = "https://receiver.example/webhook";

/// The event a test runs on.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestEvent {
    #[serde(rename = "type")]
    #[schema(example = "booking.confirmed")]
    pub event_type: String,
    /// The event's `data`; absent: `{}`.
    #[schema(value_type = Option<Object>)]
    pub data: Option<Box<RawValue>>,
}

/// A transformation to try.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestTransformation {
    /// The script, as an endpoint's `transformation` (at most 64 KiB).
    #[schema(
        example = "function handler(webhook) { webhook.payload = {text: webhook.payload.type}; return webhook; }"
    )]
    pub transformation: String,
    pub event: TestEvent,
    /// An endpoint of the app whose URL and custom headers the script is given
    /// (sensitive ones are not); absent: `https://receiver.example/webhook`, no headers.
    #[schema(value_type = Option<String>)]
    pub endpoint_id: Option<IdParam<EndpointId>>,
}

/// The request the transformation made.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TransformationResult {
    /// `POST` or `PUT`.
    pub method: String,
    pub url: String,
    /// Custom headers; Fenix's own, the signature and sensitive headers are added after.
    pub headers: BTreeMap<String, String>,
    /// The body the receiver would get (signed as it is).
    #[schema(value_type = Object)]
    pub payload: Box<RawValue>,
    /// `true`: the delivery would be skipped (`transformation_cancelled`); the
    /// other fields then show the request as it was before the script.
    pub cancel: bool,
}

/// Transformation routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(test_transformation))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/transformations/test", tag = "endpoints", operation_id = "test_transformation",
    summary = "Run a transformation on an event",
    description = "Runs `transformation` on the envelope `event` would have, as the worker runs an endpoint's \
        (same sandbox, limits and checks of the result), and answers the request it makes. Stores nothing. With \
        `endpoint_id`, the script is given that endpoint's URL and custom headers.",
    params(AppPath),
    request_body = TestTransformation,
    responses(
        (status = 200, description = "The request the transformation made", body = TransformationResult),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_transformation` (does not compile: the reason and line), \
            `transformation_failed` (threw, hit a limit, or returned a request outside the rules), \
            `invalid_event_type`", body = ErrorBody),
    ),
    security(("bearer" = ["app:manage"]))
)]
async fn test_transformation(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<TestTransformation>,
) -> Result<Json<TransformationResult>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let event_type = EventType::parse(&body.event.event_type).map_err(|e| ApiError::new(e.kind.into(), e.message))?;
    let (url, headers) = match &body.endpoint_id {
        Some(ep) => {
            let endpoint = lookup::endpoint(&s, app.id.as_str(), ep).await?;
            let (shown, _) = endpoint.spec.headers.redacted();
            let clear = shown.into_iter().filter(|(_, v)| v != REDACTED).collect();
            (endpoint.url, clear)
        }
        None => (TEST_URL.to_string(), BTreeMap::new()),
    };
    let url = url::Url::parse(&url)
        .map_err(|_| ApiError::new(Code::TransformationFailed, "the endpoint's URL does not parse"))?;
    let empty = RawValue::from_string("{}".into()).expect("valid JSON");
    let data = body.event.data.as_deref().unwrap_or(&empty);
    let envelope = crate::envelope::build_envelope(EventId::new().as_str(), &event_type, time::now_ms(), data);
    transform::check_size(&body.transformation).map_err(failure)?;
    let webhook = Webhook { url: &url, headers: &headers, payload: &envelope };
    let start_by = std::time::Instant::now() + transform::API_WAIT;
    let script: Arc<str> = Arc::from(body.transformation.as_str());
    let result = s.transforms.run(script, None, &webhook, start_by).await.map_err(failure)?;
    let json = |bytes: Vec<u8>| {
        RawValue::from_string(String::from_utf8(bytes).unwrap_or_default())
            .map_err(|_| ApiError::new(Code::TransformationFailed, "the payload is not JSON"))
    };
    Ok(Json(match result {
        Ok(t) => TransformationResult {
            method: t.method.as_str().to_string(),
            url: t.url_on(&url).to_string(),
            headers: t.headers,
            payload: json(t.body)?,
            cancel: false,
        },
        Err(transform::Cancelled) => TransformationResult {
            method: "POST".into(),
            url: url.to_string(),
            headers,
            payload: json(envelope)?,
            cancel: true,
        },
    }))
}

/// A failure as this call answers it: the script's own message included
/// (the caller gave the event).
fn failure(f: Failure) -> ApiError {
    let code = match f.kind {
        FailureKind::Compile => Code::InvalidTransformation,
        FailureKind::Run => Code::TransformationFailed,
    };
    ApiError::new(code, f.message(true))
}
