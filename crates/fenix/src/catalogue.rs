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
    /// Only with `invalid_filter`: where in the filter's text (1-based, in characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// Only with `invalid_filter`: the column of `line` (1-based, in characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
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
            Refusal::Unchecked { reason, path, .. } => {
                vec![SchemaViolation { path, message: reason.what(), line: None, column: None }]
            }
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
            line: None,
            column: None,
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
mod tests;
