//! `POST /v1/apps/{app}/filters/test`: evaluates a content filter
//! (`crate::filter`) on sample events the caller gives, as the fan-out
//! would. Stores nothing; the filter need not be saved anywhere.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    code::Code,
    error::{ApiError, ErrorBody},
    extract::{ApiJson, ApiPath, AppPath, NoQuery},
    lookup,
};
use crate::{
    event_types::EventType,
    filter::{self, Subject},
    state::SharedState,
};

/// Most sample events one test evaluates.
const MAX_EVENTS: usize = 20;

/// A sample event, as a filter sees it.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterTestEvent {
    #[serde(rename = "type")]
    #[schema(example = "order.paid")]
    pub event_type: String,
    /// The event's `data`; absent: `{}`.
    #[schema(value_type = Option<Object>, example = json!({"amount": 120, "currency": "EUR"}))]
    pub data: Option<Box<RawValue>>,
    /// The event's channels (checked as an event's are).
    #[serde(default)]
    pub channels: Vec<String>,
    /// The event's tags (checked as an event's are).
    #[serde(default)]
    pub tags: Vec<String>,
}

/// A filter to try on sample events.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterTest {
    /// The filter, as an endpoint's `filter`.
    #[schema(example = "data.amount > 100 && data.currency == \"EUR\"")]
    pub filter: String,
    /// 1 to 20 events.
    #[schema(min_items = 1, max_items = 20)]
    pub events: Vec<FilterTestEvent>,
}

/// What the filter says of one sample event.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct FilterVerdict {
    /// Whether the event would be sent to an endpoint with this filter.
    pub matched: bool,
    /// Why the evaluation failed (then `matched` is `false`, as at fan-out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The verdicts, one per event, in order.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct FilterTestResult {
    pub results: Vec<FilterVerdict>,
}

/// Filter routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(test_filter))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/filters/test", tag = "endpoints", operation_id = "test_filter",
    summary = "Evaluate a content filter on sample events",
    description = "Checks `filter` as saving it on an endpoint would (a refusal is `invalid_filter` with the line \
        and column), then evaluates it on each event as the fan-out does: `matched`, or `matched: false` with the \
        evaluation's `error` (a field the event lacks, a type mismatch, the budget spent). Stores nothing.",
    params(AppPath),
    request_body = FilterTest,
    responses(
        (status = 200, description = "One verdict per event", body = FilterTestResult),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_filter` (with the position), `invalid_sample` (none or more than \
            20 events, data that is not JSON), `invalid_event_type`, `invalid_channels`, `invalid_tags`", body = ErrorBody),
    ),
    security(("bearer" = ["app:manage"]))
)]
async fn test_filter(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(AppPath { app }): ApiPath<AppPath>,
    ApiJson(body): ApiJson<FilterTest>,
) -> Result<Json<FilterTestResult>, ApiError> {
    lookup::app(&s.store, &app).await?;
    if body.events.is_empty() || body.events.len() > MAX_EVENTS {
        return Err(ApiError::new(Code::InvalidSample, format!("events: give 1 to {MAX_EVENTS} sample events")));
    }
    let compiled = filter::cached(&body.filter).map_err(|e| ApiError::invalid_filter("filter", e))?;
    let mut subjects = Vec::with_capacity(body.events.len());
    for (i, ev) in body.events.iter().enumerate() {
        let event_type = EventType::parse(&ev.event_type)
            .map_err(|e| ApiError::new(e.kind.into(), format!("events[{i}].type: {}", e.message)))?;
        let channels = crate::labels::parse(&format!("events[{i}].channels"), &ev.channels)
            .map_err(|e| ApiError::new(Code::InvalidChannels, e.to_string()))?;
        let tags = crate::labels::parse(&format!("events[{i}].tags"), &ev.tags)
            .map_err(|e| ApiError::new(Code::InvalidTags, e.to_string()))?;
        let data = match ev.data.as_deref() {
            Some(raw) => Some(
                serde_json::from_str(raw.get())
                    .map_err(|_| ApiError::new(Code::InvalidSample, format!("events[{i}].data: not JSON")))?,
            ),
            None => Some(serde_json::json!({})),
        };
        subjects.push((event_type, data, channels, tags));
    }
    // Evaluated off the runtime: each evaluation is bounded, twenty of them on
    // large samples are not nothing.
    let results = tokio::task::spawn_blocking(move || {
        subjects
            .into_iter()
            .map(|(event_type, data, channels, tags)| {
                let subject = Subject::new(event_type.as_str(), data, &channels, &tags);
                match compiled.matches(&subject) {
                    Ok(matched) => FilterVerdict { matched, error: None },
                    Err(e) => FilterVerdict { matched: false, error: Some(e.to_string()) },
                }
            })
            .collect()
    })
    .await
    .map_err(|_| ApiError::new(Code::InvalidFilter, "the filter could not be evaluated"))?;
    Ok(Json(FilterTestResult { results }))
}
