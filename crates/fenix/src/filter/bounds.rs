//! The bounds a filter is checked against when it is saved, so that its
//! cost is bounded by construction: the raw text's nesting before the parser
//! sees it (the parser recurses, with frames of over a hundred KiB in a debug
//! build), then the parsed expression's depth, size, variables, functions and
//! comprehensions. Each refusal names where in the text it is.

use cel::common::ast::{ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, SourceInfo};

use super::InvalidFilter;

/// Most bytes of a filter's text.
pub const MAX_BYTES: usize = 2_000;
/// Most brackets open at once in the text (`(`, `[`, `{`), plus every `?`
/// (each conditional nests the rest of the expression).
pub const MAX_NESTING: usize = 12;
/// Most levels of the parsed expression (`a.b.c` is three).
pub const MAX_DEPTH: usize = 20;
/// Most nodes of the parsed expression, the macros' expansions included.
pub const MAX_NODES: usize = 200;
/// Most comprehension macros (`all`, `exists`, `exists_one`, `map`, `filter`).
pub const MAX_COMPREHENSIONS: usize = 3;

/// The event's variables a filter may read.
pub const VARIABLES: [&str; 4] = ["type", "data", "channels", "tags"];

/// The functions and operators a filter may call (CEL's names): comparisons,
/// logic, arithmetic, membership, indexing, `size`, the string tests and the
/// conversions. No regular expressions (`matches`), no timestamps, no
/// `type()`: nothing whose cost is not linear in its arguments.
const FUNCTIONS: [&str; 28] = [
    "_&&_",
    "_||_",
    "!_",
    "_?_:_",
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "_+_",
    "_-_",
    "_*_",
    "_/_",
    "_%_",
    "-_",
    "_[_]",
    "@in",
    "@not_strictly_false",
    "size",
    "contains",
    "startsWith",
    "endsWith",
    "string",
    "int",
    "uint",
    "double",
    "bool",
];

/// Operators whose result is never a bool: a filter made of one is refused.
const NOT_BOOL: [&str; 11] = ["_+_", "_-_", "_*_", "_/_", "_%_", "-_", "size", "string", "int", "uint", "double"];

