//! The event-type catalogue, `/v1/event-types`: what each event type means,
//! an optional JSON Schema (draft 2020-12) its `data` must match at
//! ingestion, an example, and a deprecated flag. Global, not per app.
//!
//! Admins write it. Everyone authenticated reads it: the reads are declared
//! `app:read` and name no `{app}`, which the scope middleware (`auth.rs`)
//! admits for any caller, app tokens and portal sessions included, since the
//! catalogue belongs to no app and is what a customer needs to see to build
//! a receiver.
//!
//! Every change marks this instance's compiled-schema cache stale
//! (`crate::catalogue`), so the next event is checked against it.

use crate::api::code::Code;
use axum::{extract::State, http::StatusCode, Json};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::{ApiError, ErrorBody},
    extract::{non_null, nullable, ApiJson, ApiPath, ApiQuery, ListScope, NoQuery, Page, PageQuery},
};
use crate::{
    catalogue, event_types::EventType, ids::EventTypeId, state::SharedState, store::event_types::EventTypeRow, time,
};

/// Longest description, in characters.
const MAX_DESCRIPTION: usize = 2000;

/// A catalogued event type as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = EventType)]
struct EventTypeOut {
    /// The event type, as events carry it in `type`.
    #[schema(example = "order.paid")]
    name: String,
    description: String,
    /// The JSON Schema (draft 2020-12) every event's `data` must match; null: any object.
    #[schema(value_type = Option<Object>)]
    schema: Option<Box<RawValue>>,
    /// An example `data`; it matches `schema`.
    #[schema(value_type = Option<Object>)]
    example: Option<Box<RawValue>>,
    /// Still accepted; producers are told (`warning`) when they send it.
    deprecated: bool,
    created_at: String,
    updated_at: String,
}

impl From<EventTypeRow> for EventTypeOut {
    fn from(r: EventTypeRow) -> Self {
        // Stored only after being parsed, so the text is JSON.
        let json = |t: Option<String>| t.and_then(|t| RawValue::from_string(t).ok());
        EventTypeOut {
            name: r.name,
            description: r.description,
            schema: json(r.schema),
            example: json(r.example),
            deprecated: r.deprecated,
            created_at: time::rfc3339_ms(r.created_at),
            updated_at: time::rfc3339_ms(r.updated_at),
        }
    }
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateEventType {
    /// An event type: 1-128 characters of `A-Z a-z 0-9 _ - . :`, no leading or trailing dot.
    #[schema(example = "order.paid")]
    name: String,
    /// Up to 2000 characters (line breaks allowed).
    #[serde(default)]
    description: String,
    /// A JSON Schema, draft 2020-12 (`$schema` left out or that draft's URI); `$ref` only within it.
    #[schema(value_type = Option<Object>, example = json!({"type": "object", "required": ["amount"],
        "properties": {"amount": {"type": "integer"}}}))]
    schema: Option<Box<RawValue>>,
    /// An example `data` (an object); must match `schema` when both are given.
    #[schema(value_type = Option<Object>, example = json!({"amount": 1200}))]
    example: Option<Box<RawValue>>,
    #[serde(default)]
    deprecated: bool,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PatchEventType {
    /// Left out: unchanged; cannot be null.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = String, required = false)]
    description: Option<String>,
    /// Left out: unchanged; `null` removes the schema.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<Object>, required = false)]
    schema: Option<Option<Box<RawValue>>>,
    /// Left out: unchanged; `null` removes the example.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<Object>, required = false)]
    example: Option<Option<Box<RawValue>>>,
    /// Left out: unchanged; cannot be null.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = bool, required = false)]
    deprecated: Option<bool>,
}

/// `/v1/event-types/{name}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct EventTypePath {
    /// The event type, e.g. `order.paid`.
    name: String,
}

/// `/v1/event-types…` routes.
pub fn router() -> OpenApiRouter<SharedState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(read, update, remove))
}

fn not_found() -> ApiError {
    ApiError::new(Code::EventTypeNotFound, "no such event type in the catalogue")
}

fn check_description(d: &str) -> Result<String, ApiError> {
    let d = d.trim();
    if d.chars().count() > MAX_DESCRIPTION || d.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(ApiError::new(Code::InvalidDescription,
            format!("description must be at most {MAX_DESCRIPTION} characters, without control characters other than line breaks and tabs"),
        ));
    }
    Ok(d.to_string())
}

