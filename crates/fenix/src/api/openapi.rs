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
        header::HeaderBuilder,
        path::Operation,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
        ContentBuilder, Ref, RefOr, Required, ResponseBuilder,
    },
    OpenApi,
};

use super::error::{Code, ErrorBody};
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
        (name = "tasks", description = "Bulk operations over an app's deliveries (replay, cancel, skip) run in the \
            background at a bounded rate, with a dry run that counts what they would act on."),
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
    add_error_codes(&mut doc);
    doc
}

/// The codes an error answer names in its description (each between backticks).
fn codes_in(description: &str) -> Vec<Code> {
    let mut codes: Vec<Code> = description.split('`').skip(1).step_by(2).filter_map(Code::parse).collect();
    codes.sort();
    codes.dedup();
    codes
}

/// Gives each error answer of each operation its own named schema: the error
/// body whose `code` is the closed `enum` of the codes that answer may carry
/// (those its description names, the handler's own and the common ones), so
/// a client knows per route and status which codes to expect. Named
/// `{Operation}Error{status}`, e.g. `CreateAppError422`.
fn add_error_codes(doc: &mut Value) {
    let mut schemas = serde_json::Map::new();
    let Some(paths) = doc["paths"].as_object_mut() else { return };
    for op in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut()) {
        let id = op["operationId"].as_str().unwrap_or_default().to_string();
        let Some(responses) = op["responses"].as_object_mut() else { continue };
        for (status, response) in responses.iter_mut().filter(|(status, _)| !status.starts_with('2')) {
            let codes = codes_in(response["description"].as_str().unwrap_or_default());
            let schema = &mut response["content"]["application/json"]["schema"];
            if schema["$ref"] != ERROR_BODY || codes.is_empty() {
                continue;
            }
            let name = format!("{}Error{status}", camel(&id));
            *schema = json!({ "$ref": format!("#/components/schemas/{name}") });
            let codes: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
            schemas.insert(
                name,
                json!({
                    "description": format!("An error answer of `{id}` with status {status}."),
                    "allOf": [
                        { "$ref": ERROR_BODY },
                        { "type": "object", "properties": { "error": { "type": "object",
                            "properties": { "code": { "type": "string", "enum": codes } } } } },
                    ],
                }),
            );
        }
    }
    if let Some(components) = doc["components"]["schemas"].as_object_mut() {
        components.extend(schemas);
    }
}

const ERROR_BODY: &str = "#/components/schemas/ErrorBody";

