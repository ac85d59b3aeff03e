//! The OpenAPI document of the admin API, served at `GET /openapi.json`.
//!
//! Generated from the code: each handler carries a `#[utoipa::path]`
//! attribute, registered with its route by `utoipa_axum::routes!` in its
//! resource's `router()`, and the request and response types derive
//! `ToSchema` (`IntoParams` for path and query parameters); so the document
//! describes exactly the routes the server has, with the types it answers.
//! This module holds what is not a route: the document's info, tags and
//! security ([`ApiDoc`]), and what [`finish`] adds to every call (the bearer
//! scheme, the error answers every authenticated or body-taking call can give,
//! links from creating calls to the calls on what they created).

use std::collections::btree_map::Entry;

use serde_json::{json, Value};
use utoipa::{
    openapi::{
        path::Operation,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
        ContentBuilder, Ref, RefOr, Required, ResponseBuilder,
    },
    OpenApi,
};

use super::error::ErrorBody;
use crate::access::Scope;

/// The document's frame: info, tags, the bearer requirement. Its paths come
/// from the routers ([`super::routes`]).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Fenix admin API",
        version = env!("CARGO_PKG_VERSION"),
        description = "Manage apps, endpoints and events, and read the delivery log of a Fenix webhook server. \
            Every call except `/healthz`, `/readyz`, `/openapi.json` and an app's public keys (`/v1/apps/{app}/jwks.json`) needs `Authorization: Bearer <token>`: \
            an admin token, or an app token that reaches one app (each call's `security` names the scope it \
            needs). \
            Errors answer `{\"error\":{\"code\",\"message\"}}` with a stable machine-readable `code`."
    ),
    components(schemas(ErrorBody)),
    security(("bearer" = [])),
    tags(
        (name = "apps", description = "The producer's customers (tenants), addressed by id or by uid."),
        (name = "endpoints", description = "An app's destinations: URL, event-type filter, state, signing secret, \
            replay and health."),
        (name = "events", description = "Ingestion and the event log."),
        (name = "event-types", description = "The event-type catalogue: each type's description, JSON Schema \
            (checked at ingestion), example and deprecated flag. Admins write it; every caller reads it."),
        (name = "deliveries", description = "The delivery log: a delivery per event and endpoint, with its attempts."),
        (name = "tokens", description = "API tokens: admin tokens, and app tokens confined to one app (admin only)."),
        (name = "portal", description = "Portal links: the web console for one app, for its customer."),
        (name = "service", description = "Health, metrics, the settings in force and this document."),
    )
)]
pub struct ApiDoc;

/// The document as served: the routers' description plus the common answers and links.
pub fn finish(mut doc: utoipa::openapi::OpenApi) -> Value {
    add_common_answers(&mut doc);
    let mut doc = serde_json::to_value(doc).expect("the OpenAPI document serializes");
    add_links(&mut doc);
    doc
}

/// Name of the bearer security scheme in the document (also in `security(...)` above).
const BEARER: &str = "bearer";

/// The bearer scheme and its scopes, which each operation's `security` names.
const SCHEME_DESCRIPTION: &str = "An API token. Admin tokens (`fxa_…`: `fenix token create`, FENIX_ADMIN_TOKEN, or \
    `POST /v1/tokens`) hold every scope; app tokens (`fxk_…`, `POST /v1/tokens` with an `app`) reach one app \
    only, where another app's resources answer 404 as if they did not exist. Scopes: `admin` (apps' lifecycle, \
    tokens, metrics: admin tokens only); `app:read` (read an app's endpoints, events, deliveries and health: \
    admin tokens, and app tokens with `read` or `manage` access); `app:manage` (change them: endpoints, \
    events, replays, secret rotation: admin tokens, and app tokens with `manage` access). A call whose scope \
    the token lacks answers 403 `forbidden`.";

/// Adds the bearer scheme, and the error answers every call can give, so each
/// handler lists only the errors of its own.
fn add_common_answers(doc: &mut utoipa::openapi::OpenApi) {
    doc.components.get_or_insert_with(Default::default).add_security_scheme(
        BEARER,
        SecurityScheme::Http(
            HttpBuilder::new().scheme(HttpAuthScheme::Bearer).description(Some(SCHEME_DESCRIPTION)).build(),
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
        errors.push(("401", "`unauthorized`: missing, unknown, revoked or expired token"));
        // What an app token may not do: admin calls, and changes with a `read` token.
        if super::auth::declared_scope(&serde_json::to_value(&op.security).unwrap_or_default()) != Scope::AppRead {
            errors.push(("403", "`forbidden`: the token's scope does not include this call"));
        }
        errors.push(("500", "`internal_error`: details are in the server log"));
        errors.push(("503", "`database_unavailable`: nothing was stored, retry later"));
    }
    if let Some(body) = &op.request_body {
        errors.push(("400", "`malformed_json`: the body is not valid JSON"));
        errors.push(("400", "`unknown_field`: the body has a field the call does not take"));
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use axum::{http::header, response::IntoResponse};

    use super::*;

    use crate::api::{document, service::openapi_json};

    const METHODS: [&str; 8] = ["get", "post", "put", "patch", "delete", "head", "options", "trace"];

    #[test]
    fn every_route_is_in_the_document_with_its_method() {
        // The routers and the document come from one registration; this pins what it holds.
        let doc = document();
        let operations: BTreeSet<_> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, item)| {
                METHODS.into_iter().filter(|m| item.get(*m).is_some()).map(move |m| format!("{m} {path}"))
            })
            .collect();
        // 37, the event-type catalogue's 5, (issue 17) an endpoint's public keys and the app's JWKS,
        // and POST …/verify (proof of endpoint ownership).
        assert_eq!(operations.len(), 46, "{operations:#?}");
        for op in [
            "get /openapi.json",
            "get /healthz",
            "get /readyz",
            "get /metrics",
            "post /v1/apps/{app}/events",
            "post /v1/apps/{app}/events/batch",
            "get /v1/apps/{app}/endpoints/{ep}/stats",
            "post /v1/apps/{app}/deliveries/{dlv}/replay",
            "post /v1/apps/{app}/endpoints/{ep}/test",
            "get /v1/apps/{app}/attempts/{att}",
            "post /v1/event-types",
            "get /v1/event-types",
            "get /v1/event-types/{name}",
            "patch /v1/event-types/{name}",
            "delete /v1/event-types/{name}",
        ] {
            assert!(operations.contains(op), "{op} is not documented");
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
                let public =
                    ["/healthz", "/readyz", "/openapi.json", "/v1/apps/{app}/jwks.json"].contains(&path.as_str());
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

    #[test]
    fn every_request_body_says_unknown_fields_are_refused() {
        // The server refuses unknown fields (400 `unknown_field`); the document says so,
        // so clients and schemathesis do not take a misspelt field for an accepted one.
        let doc = document();
        let mut bodies = 0;
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let Some(schema) = op["requestBody"]["content"]["application/json"]["schema"].as_object() else {
                    continue;
                };
                let refs: Vec<&str> = std::iter::once(schema.get("$ref"))
                    .chain(schema.get("oneOf").and_then(Value::as_array).into_iter().flatten().map(|s| s.get("$ref")))
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                assert_eq!(refs.len(), 1, "{}: {schema:?}", op["operationId"]);
                let name = refs[0].trim_start_matches("#/components/schemas/");
                assert_eq!(
                    doc["components"]["schemas"][name]["additionalProperties"],
                    json!(false),
                    "{}: {name}",
                    op["operationId"]
                );
                bodies += 1;
            }
        }
        assert!(bodies >= 10, "only {bodies} request bodies");
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
