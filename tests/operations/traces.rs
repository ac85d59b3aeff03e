//! OpenTelemetry traces (docs/operations.md, "Tracing a slow delivery"): with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a collector the test runs (an
//! OTLP/HTTP receiver on loopback that decodes the protobuf requests), one
//! event is one trace: its ingestion continues the producer's `traceparent`,
//! and every attempt to every endpoint is a child of the ingestion span and
//! sends its own `traceparent`; a replay joins the same trace. No span carries
//! the payload or a secret. With no endpoint set nothing of it is sent.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest,
    common::v1::{any_value, AnyValue},
    trace::v1::Span,
};
use prost::Message as _;
use serde_json::json;

use super::common::{attempts, wait_for_delivery, PATIENCE};
use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// The producer's trace and span: the parent Fenix must continue.
const PRODUCER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PRODUCER_SPAN: &str = "00f067aa0ba902b7";
/// In the payload only: it must appear in no span.
const MARKER: &str = "payload-marker-7f3c";

/// A collector: every span the OTLP/HTTP requests it was sent carried.
struct Collector {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Collector {
    async fn start() -> Collector {
        let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
        let kept = spans.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| async move {
                let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf request");
                let mut spans = kept.lock().unwrap();
                for resource in request.resource_spans {
                    let service =
                        resource.resource.iter().flat_map(|r| &r.attributes).find(|a| a.key == "service.name");
                    assert_eq!(service.and_then(|a| text(&a.value)).as_deref(), Some("fenix"), "the service name");
                    spans.extend(resource.scope_spans.into_iter().flat_map(|s| s.spans));
                }
                ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Collector { url, spans }
    }

    fn named(&self, name: &str) -> Vec<Span> {
        self.spans.lock().unwrap().iter().filter(|s| s.name == name).cloned().collect()
    }

    /// Waits until `n` spans called `name` came.
    async fn wait_for(&self, name: &str, n: usize) -> Vec<Span> {
        eventually(&format!("{n} `{name}` spans exported"), PATIENCE, || async { self.named(name).len() >= n }).await;
        self.named(name)
    }
}

fn text(value: &Option<AnyValue>) -> Option<String> {
    match value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        any_value::Value::IntValue(i) => Some(i.to_string()),
        any_value::Value::BoolValue(b) => Some(b.to_string()),
        other => Some(format!("{other:?}")),
    }
}

/// A span's attributes as text.
fn attributes(span: &Span) -> HashMap<String, String> {
    span.attributes.iter().map(|a| (a.key.clone(), text(&a.value).unwrap_or_default())).collect()
}

/// `traceparent` → (trace id, parent id).
fn ids_of(traceparent: &str) -> (String, String) {
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "a W3C traceparent: {traceparent:?}");
    assert_eq!(parts[0], "00");
    (parts[1].to_string(), parts[2].to_string())
}