/// Checks the raw text before it is parsed: its length and its nesting
/// (strings and `//` comments skipped, so a bracket inside them counts not).
pub fn check_text(text: &str) -> Result<(), InvalidFilter> {
    if text.len() > MAX_BYTES {
        return Err(InvalidFilter::at(1, 1, format!("the filter is longer than {MAX_BYTES} bytes")));
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut line, mut column, mut depth, mut conditionals) = (1u32, 0u32, 0usize, 0usize);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        column += 1;
        match c {
            '\n' => {
                line += 1;
                column = 0;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            '"' | '\'' => {
                let end = string_end(&chars, i, raw_prefix(&chars, i));
                for &skipped in &chars[i + 1..end] {
                    column += 1;
                    if skipped == '\n' {
                        line += 1;
                        column = 0;
                    }
                }
                i = end;
            }
            '(' | '[' | '{' | '?' => {
                if c == '?' {
                    conditionals += 1;
                } else {
                    depth += 1;
                }
                if depth + conditionals > MAX_NESTING {
                    return Err(InvalidFilter::at(
                        line,
                        column,
                        format!("the filter nests deeper than {MAX_NESTING} levels (brackets and conditionals)"),
                    ));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Whether the quote at `i` opens a raw string: the identifier characters
/// just before it are exactly an `r` prefix (`r`, `br`, `rb`, any case).
fn raw_prefix(chars: &[char], i: usize) -> bool {
    let start = chars[..i].iter().rposition(|c| !(c.is_alphanumeric() || *c == '_')).map_or(0, |p| p + 1);
    let prefix: String = chars[start..i].iter().collect::<String>().to_ascii_lowercase();
    matches!(prefix.as_str(), "r" | "br" | "rb")
}

/// The index of the last character of the string literal opened at `i`
/// (its closing quote, or the text's end or line's end when unterminated:
/// then the parser reports it). A triple quote spans lines; in a raw
/// string a backslash escapes nothing.
fn string_end(chars: &[char], i: usize, raw: bool) -> usize {
    let q = chars[i];
    let triple = chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < chars.len() {
        let c = chars[j];
        if c == '\\' && !raw {
            j += 2;
            continue;
        }
        if triple {
            if c == q && chars.get(j + 1) == Some(&q) && chars.get(j + 2) == Some(&q) {
                return j + 2;
            }
        } else if c == q || c == '\n' {
            return j;
        }
        j += 1;
    }
    chars.len().saturating_sub(1).max(i)
}

/// What a parsed expression holds that its evaluation's cost depends on.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Nodes outside any comprehension's body: each evaluated once.
    pub once: usize,
    /// Nodes inside comprehension bodies: each evaluated once per element.
    pub per_element: usize,
    /// Whether a comprehension iterates something other than `channels` or
    /// `tags` (at most 10 each): then the data's widest list or map counts.
    pub iterates_data: bool,
}

/// One node to check, with where it sits.
struct Visit<'a> {
    expr: &'a IdedExpr,
    depth: usize,
    /// Inside a comprehension (any of its parts): another one is nesting.
    in_comprehension: bool,
    /// The comprehension whose body this is, if any (its variables are in scope).
    body_of: Option<&'a ComprehensionExpr>,
}

/// A child of the node `v`, in the same place.
fn child<'a>(expr: &'a IdedExpr, v: &Visit<'a>) -> Visit<'a> {
    Visit { expr, depth: v.depth + 1, in_comprehension: v.in_comprehension, body_of: v.body_of }
}

/// Checks a parsed expression against the bounds, without recursion (its
/// depth is what is being checked).
pub fn check_expr(root: &IdedExpr, info: &SourceInfo) -> Result<Shape, InvalidFilter> {
    let here = |e: &IdedExpr, message: String| InvalidFilter::at_offset(info, e.id, message);
    root_is_condition(root).map_err(|m| here(root, m))?;
    let mut walk = Walk {
        shape: Shape::default(),
        nodes: 0,
        comprehensions: 0,
        stack: vec![Visit { expr: root, depth: 1, in_comprehension: false, body_of: None }],
    };
    while let Some(v) = walk.stack.pop() {
        let at = v.expr;
        walk.visit(v).map_err(|m| here(at, m))?;
    }
    Ok(walk.shape)
}

/// The walk over a parsed expression: what it has counted so far, and the
/// nodes still to visit.
struct Walk<'a> {
    shape: Shape,
    nodes: usize,
    comprehensions: usize,
    stack: Vec<Visit<'a>>,
}

impl<'a> Walk<'a> {
    /// Checks the node `v` and queues its children; a refusal says why.
    fn visit(&mut self, v: Visit<'a>) -> Result<(), String> {
        self.count(&v)?;
        match &v.expr.expr {
            Expr::Ident(name) => check_ident(name, v.body_of)?,
            Expr::Literal(_) => {}
            Expr::Select(s) => self.stack.push(child(&s.operand, &v)),
            Expr::Call(call) => {
                if !FUNCTIONS.contains(&call.func_name.as_str()) {
                    return Err(unknown_function(&call.func_name));
                }
                self.stack.extend(call.target.as_deref().map(|t| child(t, &v)));
                self.stack.extend(call.args.iter().map(|a| child(a, &v)));
            }
            Expr::List(list) => self.stack.extend(list.elements.iter().map(|e| child(e, &v))),
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(e) = &entry.expr {
                        self.stack.push(child(&e.key, &v));
                        self.stack.push(child(&e.value, &v));
                    }
                }
            }
            Expr::Comprehension(c) => self.comprehension(c, &v)?,
            Expr::Struct(_) => return Err("a filter cannot build messages".into()),
            Expr::Unspecified => return Err("the filter cannot be read".into()),
        }
        Ok(())
    }

    /// Counts the node `v` against the bounds on size and depth, and where
    /// it is evaluated (once, or once per element).
    fn count(&mut self, v: &Visit<'a>) -> Result<(), String> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(format!("the filter has more than {MAX_NODES} parts; make it simpler"));
        }
        if v.depth > MAX_DEPTH {
            return Err(format!("the filter nests deeper than {MAX_DEPTH} levels"));
        }
        if v.body_of.is_some() {
            self.shape.per_element += 1;
        } else {
            self.shape.once += 1;
        }
        Ok(())
    }

    /// A comprehension, at `v`: none inside another, at most
    /// [`MAX_COMPREHENSIONS`]; its body's variables are in scope in its body.
    fn comprehension(&mut self, c: &'a ComprehensionExpr, v: &Visit<'a>) -> Result<(), String> {
        self.comprehensions += 1;
        if v.in_comprehension {
            return Err("a comprehension (all, exists, exists_one, map, filter) may not be inside another, nor iterate another's result".into());
        }
        if self.comprehensions > MAX_COMPREHENSIONS {
            return Err(format!(
                "the filter has more than {MAX_COMPREHENSIONS} comprehensions (all, exists, exists_one, map, filter)"
            ));
        }
        if !matches!(&c.iter_range.expr, Expr::Ident(n) if n == "channels" || n == "tags") {
            self.shape.iterates_data = true;
        }
        self.stack.push(Visit { in_comprehension: true, ..child(&c.iter_range, v) });
        self.stack.push(Visit { in_comprehension: true, ..child(&c.accu_init, v) });
        for part in [&c.loop_cond, &c.loop_step, &c.result] {
            self.stack.push(Visit { expr: part, depth: v.depth + 1, in_comprehension: true, body_of: Some(c) });
        }
        Ok(())
    }
}

/// A variable is one of the event's, or a comprehension's own; inside a
/// comprehension's body, `data` is not (a body runs once per element, and an
/// operation on the whole data in it would make the cost quadratic).
fn check_ident(name: &str, body_of: Option<&ComprehensionExpr>) -> Result<(), String> {
    if let Some(c) = body_of {
        if c.iter_var == name || c.iter_var2.as_deref() == Some(name) || c.accu_var == name {
            return Ok(());
        }
        if name == "data" {
            return Err("inside all, exists, exists_one, map and filter, only the element's variable, type, \
                 channels and tags may be used, not data"
                .into());
        }
    }
    if VARIABLES.contains(&name) {
        return Ok(());
    }
    Err(format!("unknown variable `{}`: a filter may use type, data, channels and tags", short(name)))
}

fn unknown_function(name: &str) -> String {
    format!(
        "`{}` is not a function a filter may call: size, contains, startsWith, endsWith, string, int, uint, \
         double, bool, has and the macros all, exists, exists_one, map, filter",
        short(name.trim_matches('_'))
    )
}

/// A filter is a condition: an expression that is plainly no bool (a
/// number, a string, a list, a map, arithmetic) is refused when saved.
fn root_is_condition(root: &IdedExpr) -> Result<(), String> {
    let not_bool = match &root.expr {
        Expr::Literal(l) => !matches!(l, LiteralValue::Boolean(_)),
        Expr::List(_) | Expr::Map(_) => true,
        Expr::Call(c) => NOT_BOOL.contains(&c.func_name.as_str()),
        _ => false,
    };
    if not_bool {
        return Err("the filter must be a condition: an expression that is true or false".into());
    }
    Ok(())
}

/// At most 40 characters of a name the filter wrote, for a message.
fn short(name: &str) -> String {
    name.chars().take(40).collect()
}
