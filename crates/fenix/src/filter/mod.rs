//! Content filters: an endpoint's optional condition over the event, in CEL
//! (Common Expression Language), e.g. `data.amount > 100 && data.currency ==
//! "EUR"` or `"billing" in channels`. The fan-out (`store::queue::plan`)
//! creates a delivery only for an event the filter is true for.
//!
//! Filters are evaluated inside the ingestion's write path, so their cost is
//! bounded by construction when they are saved ([`bounds`]): the text's
//! length and nesting, the expression's size and depth, the event's four
//! variables only, a list of functions whose cost is linear in their
//! arguments, few comprehensions and none inside another, none reading the
//! whole `data` per element; and when evaluated, a budget of steps that a
//! comprehension over the data's widest list must fit in.
//!
//! An evaluation that fails (a field the event lacks, a type mismatch, the
//! budget spent, a result that is no bool) is "does not match": the event is
//! not sent there. It is counted per app (`fenix_filter_errors_total`),
//! never logged with the event's data.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`Filter`]: parse (on a thread of its own, for the parser's stack), evaluate; the cache of compiled filters |
//! | `bounds.rs` | the checks of the text and of the parsed expression |
//! | `subject.rs` | the event as a filter sees it ([`Subject`]): `type`, `data`, `channels`, `tags` |

pub mod bounds;
mod subject;

use std::{
    collections::HashMap,
    sync::{Arc, LazyLock, Mutex},
};

use cel::{common::ast::SourceInfo, Env, ExecutionError, Program, Value};

pub use subject::Subject;

/// Most steps one evaluation may take: the expression's nodes, plus its
/// comprehension bodies' nodes once per element of the widest list or map
/// of the data. Over it the evaluation is an error (no match).
pub const MAX_STEPS: usize = 50_000;

/// Most compiled filters kept ([`cached`]); when full, the cache starts over.
const CACHE_SIZE: usize = 1_024;

/// Stack of the thread a filter is parsed on: the parser's recursion within
/// [`bounds::MAX_NESTING`] needs a few MiB in a debug build, more than a
/// runtime worker's 2 MiB.
const PARSE_STACK: usize = 16 << 20;

/// The environment every filter runs in: CEL's standard library without the
/// optional syntax (`a.?b`), its macros; no extension.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib().with_optional_support(false)));

/// A filter checked against the bounds and compiled.
#[derive(Debug)]
pub struct Filter {
    program: Program,
    shape: bounds::Shape,
}

/// Why a filter's text is refused, and where (1-based line and column, in characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct InvalidFilter {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl InvalidFilter {
    pub(crate) fn at(line: u32, column: u32, message: String) -> InvalidFilter {
        InvalidFilter { line, column, message }
    }

    /// At the start of expression `id` of the parsed text.
    pub(crate) fn at_offset(info: &SourceInfo, id: u64, message: String) -> InvalidFilter {
        let offset = info.offset_for(id).map_or(0, |(start, _)| start as usize);
        let before = info.source.get(..offset.min(info.source.len())).unwrap_or("");
        let line = before.matches('\n').count() as u32 + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
        InvalidFilter { line, column, message }
    }
}

/// Why one evaluation did not match: a description of the failure that
/// quotes no value of the event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(String);

impl Filter {
    /// Checks and compiles `text`. The parser runs on a thread with a stack
    /// of its own, after the text's nesting was checked.
    pub fn parse(text: &str) -> Result<Filter, InvalidFilter> {
        bounds::check_text(text)?;
        let text = text.to_string();
        let compiled = std::thread::Builder::new()
            .name("fenix-filter-parse".into())
            .stack_size(PARSE_STACK)
            .spawn(move || compile(&text))
            .map_err(|_| InvalidFilter::at(1, 1, "the filter could not be checked now; retry".into()))?
            .join();
        compiled.unwrap_or_else(|_| Err(InvalidFilter::at(1, 1, "the filter cannot be read".into())))
    }

    /// Whether the event is one the filter is true for.
    pub fn matches(&self, subject: &Subject) -> Result<bool, EvalError> {
        let widest = if self.shape.iterates_data { subject.widest() } else { 10 };
        let steps = self.shape.once.saturating_add(self.shape.per_element.saturating_mul(widest));
        if steps > MAX_STEPS {
            return Err(EvalError(format!(
                "over the evaluation budget: a comprehension over a list or map of {widest} entries \
                 would take about {steps} steps, more than {MAX_STEPS}"
            )));
        }
        match self.program.execute(subject.context()) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(EvalError(format!("the filter gave a {}, not a bool", other.type_of()))),
            Err(e) => Err(EvalError(describe(&e))),
        }
    }
}

