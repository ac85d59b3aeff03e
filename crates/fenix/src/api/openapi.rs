//! The OpenAPI document of the admin API, served at `GET /openapi.json`.
//!
//! It is generated from the code: each handler carries a `#[utoipa::path]`
//! attribute beside its route, and the request and response types derive
//! `ToSchema`. This module gathers them into one document and adds what is
//! common to every call (the bearer token, the error shape, the error answers
//! every authenticated or body-taking call can give). The test below reads the
//! routers' source and fails when a route is missing from the document, or the
//! document names a route the server does not have.
//!
//! The types here exist only to describe answers built elsewhere (`json!`
//! bodies, the pagination envelope of `api.rs`, the handlers in `lib.rs`);
//! keep them in step with those when they change.

use std::{collections::btree_map::Entry, sync::LazyLock};

use axum::{http::header, response::IntoResponse};
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::{
    openapi::{
        path::Operation,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
        ContentBuilder, Ref, RefOr, Required, ResponseBuilder,
    },
    IntoParams, Modify, OpenApi, ToSchema,
};

use crate::endpoints::EndpointOut;

/// The document: every route of [`crate::router`].
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Fenix admin API",
        version = env!("CARGO_PKG_VERSION"),
        description = "Manage apps, endpoints and events, and read the delivery log of a Fenix webhook server. \
            Every call except `/healthz` and `/openapi.json` needs `Authorization: Bearer <admin token>`. \
            Errors answer `{\"error\":{\"code\",\"message\"}}` with a stable machine-readable `code`."
    ),
    paths(
        crate::apps::list,
        crate::apps::create,
        crate::apps::read,
        crate::apps::update,
        crate::apps::remove,
        crate::endpoints::list,
        crate::endpoints::create,
        crate::endpoints::read,
        crate::endpoints::update,
        crate::endpoints::remove,
        crate::endpoints::pause,
        crate::endpoints::resume,
        crate::endpoints::rotate,
        crate::replay::replay_endpoint,
        crate::stats::stats,
        crate::stats::state_changes,
        crate::events::list,
        crate::events::ingest,
        crate::events::read,
        crate::deliveries::list,
        crate::deliveries::read,
        crate::deliveries::attempts,
        crate::deliveries::replay,
        healthz,
        readyz,
        metrics,
        openapi_json,
    ),
    components(schemas(ErrorBody)),
    security(("bearer" = [])),
    modifiers(&CommonAnswers),
    tags(
        (name = "apps", description = "The producer's customers (tenants), addressed by id or by uid."),
        (name = "endpoints", description = "An app's destinations: URL, event-type filter, state, signing secret, \
            replay and health."),
        (name = "events", description = "Ingestion and the event log."),
        (name = "deliveries", description = "The delivery log: a delivery per event and endpoint, with its attempts."),
        (name = "service", description = "Health, metrics and this document."),
    )
)]
pub struct ApiDoc;

/// Name of the bearer security scheme in the document (also in `security(...)` above).
const BEARER: &str = "bearer";

/// Serves the document (built once; it only changes with the code).
#[utoipa::path(
    get, path = "/openapi.json", tag = "service", operation_id = "openapi",
    summary = "This OpenAPI document",
    security(),
    responses((status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json"))
)]
pub async fn openapi_json() -> impl IntoResponse {
    static DOCUMENT: LazyLock<String> = LazyLock::new(|| document().to_string());
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT.as_str())
}

/// The document as served: [`ApiDoc`] plus its links.
pub fn document() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the OpenAPI document serializes");
    add_links(&mut doc);
    doc
}

/// Describes `GET /healthz` (the handler is `healthz` in `lib.rs`).
#[utoipa::path(
    get, path = "/healthz", tag = "service", operation_id = "healthz",
    summary = "Liveness and database reachability",
    security(),
    responses(
        (status = 200, description = "The server answers and reaches its database", body = Health,
            example = json!({"status": "ok"})),
        (status = 503, description = "The database is unavailable (`database_unavailable`)", body = Health),
    )
)]
#[allow(dead_code)]
fn healthz() {}

