//! The event-type catalogue as ingestion meets it: each catalogued type's
//! JSON Schema (draft 2020-12) compiled once and kept in memory, so that
//! checking an event costs a map lookup, and parsing `data` only when its
//! type has a schema.
//!
//! [`Catalogue`] is a short-lived cache like the app cache of `state.rs`:
//! a change through this instance's API marks it stale at once
//! ([`Catalogue::invalidate`]); a change through another instance is seen
//! within [`CATALOGUE_CACHE_TTL`]. A refresh reads every type's name and
//! revision (one small query) and recompiles only the types whose revision
//! changed, so an idle catalogue costs one cheap read per TTL per instance.
//!
//! Schemas are compiled without any way to fetch a remote or local `$ref`
//! (the `jsonschema` crate is built without its HTTP and file resolvers) and
//! with the linear-time `regex` engine for `pattern`, so an admin's schema
//! cannot make Fenix open a connection or backtrack for ever on a payload.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, RwLock,
    },
    time::{Duration, Instant},
};

use serde_json::{value::RawValue, Value};

use crate::{
    event_types::{EventTypeFilter, InvalidEventType},
    store::Store,
};

mod checks;
mod cost;
mod data;

pub use checks::{Check, Checks};
pub use data::{Unchecked, Unreadable, MAX_DEPTH};

/// How long an instance trusts its catalogue without asking the database
/// again: a type created, changed or deleted through another instance takes
/// effect here within this time.
pub const CATALOGUE_CACHE_TTL: Duration = Duration::from_secs(2);

/// The most validation errors one refused event reports.
pub const MAX_SCHEMA_ERRORS: usize = 10;

/// The only `$schema` a catalogued schema may name (or it names none).
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// One way `data` fails its type's schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct SchemaViolation {
    /// JSON Pointer to the offending value, from the root of the request body
    /// (`/data/amount`, or `/events/3/data/amount` in a batch).
    #[schema(example = "/data/amount")]
    pub path: String,
    /// What the schema wants there; the offending value itself is never
    /// quoted (it is the producer's payload), it reads as `value`.
    #[schema(example = "value is not of type \"integer\"")]
    pub message: String,
}

/// An event of a type the catalogue does not hold, in strict mode.
pub fn unknown_type(name: &str) -> InvalidEventType {
    InvalidEventType {
        kind: crate::event_types::Invalid::NotCatalogued,
        message: format!(
            "event type `{name}` is not in the event-type catalogue and FENIX_EVENT_TYPES_STRICT is on: \
             add it with POST /v1/event-types"
        ),
    }
}

/// Why an event's `data` was refused by its type's check: each a stable
/// code, a message naming the type, and where it can, the places (`details`).
#[derive(Debug)]
pub enum Refusal {
    /// `data` does not match the schema (`schema_mismatch`).
    Mismatch { event_type: String, violations: Vec<SchemaViolation> },
    /// `data` cannot be checked faithfully (`duplicate_key`, `data_too_deep`, …):
    /// refused, never let through unchecked.
    Unchecked { event_type: String, reason: Unreadable, path: String },
    /// Checking `data` went over the validation budget (`schema_too_costly`).
    TooCostly { event_type: String, why: OverBudget },
    /// Every check slot stayed busy for a whole request budget (`503 overloaded`).
    Busy,
    /// The check ended without an answer (a fault in the validator; logged).
    Failed,
}

/// Which budget a check went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverBudget {
    /// `FENIX_SCHEMA_BUDGET`, this event's own.
    Event(Duration),
    /// `FENIX_SCHEMA_REQUEST_BUDGET`, shared by the request's events.
    Request(Duration),
    /// An earlier check of this type is still running past its budget.
    Quarantined,
}

