use serde_json::json;

use super::*;

fn subject(data: serde_json::Value) -> Subject {
    Subject::new("invoice.paid", Some(data), &["billing".into(), "eu".into()], &["vip".into()])
}

fn eval(filter: &str, data: serde_json::Value) -> Result<bool, EvalError> {
    Filter::parse(filter).unwrap_or_else(|e| panic!("{filter}: {e}")).matches(&subject(data))
}

fn refused(filter: &str) -> InvalidFilter {
    Filter::parse(filter).expect_err(filter)
}

#[test]
fn a_filter_reads_the_events_type_data_channels_and_tags() {
    let data = json!({"amount": 150, "currency": "EUR", "items": [{"sku": "a"}, {"sku": "b"}], "big": 18446744073709551615u64});
    assert_eq!(eval(r#"data.amount > 100 && data.currency == "EUR""#, data.clone()), Ok(true));
    assert_eq!(eval(r#"data.amount > 100.5 && data.amount < 200u"#, data.clone()), Ok(true));
    assert_eq!(eval(r#""billing" in channels && "vip" in tags"#, data.clone()), Ok(true));
    assert_eq!(eval(r#""sales" in channels"#, data.clone()), Ok(false));
    assert_eq!(eval(r#"type == "invoice.paid" && type.startsWith("invoice.")"#, data.clone()), Ok(true));
    assert_eq!(eval(r#"data.items.exists(i, i.sku == "b") && size(data.items) == 2"#, data.clone()), Ok(true));
    assert_eq!(eval(r#"data.items.all(i, has(i.sku))"#, data.clone()), Ok(true));
    assert_eq!(eval(r#"data.big > 0"#, data.clone()), Ok(true));
    assert_eq!(eval("has(data.missing) && data.missing > 1", data.clone()), Ok(false));
    assert_eq!(eval("channels.exists(c, c.endsWith(\"u\"))\n// a comment (((\n && true", data), Ok(true));
}

#[test]
fn an_evaluation_that_fails_is_an_error_quoting_no_value_of_the_event() {
    let e = eval("data.amount > 100", json!({"currency": "secret-value"})).unwrap_err();
    assert!(e.0.contains("no such key: amount"), "{e}");
    let e = eval(r#"data.currency > 100"#, json!({"currency": "secret-value"})).unwrap_err();
    assert!(!e.0.contains("secret-value"), "{e}");
    let e = eval("data.a", json!({"a": "secret-value"})).unwrap_err();
    assert!(e.0.contains("not a bool") && !e.0.contains("secret"), "{e}");
    assert!(Filter::parse("data.a > 1").unwrap().matches(&Subject::new("t", None, &[], &[])).is_err());
}

#[test]
fn a_syntax_error_names_its_line_and_column() {
    let e = refused("data.amount >");
    assert_eq!((e.line, e.column), (1, 14), "{e}");
    let e = refused("data.a == 1 &&\n  data.b === 2");
    assert_eq!(e.line, 2, "{e}");
    assert!(e.to_string().starts_with("line 2, column "), "{e}");
}

#[test]
fn deep_nesting_is_refused_before_the_parser_sees_it() {
    for deep in [format!("{}true{}", "(".repeat(990), ")".repeat(990)), format!("{}1]", "[".repeat(1990))] {
        let e = refused(&deep);
        assert_eq!((e.line, e.column), (1, 13), "{e}");
        assert!(e.message.contains("nests deeper"), "{e}");
    }
    let ternaries = format!("{}true", "true ? true : ".repeat(20));
    assert!(refused(&ternaries).message.contains("nests deeper"));
    // Brackets in strings and comments count not.
    assert_eq!(eval(&format!("data.s == \"{}\"", "(".repeat(50)), json!({"s": "(".repeat(50)})), Ok(true));
    assert_eq!(
        eval(&format!("data.s == r'{}\\'", "[".repeat(50)), json!({"s": format!("{}\\", "[".repeat(50))})),
        Ok(true)
    );
    assert!(eval(&format!("{}true{}", "(".repeat(12), ")".repeat(12)), json!({})).unwrap());
}

#[test]
fn a_long_chain_is_refused_for_its_depth_or_size_not_with_a_stack_overflow() {
    assert!(refused(&format!("data{} == 1", ".a".repeat(900))).message.contains("deeper than 20"));
    assert!(refused(&format!("1{} == 1", " + 1".repeat(300))).message.contains("deeper"));
    let wide = (0..60).map(|i| format!("data.f{i} == {i}")).collect::<Vec<_>>().join(" || ");
    assert!(refused(&wide).message.contains("more than 200 parts"), "{}", refused(&wide));
    // The parser folds a run of negations: no depth.
    assert_eq!(eval(&format!("{}(data.a == 1)", "!".repeat(1500)), json!({"a": 1})), Ok(true));
    assert!(refused(&format!("data.s == '{}'", "x".repeat(2000))).message.contains("longer than 2000 bytes"));
}

#[test]
fn comprehensions_are_few_never_nested_and_read_no_data_per_element() {
    let e = refused("data.a.exists(x, data.b.exists(y, x == y))");
    assert!(e.message.contains("inside another"), "{e}");
    assert_eq!((e.line, e.column), (1, 31), "{e}");
    assert!(refused("data.a.map(x, x).exists(y, y == 1)").message.contains("inside another"));
    assert!(refused("data.a.exists(x, x in data.b)").message.contains("not data"));
    let four =
        "data.a.exists(x, x == 1) || data.b.all(x, x == 1) || tags.exists(t, t == 'a') || channels.all(c, c == 'b')";
    assert!(refused(four).message.contains("more than 3 comprehensions"));
    assert!(Filter::parse("channels.exists(data, data == 'eu')").is_ok(), "a loop variable may be named data");
}

#[test]
fn only_the_events_variables_and_the_safe_functions_are_known() {
    assert!(refused("amount > 1").message.contains("unknown variable `amount`"));
    let e = refused("data.a.matches('x+')");
    assert!(e.message.contains("`matches` is not a function"), "{e}");
    let e = refused("type(data) == 'map'");
    assert!(e.message.contains("not a function"), "{e}");
    assert!(
        refused("Foo{a: 1} == data").message.contains("messages")
            || refused("Foo{a: 1} == data").message.contains("variable")
    );
    assert!(refused("data.?a == 1").line == 1);
    assert!(refused("1 + 2").message.contains("must be a condition"));
    assert!(refused("'text'").message.contains("must be a condition"));
}

#[test]
fn a_comprehension_over_a_list_too_wide_for_the_budget_does_not_match() {
    let items: Vec<i64> = (0..20_000).collect();
    let e = eval("data.items.exists(i, i == 19999)", json!({"items": items})).unwrap_err();
    assert!(e.0.contains("over the evaluation budget"), "{e}");
    // Channels and tags are at most 10: no budget question, whatever the data.
    assert_eq!(eval("channels.exists(c, c == 'eu') && data.items[0] == 0", json!({"items": items})), Ok(true));
    let fine: Vec<i64> = (0..1000).collect();
    assert_eq!(eval("data.items.exists(i, i == 999)", json!({"items": fine})), Ok(true));
}

#[test]
fn the_cache_answers_the_same_compiled_filter_for_the_same_text() {
    let a = cached("data.x == 'cache-test'").unwrap();
    let b = cached("data.x == 'cache-test'").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert!(cached("data.x ==").is_err());
    assert_eq!(parse_field("  ").unwrap(), None);
    assert_eq!(parse_field("true").unwrap().as_deref(), Some("true"));
}

/// The cost of a typical filter and of the costliest the bounds allow on the
/// largest event (256 KiB of data). Run by hand:
/// `cargo test -p fenix --lib filter::tests::cost -- --ignored --nocapture`.
#[test]
#[ignore]
fn cost() {
    let time = |name: &str, filter: &str, data: &serde_json::Value| {
        let f = Filter::parse(filter).unwrap();
        let start = std::time::Instant::now();
        let s = Subject::new("invoice.paid", Some(data.clone()), &["billing".into()], &[]);
        let built = start.elapsed();
        let n = 20;
        let start = std::time::Instant::now();
        let mut last = Ok(false);
        for _ in 0..n {
            last = f.matches(&s);
        }
        println!("{name}: subject {built:?}, evaluation {:?} ({last:?})", start.elapsed() / n);
    };
    let small = json!({"amount": 150, "currency": "EUR", "customer": {"country": "FR"}});
    time("typical, small event", r#"data.amount > 100 && data.currency == "EUR" && "billing" in channels"#, &small);
    // 256 KiB: a list as wide as the budget allows a comprehension, and big strings.
    let items: Vec<serde_json::Value> = (0..540).map(|i| json!({"sku": format!("sku-{i:06}"), "n": i})).collect();
    let pad = "x".repeat(200 * 1024);
    let large = json!({"items": items, "pad": pad, "amount": 1});
    let body = (0..5).map(|i| format!("i.sku == 'none-{i:06}'")).collect::<Vec<_>>().join(" || ");
    let worst = format!(
        "data.items.exists(i, {body}) || data.items.all(i, {body}) || data.items.exists_one(i, {body}) \
         || data.pad + data.pad == data.pad || data.pad.contains(data.pad + 'y') || data != data"
    );
    let f = Filter::parse(&worst).unwrap_or_else(|e| panic!("{e}"));
    println!("worst filter: {} bytes, shape {:?}", worst.len(), f.shape);
    time("worst allowed, 256 KiB event", &worst, &large);
}
