//! Sending events, one or a batch, and reading them back (`/v1/apps/{app}/events`).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::generated::{operations, CancelledEvent, Event, EventBatch, EventBatchResult, NewEvent, NoOptions};
use crate::transport::{Call, Transport};
use crate::Error;

/// `fenix.events()`.
#[derive(Debug, Clone, Copy)]
pub struct Events<'a> {
    transport: &'a Transport,
}

impl<'a> Events<'a> {
    pub(crate) fn new(transport: &'a Transport) -> Events<'a> {
        Events { transport }
    }

    /// Sends an event of type `event_type` with `data` (a JSON object) to
    /// every endpoint of `app` subscribed to it. With an `idempotency_key`,
    /// sending again answers the event already accepted (and the call is
    /// retried on `429`/`503`).
    pub async fn send(
        &self,
        app: &str,
        event_type: &str,
        data: impl Serialize,
        idempotency_key: Option<&str>,
    ) -> Result<Event, Error> {
        let event = NewEvent {
            type_: event_type.to_owned(),
            data: object(data)?,
            id: None,
            ordering_key: None,
            channels: Vec::new(),
            tags: Vec::new(),
            deliver_at: None,
            delay: None,
        };
        self.send_with(app, &event, idempotency_key).await
    }

    /// [`Events::send`] with every field of the API (`ordering_key`,
    /// `deliver_at` or `delay` to schedule it, …).
    pub async fn send_with(&self, app: &str, event: &NewEvent, idempotency_key: Option<&str>) -> Result<Event, Error> {
        // An `id` in the body is an idempotency key too.
        let params = [app];
        let call = Call::new(operations::SEND_EVENT, &params).json(event).idempotency_key(idempotency_key);
        self.transport.send(call.retry_if(event.id.is_some())).await
    }

    /// Sends many events in one request (up to the server's batch limit,
    /// 1000 by default); each event's `id` is its idempotency key. Retried
    /// on `429`/`503` when every event has one.
    pub async fn send_batch(&self, app: &str, events: Vec<NewEvent>) -> Result<EventBatchResult, Error> {
        let retry = events.iter().all(|event| event.id.is_some());
        self.transport
            .send(Call::new(operations::SEND_EVENT_BATCH, &[app]).json(&EventBatch { events }).retry_if(retry))
            .await
    }

    /// One event; its `data` only with `include_payload`.
    pub async fn get(&self, app: &str, event: &str, include_payload: bool) -> Result<Event, Error> {
        let query = include_payload.then(|| ("include", "payload".to_owned())).into_iter().collect();
        self.transport.send(Call::new(operations::GET_EVENT, &[app, event]).query_pairs(query)).await
    }

    /// Cancels an event: its deliveries not sent yet (scheduled, pending or
    /// waiting for a retry) become `skipped` with `skip_reason: cancelled`.
    /// When none is left to cancel, it is `409 nothing_to_cancel`.
    pub async fn cancel(&self, app: &str, event: &str) -> Result<CancelledEvent, Error> {
        self.transport.send(Call::new(operations::CANCEL_EVENT, &[app, event]).json(&NoOptions {})).await
    }

    /// Erases an event's payload (and the stored requests made from it) for
    /// good; its deliveries not sent yet become `skipped` with
    /// `skip_reason: payload_erased`. Answers the event as it is now.
    pub async fn expunge(&self, app: &str, event: &str) -> Result<Event, Error> {
        self.transport.send(Call::new(operations::EXPUNGE_EVENT, &[app, event]).json(&NoOptions {})).await
    }
}

/// An event's `data` is a JSON object; anything else is refused before sending.
pub(crate) fn object(data: impl Serialize) -> Result<Map<String, Value>, Error> {
    match serde_json::to_value(data) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(Error::InvalidInput(format!("event data must be a JSON object, not {other}"))),
        Err(error) => Err(Error::InvalidInput(format!("event data does not serialise: {error}"))),
    }
}
