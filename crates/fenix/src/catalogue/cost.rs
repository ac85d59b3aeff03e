//! What a schema can cost to check, bounded when it is written.
//!
//! A running validation cannot be interrupted, so a schema whose work grows
//! exponentially is refused before it is stored, not discovered on the
//! event that triggers it. The measure is how many subschemas are applied to
//! one value of the data, at worst:
//!
//! - at one place, the in-place applicators (`allOf`, `anyOf`, `oneOf`,
//!   `not`, `if`/`then`/`else`, `dependentSchemas`, `$ref`, `$dynamicRef`)
//!   apply their subschemas to the same value. A definition reached through
//!   two paths is applied twice: twenty definitions, each an `anyOf` of two
//!   `$ref`s to the one before, apply 2^20 schemas to one value;
//! - one level down, a member of an object gets one of `properties` /
//!   `additionalProperties` and every `patternProperties`,
//!   `unevaluatedProperties` and `propertyNames`; an item of an array one of
//!   `prefixItems` / `items` and `contains` and `unevaluatedItems`. A
//!   recursive schema whose items get both `items` and `contains` of itself
//!   doubles at every level of the data.
//!
//! The count is followed [`MAX_DEPTH`] levels down (deeper data is refused
//! before it is checked) and may over-estimate, never under-estimate. A loop
//! of in-place references (a schema that applies itself to the same value)
//! never ends and is refused as such. What this does not bound (a schema
//! cheap per value but run over a large payload: many `patternProperties`
//! against many keys) the time budget of each check does.

use std::collections::HashMap;

use serde_json::Value;

use super::data::MAX_DEPTH;

/// Most subschemas a schema may apply to one value of the data. A real
/// schema applies a few dozen; an `anyOf` of a few hundred alternatives
/// with some composition each stays well below.
pub const MAX_APPLIED: f64 = 10_000.0;

/// Most nodes (subschemas and references) the bound follows.
const MAX_NODES: usize = 100_000;

/// Why a schema is refused; the text says what to change.
#[derive(Debug, PartialEq, Eq)]
pub enum Costly {
    /// Its cost has no bound (or one over [`MAX_APPLIED`]).
    TooCostly(String),
    /// A `$ref` this bound cannot follow (the validator would refuse it too).
    Unfollowable(String),
}

impl Costly {
    pub fn message(&self) -> &str {
        match self {
            Costly::TooCostly(m) | Costly::Unfollowable(m) => m,
        }
    }
}

/// Refuses a schema whose checking can apply more than [`MAX_APPLIED`]
/// subschemas to one value, or that applies itself in a loop.
pub fn bound(schema: &Value) -> Result<(), Costly> {
    let graph = Graph::of(schema)?;
    let order = graph.in_place_order()?;
    // At the place a node is applied: how many schemas it applies there.
    let mut here = vec![0.0; graph.nodes.len()];
    for &n in &order {
        let node = &graph.nodes[n];
        let below: f64 = node.in_place.iter().map(|&c| here[c]).sum();
        // `unevaluated*` looks at what its siblings evaluated: count them twice.
        here[n] = 1.0 + below * if node.unevaluated { 2.0 } else { 1.0 };
    }
    check(here[0], 0)?;
    // `at[n]`: most schemas applied `depth` levels below a place where n is applied.
    let mut at = here.clone();
    for depth in 1..MAX_DEPTH {
        let mut member = vec![0.0; graph.nodes.len()];
        let mut item = vec![0.0; graph.nodes.len()];
        for &n in &order {
            let node = &graph.nodes[n];
            let one = |list: &[usize]| list.iter().map(|&c| at[c]).fold(0.0, f64::max);
            let all = |list: &[usize]| list.iter().map(|&c| at[c]).sum::<f64>();
            member[n] = one(&node.member_one) + all(&node.member_all);
            item[n] = one(&node.item_one) + all(&node.item_all);
            for &c in &node.in_place {
                member[n] += member[c];
                item[n] += item[c];
            }
        }
        at = member.iter().zip(&item).map(|(m, i)| m.max(*i)).collect();
        check(at[0], depth)?;
        if at[0] == 0.0 {
            break;
        }
    }
    Ok(())
}

fn check(applied: f64, depth: usize) -> Result<(), Costly> {
    if applied > MAX_APPLIED {
        let place = if depth == 0 { "the data itself".to_string() } else { format!("a value {depth} levels down") };
        return Err(Costly::TooCostly(format!(
            "schema is too costly to check: it can apply more than {} subschemas to {place} \
             (a definition reached through several $refs under anyOf/oneOf/allOf, or a recursive schema that \
             applies itself more than once to the same member); refer to each definition once per place",
            MAX_APPLIED as u64
        )));
    }
    Ok(())
}

/// A subschema and what it applies where.
#[derive(Default)]
struct Node {
    /// Applied to the same value.
    in_place: Vec<usize>,
    /// One of these applies to an object's member (which one depends on its name).
    member_one: Vec<usize>,
    /// Each of these may apply to the same member.
    member_all: Vec<usize>,
    item_one: Vec<usize>,
    item_all: Vec<usize>,
    unevaluated: bool,
}

