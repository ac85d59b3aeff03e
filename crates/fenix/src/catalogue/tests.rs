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
    let errors = t.check(&raw(json!({"amount": "s3cr3t-payload", "items": ["a", 7]})), "/data").unwrap_err().details();
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
        id: crate::ids::EventTypeId::new(),
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