impl Refusal {
    /// What to tell the producer; never quotes the payload.
    pub fn message(&self) -> String {
        match self {
            Refusal::Mismatch { event_type, violations } => format!(
                "data does not match the schema of event type `{event_type}` in the event-type catalogue \
                 ({} mismatch{} in details)",
                violations.len(),
                if violations.len() == 1 { "" } else { "es" }
            ),
            Refusal::Unchecked { event_type, reason, path } => format!(
                "data cannot be checked against the schema of event type `{event_type}`: {} (at {path})",
                reason.what()
            ),
            Refusal::TooCostly { event_type, why } => {
                let over = match why {
                    OverBudget::Event(d) => {
                        format!("went over its budget of {} ms (FENIX_SCHEMA_BUDGET)", d.as_millis())
                    }
                    OverBudget::Request(d) => format!(
                        "went over the request's budget of {} ms for all its checks (FENIX_SCHEMA_REQUEST_BUDGET)",
                        d.as_millis()
                    ),
                    OverBudget::Quarantined => {
                        "was not run: an earlier check of this type is still running past its budget".to_string()
                    }
                };
                format!(
                    "checking data against the schema of event type `{event_type}` {over}; nothing was stored. \
                     The type is flagged for the operator; send smaller data, or ask for a cheaper schema"
                )
            }
            Refusal::Busy => "every schema check slot is busy; retry in a second".to_string(),
            Refusal::Failed => "internal error".to_string(),
        }
    }

    /// The answer's status: `422` for what the data or its schema causes.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Busy => 503,
            Refusal::Failed => 500,
            _ => 422,
        }
    }

    /// Each place that failed, for the answer's `details`.
    pub fn details(self) -> Vec<SchemaViolation> {
        match self {
            Refusal::Mismatch { violations, .. } => violations,
            Refusal::Unchecked { reason, path, .. } => vec![SchemaViolation { path, message: reason.what() }],
            Refusal::TooCostly { .. } | Refusal::Busy | Refusal::Failed => Vec::new(),
        }
    }
}

/// A catalogued type, ready for ingestion.
pub struct CompiledType {
    pub deprecated: bool,
    name: String,
    revision: i64,
    validator: Option<jsonschema::Validator>,
}

impl CompiledType {
    /// Checks `data` against the type's schema. With no schema nothing is
    /// parsed. Data that cannot be read faithfully for the check (a key
    /// given twice, a number beyond `f64`, …) is refused like a mismatch.
    /// Errors name their paths below `base` (`/data`).
    pub fn check(&self, data: &RawValue, base: &str) -> Result<(), Refusal> {
        let Some(validator) = &self.validator else { return Ok(()) };
        let event_type = || self.name.clone();
        let instance = data::read(data.get()).map_err(|Unchecked { reason, path }| Refusal::Unchecked {
            event_type: event_type(),
            reason,
            path: format!("{base}{path}"),
        })?;
        violations(validator, &instance, base)
            .map_err(|violations| Refusal::Mismatch { event_type: event_type(), violations })
    }

    /// Whether events of this type are checked at all (parsed, validated).
    pub fn has_schema(&self) -> bool {
        self.validator.is_some()
    }

    /// The event type.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Reads a schema or an example from the request, refusing what cannot be
/// read faithfully (as event data is): `what` names it in the message.
pub fn read_json(raw: &RawValue, what: &str) -> Result<Value, String> {
    data::read(raw.get()).map_err(|Unchecked { reason, path }| format!("{what} at {path:?}: {}", reason.what()))
}

/// The catalogue at one moment.
#[derive(Default)]
pub struct Snapshot {
    types: Arc<HashMap<String, Arc<CompiledType>>>,
}

impl Snapshot {
    /// The type named `name`, if catalogued.
    pub fn get(&self, name: &str) -> Option<&CompiledType> {
        self.types.get(name).map(|t| &**t)
    }

    /// The type named `name`, shared (for a check on another thread).
    pub fn shared(&self, name: &str) -> Option<Arc<CompiledType>> {
        self.types.get(name).cloned()
    }

    /// The first pattern of `filter` that names no catalogued type: an exact
    /// type that is not catalogued, or a `prefix.*` that matches none.
    pub fn unknown_pattern<'f>(&self, filter: &'f EventTypeFilter) -> Option<&'f str> {
        filter.patterns().iter().map(String::as_str).find(|p| {
            let one = EventTypeFilter::parse(&[p.to_string()]).unwrap_or_default();
            !self.types.keys().any(|name| one.matches(name))
        })
    }
}

/// The cache of compiled schemas, one per instance (in the `AppState`).
pub struct Catalogue {
    current: RwLock<(Arc<Snapshot>, Option<Instant>)>,
    /// Set by a change through this instance: the next use refreshes.
    stale: AtomicBool,
    /// One refresh at a time; the others wait for its result.
    refreshing: tokio::sync::Mutex<()>,
    ttl: Duration,
}

impl Default for Catalogue {
    fn default() -> Self {
        Catalogue::with_ttl(CATALOGUE_CACHE_TTL)
    }
}