/// Describes `GET /readyz` (the handler is `readyz` in `lib.rs`).
#[utoipa::path(
    get, path = "/readyz", tag = "service", operation_id = "readyz",
    summary = "Readiness: the database answers and the delivery worker makes progress",
    security(),
    responses(
        (status = 200, description = "Ready", body = Ready, example = json!({"status": "ready"})),
        (status = 503, description = "Not ready: `database_unavailable`, or `worker_stalled` (the recorder \
            cannot write, or deliveries are due and nothing was claimed or recorded, for longer than \
            `FENIX_WORKER_STALL_AFTER`); the message says which", body = Ready),
    )
)]
#[allow(dead_code)]
fn readyz() {}

/// Describes `GET /metrics` (the handler is `metrics` in `lib.rs`).
#[utoipa::path(
    get, path = "/metrics", tag = "service", operation_id = "metrics",
    summary = "Prometheus metrics",
    description = "Prometheus text exposition. Behind the admin token because it names apps.",
    responses((status = 200, description = "Metrics in Prometheus text format", body = String,
        content_type = "text/plain; version=0.0.4"))
)]
#[allow(dead_code)]
fn metrics() {}

/// Adds the bearer scheme, and the error answers every call can give, so each
/// handler lists only the errors of its own.
struct CommonAnswers;

impl Modify for CommonAnswers {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        doc.components.get_or_insert_with(Default::default).add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An admin token (`fenix token create`, or FENIX_ADMIN_TOKEN)."))
                    .build(),
            ),
        );
        for item in doc.paths.paths.values_mut() {
            for op in [&mut item.get, &mut item.post, &mut item.put, &mut item.patch, &mut item.delete] {
                if let Some(op) = op.as_mut() {
                    add_common_errors(op);
                }
            }
        }
    }
}

/// Adds OpenAPI links from the calls that create a resource to the
/// calls on that resource (`POST /v1/apps/{app}/endpoints` → every
/// `/v1/apps/{app}/endpoints/{ep}…` operation, its `ep` being the answer's
/// `id`). Clients and generators can follow them; schemathesis does, which is
/// how its stateful phase reaches the endpoints, events and deliveries it made.
/// Written on the JSON document because utoipa 5.5 serializes a link's
/// `operationId` as `operation_id`, which no reader understands.
fn add_links(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else { return };
    let names: Vec<String> = paths.keys().cloned().collect();
    for collection in &names {
        // Operations below `collection/{x}`: (x, operation id).
        let mut targets = vec![];
        for path in &names {
            let Some(param) = path
                .strip_prefix(collection.as_str())
                .and_then(|rest| rest.strip_prefix("/{"))
                .and_then(|rest| rest.split_once('}'))
                .filter(|(_, tail)| tail.is_empty() || (tail.starts_with('/') && !tail.contains('{')))
                .map(|(param, _)| param.to_string())
            else {
                continue;
            };
            for op in paths[path].as_object().into_iter().flat_map(|item| item.values()) {
                if let Some(id) = op["operationId"].as_str() {
                    targets.push((param.clone(), id.to_string()));
                }
            }
        }
        let inherited: Vec<&str> =
            collection.split('/').filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}')).collect();
        let mut links = serde_json::Map::new();
        for (param, target) in &targets {
            let mut parameters: serde_json::Map<String, Value> =
                inherited.iter().map(|name| (name.to_string(), format!("$request.path.{name}").into())).collect();
            parameters.insert(param.clone(), Value::Null);
            links.insert(target.clone(), json!({"operationId": target, "parameters": parameters}));
        }
        if links.is_empty() {
            continue;
        }
        // What a create answers is the resource. (Not from lists: a link must
        // resolve, and an empty page has no `data/0`.)
        for (method, id_expr) in [("post", "$response.body#/id")] {
            let responses = paths.get_mut(collection).and_then(|item| item.get_mut(method)?.get_mut("responses"));
            let Some(responses) = responses.and_then(Value::as_object_mut) else { continue };
            for (_, response) in responses.iter_mut().filter(|(status, _)| status.starts_with('2')) {
                let mut links = links.clone();
                for ((param, _), link) in targets.iter().zip(links.values_mut()) {
                    link["parameters"][param] = id_expr.into();
                }
                response["links"] = links.into();
            }
        }
    }
}

