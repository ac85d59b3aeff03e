//! Event data read for a schema check, refusing what cannot be checked
//! faithfully instead of letting it through unchecked.
//!
//! `data` arrives as raw JSON text and is delivered byte for byte. To check it
//! against a schema it is parsed once more into a `Value`, and that parse
//! decides what the schema sees. Some valid JSON has no faithful value: a
//! number beyond `f64` (`1e400`), a lone surrogate (`"\ud800"`), nesting the
//! parser will not follow, or a key given twice (`{"amount":"x","amount":5}`:
//! the value keeps the last one, while a receiver may read the first). Any of
//! these is [`Unreadable`], never a pass: the event would otherwise reach its
//! receivers with a value the schema never saw.

use std::cell::RefCell;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Deepest nesting of arrays and objects checked, `data` itself being level 1.
/// Deeper data is refused: no event needs it, and both the parser and the
/// validator recurse once per level.
pub const MAX_DEPTH: usize = 64;

/// Why `data` cannot be checked against a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// An object holds the same key more than once.
    DuplicateKey,
    /// Arrays and objects nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A number too large for a 64-bit float (`1e400`).
    NumberOutOfRange,
    /// A `\u` escape that is no Unicode character (a lone surrogate).
    InvalidUnicode,
    /// Anything else the parser refused (not seen in practice: the request
    /// body was parsed as JSON already).
    Other,
}

impl Unreadable {
    /// What is wrong, for the message (never quoting the payload).
    pub fn what(self) -> String {
        match self {
            Unreadable::DuplicateKey => "an object holds the same key more than once".into(),
            Unreadable::TooDeep => format!("arrays and objects are nested more than {MAX_DEPTH} levels deep"),
            Unreadable::NumberOutOfRange => "a number is too large to check (beyond a 64-bit float)".into(),
            Unreadable::InvalidUnicode => "a \\u escape is not a Unicode character (a lone surrogate)".into(),
            Unreadable::Other => "it cannot be read as JSON values".into(),
        }
    }

    /// The parser's own refusals, by their (stable, pinned by tests) text.
    fn of_parser(e: &serde_json::Error) -> Unreadable {
        let text = e.to_string();
        if text.starts_with("number out of range") {
            Unreadable::NumberOutOfRange
        } else if text.starts_with("lone leading surrogate")
            || text.starts_with("unexpected end of hex escape")
            || text.starts_with("invalid unicode code point")
        {
            Unreadable::InvalidUnicode
        } else if text.starts_with("recursion limit exceeded") {
            Unreadable::TooDeep
        } else {
            Unreadable::Other
        }
    }
}

/// Where and why `data` cannot be checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unchecked {
    pub reason: Unreadable,
    /// JSON Pointer below `data` to the place (`/amount` for a key given
    /// twice; the object or array for too deep; the value otherwise).
    pub path: String,
}

/// `text` (valid JSON) as the value a schema checks, or why it has none.
pub fn read(text: &str) -> Result<Value, Unchecked> {
    let trace = RefCell::new(Trace::default());
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Node { depth: 0, trace: &trace }.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    read.map_err(|e| {
        let trace = trace.into_inner();
        let path: String =
            trace.path.iter().rev().map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1"))).collect();
        Unchecked { reason: trace.reason.unwrap_or_else(|| Unreadable::of_parser(&e)), path }
    })
}

/// Filled while an error unwinds: our own reason (the parser's errors are
/// classified at the top) and the path, innermost segment first.
#[derive(Default)]
struct Trace {
    reason: Option<Unreadable>,
    path: Vec<String>,
}

/// One value at `depth` levels of nesting.
#[derive(Clone, Copy)]
struct Node<'t> {
    depth: usize,
    trace: &'t RefCell<Trace>,
}

impl Node<'_> {
    fn refuse<E: serde::de::Error>(&self, reason: Unreadable) -> E {
        self.trace.borrow_mut().reason = Some(reason);
        E::custom(reason.what())
    }

    fn unwinding_at(&self, segment: String) {
        self.trace.borrow_mut().path.push(segment);
    }

    fn inner(self) -> Result<Self, Unreadable> {
        if self.depth >= MAX_DEPTH {
            return Err(Unreadable::TooDeep);
        }
        Ok(Node { depth: self.depth + 1, trace: self.trace })
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v).map(Value::Number).ok_or_else(|| self.refuse(Unreadable::NumberOutOfRange))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.inner().map_err(|r| self.refuse(r))?;
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        loop {
            match seq.next_element_seed(inner) {
                Ok(Some(v)) => out.push(v),
                Ok(None) => return Ok(Value::Array(out)),
                Err(e) => {
                    self.unwinding_at(out.len().to_string());
                    return Err(e);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.inner().map_err(|r| self.refuse(r))?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                self.unwinding_at(key);
                return Err(self.refuse(Unreadable::DuplicateKey));
            }
            match map.next_value_seed(inner) {
                Ok(v) => {
                    out.insert(key, v);
                }
                Err(e) => {
                    self.unwinding_at(key);
                    return Err(e);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    fn refused(text: &str) -> (Unreadable, String) {
        let e = read(text).expect_err(text);
        (e.reason, e.path)
    }

    #[test]
    fn faithful_data_reads_as_the_same_value() {
        let text = r#"{"a":[1,-2,3.5,"x\u00e9",null,true,{"b":{}}],"c/d~":"\ud83d\ude00"}"#;
        assert_eq!(read(text).unwrap(), serde_json::from_str::<Value>(text).unwrap());
        let deepest = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(read(&deepest).is_ok(), "{MAX_DEPTH} levels are fine");
    }

    #[test]
    fn a_key_given_twice_anywhere_is_refused_naming_it() {
        assert_eq!(refused(r#"{"amount":"x","amount":5}"#), (Unreadable::DuplicateKey, "/amount".into()));
        assert_eq!(refused(r#"{"a":[0,{"k/~":1,"k/~":1}]}"#), (Unreadable::DuplicateKey, "/a/1/k~1~0".into()));
        // The same key in different objects is no duplicate.
        assert!(read(r#"{"a":{"k":1},"b":{"k":1},"k":[{"k":1},{"k":2}]}"#).is_ok());
    }

    #[test]
    fn values_without_a_faithful_reading_are_refused_naming_why_and_where() {
        assert_eq!(refused(r#"{"n":1e400}"#), (Unreadable::NumberOutOfRange, "/n".into()));
        assert_eq!(refused(r#"{"n":[-1e309]}"#), (Unreadable::NumberOutOfRange, "/n/0".into()));
        assert_eq!(refused(r#"{"s":"\ud800"}"#), (Unreadable::InvalidUnicode, "/s".into()));
        assert_eq!(refused(r#"{"s":"\udc00x"}"#).0, Unreadable::InvalidUnicode);
        assert_eq!(refused(r#"{"\ud800":1}"#).0, Unreadable::InvalidUnicode);
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        let (code, path) = refused(&deep);
        assert_eq!(code, Unreadable::TooDeep);
        assert!(path.starts_with("/a/0/0/"), "{path}");
        let just_over = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(refused(&just_over).0, Unreadable::TooDeep);
    }
}