/// Parses `text` and checks the expression (on the parse thread: dropping
/// a refused deep expression recurses too).
fn compile(text: &str) -> Result<Filter, InvalidFilter> {
    let program = ENV.compile(text).map_err(|errors| {
        let first = errors.errors.first();
        let (line, column) = first.map_or((1, 1), |e| (e.pos.0.max(1) as u32, e.pos.1.max(1) as u32));
        let message = first.map_or_else(|| "the filter cannot be read".to_string(), |e| e.msg.clone());
        InvalidFilter::at(line, column, short_message(&message))
    })?;
    let shape = bounds::check_expr(program.expression(), program.source_info())?;
    Ok(Filter { program, shape })
}

/// A parser message, at most 300 characters (it may quote the filter's text).
fn short_message(message: &str) -> String {
    let one_line = message.replace('\n', " ");
    if one_line.chars().count() > 300 {
        format!("{}…", one_line.chars().take(300).collect::<String>())
    } else {
        one_line
    }
}

/// An evaluation error without the values it carries (they are the event's).
fn describe(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => {
            format!("no such key: {} (test with has(…) first)", k.chars().take(40).collect::<String>())
        }
        ExecutionError::NoSuchOverload(o) => o.to_string(),
        ExecutionError::UndeclaredReference(r) => format!("unknown name: {}", r.chars().take(40).collect::<String>()),
        ExecutionError::UnexpectedType { got, want } => format!("a {got} where a {want} is needed"),
        ExecutionError::ValuesNotComparable(..) => "values of types that cannot be compared".into(),
        ExecutionError::UnsupportedBinaryOperator(op, ..) => format!("{op} does not apply to these values"),
        ExecutionError::UnsupportedIndex(..) | ExecutionError::UnsupportedKeyType(_) => {
            "a value that cannot be used as an index or key".into()
        }
        ExecutionError::IndexOutOfBounds(_) => "index out of bounds".into(),
        ExecutionError::DivisionByZero(_) | ExecutionError::RemainderByZero(_) => "division by zero".into(),
        ExecutionError::Overflow(op, ..) => format!("overflow in {op}"),
        ExecutionError::FunctionError { function, .. } => format!("{function} failed on its argument"),
        ExecutionError::InvalidArgumentCount { expected, actual } => {
            format!("{actual} arguments where {expected} are expected")
        }
        _ => "the filter could not be evaluated on this event".into(),
    }
}

/// The compiled filters, by their text: the fan-out compiles a filter once,
/// not once per batch. Bounded: when full, it starts over.
static CACHE: LazyLock<Mutex<HashMap<String, Arc<Filter>>>> = LazyLock::new(Default::default);

/// The compiled filter of `text`, from the cache or compiled now.
pub fn cached(text: &str) -> Result<Arc<Filter>, InvalidFilter> {
    if let Some(f) = CACHE.lock().expect("filter cache lock").get(text) {
        return Ok(f.clone());
    }
    let filter = Arc::new(Filter::parse(text)?);
    let mut cache = CACHE.lock().expect("filter cache lock");
    if cache.len() >= CACHE_SIZE {
        cache.clear();
    }
    cache.insert(text.to_string(), filter.clone());
    Ok(filter)
}

/// A filter as an owner writes it: `""` or blank is none; any other text
/// must be a valid filter (kept as written).
pub fn parse_field(text: &str) -> Result<Option<String>, InvalidFilter> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    cached(text).map(|_| Some(text.to_string()))
}

/// Most apps whose filter errors are counted apart; beyond it, the rest
/// count under `app_id="other"` (the metric's labels stay bounded).
const MAX_COUNTED_APPS: usize = 10_000;

/// Filter evaluations that failed (no match), per app (`fenix_filter_errors_total`).
static ERRORS: LazyLock<Mutex<HashMap<String, u64>>> = LazyLock::new(Default::default);

/// Counts a failed evaluation of one of `app_id`'s filters.
pub fn count_error(app_id: &str) {
    let mut errors = ERRORS.lock().expect("filter errors lock");
    let key = if errors.len() < MAX_COUNTED_APPS || errors.contains_key(app_id) { app_id } else { "other" };
    *errors.entry(key.to_string()).or_insert(0) += 1;
}

/// `fenix_filter_errors_total`, in the text format of `/metrics`.
pub fn render_errors(out: &mut String) {
    use std::fmt::Write as _;
    let errors = ERRORS.lock().expect("filter errors lock");
    let _ = writeln!(
        out,
        "# HELP fenix_filter_errors_total Content-filter evaluations that failed (the event was not sent there), per app.\n\
         # TYPE fenix_filter_errors_total counter"
    );
    let mut apps: Vec<_> = errors.iter().collect();
    apps.sort();
    for (app, n) in apps {
        let _ = writeln!(out, "fenix_filter_errors_total{{app_id=\"{app}\"}} {n}");
    }
}

#[cfg(test)]
mod tests;