/// Adds the errors any authenticated call, or any call with a body, can answer;
/// where the handler already lists that status, its codes are added to the description.
fn add_common_errors(op: &mut Operation) {
    // Operations marked `security()` are public (`security: []`).
    let public = op.security.as_ref().is_some_and(Vec::is_empty);
    let mut errors = vec![];
    if !public {
        errors.push(("401", "`unauthorized`: missing or invalid admin token"));
        errors.push(("500", "`internal_error`: details are in the server log"));
        errors.push(("503", "`database_unavailable`: nothing was stored, retry later"));
    }
    if let Some(body) = &op.request_body {
        errors.push(("400", "`malformed_json`: the body is not valid JSON"));
        errors.push(("413", "`payload_too_large`: the body is larger than 256 KiB"));
        errors.push(("422", "`invalid_body`: the body does not fit the schema"));
        // Required bodies are read as JSON with a content-type check; optional ones are not.
        if matches!(body.required, Some(Required::True)) {
            errors.push(("415", "`unsupported_media_type`: send Content-Type: application/json"));
        }
    }
    for (status, description) in errors {
        match op.responses.responses.entry(status.to_string()) {
            Entry::Vacant(e) => {
                e.insert(error_response(description).into());
            }
            Entry::Occupied(mut e) => {
                if let RefOr::T(listed) = e.get_mut() {
                    listed.description = format!("{}; {description}", listed.description);
                }
            }
        }
    }
}

fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build())
        .build()
}

/// The body of every error answer: `{"error":{"code":…,"message":…}}`.
#[derive(ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable: branch on this.
    #[schema(example = "app_not_found")]
    pub code: String,
    /// For people: says what to change.
    #[schema(example = "no such app")]
    pub message: String,
}

/// One page of a list, newest first. Pass `next_cursor` as `cursor` for the next page.
#[derive(ToSchema)]
pub struct Page<T> {
    pub data: Vec<T>,
    /// Absent (null) on the last page.
    pub next_cursor: Option<String>,
}

/// `?limit=&cursor=` of every list.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// Items per page, 1–250 (default 50).
    #[param(minimum = 1, maximum = 250)]
    pub limit: Option<i64>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// `{app}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct AppPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
}

/// `{app}/…/{ep}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EndpointPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The endpoint's id (`ep_…`).
    pub ep: String,
}

/// `{app}/…/{evt}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct EventPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The event's id (`evt_…`).
    pub evt: String,
}

/// `{app}/…/{dlv}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct DeliveryPath {
    /// The app's id (`app_…`) or its uid.
    pub app: String,
    /// The delivery's id (`dlv_…`).
    pub dlv: String,
}

/// The answer of `/healthz`.
#[derive(ToSchema)]
pub struct Health {
    /// `ok` or `unavailable`.
    pub status: String,
    /// Present when unavailable.
    pub error: Option<ErrorDetail>,
}

/// The answer of `/readyz`.
#[derive(ToSchema)]
pub struct Ready {
    /// `ready` or `unavailable`.
    pub status: String,
    /// Present when unavailable: `database_unavailable` or `worker_stalled`.
    pub error: Option<ErrorDetail>,
}

/// An endpoint after `resume`, with how many skipped deliveries were re-queued.
#[derive(Serialize, ToSchema)]
pub struct ResumedEndpoint {
    #[serde(flatten)]
    pub endpoint: EndpointOut,
    /// Deliveries re-queued (0 unless `replay_skipped`).
    pub replayed: u64,
}