struct Graph<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
}

impl<'s> Graph<'s> {
    /// Every subschema reachable from `root`, references followed.
    fn of(root: &'s Value) -> Result<Graph<'s>, Costly> {
        let mut ids: HashMap<*const Value, usize> = HashMap::new();
        let mut values: Vec<(&'s Value, &'s Value)> = Vec::new();
        let mut graph = Graph { root, nodes: Vec::new() };
        let mut id = |v: &'s Value, resource: &'s Value, values: &mut Vec<(&'s Value, &'s Value)>| {
            *ids.entry(v as *const Value).or_insert_with(|| {
                values.push((v, resource));
                values.len() - 1
            })
        };
        id(root, root, &mut values);
        let mut next = 0;
        while next < values.len() {
            if values.len() > MAX_NODES {
                return Err(Costly::TooCostly(format!(
                    "schema is too large to bound its cost (more than {MAX_NODES} subschemas)"
                )));
            }
            let (value, resource) = values[next];
            next += 1;
            let mut node = Node::default();
            let Some(object) = value.as_object() else {
                graph.nodes.push(node);
                continue;
            };
            let resource = if object.get("$id").is_some_and(Value::is_string) { value } else { resource };
            let mut to = |list: &mut Vec<usize>, v: &'s Value| list.push(id(v, resource, &mut values));
            for (keyword, v) in object {
                match keyword.as_str() {
                    "allOf" | "anyOf" | "oneOf" => each(v).for_each(|s| to(&mut node.in_place, s)),
                    "not" | "if" | "then" | "else" => to(&mut node.in_place, v),
                    "dependentSchemas" => members(v).for_each(|s| to(&mut node.in_place, s)),
                    "$ref" | "$dynamicRef" => {
                        for target in graph.resolve(v.as_str().unwrap_or_default(), resource)? {
                            to(&mut node.in_place, target);
                        }
                    }
                    "properties" => members(v).for_each(|s| to(&mut node.member_one, s)),
                    "additionalProperties" => to(&mut node.member_one, v),
                    "patternProperties" => members(v).for_each(|s| to(&mut node.member_all, s)),
                    "unevaluatedProperties" | "propertyNames" => to(&mut node.member_all, v),
                    "prefixItems" => each(v).for_each(|s| to(&mut node.item_one, s)),
                    "items" => to(&mut node.item_one, v),
                    "contains" | "unevaluatedItems" => to(&mut node.item_all, v),
                    _ => {}
                }
            }
            node.unevaluated = object.contains_key("unevaluatedProperties") || object.contains_key("unevaluatedItems");
            graph.nodes.push(node);
        }
        Ok(graph)
    }

    /// The subschemas `reference` may name, from within `resource`: a JSON
    /// Pointer, an anchor (`$anchor` or `$dynamicAnchor`, anywhere: a
    /// `$dynamicRef` may land on any of them), and a resource by its `$id`.
    fn resolve(&self, reference: &str, resource: &'s Value) -> Result<Vec<&'s Value>, Costly> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let resources = if base.is_empty() { vec![resource] } else { named(self.root, base) };
        let fragment = percent_decoded(fragment);
        let mut found = Vec::new();
        for r in resources {
            if fragment.is_empty() {
                found.push(r);
            } else if fragment.starts_with('/') {
                found.extend(r.pointer(&fragment));
            } else {
                anchored(r, &fragment, &mut found);
            }
        }
        if found.is_empty() {
            return Err(Costly::Unfollowable(format!(
                "schema's $ref {reference:?} cannot be followed to bound the schema's cost: refer to a definition \
                 by a JSON Pointer (\"#/$defs/name\"), an $anchor, or an $id of this schema"
            )));
        }
        Ok(found)
    }

    /// The nodes in an order where each comes after everything it applies in
    /// place; a loop of in-place references is refused.
    fn in_place_order(&self) -> Result<Vec<usize>, Costly> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let mut mark = vec![Mark::New; self.nodes.len()];
        let mut order = Vec::with_capacity(self.nodes.len());
        for start in 0..self.nodes.len() {
            if mark[start] != Mark::New {
                continue;
            }
            // (node, next child to visit)
            let mut stack = vec![(start, 0)];
            mark[start] = Mark::Open;
            while let Some((n, i)) = stack.last_mut() {
                let n = *n;
                match self.nodes[n].in_place.get(*i) {
                    Some(&c) => {
                        *i += 1;
                        match mark[c] {
                            Mark::New => {
                                mark[c] = Mark::Open;
                                stack.push((c, 0));
                            }
                            Mark::Open => {
                                return Err(Costly::TooCostly(
                                    "schema applies itself to the same value in a loop ($ref, allOf, \
                                            anyOf, oneOf, … without descending into the data): checking it \
                                            would never end"
                                        .into(),
                                ))
                            }
                            Mark::Done => {}
                        }
                    }
                    None => {
                        mark[n] = Mark::Done;
                        order.push(n);
                        stack.pop();
                    }
                }
            }
        }
        Ok(order)
    }
}