async fn one_event_is_one_trace_with_every_attempt_of_every_endpoint_under_its_ingestion(backend: Backend) {
    let collector = Collector::start().await;
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(
        &db,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("FENIX_RETRY_SCHEDULE", "100ms"),
        ],
    )
    .await;
    let flaky = Receiver::http(|n| if n == 0 { Plan::status(500) } else { Plan::ok() }).await;
    let steady = Receiver::http(|_| Plan::ok()).await;
    let down = Receiver::http(|_| Plan::status(503)).await;
    let app = fenix.create_app("acme").await;
    let mut secrets = Vec::new();
    let mut endpoints = Vec::new();
    for receiver in [&flaky, &steady, &down] {
        let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
        secrets.push(ep["secret"].as_str().unwrap().to_string());
        endpoints.push(ep["id"].as_str().unwrap().to_string());
    }

    let answer = fenix
        .request("POST", &format!("/v1/apps/{app}/events"))
        .header("traceparent", format!("00-{PRODUCER_TRACE}-{PRODUCER_SPAN}-01"))
        .json(&json!({"type": "booking.confirmed", "data": {"note": MARKER}}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202);
    let event: serde_json::Value = answer.json().await.unwrap();
    let event_id = event["id"].as_str().unwrap().to_string();
    wait_for_delivery(&fenix, &app, &event_id, &endpoints[0], "succeeded").await;
    wait_for_delivery(&fenix, &app, &event_id, &endpoints[1], "succeeded").await;
    let dead = wait_for_delivery(&fenix, &app, &event_id, &endpoints[2], "failed").await;
    let dead_id = dead["id"].as_str().unwrap().to_string();
    let (status, _) = fenix.call("POST", &format!("/v1/apps/{app}/deliveries/{dead_id}/replay"), None).await;
    assert_eq!(status, 202);
    eventually("the replayed delivery failed again", PATIENCE, || async {
        attempts(&fenix, &app, &dead_id).await.len() == 4
    })
    .await;

    // Ingestion: a child of the producer's span, in the producer's trace.
    let ingest = collector.wait_for("fenix.ingest", 1).await;
    assert_eq!(ingest.len(), 1);
    let ingest = &ingest[0];
    assert_eq!(hex::encode(&ingest.trace_id), PRODUCER_TRACE);
    assert_eq!(hex::encode(&ingest.parent_span_id), PRODUCER_SPAN, "the producer's span is the parent");
    let seen = attributes(ingest);
    assert_eq!((seen["fenix.event_id"].as_str(), seen["fenix.app_id"].as_str()), (event_id.as_str(), app.as_str()));
    assert_eq!(seen["http.response.status_code"], "202");
    let fan_out = collector.wait_for("fenix.fan_out", 1).await;
    assert_eq!(fan_out[0].parent_span_id, ingest.span_id);
    assert_eq!(attributes(&fan_out[0])["fenix.deliveries"], "3");

    // Every attempt (2 + 1 + 2, then 2 after the replay), each under the ingestion span.
    let spans = collector.wait_for("fenix.attempt", 7).await;
    assert_eq!(spans.len(), 7, "one span per attempt");
    let mut by_endpoint: HashMap<String, Vec<HashMap<String, String>>> = HashMap::new();
    for span in &spans {
        assert_eq!(hex::encode(&span.trace_id), PRODUCER_TRACE, "the attempt is in the producer's trace");
        assert_eq!(span.parent_span_id, ingest.span_id, "the ingestion span is the attempt's parent");
        let seen = attributes(span);
        assert_eq!((seen["fenix.event_id"].as_str(), seen["fenix.app_id"].as_str()), (event_id.as_str(), app.as_str()));
        assert_eq!(seen["fenix.event_type"], "booking.confirmed");
        assert!(seen["fenix.delivery_id"].starts_with("dlv_") && seen["fenix.attempt_id"].starts_with("att_"));
        assert_eq!(seen["server.address"], "127.0.0.1");
        assert!(seen["fenix.duration_ms"].parse::<i64>().is_ok());
        by_endpoint.entry(seen["fenix.endpoint_id"].clone()).or_default().push(seen);
    }
    let statuses = |ep: &str| {
        let mut got: Vec<(String, String, Option<String>)> = by_endpoint[ep]
            .iter()
            .map(|a| {
                (
                    a["fenix.attempt_number"].clone(),
                    a["http.response.status_code"].clone(),
                    a.get("error.type").cloned(),
                )
            })
            .collect();
        got.sort();
        got
    };
    let ok = |n: &str| (n.to_string(), "200".to_string(), None);
    let failed = |n: &str, s: &str| (n.to_string(), s.to_string(), Some("http_status".to_string()));
    assert_eq!(statuses(&endpoints[0]), vec![failed("1", "500"), ok("2")]);
    assert_eq!(statuses(&endpoints[1]), vec![ok("1")]);
    assert_eq!(
        statuses(&endpoints[2]),
        vec![failed("1", "503"), failed("2", "503"), failed("3", "503"), failed("4", "503")]
    );

    // The replay is in the same trace, under the ingestion span.
    let replay = collector.wait_for("fenix.replay", 1).await;
    assert_eq!(replay[0].parent_span_id, ingest.span_id);
    assert_eq!(hex::encode(&replay[0].trace_id), PRODUCER_TRACE);
    assert_eq!(attributes(&replay[0])["fenix.delivery_id"], dead_id);

    // Each receiver got the traceparent of the very attempt that reached it.
    let attempt_spans: HashMap<String, &Span> =
        spans.iter().map(|s| (attributes(s)["fenix.attempt_id"].clone(), s)).collect();
    for receiver in [&flaky, &steady, &down] {
        for request in receiver.received() {
            let (trace, parent) = ids_of(request.header("traceparent"));
            assert_eq!(trace, PRODUCER_TRACE);
            let span = attempt_spans[request.header("x-fenix-delivery-id")];
            assert_eq!(parent, hex::encode(&span.span_id), "the traceparent names the attempt's span");
        }
    }

    // Neither the payload nor a secret nor a signature is in any span.
    let signatures: Vec<String> = [&flaky, &steady, &down]
        .iter()
        .flat_map(|r| r.received())
        .map(|r| r.header("x-fenix-signature").to_string())
        .collect();
    for span in collector.spans.lock().unwrap().iter() {
        let all = format!("{} {:?} {:?}", span.name, span.attributes, span.events);
        assert!(!all.contains(MARKER), "the payload in span {}: {all}", span.name);
        for secret in &secrets {
            assert!(!all.contains(secret.trim_start_matches("whsec_")), "a secret in span {}", span.name);
        }
        for signature in &signatures {
            assert!(!all.contains(signature.trim_start_matches("v1=")), "a signature in span {}", span.name);
        }
    }
}