/// The answer of an endpoint replay.
#[derive(ToSchema)]
pub struct EndpointReplay {
    /// Deliveries re-queued with their original event id and envelope.
    pub replayed: u64,
    /// Matching deliveries not re-queued because retention purged their payload.
    pub skipped_payload_expired: i64,
}

/// An endpoint's health over a window.
#[derive(ToSchema)]
pub struct EndpointStats {
    pub endpoint_id: String,
    pub window_seconds: u64,
    /// Start of the window (RFC 3339).
    pub since: String,
    pub attempts: i64,
    pub successes: i64,
    pub failures: i64,
    /// successes / attempts; null without attempts.
    pub success_rate: Option<f64>,
    /// Deliveries that failed for good (`failed`).
    pub dead_letter: i64,
    /// Deliveries skipped while the endpoint was paused or disabled.
    pub skipped: i64,
    pub state: crate::lifecycle::EndpointState,
    pub state_reason: Option<String>,
}

/// One change of an endpoint's state.
#[derive(ToSchema)]
pub struct StateChange {
    pub id: String,
    pub state: crate::lifecycle::EndpointState,
    pub reason: String,
    pub created_at: String,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Every file that declares routes of [`crate::router`], by module name.
    const ROUTER_SOURCES: &[(&str, &str)] = &[
        ("lib", include_str!("lib.rs")),
        ("apps", include_str!("apps.rs")),
        ("endpoints", include_str!("endpoints.rs")),
        ("events", include_str!("events.rs")),
        ("deliveries", include_str!("deliveries.rs")),
        ("replay", include_str!("replay.rs")),
        ("stats", include_str!("stats.rs")),
    ];

    const METHODS: [&str; 8] = ["get", "post", "put", "patch", "delete", "head", "options", "trace"];

    fn is_ident(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_'
    }

    /// `(path, method)` of every `.route("PATH", <method router>)` in `src`
    /// (rustfmt may break the line after `.route(`); methods are read from
    /// `get(…)`, `.post(…)` … calls in the method router.
    fn routes_in(src: &str) -> Vec<(String, &'static str)> {
        const OPEN: &str = ".route(";
        let mut routes = vec![];
        let mut rest = src;
        while let Some(start) = rest.find(OPEN) {
            rest = rest[start + OPEN.len()..].trim_start();
            rest = rest.strip_prefix('"').expect("`.route(` is followed by a string literal path");
            let end = rest.find('"').expect("route path ends");
            let path = &rest[..end];
            // The method router runs to the `)` that closes `.route(`.
            let mut depth = 1;
            let close = rest[end..]
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map(|(i, _)| end + i)
                .expect("`.route(` is closed");
            let method_router = &rest[end + 1..close];
            let methods: Vec<_> = METHODS
                .into_iter()
                .filter(|m| {
                    method_router.match_indices(&format!("{m}(")).any(|(i, _)| !method_router[..i].ends_with(is_ident))
                })
                .collect();
            assert!(!methods.is_empty(), "no HTTP method found for route {path}: {method_router}");
            routes.extend(methods.into_iter().map(|m| (path.to_string(), m)));
            rest = &rest[close..];
        }
        routes
    }

    fn router_routes() -> BTreeSet<(String, &'static str)> {
        ROUTER_SOURCES.iter().flat_map(|(_, src)| routes_in(src)).collect()
    }

    #[test]
    fn the_route_scanner_reads_paths_and_methods() {
        let src = r#"Router::new().route("/a/{x}", get(list).post(create))
            .route(
                "/b",
                get(metrics).route_layer(from_fn_with_state(state.clone(), require_token)),
            )
            .route("/c", delete(remove))"#;
        assert_eq!(
            routes_in(src),
            [("/a/{x}".into(), "get"), ("/a/{x}".into(), "post"), ("/b".into(), "get"), ("/c".into(), "delete")]
        );
    }