/// The stored form of a schema and an example, each checked: the schema
/// compiles as draft 2020-12, the example is an object and matches it.
fn check_schema_and_example(
    schema: Option<&RawValue>,
    example: Option<&RawValue>,
) -> Result<(Option<String>, Option<String>), ApiError> {
    // Read as event data is: a key given twice, or a number beyond `f64`, has
    // no one meaning (the schema would keep one reading, a reader another).
    let validator = match schema {
        None => None,
        Some(raw) => {
            let schema = catalogue::read_json(raw, "schema").map_err(|e| ApiError::new(Code::InvalidSchema, e))?;
            Some(catalogue::compile_new(&schema).map_err(|e| ApiError::new(Code::from(&e), e.message()))?)
        }
    };
    if let Some(raw) = example {
        let value = catalogue::read_json(raw, "example").map_err(|e| ApiError::new(Code::InvalidExample, e))?;
        if !value.is_object() {
            return Err(ApiError::new(Code::InvalidExample, "example must be a JSON object, as an event's data is"));
        }
        if let Some(v) = &validator {
            catalogue::check_example(v, &value).map_err(|details| {
                ApiError::new(Code::ExampleMismatch, "example does not match schema (see details)")
                    .with_details(details)
            })?;
        }
    }
    Ok((schema.map(|r| r.get().to_string()), example.map(|r| r.get().to_string())))
}

#[utoipa::path(
    post, path = "/v1/event-types", tag = "event-types", operation_id = "create_event_type",
    summary = "Add an event type to the catalogue",
    security(("bearer" = ["admin"])),
    description = "With a `schema`, every event of this type (single or batch) must have `data` that matches \
        it, or it is refused with `422 schema_mismatch` and the mismatches in `error.details`. In effect on this \
        instance at once, on other instances within 2 seconds.",
    request_body = CreateEventType,
    responses(
        (status = 201, description = "The event type", body = EventTypeOut),
        (status = 400, description = "`malformed_json`, `unknown_field`", body = ErrorBody),
        (status = 409, description = "`event_type_exists`", body = ErrorBody),
        (status = 422, description = "`invalid_event_type`, `invalid_description`, `invalid_schema`, \
            `invalid_example`, `example_mismatch` (with `details`), `schema_too_costly` (its checking cost can grow \
            without bound)", body = ErrorBody),
    )
)]
async fn create(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiJson(body): ApiJson<CreateEventType>,
) -> Result<(StatusCode, Json<EventTypeOut>), ApiError> {
    let name = EventType::parse(&body.name)
        .map_err(|e| ApiError::new(e.kind.into(), e.message.replacen("type", "name", 1)))?;
    let description = check_description(&body.description)?;
    let (schema, example) = check_schema_and_example(body.schema.as_deref(), body.example.as_deref())?;
    let now = time::now_ms();
    let row = EventTypeRow {
        id: EventTypeId::new(),
        name: name.as_str().to_string(),
        description,
        schema,
        example,
        deprecated: body.deprecated,
        revision: 1,
        created_at: now,
        updated_at: now,
    };
    s.store.insert_event_type(&row).await.map_err(|e| {
        if e.is_unique_violation() {
            ApiError::new(Code::EventTypeExists, format!("event type `{}` is already in the catalogue", row.name))
        } else {
            e.into()
        }
    })?;
    s.catalogue.invalidate();
    Ok((StatusCode::CREATED, Json(row.into())))
}

#[utoipa::path(
    get, path = "/v1/event-types", tag = "event-types", operation_id = "list_event_types",
    summary = "List the event-type catalogue",
    security(("bearer" = ["app:read"])),
    description = "Newest first, `limit` (1-250, default 50) per page. Readable by every caller, app tokens and \
        portal sessions included: the catalogue belongs to no app.",
    params(PageQuery),
    responses(
        (status = 200, description = "A page of event types", body = Page<EventTypeOut>),
        (status = 400, description = "`invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
    )
)]
async fn list(
    State(s): State<SharedState>,
    ApiQuery(q): ApiQuery<PageQuery>,
) -> Result<Json<Page<EventTypeOut>>, ApiError> {
    let limit = q.limit()?;
    let list = ListScope::new(EventTypeId::PREFIX, &[]);
    let rows = s.store.list_event_types(q.cursor_id::<EventTypeId>(&list)?.as_ref(), limit + 1).await?;
    Ok(Json(Page::from_rows(rows, limit, &list, |r| r.id.to_string(), EventTypeOut::from)))
}