impl Catalogue {
    /// In strict mode, the refusal of an endpoint filter with a pattern that
    /// names no catalogued type; off strict mode, or with every pattern
    /// known, `None`.
    pub async fn unknown_in_filter(
        &self,
        store: &Store,
        strict: bool,
        filter: &EventTypeFilter,
    ) -> crate::store::Result<Option<InvalidEventType>> {
        if !strict || filter.patterns().is_empty() {
            return Ok(None);
        }
        let snapshot = self.current(store).await?;
        Ok(snapshot.unknown_pattern(filter).map(|p| InvalidEventType {
            kind: crate::event_types::Invalid::NotCatalogued,
            message: format!(
                "event_types: {p:?} names no type of the event-type catalogue and FENIX_EVENT_TYPES_STRICT is on \
                 (an exact type must be catalogued; a prefix.* must match at least one catalogued type)"
            ),
        }))
    }

    /// An empty cache that refreshes at its first use and then every `ttl`.
    pub fn with_ttl(ttl: Duration) -> Catalogue {
        Catalogue {
            current: RwLock::new((Arc::new(Snapshot::default()), None)),
            stale: AtomicBool::new(true),
            refreshing: tokio::sync::Mutex::new(()),
            ttl,
        }
    }

    /// Makes the next use read the database (after a change through this instance).
    pub fn invalidate(&self) {
        self.stale.store(true, Ordering::SeqCst);
    }

    fn fresh(&self) -> Option<Arc<Snapshot>> {
        let (snapshot, at) = &*self.current.read().expect("catalogue lock");
        let fresh = !self.stale.load(Ordering::SeqCst) && at.is_some_and(|at| at.elapsed() < self.ttl);
        fresh.then(|| snapshot.clone())
    }

    /// The last catalogue read, unless a change through this instance made it stale.
    fn previous_unless_stale(&self) -> Option<Arc<Snapshot>> {
        let (snapshot, at) = &*self.current.read().expect("catalogue lock");
        (at.is_some() && !self.stale.load(Ordering::SeqCst)).then(|| snapshot.clone())
    }

    /// The catalogue, refreshed first if it is stale or older than the TTL.
    pub async fn current(&self, store: &Store) -> crate::store::Result<Arc<Snapshot>> {
        if let Some(s) = self.fresh() {
            return Ok(s);
        }
        let _one = match self.refreshing.try_lock() {
            Ok(one) => one,
            Err(_) => {
                // Another request is refreshing. If the cache is only past its
                // TTL (nothing changed through this instance), the previous
                // catalogue serves meanwhile: a refresh costs one request its
                // read, not every concurrent one. After a change here, wait.
                if let Some(previous) = self.previous_unless_stale() {
                    return Ok(previous);
                }
                self.refreshing.lock().await
            }
        };
        if let Some(s) = self.fresh() {
            return Ok(s);
        }
        // Cleared before reading: a change made during the read marks it stale again.
        self.stale.store(false, Ordering::SeqCst);
        let old = self.current.read().expect("catalogue lock").0.clone();
        let revisions = store.event_type_revisions().await?;
        let unchanged = revisions.len() == old.types.len()
            && revisions.iter().all(|r| old.types.get(&r.name).is_some_and(|t| t.revision == r.revision));
        let types = if unchanged {
            old.types.clone()
        } else {
            let mut types = HashMap::with_capacity(revisions.len());
            for row in store.all_event_types().await? {
                let compiled = match old.types.get(&row.name) {
                    Some(t) if t.revision == row.revision => t.clone(),
                    _ => Arc::new(compile_row(&row.name, row.schema.as_deref(), row.deprecated, row.revision)),
                };
                types.insert(row.name, compiled);
            }
            Arc::new(types)
        };
        let snapshot = Arc::new(Snapshot { types });
        *self.current.write().expect("catalogue lock") = (snapshot.clone(), Some(Instant::now()));
        Ok(snapshot)
    }
}

/// A stored type compiled. Its schema was checked when it was written; one
/// that no longer compiles (a crate upgrade, a row written by hand) is logged
/// and validates nothing, rather than refusing every event of the type.
fn compile_row(name: &str, schema: Option<&str>, deprecated: bool, revision: i64) -> CompiledType {
    let validator = schema.and_then(|text| {
        let compiled = serde_json::from_str::<Value>(text).map_err(|e| e.to_string()).and_then(|v| compile(&v));
        compiled.map_err(|e| tracing::error!(event_type = name, error = e, "a catalogued schema does not compile")).ok()
    });
    CompiledType { deprecated, name: name.to_string(), revision, validator }
}