fn each(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

fn members(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_object().into_iter().flat_map(|m| m.values())
}

/// Every object in `v` (at any depth) whose `$id` is `base`, or ends with it
/// as a relative reference resolved against a parent would.
fn named<'s>(v: &'s Value, base: &str) -> Vec<&'s Value> {
    let mut found = Vec::new();
    walk(v, &mut |o| {
        if let Some(Value::String(id)) = o.get("$id") {
            let id = id.trim_end_matches('#');
            let matches = id == base
                || id.strip_suffix(base).is_some_and(|head| head.ends_with('/'))
                || base.strip_suffix(id).is_some_and(|head| head.ends_with('/'));
            if matches {
                found.push(o);
            }
        }
    });
    found
}

fn anchored<'s>(v: &'s Value, name: &str, found: &mut Vec<&'s Value>) {
    walk(v, &mut |o| {
        if ["$anchor", "$dynamicAnchor"].iter().any(|k| o.get(*k).and_then(Value::as_str) == Some(name)) {
            found.push(o);
        }
    });
}

fn walk<'s>(v: &'s Value, f: &mut impl FnMut(&'s Value)) {
    match v {
        Value::Object(m) => {
            f(v);
            m.values().for_each(|c| walk(c, f));
        }
        Value::Array(a) => a.iter().for_each(|c| walk(c, f)),
        _ => {}
    }
}

/// A URI fragment's `%XX` escapes decoded (a JSON Pointer may carry them).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Definitions `d0`..`d{levels}`, each applying the one before through
    /// `combinator` twice.
    fn doubling(levels: usize, combinator: &str) -> Value {
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({"type": "integer"}));
        for i in 1..=levels {
            let prev = format!("#/$defs/d{}", i - 1);
            defs.insert(format!("d{i}"), json!({ combinator: [{"$ref": prev}, {"$ref": prev}] }));
        }
        json!({"$defs": defs, "$ref": format!("#/$defs/d{levels}")})
    }

    #[test]
    fn a_definition_applied_twice_per_level_is_refused_past_the_bound() {
        for combinator in ["anyOf", "oneOf", "allOf"] {
            assert!(bound(&doubling(10, combinator)).is_ok(), "2^10 applications are fine");
            let refused = bound(&doubling(20, combinator)).unwrap_err();
            assert!(matches!(refused, Costly::TooCostly(_)), "{refused:?}");
            assert!(refused.message().contains("the data itself"), "{refused:?}");
        }
        // The same through members: each level's `a` and `b` both refer to the level below.
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({}));
        for i in 1..=20 {
            let prev = json!({"$ref": format!("#/$defs/d{}", i - 1)});
            defs.insert(format!("d{i}"), json!({"items": prev, "contains": prev}));
        }
        assert!(bound(&json!({"$defs": defs, "$ref": "#/$defs/d20"})).unwrap_err().message().contains("levels down"));
    }

    #[test]
    fn a_recursive_schema_is_bounded_by_what_it_applies_to_one_member() {
        // Linear: every member gets the whole schema once.
        let json_value = json!({"anyOf": [
            {"type": ["null", "boolean", "number", "string"]},
            {"type": "array", "items": {"$ref": "#"}},
            {"type": "object", "additionalProperties": {"$ref": "#"}}
        ]});
        assert_eq!(bound(&json_value), Ok(()));
        let tree = json!({"$id": "https://example.com/tree.json", "type": "object", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "tree.json"}},
            "parent": {"$ref": "#"}
        }});
        assert_eq!(bound(&tree), Ok(()));
        // Exponential: every item gets the schema twice, through `items` and `contains`.
        let doubling = json!({"type": "array", "items": {"$ref": "#"}, "contains": {"$ref": "#"}});
        assert!(bound(&doubling).unwrap_err().message().contains("levels down"));
    }

    #[test]
    fn a_schema_that_applies_itself_in_place_is_refused() {
        let looping = json!({"$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/b"}]},
                                        "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"});
        assert!(bound(&looping).unwrap_err().message().contains("loop"));
        assert!(bound(&json!({"$ref": "#"})).unwrap_err().message().contains("loop"));
    }

    #[test]
    fn realistic_schemas_pass() {
        let many_patterns: serde_json::Map<String, Value> =
            (0..3000).map(|i| (format!("^k{i}_"), json!({"type": "integer"}))).collect();
        assert_eq!(bound(&json!({"type": "object", "patternProperties": many_patterns})), Ok(()));
        let anchors = json!({"$defs": {"money": {"$anchor": "money", "type": "object", "properties": {
            "amount": {"type": "integer"}, "currency": {"type": "string"}}}},
            "properties": {"total": {"$ref": "#money"}, "tax": {"$ref": "#money"}, "items": {"type": "array",
            "items": {"properties": {"price": {"$ref": "#/$defs/money"}}}}}});
        assert_eq!(bound(&anchors), Ok(()));
        assert_eq!(bound(&json!({"$defs": {"a b": {}}, "$ref": "#/$defs/a%20b"})), Ok(()));
    }
}