async fn without_a_collector_no_traceparent_is_sent_and_a_producer_s_is_accepted_as_it_is(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep = ep["id"].as_str().unwrap();
    for traceparent in [format!("00-{PRODUCER_TRACE}-{PRODUCER_SPAN}-01"), "not-a-traceparent".to_string()] {
        let answer = fenix
            .request("POST", &format!("/v1/apps/{app}/events"))
            .header("traceparent", traceparent)
            .json(&json!({"type": "booking.confirmed", "data": {}}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 202);
        let event: serde_json::Value = answer.json().await.unwrap();
        wait_for_delivery(&fenix, &app, event["id"].as_str().unwrap(), ep, "succeeded").await;
    }
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    assert!(received.iter().all(|r| r.header("traceparent").is_empty()), "a traceparent was sent with tracing off");
}

async fn a_malformed_traceparent_is_ignored_and_the_event_starts_a_trace_of_its_own(backend: Backend) {
    let collector = Collector::start().await;
    let db = TestDb::new(backend).await;
    let fenix =
        Fenix::start(&db, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url), ("OTEL_BSP_SCHEDULE_DELAY", "100")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    // An endpoint's own header of that name never replaces the attempt's.
    let theirs = format!("00-{PRODUCER_TRACE}-{PRODUCER_SPAN}-01");
    let headers = json!({"traceparent": theirs});
    fenix
        .create_endpoint(&app, json!({"url": receiver.url, "headers": headers, "sensitive_headers": ["traceparent"]}))
        .await;
    let answer = fenix
        .request("POST", &format!("/v1/apps/{app}/events"))
        .header("traceparent", format!("00-{PRODUCER_TRACE}-0000000000000000-01"))
        .json(&json!({"type": "booking.confirmed", "data": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202, "a malformed traceparent is no error");

    let ingest = collector.wait_for("fenix.ingest", 1).await;
    assert!(ingest[0].parent_span_id.is_empty(), "a root span");
    assert_ne!(hex::encode(&ingest[0].trace_id), PRODUCER_TRACE);
    let attempt = collector.wait_for("fenix.attempt", 1).await;
    assert_eq!(attempt[0].trace_id, ingest[0].trace_id);
    assert_eq!(attempt[0].parent_span_id, ingest[0].span_id);
    let (trace, parent) = ids_of(receiver.received()[0].header("traceparent"));
    assert_eq!(trace, hex::encode(&ingest[0].trace_id));
    assert_eq!(parent, hex::encode(&attempt[0].span_id), "the attempt's own traceparent, not the endpoint's header");
}

async fn a_batch_s_events_are_traced_under_its_one_ingestion(backend: Backend) {
    let collector = Collector::start().await;
    let db = TestDb::new(backend).await;
    let fenix =
        Fenix::start(&db, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url), ("OTEL_BSP_SCHEDULE_DELAY", "100")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let answer = fenix
        .request("POST", &format!("/v1/apps/{app}/events/batch"))
        .header("traceparent", format!("00-{PRODUCER_TRACE}-{PRODUCER_SPAN}-01"))
        .json(&json!({"events": [{"type": "a.b", "data": {}}, {"type": "a.b", "data": {}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 202);

    let ingest = collector.wait_for("fenix.ingest", 1).await;
    assert_eq!(hex::encode(&ingest[0].parent_span_id), PRODUCER_SPAN);
    assert_eq!(attributes(&ingest[0])["http.route"], "/v1/apps/{app}/events/batch");
    let fan_out = collector.wait_for("fenix.fan_out", 1).await;
    assert_eq!(attributes(&fan_out[0])["fenix.events_written"], "2");
    let attempts = collector.wait_for("fenix.attempt", 2).await;
    let mut events: Vec<String> = attempts.iter().map(|a| attributes(a)["fenix.event_id"].clone()).collect();
    events.sort();
    events.dedup();
    assert_eq!(events.len(), 2, "one attempt of each event");
    for attempt in &attempts {
        assert_eq!(hex::encode(&attempt.trace_id), PRODUCER_TRACE);
        assert_eq!(attempt.parent_span_id, ingest[0].span_id);
    }
}

crate::on_both_backends!(
    one_event_is_one_trace_with_every_attempt_of_every_endpoint_under_its_ingestion,
    without_a_collector_no_traceparent_is_sent_and_a_producer_s_is_accepted_as_it_is,
    a_malformed_traceparent_is_ignored_and_the_event_starts_a_trace_of_its_own,
    a_batch_s_events_are_traced_under_its_one_ingestion,
);