/// `create_app` → `CreateApp`.
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
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
        errors.push((
            "503",
            "`storage_full`: the database's disk is full; nothing was stored, retry after `Retry-After`",
        ));
    }
    if let Some(body) = &op.request_body {
        errors.push(("400", "`malformed_json`: the body is not valid JSON"));
        errors.push(("400", "`unknown_field`: the body has a field the call does not take"));
        errors.push(("400", "`unreadable_body`: the request body could not be read"));
        errors.push(("413", "`payload_too_large`: the body is larger than 256 KiB"));
        errors.push(("422", "`invalid_body`: the body does not fit the schema"));
        errors.push(("422", "`unstorable_value`: a value cannot be stored (e.g. text with a NUL character)"));
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
    if !public {
        if let Some(RefOr::T(unavailable)) = op.responses.responses.get_mut("503") {
            let seconds = HeaderBuilder::new()
                .schema(<u64 as utoipa::PartialSchema>::schema())
                .description(Some("Seconds to wait before retrying (sent with `storage_full` and `overloaded`)"))
                .build();
            unavailable.headers.entry("Retry-After".to_string()).or_insert(seconds);
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
        // POST …/verify (proof of endpoint ownership) and POST …/tls/rotate (issue 31),
        // POST …/transformations/test and GET …/deliveries/{dlv}/request (issue 32),
        // POST …/events/{evt}/cancel and POST …/events/{evt}/expunge (issue 33),
        // the tasks' 4 and POST …/endpoints/{ep}/recover (issue 33), the operator's 4 under /v1/tasks.
        assert_eq!(operations.len(), 61, "{operations:#?}");
        for op in [
            "get /openapi.json",
            "get /healthz",
            "get /readyz",
            "get /metrics",
            "post /v1/apps/{app}/events",
            "post /v1/apps/{app}/events/batch",
            "post /v1/apps/{app}/events/{evt}/cancel",
            "post /v1/apps/{app}/tasks",
            "get /v1/apps/{app}/tasks",
            "get /v1/apps/{app}/tasks/{task}",
            "post /v1/apps/{app}/tasks/{task}/cancel",
            "post /v1/apps/{app}/endpoints/{ep}/recover",
            "post /v1/tasks",
            "get /v1/tasks",
            "get /v1/tasks/{task}",
            "post /v1/tasks/{task}/cancel",
            "get /v1/apps/{app}/endpoints/{ep}/stats",
            "post /v1/apps/{app}/deliveries/{dlv}/replay",
            "post /v1/apps/{app}/endpoints/{ep}/test",
            "post /v1/apps/{app}/endpoints/{ep}/tls/rotate",
            "post /v1/apps/{app}/transformations/test",
            "get /v1/apps/{app}/deliveries/{dlv}/request",
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

    /// Codes no operation of the document answers: the console's own calls
    /// (not in the document) and the HTTP shell's answers to no route at all.
    const UNDOCUMENTED: [Code; 12] = [
        Code::SessionRevoked,
        Code::SessionExpired,
        Code::CsrfFailed,
        Code::LinkNotFound,
        Code::LinkUsed,
        Code::LinkExpired,
        Code::LinkRevoked,
        Code::SessionExists,
        Code::NotFound,
        Code::MethodNotAllowed,
        Code::RequestTimeout,
        Code::BadRequest,
    ];

    /// Each error answer of each operation: (operation, status, its codes).
    fn error_answers(doc: &Value) -> Vec<(String, String, Vec<String>)> {
        let mut answers = vec![];
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                for (status, response) in op["responses"].as_object().unwrap() {
                    let Some(name) = response["content"]["application/json"]["schema"]["$ref"].as_str() else {
                        continue;
                    };
                    let name = name.trim_start_matches("#/components/schemas/");
                    let codes = &doc["components"]["schemas"][name]["allOf"][1]["properties"]["error"]["properties"]
                        ["code"]["enum"];
                    let codes = codes.as_array().into_iter().flatten().map(|c| c.as_str().unwrap().to_string());
                    answers.push((op["operationId"].as_str().unwrap().to_string(), status.clone(), codes.collect()));
                }
            }
        }
        answers
    }

    #[test]
    fn every_error_answer_lists_the_codes_it_may_carry_each_of_its_status() {
        let doc = document();
        let mut answers = 0;
        for (op, status, codes) in error_answers(&doc) {
            if !status.starts_with(['4', '5']) || op == "healthz" || op == "readyz" {
                continue;
            }
            assert!(!codes.is_empty(), "{op} {status} names no code");
            for code in &codes {
                let code = Code::parse(code).unwrap_or_else(|| panic!("{op} {status}: {code} is no Code"));
                let statuses = [Some(code.status()), code.also_as()];
                assert!(statuses.iter().flatten().any(|s| s.as_str() == status), "{op} answers {code} as {status}");
            }
            answers += 1;
        }
        assert!(answers > 150, "only {answers} error answers");
        // What looks like a code in an error answer's description is one.
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                for (status, response) in op["responses"].as_object().unwrap() {
                    let description = response["description"].as_str().unwrap_or_default();
                    for quoted in description.split('`').skip(1).step_by(2) {
                        // (Field names are quoted too: only what is shaped like a code counts.)
                        let code_like = quoted.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                            && (quoted.starts_with("invalid_")
                                || ["_not_found", "_limit_reached", "_exists", "_taken", "_header"]
                                    .iter()
                                    .any(|end| quoted.ends_with(end)))
                            && status.starts_with(['4', '5']);
                        assert!(!code_like || Code::parse(quoted).is_some(), "{status}: `{quoted}` is no Code");
                    }
                }
            }
        }
    }

    #[test]
    fn every_code_is_answered_by_some_operation_or_known_to_be_outside_the_document() {
        let doc = document();
        let mut listed: BTreeSet<String> = error_answers(&doc).into_iter().flat_map(|(_, _, codes)| codes).collect();
        // `/readyz` answers its own body, whose description names its codes.
        let readyz = doc["paths"]["/readyz"]["get"]["responses"]["503"]["description"].as_str().unwrap();
        listed.extend(codes_in(readyz).iter().map(|c| c.as_str().to_string()));
        let wrong: Vec<_> =
            Code::ALL.iter().filter(|code| listed.contains(code.as_str()) == UNDOCUMENTED.contains(code)).collect();
        assert!(wrong.is_empty(), "each listed by a route, or in UNDOCUMENTED (exactly one): {wrong:?}");
        let all: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(doc["components"]["schemas"]["ErrorCode"]["enum"], json!(all));
    }

    /// Validates `example` against the schema at `pointer` of the document (its `$ref`s resolved in it).
    fn check_example(doc: &Value, pointer: &str, example: &Value) {
        let mut root = doc.clone();
        let fragment: String = pointer
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        root["$ref"] = format!("#{fragment}").into();
        let validator = jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("{pointer}: {e}"));
        let errors: Vec<String> = validator.iter_errors(example).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "the example at {pointer} ({example}) fails its schema: {errors:?}");
    }

    /// Every example of `value` (at `pointer`): schemas' `example`/`examples`,
    /// and media types' and parameters' `example`/`examples` against their `schema`.
    fn examples(value: &Value, pointer: String, out: &mut Vec<(String, Value)>) {
        match value {
            Value::Object(map) => {
                let target = if map.contains_key("schema") { format!("{pointer}/schema") } else { pointer.clone() };
                if let Some(example) = map.get("example") {
                    out.push((target.clone(), example.clone()));
                }
                match map.get("examples") {
                    Some(Value::Array(list)) => out.extend(list.iter().map(|e| (target.clone(), e.clone()))),
                    Some(Value::Object(named)) if map.contains_key("schema") => {
                        out.extend(named.values().filter_map(|e| Some((target.clone(), e.get("value")?.clone()))))
                    }
                    _ => {}
                }
                for (key, inner) in map {
                    if key != "example" && key != "examples" {
                        let escaped = key.replace('~', "~0").replace('/', "~1");
                        examples(inner, format!("{pointer}/{escaped}"), out);
                    }
                }
            }
            Value::Array(list) => {
                for (i, inner) in list.iter().enumerate() {
                    examples(inner, format!("{pointer}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_example_of_the_document_is_valid_against_its_schema() {
        let doc = document();
        let mut found = vec![];
        examples(&doc, String::new(), &mut found);
        assert!(found.len() > 50, "only {} examples", found.len());
        for (pointer, example) in &found {
            check_example(&doc, pointer, example);
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
