//! Test events: `POST /v1/apps/{app}/endpoints/{ep}/test` sends one event to
//! one endpoint, so an owner can check a receiver (its URL, its signature
//! check) without sending a real event to every subscriber. The event goes
//! through the normal intake ([`crate::ingest`]): it is stored, signed,
//! retried and logged like any other, and its delivery can be replayed.
//! Its data is checked against the event-type catalogue exactly as an
//! ingested event's (`events::checked_event`): a test event is no way around
//! a schema or strict mode. Only Fenix's own default type, `fenix.test`, is
//! taken uncatalogued in strict mode, so a strict deployment can still test
//! a receiver. Test events spend the budgets of `send_budgets`.

use crate::api::code::{Code, Resource};
use axum::{extract::State, http::StatusCode, Json};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    events::{checked_event, IngestBody},
    extract::{non_null, optional_json, ApiPath, EndpointPath, NoQuery, RawBody},
    lookup,
};
use crate::{
    event_types::EventType,
    ids,
    send_budgets::{self, Action},
    state::SharedState,
    store::deliveries::DeliveryFilter,
    time,
};

/// The type of a test event when the request names none.
pub const DEFAULT_TEST_TYPE: &str = "fenix.test";

/// What to send; every field optional, an empty body sends `{}` as `fenix.test`.
#[derive(Debug, Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TestEventRequest)]
struct TestEventBody {
    /// The event's type (default `fenix.test`); the endpoint's event-type filter does not apply.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(
        value_type = String, required = false, example = "fenix.test",
        pattern = "^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,126}[A-Za-z0-9_:-]$|^[A-Za-z0-9_:-]$"
    )]
    event_type: Option<String>,
    /// The event's `data` (default `{}`), a JSON object sent byte for byte.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Object, required = false, example = json!({"hello": "world"}))]
    data: Option<Box<RawValue>>,
}

/// The test event and its one delivery, to follow in the delivery log.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = TestEventSent)]
struct TestEventSent {
    /// `evt_…`, the `X-Fenix-Event-Id` the receiver gets.
    event_id: crate::ids::EventId,
    /// `dlv_…`, the delivery to this endpoint (`GET …/deliveries/{dlv}`).
    delivery_id: crate::ids::DeliveryId,
}

/// Test event routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(send_test_event))
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/endpoints/{ep}/test", tag = "endpoints", operation_id = "send_test_event",
    summary = "Send a test event to one endpoint",
    description = "Stores an event (`event_type`, default `fenix.test`; `data`, default `{}`) with one delivery, \
        to this endpoint only, whatever its event-type filter; the app's other endpoints get nothing. It is \
        signed, retried and logged like any delivery. To a paused or disabled endpoint the delivery is recorded \
        and `skipped`, like any other delivery to it. `data` is checked against the event-type catalogue like an \
        ingested event's (schema, strict mode; `fenix.test` itself needs no entry). Test events are limited per \
        endpoint and per app (docs/security.md): over the limit, 429 with `Retry-After`.",
    params(EndpointPath),
    request_body(content = Option<TestEventBody>, description = "Optional; an empty body means defaults"),
    responses(
        (status = 202, description = "Stored; the delivery is queued", body = TestEventSent),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `endpoint_not_found`", body = ErrorBody),
        (status = 422, description = "`invalid_event_type`, `invalid_data`, `schema_mismatch` (with \
            `error.details`), `unknown_event_type` (strict mode), and every other refusal of the catalogue's check \
            at ingestion", body = ErrorBody),
        (status = 429, description = "`test_event_limit_reached`: the endpoint's or the app's test events are \
            spent for now; nothing was stored", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the call is allowed again"))),
    ),
    security(("bearer" = ["app:manage"]))
)]
async fn send_test_event(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EndpointPath { app, ep }): ApiPath<EndpointPath>,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<TestEventSent>), ApiError> {
    let endpoint = lookup::endpoint(&s, &app, &ep).await?;
    let body: TestEventBody = optional_json(&body)?;
    let event_type = EventType::parse(body.event_type.as_deref().unwrap_or(DEFAULT_TEST_TYPE))
        .map_err(|e| ApiError::new(e.kind.into(), e.message.replacen("type", "event_type", 1)))?;
    let data = match body.data {
        Some(data) => data,
        None => RawValue::from_string("{}".into()).expect("valid JSON"),
    };
    let now = time::now_ms();
    let made = (ids::EventId::new(), now);
    let catalogue = s.catalogue.current(&s.store).await?;
    let mut new = if event_type.as_str() == DEFAULT_TEST_TYPE && catalogue.get(DEFAULT_TEST_TYPE).is_none() {
        // Fenix's own probe type, uncatalogued: nothing to check it against, even in strict mode.
        if !data.get().trim_start().starts_with('{') {
            return Err(ApiError::new(Code::InvalidData, "data must be a JSON object"));
        }
        crate::ingest::new_event_as(made.0, now, endpoint.app_id.clone(), &event_type, &data, None, 1)
    } else {
        let event = IngestBody {
            event_type: event_type.as_str().to_string(),
            data,
            id: None,
            ordering_key: None,
            channels: vec![],
            tags: vec![],
            deliver_at: None,
            delay: None,
        };
        checked_event(&s, &catalogue, made, endpoint.app_id.clone(), event, None, "/data").await?
    };
    new.only_endpoint = Some(endpoint.id.clone());
    new.max_fanout = 1;
    send_budgets::take(&s.store, Action::TestEvent, &endpoint.app_id, &endpoint.id, now)
        .await?
        .map_err(ApiError::over_budget)?;
    let ingested = s.ingestor.ingest(new).await.map_err(lookup::app_deleted_meanwhile)?;
    s.metrics.ingested(ingested.event.delivery_count);
    let filter = DeliveryFilter { event_id: Some(ingested.event.id.clone()), limit: 1, ..Default::default() };
    // No delivery: the endpoint was deleted between the lookup and the write.
    let delivery = s.store.list_deliveries(&endpoint.app_id, &filter).await?.pop();
    let delivery = delivery.ok_or_else(|| ApiError::not_found(Resource::Endpoint))?;
    tracing::info!(endpoint_id = %endpoint.id, event_id = %ingested.event.id, "test event sent");
    Ok((StatusCode::ACCEPTED, Json(TestEventSent { event_id: ingested.event.id, delivery_id: delivery.id })))
}