    #[test]
    fn every_merged_router_is_scanned() {
        let lib = ROUTER_SOURCES[0].1;
        assert!(!lib.contains(".nest("), "teach this test about nested routers (path prefixes)");
        let scanned: Vec<_> = ROUTER_SOURCES.iter().map(|(name, _)| *name).collect();
        for (i, _) in lib.match_indices("::router()") {
            let module = &lib[lib[..i].rfind(|c: char| !is_ident(c)).map_or(0, |j| j + 1)..i];
            assert!(scanned.contains(&module), "{module}::router() is merged but {module}.rs is not in ROUTER_SOURCES");
        }
        assert!(router_routes().len() > 20, "the scanner found too few routes: {:?}", router_routes());
    }

    #[test]
    fn every_route_of_the_router_is_in_the_openapi_document() {
        let doc = document();
        let missing: Vec<_> =
            router_routes().into_iter().filter(|(path, method)| doc["paths"][path][*method].is_null()).collect();
        assert!(missing.is_empty(), "routes missing from the OpenAPI document: {missing:?}");
        for path in ["/openapi.json", "/healthz", "/readyz", "/metrics"] {
            assert!(doc["paths"][path]["get"].is_object(), "GET {path} is not documented");
        }
    }

    #[test]
    fn the_openapi_document_names_no_route_the_server_lacks() {
        let routes = router_routes();
        let doc = document();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in METHODS.into_iter().filter(|m| item.get(*m).is_some()) {
                assert!(routes.contains(&(path.clone(), method)), "{method} {path} is documented but not routed");
            }
        }
    }

    #[test]
    fn every_operation_is_tagged_and_authenticated_except_the_public_ones() {
        let doc = document();
        assert_eq!(doc["info"]["title"], "Fenix admin API");
        assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(doc["components"]["securitySchemes"][BEARER]["scheme"], "bearer");
        assert_eq!(doc["security"], serde_json::json!([{ "bearer": [] }]));
        assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
        let tags: Vec<_> = doc["tags"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
        let mut operation_ids = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let op_tags = op["tags"].as_array().unwrap_or_else(|| panic!("{method} {path} has no tag"));
                assert!(op_tags.iter().all(|t| tags.contains(t)), "{method} {path} has an undeclared tag");
                let id = op["operationId"].as_str().unwrap();
                assert!(operation_ids.insert(id.to_string()), "operationId {id} is used twice");
                let public = path == "/healthz" || path == "/readyz" || path == "/openapi.json";
                assert_eq!(op["security"] == serde_json::json!([]), public, "security of {method} {path}");
                assert_eq!(op["responses"]["401"].is_object(), !public, "401 of {method} {path}");
            }
        }
    }

    #[test]
    fn creating_links_to_the_calls_on_the_new_resource() {
        let doc = document();
        let created = &doc["paths"]["/v1/apps/{app}/endpoints"]["post"]["responses"]["201"]["links"];
        assert_eq!(
            created["pause_endpoint"],
            serde_json::json!({"operationId": "pause_endpoint",
                "parameters": {"app": "$request.path.app", "ep": "$response.body#/id"}})
        );
        let apps = &doc["paths"]["/v1/apps"]["post"]["responses"]["201"]["links"];
        assert_eq!(apps["get_app"]["parameters"], serde_json::json!({"app": "$response.body#/id"}));
        assert!(apps["get_endpoint"].is_null(), "only operations that need nothing more than the new id");
        let events = &doc["paths"]["/v1/apps/{app}/events"]["post"]["responses"];
        assert_eq!(events["202"]["links"]["get_event"]["parameters"]["evt"], "$response.body#/id");
        // Every link names an operation of the document.
        let ids: BTreeSet<_> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| {
                item.as_object().unwrap().values().map(|op| op["operationId"].as_str().unwrap().to_string())
            })
            .collect();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                for response in op["responses"].as_object().unwrap().values() {
                    for link in response["links"].as_object().into_iter().flat_map(|l| l.values()) {
                        assert!(ids.contains(link["operationId"].as_str().unwrap()), "{link}");
                    }
                }
            }
        }
    }

    #[tokio::test]
    async fn the_handler_answers_the_document_as_json() {
        let resp = openapi_json().await.into_response();
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap();
        let served: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(served, document());
    }
}
