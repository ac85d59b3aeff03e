//! docs/api.md's example answers checked against the document's schemas: a
//! ```` ```json ```` block right after a line `<!-- answer: Schema -->` must
//! be valid against `#/components/schemas/Schema` (each line of the block one
//! answer, or the whole block one). An answer that drifts from the code (a
//! field renamed, a required one missing, a value outside its closed set)
//! fails here instead of misleading a reader. An id shortened for reading
//! (`evt_01M8…`) stands for a whole one: it is padded to its full length first.

#![cfg(test)]

use serde_json::Value;

/// The annotated answers of docs/api.md: (line, schema name, answer).
fn annotated_answers(text: &str) -> Vec<(usize, String, Value)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line.trim().strip_prefix("<!-- answer: ").and_then(|r| r.strip_suffix(" -->")) else {
            continue;
        };
        assert_eq!(lines.get(i + 1).map(|l| l.trim()), Some("```json"), "line {}: a ```json block follows", i + 1);
        let body: Vec<&str> = lines[i + 2..].iter().take_while(|l| l.trim() != "```").copied().collect();
        let whole = body.join("\n");
        let answers: Vec<Value> = match serde_json::from_str(&whole) {
            Ok(v) => vec![v],
            Err(_) => body
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: not JSON ({e}): {l}", i + 3)))
                .collect(),
        };
        out.extend(answers.into_iter().map(|a| (i + 1, name.to_string(), a)));
    }
    out
}

/// `value` with each shortened id (`ep_01M8…`) made whole (`ep_01M8` and `0`s to 26 characters).
fn ids_made_whole(value: Value) -> Value {
    match value {
        Value::String(text) => {
            let whole = text.strip_suffix('…').and_then(|short| {
                let (kind, body) = short.split_once('_')?;
                let plain = kind.bytes().all(|b| b.is_ascii_lowercase()) && body.len() < 26;
                plain.then(|| format!("{kind}_{body}{}", "0".repeat(26 - body.len())))
            });
            Value::String(whole.unwrap_or(text))
        }
        Value::Array(list) => Value::Array(list.into_iter().map(ids_made_whole).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, ids_made_whole(v))).collect()),
        other => other,
    }
}

#[test]
fn every_annotated_answer_of_api_md_is_valid_against_its_schema() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/api.md")).unwrap();
    let answers = annotated_answers(&text);
    assert!(answers.len() >= 8, "only {} annotated answers in docs/api.md", answers.len());
    let doc = super::document();
    for (line, name, answer) in answers {
        assert!(doc["components"]["schemas"].get(&name).is_some(), "api.md line {line}: no schema {name}");
        let mut root = doc.clone();
        root["$ref"] = format!("#/components/schemas/{name}").into();
        let validator = jsonschema::validator_for(&root).unwrap();
        let answer = ids_made_whole(answer);
        let errors: Vec<String> = validator.iter_errors(&answer).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "api.md line {line}: the answer fails {name}: {errors:?}\n{answer}");
    }
}
