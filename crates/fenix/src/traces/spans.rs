//! The spans of an event's trace: `fenix.ingest` (the API request, a child
//! of the producer's span when it sent a `traceparent`), `fenix.fan_out`
//! (the event and its deliveries written in one transaction), one
//! `fenix.attempt` per HTTP request to a receiver and one `fenix.replay` per
//! replay of a delivery, all children of the ingestion span.
//!
//! Attributes are ids, types, counts, statuses, durations and error classes;
//! never the payload, a header's value, a signature, a secret, or a URL (an
//! attempt names its receiver's host only). With tracing off every value
//! here is empty and every method returns at once.

use axum::http::{HeaderMap, HeaderValue};
use opentelemetry::{
    trace::{SpanKind, Status, TraceContextExt, Tracer as _},
    Context, KeyValue,
};

use super::{parent_from, stored_parent, traceparent_of, Headers, Traces};

/// A span in progress (ended by one of its `end…` methods, or when dropped),
/// or nothing when tracing is off.
pub struct Span {
    /// The context holding the span: its children's parent.
    cx: Option<Context>,
}

/// The ingestion of one event (`POST /v1/apps/{app}/events`) or of one batch.
pub type Ingestion = Span;

/// One attempt: its span and the `traceparent` sent with it.
pub type Attempt = Span;

/// What an attempt's span says of it before it is sent.
pub struct AttemptFacts<'a> {
    pub app_id: &'a str,
    pub endpoint_id: &'a str,
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub delivery_id: &'a str,
    /// The attempt's id, sent as `X-Fenix-Delivery-Id`.
    pub attempt_id: &'a str,
    pub attempt_number: i64,
    /// The receiver's host (never its path, query or credentials).
    pub host: Option<&'a str>,
}

impl Traces {
    /// The span of an ingestion request on `route`, continuing the
    /// producer's trace when `headers` carry a valid `traceparent`.
    pub fn ingestion(&self, headers: &HeaderMap, route: &'static str) -> Ingestion {
        let Some(tracer) = self.tracer() else { return Span { cx: None } };
        let parent = parent_from(&Headers(headers));
        let span = tracer
            .span_builder("fenix.ingest")
            .with_kind(SpanKind::Server)
            .with_attributes([KeyValue::new("http.request.method", "POST"), KeyValue::new("http.route", route)])
            .start_with_context(tracer, &parent);
        Span { cx: Some(parent.with_span(span)) }
    }

    /// The span of one attempt, a child of the span its event's ingestion
    /// stored (`stored`; `None`: ingested while tracing was off, the
    /// attempt starts a trace of its own).
    pub fn attempt(&self, stored: Option<&str>, facts: &AttemptFacts<'_>) -> Attempt {
        let Some(tracer) = self.tracer() else { return Span { cx: None } };
        let parent = stored_parent(stored);
        let mut attributes = vec![
            KeyValue::new("fenix.app_id", facts.app_id.to_string()),
            KeyValue::new("fenix.endpoint_id", facts.endpoint_id.to_string()),
            KeyValue::new("fenix.event_id", facts.event_id.to_string()),
            KeyValue::new("fenix.event_type", facts.event_type.to_string()),
            KeyValue::new("fenix.delivery_id", facts.delivery_id.to_string()),
            KeyValue::new("fenix.attempt_id", facts.attempt_id.to_string()),
            KeyValue::new("fenix.attempt_number", facts.attempt_number),
        ];
        if let Some(host) = facts.host {
            attributes.push(KeyValue::new("server.address", host.to_string()));
        }
        let span = tracer
            .span_builder("fenix.attempt")
            .with_kind(SpanKind::Client)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        Span { cx: Some(parent.with_span(span)) }
    }