/// Compiles a schema as draft 2020-12: it must name no other draft, be a
/// valid 2020-12 schema (checked against the meta-schema), and resolve every
/// `$ref` within itself. The error says what is wrong, for `invalid_schema`.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    well_formed(schema)?;
    build(schema)
}

/// An object naming draft 2020-12 or no draft, valid against its meta-schema.
fn well_formed(schema: &Value) -> Result<(), String> {
    // An object only: `true`/`false` are schemas too, but of no use for a type's
    // data, and the API documents (and answers) the schema as an object.
    if !schema.is_object() {
        return Err("schema must be a JSON Schema object, e.g. {\"type\": \"object\"}".into());
    }
    match schema.get("$schema") {
        None => {}
        Some(Value::String(s)) if s.trim_end_matches('#') == DRAFT_2020_12 => {}
        Some(_) => return Err(format!("schema's $schema must be {DRAFT_2020_12:?} (draft 2020-12) or left out")),
    }
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        let at = e.instance_path().as_str();
        return Err(short(&format!("schema is not a valid draft 2020-12 schema at {:?}: {e}", at)));
    }
    Ok(())
}

/// The validator, every `$ref` resolved within the schema.
fn build(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
        .map_err(|e| short(&format!("schema cannot be used: {e}")))
}

/// Why a schema is not written, for the API: `invalid_schema` or `schema_too_costly`.
#[derive(Debug)]
pub enum SchemaRefused {
    /// Not a schema Fenix can use (`invalid_schema`).
    Invalid(String),
    /// Checking one value could cost without bound (`schema_too_costly`).
    TooCostly(String),
}

impl SchemaRefused {
    /// What to change.
    pub fn message(self) -> String {
        match self {
            SchemaRefused::Invalid(m) | SchemaRefused::TooCostly(m) => m,
        }
    }
}

/// A schema being written to the catalogue: [`compile`]d, and refused
/// (`schema_too_costly`) when checking one value could cost without bound
/// (`cost.rs`). Stored schemas are compiled without this bound: one written
/// before it existed keeps working, under the time budget of each check.
pub fn compile_new(schema: &Value) -> Result<jsonschema::Validator, SchemaRefused> {
    let invalid = SchemaRefused::Invalid;
    // The bound reads a schema that passed the meta-schema, and runs before
    // the validator is built (which would follow an in-place loop).
    well_formed(schema).map_err(invalid)?;
    cost::bound(schema).map_err(|e| match e {
        cost::Costly::TooCostly(_) => SchemaRefused::TooCostly(short(e.message())),
        cost::Costly::Unfollowable(_) => SchemaRefused::Invalid(short(e.message())),
    })?;
    build(schema).map_err(invalid)
}

/// Checks `example` against a compiled schema; the errors as for an event.
pub fn check_example(validator: &jsonschema::Validator, example: &Value) -> Result<(), Vec<SchemaViolation>> {
    violations(validator, example, "/example")
}

