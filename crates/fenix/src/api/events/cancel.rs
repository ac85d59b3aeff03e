//! `POST /v1/apps/{app}/events/{evt}/cancel`: an event that should not go
//! after all (a scheduled reminder whose booking was called off, a release
//! that sent the wrong events) is stopped before its requests are made.

use axum::{extract::State, Json};
use serde::Serialize;

use crate::{
    api::{
        code::{Code, Resource},
        error::{ApiError, ErrorBody},
        extract::{optional_json, ApiPath, EventPath, NoOptions, NoQuery, RawBody},
        lookup,
    },
    state::SharedState,
    time,
};

/// What a cancel stopped.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = CancelledEvent)]
pub(super) struct CancelOut {
    /// The event's id.
    id: crate::ids::EventId,
    /// Its deliveries this call cancelled (now `skipped`, `skip_reason: cancelled`).
    #[schema(example = 2)]
    cancelled: u64,
}

#[utoipa::path(
    post, path = "/v1/apps/{app}/events/{evt}/cancel", tag = "events", operation_id = "cancel_event",
    summary = "Cancel what is still to be sent of an event",
    security(("bearer" = ["app:manage"])),
    description = "Every delivery of the event that is still to be sent (`scheduled`, `pending`, or `in_flight` \
        but not started yet) becomes `skipped` with `skip_reason: cancelled`, and is not sent: a worker that had \
        claimed one gives it up before its request starts (within a quarter of a second of the answer). A request \
        already on its way is let finish. Deliveries that ended already are left as they are. A cancelled delivery \
        can still be replayed.",
    params(EventPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "Cancelled; how many deliveries", body = CancelOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `event_not_found`", body = ErrorBody),
        (status = 409, description = "`nothing_to_cancel`: none of its deliveries was still scheduled or pending",
            body = ErrorBody),
    )
)]
pub(super) async fn cancel(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EventPath { app, evt }): ApiPath<EventPath>,
    RawBody(body): RawBody,
) -> Result<Json<CancelOut>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let NoOptions {} = optional_json(&body)?;
    let evt = evt.known(Resource::Event)?;
    match s.store.cancel_event(&app.id, &evt, time::now_ms()).await? {
        None => Err(ApiError::not_found(Resource::Event)),
        Some(0) => Err(ApiError::new(
            Code::NothingToCancel,
            "none of this event's deliveries is still scheduled or pending: each was sent, or ended, already",
        )),
        Some(cancelled) => {
            tracing::info!(app_id = %app.id, event_id = %evt, cancelled, "event cancelled");
            // An ordered lane that waited behind a cancelled delivery may go on, on any instance.
            s.wake.work_committed(crate::wake::Reach::AllInstances).await;
            Ok(Json(CancelOut { id: evt, cancelled }))
        }
    }
}
