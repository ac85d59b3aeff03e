-- OpenTelemetry traces (docs/operations.md#tracing-a-slow-delivery): the W3C
-- `traceparent` of the span that ingested the event, written only while
-- tracing is on (`OTEL_EXPORTER_OTLP_ENDPOINT`). Every attempt of the event,
-- sent later and perhaps by another instance, is a child of that span, so
-- one event is one trace whichever process sends it. NULL: the event was
-- ingested with tracing off; its attempts then start traces of their own.
-- Only ids and flags: never anything of the payload.
ALTER TABLE events ADD COLUMN trace_context TEXT;
