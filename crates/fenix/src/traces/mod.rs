//! OpenTelemetry traces of deliveries, exported over OTLP/HTTP (protobuf),
//! off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: one trace per event, its
//! ingestion, fan-out, every attempt and every replay (`spans.rs`).
//!
//! An event is sent long after it was accepted, perhaps by another instance,
//! so the trace cannot follow the call stack: ingestion stores the W3C
//! `traceparent` of its span with the event (`events.trace_context`) and
//! each attempt's span is a child of it. A producer's `traceparent` on
//! ingestion is continued (a malformed one is ignored); each attempt sends
//! its own to the receiver, so customers can join the trace.
//!
//! Spans are made with the OpenTelemetry API directly, not through
//! `tracing-opentelemetry`: their parents come from the database rather than
//! from the task that runs them, Fenix's log spans stay out of the traces,
//! and with tracing off nothing is made at all ([`Traces::is_on`] is one
//! `Option`). Everything else follows the OpenTelemetry environment
//! conventions, read by the SDK: `OTEL_SERVICE_NAME` (default `fenix`),
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER(_ARG)`,
//! `OTEL_EXPORTER_OTLP_HEADERS`/`_TIMEOUT`, `OTEL_BSP_*`. The batch span
//! processor exports from a thread of its own with a bounded queue: a slow or
//! absent collector drops spans, it never holds up a request or a delivery.

mod spans;

pub use spans::{Attempt, AttemptFacts, Ingestion, Span};

use std::sync::Arc;

use anyhow::Context as _;
use opentelemetry::{
    propagation::{Extractor, Injector, TextMapPropagator},
    trace::{TraceContextExt, TracerProvider as _},
    Context,
};
use opentelemetry_sdk::{
    propagation::TraceContextPropagator,
    trace::{SdkTracer, SdkTracerProvider},
    Resource,
};

/// The W3C Trace Context header, received on ingestion and sent on attempts.
pub const TRACEPARENT: &str = "traceparent";

/// The service name when neither `OTEL_SERVICE_NAME` nor `service.name` in
/// `OTEL_RESOURCE_ATTRIBUTES` gives one.
const SERVICE_NAME: &str = "fenix";

/// Fenix's tracer, or nothing when tracing is off (the default).
#[derive(Clone, Default)]
pub struct Traces {
    on: Option<Arc<On>>,
}

struct On {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

impl Traces {
    /// Off: no span is made, nothing is exported, no `traceparent` is sent.
    pub fn off() -> Traces {
        Traces { on: None }
    }

    /// On when the environment names an OTLP endpoint (and neither
    /// `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` says no).
    pub fn from_environment() -> anyhow::Result<Traces> {
        let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
        let named = set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || std::env::var("OTEL_TRACES_EXPORTER").is_ok_and(|v| v.trim().eq_ignore_ascii_case("none"));
        if !named || disabled {
            return Ok(Traces::off());
        }
        use opentelemetry_otlp::WithExportConfig as _;
        // The endpoint, headers and timeout come from the environment (the
        // exporter reads them); an endpoint it cannot use is an error at start.
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .build()
            .context("setting up the OTLP trace exporter (OTEL_EXPORTER_OTLP_ENDPOINT)")?;
        let provider = SdkTracerProvider::builder().with_resource(resource()).with_batch_exporter(exporter).build();
        let tracer = provider.tracer("fenix");
        Ok(Traces { on: Some(Arc::new(On { provider, tracer })) })
    }

    /// Whether spans are made and exported.
    pub fn is_on(&self) -> bool {
        self.on.is_some()
    }

    /// Exports what is still queued (within the processor's timeout) and
    /// stops the exporter. Blocking: call it off the runtime, at the end.
    pub fn shutdown(&self) {
        if let Some(on) = &self.on {
            if let Err(e) = on.provider.shutdown() {
                tracing::warn!(error = %e, "the trace exporter did not shut down cleanly; spans may be lost");
            }
        }
    }

    fn tracer(&self) -> Option<&SdkTracer> {
        self.on.as_ref().map(|on| &on.tracer)
    }
}

/// The SDK's resource (from the environment), named `fenix` unless it says otherwise.
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::new("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        detected
    } else {
        Resource::builder().with_service_name(SERVICE_NAME).build()
    }
}

/// The remote parent a `traceparent` (and `tracestate`) names, read by the
/// W3C propagator; anything malformed gives the empty context (a new trace).
fn parent_from(extractor: &dyn Extractor) -> Context {
    let cx = TraceContextPropagator::new().extract(extractor);
    if cx.span().span_context().is_valid() {
        cx
    } else {
        Context::new()
    }
}

/// The parent a stored `traceparent` names.
fn stored_parent(traceparent: Option<&str>) -> Context {
    match traceparent {
        Some(value) => parent_from(&Stored(value)),
        None => Context::new(),
    }
}

/// The `traceparent` naming the span of `cx`, when it has a valid one.
fn traceparent_of(cx: &Context) -> Option<String> {
    let mut out = Written(None);
    TraceContextPropagator::new().inject_context(cx, &mut out);
    out.0
}

/// A stored `traceparent` as the propagator reads it.
struct Stored<'a>(&'a str);

impl Extractor for Stored<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        (key == TRACEPARENT).then_some(self.0)
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT]
    }
}

/// A request's headers as the propagator reads them (values that are not
/// visible ASCII are absent).
struct Headers<'a>(&'a axum::http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Keeps the `traceparent` the propagator writes (its `tracestate` is not
/// stored: only the ids and flags that make the parent).
struct Written(Option<String>);

impl Injector for Written {
    fn set(&mut self, key: &str, value: String) {
        if key == TRACEPARENT {
            self.0 = Some(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_well_formed_traceparent_is_the_parent_and_is_written_back_the_same() {
        let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let cx = stored_parent(Some(tp));
        assert_eq!(cx.span().span_context().trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(traceparent_of(&cx).as_deref(), Some(tp));
    }

    #[test]
    fn a_malformed_traceparent_is_no_parent() {
        for bad in [
            "",
            "garbage",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        ] {
            let cx = stored_parent(Some(bad));
            assert!(!cx.span().span_context().is_valid(), "{bad:?} was taken as a parent");
            assert_eq!(traceparent_of(&cx), None);
        }
    }
}