#[utoipa::path(
    get, path = "/v1/event-types/{name}", tag = "event-types", operation_id = "get_event_type",
    summary = "Read an event type",
    security(("bearer" = ["app:read"])),
    description = "Readable by every caller, app tokens and portal sessions included.",
    params(EventTypePath),
    responses(
        (status = 200, description = "The event type", body = EventTypeOut),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`event_type_not_found`", body = ErrorBody),
    )
)]
async fn read(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EventTypePath { name }): ApiPath<EventTypePath>,
) -> Result<Json<EventTypeOut>, ApiError> {
    Ok(Json(find(&s, &name).await?.into()))
}

async fn find(s: &SharedState, name: &str) -> Result<EventTypeRow, ApiError> {
    // A name no event type can have is not looked up.
    if EventType::parse(name).is_err() {
        return Err(not_found());
    }
    s.store.find_event_type(name).await?.ok_or_else(not_found)
}

#[utoipa::path(
    patch, path = "/v1/event-types/{name}", tag = "event-types", operation_id = "update_event_type",
    summary = "Change an event type's description, schema, example or deprecated flag",
    security(("bearer" = ["admin"])),
    description = "The name cannot change. A new schema applies to events sent from now on (on other instances \
        within 2 seconds); the example must match the schema in force after the change.",
    params(EventTypePath),
    request_body = PatchEventType,
    responses(
        (status = 200, description = "The event type", body = EventTypeOut),
        (status = 400, description = "`invalid_path`, `malformed_json`, `unknown_field`", body = ErrorBody),
        (status = 404, description = "`event_type_not_found`", body = ErrorBody),
        (status = 409, description = "`event_type_changed`: changed by another call meanwhile; read it and retry",
            body = ErrorBody),
        (status = 422, description = "`invalid_body`, `invalid_description`, `invalid_schema`, `invalid_example`, \
            `example_mismatch` (with `details`), `schema_too_costly` (its checking cost can grow without bound)",
            body = ErrorBody),
    )
)]
async fn update(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EventTypePath { name }): ApiPath<EventTypePath>,
    ApiJson(body): ApiJson<PatchEventType>,
) -> Result<Json<EventTypeOut>, ApiError> {
    let mut row = find(&s, &name).await?;
    if let Some(d) = &body.description {
        row.description = check_description(d)?;
    }
    let raw = |t: &Option<String>| t.as_ref().map(|t| RawValue::from_string(t.clone()).expect("stored JSON"));
    let schema = match body.schema {
        Some(new) => new,
        None => raw(&row.schema),
    };
    let example = match body.example {
        Some(new) => new,
        None => raw(&row.example),
    };
    (row.schema, row.example) = check_schema_and_example(schema.as_deref(), example.as_deref())?;
    if let Some(d) = body.deprecated {
        row.deprecated = d;
    }
    row.updated_at = time::now_ms();
    if !s.store.update_event_type(&row).await? {
        return Err(match s.store.find_event_type(&name).await? {
            None => not_found(),
            Some(_) => ApiError::new(
                Code::EventTypeChanged,
                "the event type was changed or replaced by another call meanwhile; read it and retry",
            ),
        });
    }
    s.catalogue.invalidate();
    row.revision += 1;
    Ok(Json(row.into()))
}

#[utoipa::path(
    delete, path = "/v1/event-types/{name}", tag = "event-types", operation_id = "delete_event_type",
    summary = "Remove an event type from the catalogue",
    security(("bearer" = ["admin"])),
    description = "Its schema stops applying (on other instances within 2 seconds). Events already stored are \
        kept. In strict mode, events of the type are refused from then on; endpoint filters that name it stay.",
    params(EventTypePath),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "`invalid_path`", body = ErrorBody),
        (status = 404, description = "`event_type_not_found`", body = ErrorBody),
    )
)]
async fn remove(
    State(s): State<SharedState>,
    _: NoQuery,
    ApiPath(EventTypePath { name }): ApiPath<EventTypePath>,
) -> Result<StatusCode, ApiError> {
    if EventType::parse(&name).is_err() || !s.store.delete_event_type(&name).await? {
        return Err(not_found());
    }
    s.catalogue.invalidate();
    Ok(StatusCode::NO_CONTENT)
}