    /// The span of a replay of delivery `delivery_id` (of event
    /// `event_id`, whose ingestion stored `stored`), made as the replay is
    /// asked for; ended with [`Span::end_replay`].
    pub fn replay(&self, stored: Option<&str>, event_id: &str, delivery_id: &str) -> Span {
        let Some(tracer) = self.tracer() else { return Span { cx: None } };
        let parent = stored_parent(stored);
        let span = tracer
            .span_builder("fenix.replay")
            .with_kind(SpanKind::Internal)
            .with_attributes([
                KeyValue::new("fenix.event_id", event_id.to_string()),
                KeyValue::new("fenix.delivery_id", delivery_id.to_string()),
            ])
            .start_with_context(tracer, &parent);
        Span { cx: Some(parent.with_span(span)) }
    }
}

impl Span {
    /// The `traceparent` naming this span: what an event stores for its
    /// attempts, what an attempt sends to its receiver. `None` when off.
    pub fn traceparent(&self) -> Option<String> {
        self.cx.as_ref().and_then(traceparent_of)
    }

    /// [`Span::traceparent`] as a header value.
    pub fn traceparent_header(&self) -> Option<HeaderValue> {
        self.traceparent().and_then(|tp| HeaderValue::from_str(&tp).ok())
    }

    /// Names the app of an ingestion span, once it is known.
    pub fn app(&self, app_id: &str) {
        if let Some(cx) = &self.cx {
            cx.span().set_attribute(KeyValue::new("fenix.app_id", app_id.to_string()));
        }
    }

    /// Names the event an ingestion span wrote (or found: an idempotent repeat).
    pub fn event(&self, event_id: &str, event_type: &str) {
        if let Some(cx) = &self.cx {
            cx.span().set_attribute(KeyValue::new("fenix.event_id", event_id.to_string()));
            cx.span().set_attribute(KeyValue::new("fenix.event_type", event_type.to_string()));
        }
    }

    /// The fan-out of an ingestion: a child span over the write of its
    /// event(s) and deliveries.
    pub fn fan_out(&self, traces: &Traces) -> Span {
        let (Some(cx), Some(tracer)) = (&self.cx, traces.tracer()) else { return Span { cx: None } };
        let span = tracer.span_builder("fenix.fan_out").with_kind(SpanKind::Internal).start_with_context(tracer, cx);
        Span { cx: Some(cx.with_span(span)) }
    }

    /// Ends a fan-out: `deliveries` written for `events` events (`0`: the
    /// event was already there, an idempotent repeat, or refused).
    pub fn end_fan_out(self, events: i64, deliveries: i64) {
        self.end_with(
            [KeyValue::new("fenix.events_written", events), KeyValue::new("fenix.deliveries", deliveries)],
            None,
        );
    }

    /// Ends an ingestion span with the answer's status and, when refused,
    /// its error code.
    pub fn end_ingestion(self, http_status: u16, error_code: Option<&'static str>) {
        let mut attributes = vec![KeyValue::new("http.response.status_code", i64::from(http_status))];
        if let Some(code) = error_code {
            attributes.push(KeyValue::new("error.type", code));
        }
        self.end_with(attributes, error_code);
    }

    /// Ends an attempt span: the receiver's status (none when no answer
    /// came), the attempt's duration, its error class, and what the
    /// delivery became (`succeeded`, `pending` for a retry, `failed`, …).
    pub fn end_attempt(
        self,
        status: Option<u16>,
        duration_ms: i64,
        error: Option<&'static str>,
        outcome: &'static str,
    ) {
        let mut attributes =
            vec![KeyValue::new("fenix.duration_ms", duration_ms), KeyValue::new("fenix.outcome", outcome)];
        if let Some(status) = status {
            attributes.push(KeyValue::new("http.response.status_code", i64::from(status)));
        }
        if let Some(class) = error {
            attributes.push(KeyValue::new("error.type", class));
        }
        self.end_with(attributes, error);
    }

    /// Ends a replay span: whether the delivery was re-queued.
    pub fn end_replay(self, requeued: bool) {
        self.end_with([KeyValue::new("fenix.requeued", requeued)], None);
    }

    fn end_with(self, attributes: impl IntoIterator<Item = KeyValue>, error: Option<&'static str>) {
        let Some(cx) = self.cx else { return };
        let span = cx.span();
        span.set_attributes(attributes);
        if let Some(error) = error {
            span.set_status(Status::error(error));
        }
        span.end();
    }
}
