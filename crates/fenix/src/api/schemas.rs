//! The document's schema of closed sets whose Rust type lives outside the
//! API (the signing crate's `Scheme`, the worker's `ErrorClass`) or is a
//! fixed text (`/healthz`'s `status`): each a string `enum` built from the
//! type's own list of values, for `#[schema(schema_with = …)]`.

use utoipa::openapi::{
    schema::{ObjectBuilder, Type},
    RefOr, Schema,
};

fn string_enum<'a>(values: impl IntoIterator<Item = &'a str>, example: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values))
        .examples([serde_json::json!(example)])
        .into()
}

/// The signature scheme of an endpoint: `fenix-v1` or `standard-webhooks`.
pub fn signature_scheme() -> RefOr<Schema> {
    use fenix_signing::Scheme;
    string_enum([Scheme::FenixV1.as_str(), Scheme::StandardWebhooks.as_str()], Scheme::FenixV1.as_str())
}

/// Why an attempt failed without an HTTP answer (or with one that failed it).
pub fn error_class() -> RefOr<Schema> {
    use crate::error_class::ErrorClass;
    let values: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.as_str()).collect();
    let schema = ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([Type::String, Type::Null]))
        .enum_values(Some(values.into_iter().map(Some).chain([None::<&str>])))
        .examples([serde_json::json!("timeout")]);
    schema.into()
}

/// `/healthz`'s `status`.
pub fn health_status() -> RefOr<Schema> {
    string_enum(["ok", "unavailable"], "ok")
}

/// `/readyz`'s `status`.
pub fn ready_status() -> RefOr<Schema> {
    string_enum(["ready", "unavailable"], "ready")
}

/// A list of channels or tags (`labels`): at most 10 names, each 1-128
/// characters of `A-Z a-z 0-9 _ - . :` without a leading or trailing dot.
pub fn label_list() -> RefOr<Schema> {
    use crate::labels::{LABEL_PATTERN, MAX_LABELS, MAX_LABEL_LEN};
    let name = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_LABEL_LEN))
        .pattern(Some(LABEL_PATTERN));
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(name)
        .max_items(Some(MAX_LABELS))
        .examples([serde_json::json!(["billing", "eu-west"])])
        .into()
}
