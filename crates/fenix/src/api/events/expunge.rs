//! `POST /v1/apps/{app}/events/{evt}/expunge`: a customer asked for their
//! data to be erased, or a payload carried what it should not have. The
//! payload goes now, not at the retention's cutoff; the log keeps what it
//! needs to stay an honest record (the event's metadata and digest, its
//! deliveries and attempts). What is erased and what is kept is
//! `store::expunge`'s, and docs/operations.md says it for operators.

use axum::{extract::State, Json};

use super::EventOut;
use crate::{
    api::{
        code::Resource,
        error::{ApiError, ErrorBody},
        extract::{optional_json, ApiPath, EventPath, NoOptions, NoQuery, RawBody},
        lookup,
    },
    state::SharedState,
    time,
};

#[utoipa::path(
    post, path = "/v1/apps/{app}/events/{evt}/expunge", tag = "events", operation_id = "expunge_event",
    summary = "Erase an event's payload now",
    security(("bearer" = ["app:manage"])),
    description = "Erases the event's payload (`data`) and the requests its endpoints' transformations made \
        from it; the event keeps its id, type, idempotency key, `payload_sha256` and its delivery log. The \
        answer, and every read of the event after it, shows `\"data\": null` and `expunged_at`. Its deliveries \
        still to be sent are not sent: they become `skipped` with `skip_reason: payload_erased` (a request \
        already on its way is let finish). None of them can be replayed (`payload_expired`). Erasing again \
        changes nothing and answers the same.",
    params(EventPath),
    request_body(content = Option<NoOptions>, description = "Optional; empty or `{}`"),
    responses(
        (status = 200, description = "Erased: the event as it is now", body = EventOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`app_not_found`, `event_not_found`", body = ErrorBody),
    )
)]
pub(super) async fn expunge(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EventPath { app, evt }): ApiPath<EventPath>,
    RawBody(body): RawBody,
) -> Result<Json<EventOut>, ApiError> {
    let app = lookup::app(&s.store, &app).await?;
    let NoOptions {} = optional_json(&body)?;
    let evt = evt.known(Resource::Event)?;
    let row = s
        .store
        .expunge_event(&app.id, &evt, time::now_ms())
        .await?
        .ok_or_else(|| ApiError::not_found(Resource::Event))?;
    tracing::info!(app_id = %app.id, event_id = %evt, "event payload erased");
    if !s.store.flush_erased().await? {
        tracing::warn!(event_id = %evt, "the erased payload's old copies in the SQLite log wait for the next checkpoint");
    }
    // Its deliveries that were waiting are due now, to be settled without a request, on any instance.
    s.wake.work_committed(crate::wake::Reach::AllInstances).await;
    Ok(Json(EventOut::from_row(row, false)))
}