/// The first `MAX_SCHEMA_ERRORS` mismatches of `instance`, their paths under
/// `base` (a JSON Pointer into the request body), their messages masked.
fn violations(validator: &jsonschema::Validator, instance: &Value, base: &str) -> Result<(), Vec<SchemaViolation>> {
    let errors: Vec<SchemaViolation> = validator
        .iter_errors(instance)
        .take(MAX_SCHEMA_ERRORS)
        .map(|e| SchemaViolation {
            path: format!("{base}{}", e.instance_path().as_str()),
            message: short(&e.masked().to_string()),
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Keeps one message short: a schema's own keywords (a long `enum`) could make it large.
fn short(s: &str) -> String {
    const MAX: usize = 300;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn raw(v: Value) -> Box<RawValue> {
        RawValue::from_string(v.to_string()).unwrap()
    }

    fn typed(schema: Option<Value>) -> CompiledType {
        CompiledType {
            deprecated: false,
            name: "order.paid".into(),
            revision: 1,
            validator: schema.map(|s| compile(&s).unwrap()),
        }
    }

    #[test]
    fn a_mismatch_names_each_path_and_never_quotes_the_payload() {
        let t = typed(Some(json!({
            "type": "object",
            "required": ["amount", "currency"],
            "properties": {"amount": {"type": "integer"}, "items": {"type": "array", "items": {"type": "string"}}}
        })));
        let errors =
            t.check(&raw(json!({"amount": "s3cr3t-payload", "items": ["a", 7]})), "/data").unwrap_err().details();
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert!(paths.contains(&"/data/amount"), "{errors:?}");
        assert!(paths.contains(&"/data/items/1"), "{errors:?}");
        assert!(paths.contains(&"/data"), "the missing `currency` is reported at the object: {errors:?}");
        assert!(!format!("{errors:?}").contains("s3cr3t"), "{errors:?}");
        assert!(t.check(&raw(json!({"amount": 5, "currency": "EUR"})), "/data").is_ok());
    }

    #[test]
    fn errors_are_bounded() {
        let t = typed(Some(json!({"type": "object", "additionalProperties": {"type": "integer"}})));
        let many: serde_json::Map<String, Value> = (0..50).map(|i| (format!("k{i}"), json!("x"))).collect();
        assert_eq!(t.check(&raw(Value::Object(many)), "/data").unwrap_err().details().len(), MAX_SCHEMA_ERRORS);
    }

    #[test]
    fn data_that_cannot_be_checked_is_refused_never_passed() {
        let t = typed(Some(json!({"type": "object", "properties": {"amount": {"type": "integer"}}})));
        for (text, code, path) in [
            (r#"{"amount":"x","amount":5}"#, Unreadable::DuplicateKey, "/data/amount"),
            (r#"{"amount":1e400}"#, Unreadable::NumberOutOfRange, "/data/amount"),
            (r#"{"note":"\ud800"}"#, Unreadable::InvalidUnicode, "/data/note"),
        ] {
            let refusal = t.check(&RawValue::from_string(text.into()).unwrap(), "/data").expect_err(text);
            assert!(matches!(refusal, Refusal::Unchecked { reason, .. } if reason == code), "{text}");
            assert!(refusal.message().contains("`order.paid`"), "{}", refusal.message());
            assert_eq!(refusal.details()[0].path, path, "{text}");
        }
        let deep = format!("{{\"amount\":5,\"x\":{}{}}}", "[".repeat(129), "]".repeat(129));
        let refusal = t.check(&RawValue::from_string(deep).unwrap(), "/events/3/data").unwrap_err();
        assert!(matches!(refusal, Refusal::Unchecked { reason: Unreadable::TooDeep, .. }), "{refusal:?}");
        assert!(refusal.details()[0].path.starts_with("/events/3/data/x/0/"));
        // Without a schema nothing is read, so nothing is refused.
        assert!(typed(None).check(&RawValue::from_string(r#"{"a":1,"a":2}"#.into()).unwrap(), "/data").is_ok());
    }

    #[test]
    fn a_type_without_a_schema_accepts_anything() {
        assert!(typed(None).check(&raw(json!({"any": [1, "thing"]})), "/data").is_ok());
    }

    #[test]
    fn schemas_must_be_draft_2020_12_and_self_contained() {
        assert!(compile(&json!({"$schema": DRAFT_2020_12, "type": "object"})).is_ok());
        for bad in [
            json!(true),
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
            json!({"type": "no-such-type"}),
            json!({"minimum": "five"}),
            json!({"$ref": "https://example.com/other.json"}),
            json!({"$ref": "#/$defs/missing"}),
            // Linear-time patterns only: no look-around, no back-references.
            json!({"type": "string", "pattern": "^(?=a)"}),
            json!({"type": "string", "pattern": "^(a)\\1$"}),
            json!("object"),
            json!([]),
        ] {
            assert!(compile(&bad).is_err(), "{bad} compiled");
        }
    }

    async fn store_with(types: &[(&str, Option<Value>)]) -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&format!("sqlite://{}/t.db", dir.path().display()), 2).await.unwrap();
        store.migrate().await.unwrap();
        for (name, schema) in types {
            store.insert_event_type(&row(name, schema.clone(), 1)).await.unwrap();
        }
        (store, dir)
    }

    fn row(name: &str, schema: Option<Value>, revision: i64) -> crate::store::event_types::EventTypeRow {
        crate::store::event_types::EventTypeRow {
            id: crate::ids::EventTypeId::new().into_string(),
            name: name.into(),
            description: String::new(),
            schema: schema.map(|s| s.to_string()),
            example: None,
            deprecated: false,
            revision,
            created_at: 0,
            updated_at: 0,
        }
    }

    fn integer_amount() -> Value {
        json!({"type": "object", "properties": {"amount": {"type": "integer"}}})
    }

    #[tokio::test]
    async fn the_cache_keeps_compiled_schemas_until_invalidated_and_recompiles_only_what_changed() {
        let (store, _dir) = store_with(&[("order.paid", Some(integer_amount())), ("order.note", None)]).await;
        let cache = Catalogue::with_ttl(Duration::from_secs(3600));
        let first = cache.current(&store).await.unwrap();
        let text = raw(json!({"amount": "ten"}));
        assert!(first.get("order.paid").unwrap().check(&text, "/data").is_err());
        assert!(first.get("order.note").unwrap().check(&text, "/data").is_ok());
        assert!(first.get("order.other").is_none());

        // Changed behind the cache's back (as by another instance): not seen within the TTL ...
        let mut paid = store.find_event_type("order.paid").await.unwrap().unwrap();
        paid.schema = Some(json!({"type": "object", "properties": {"amount": {"type": "string"}}}).to_string());
        assert!(store.update_event_type(&paid).await.unwrap());
        store.insert_event_type(&row("order.shipped", None, 1)).await.unwrap();
        let same = cache.current(&store).await.unwrap();
        assert!(Arc::ptr_eq(&first, &same), "a fresh cache reads nothing");
        // ... and at once after `invalidate` (a change through this instance).
        cache.invalidate();
        let second = cache.current(&store).await.unwrap();
        assert!(second.get("order.paid").unwrap().check(&text, "/data").is_ok(), "the new schema is in force");
        assert!(second.get("order.shipped").is_some());
        assert!(
            Arc::ptr_eq(&first.types["order.note"], &second.types["order.note"]),
            "an unchanged type is not compiled again"
        );
        assert!(!Arc::ptr_eq(&first.types["order.paid"], &second.types["order.paid"]));
    }

    #[tokio::test]
    async fn past_its_ttl_the_cache_sees_changes_made_elsewhere_and_deletions() {
        let (store, _dir) = store_with(&[("order.paid", Some(integer_amount()))]).await;
        let cache = Catalogue::with_ttl(Duration::ZERO);
        assert!(cache.current(&store).await.unwrap().get("order.paid").is_some());
        assert!(store.delete_event_type("order.paid").await.unwrap());
        assert!(cache.current(&store).await.unwrap().get("order.paid").is_none());
        // With nothing changed, a refresh keeps the very same map.
        let a = cache.current(&store).await.unwrap();
        let b = cache.current(&store).await.unwrap();
        assert!(Arc::ptr_eq(&a.types, &b.types));
    }

    #[tokio::test]
    async fn during_a_refresh_others_get_the_previous_catalogue_unless_it_changed_here() {
        use futures::FutureExt;
        let (store, _dir) = store_with(&[("order.paid", None)]).await;
        let cache = Catalogue::with_ttl(Duration::ZERO);
        let first = cache.current(&store).await.unwrap();
        let refreshing = cache.refreshing.lock().await;
        // Past its TTL only: answered at once with what was read before.
        let meanwhile = cache.current(&store).now_or_never().expect("not waiting").unwrap();
        assert!(Arc::ptr_eq(&first, &meanwhile));
        // After a change through this instance, the next use waits for a fresh read.
        cache.invalidate();
        assert!(cache.current(&store).now_or_never().is_none(), "a stale catalogue is not served");
        drop(refreshing);
        store.delete_event_type("order.paid").await.unwrap();
        assert!(cache.current(&store).await.unwrap().get("order.paid").is_none());
    }

    #[test]
    fn filters_are_known_when_each_pattern_names_a_catalogued_type() {
        let mut types = HashMap::new();
        for name in ["order.paid", "order.refund.issued"] {
            types.insert(name.to_string(), Arc::new(typed(None)));
        }
        let snapshot = Snapshot { types: Arc::new(types) };
        let f = |p: &[&str]| EventTypeFilter::parse(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        assert_eq!(snapshot.unknown_pattern(&f(&["order.paid", "order.*", "order.refund.*"])), None);
        assert_eq!(snapshot.unknown_pattern(&f(&[])), None);
        assert_eq!(snapshot.unknown_pattern(&f(&["order.paid", "order.shipped"])), Some("order.shipped"));
        assert_eq!(snapshot.unknown_pattern(&f(&["order.paid.*"])), Some("order.paid.*"));
        assert_eq!(snapshot.unknown_pattern(&f(&["user.*"])), Some("user.*"));
    }
}
