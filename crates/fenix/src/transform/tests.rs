use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use super::*;

fn transforms() -> Transforms {
    Transforms::start(2, Duration::from_millis(100), 16 * 1024 * 1024)
}

const ENVELOPE: &[u8] =
    br#"{"id":"evt_1","type":"booking.confirmed","created_at":"2026-11-29T21:04:19Z","data":{"n":7,"who":"ann"}}"#;

/// A run in a fresh context (as the test call runs).
async fn run(t: &Transforms, script: &str) -> Result<Result<Transformed, Cancelled>, Failure> {
    run_for(t, None, script).await
}

/// A run in `keeper`'s kept sandbox when given (as the worker runs an endpoint's).
async fn run_for(
    t: &Transforms,
    keeper: Option<&str>,
    script: &str,
) -> Result<Result<Transformed, Cancelled>, Failure> {
    let url = url::Url::parse("https://receiver.example/webhook").unwrap();
    let headers = BTreeMap::from([("X-Tenant".to_string(), "acme".to_string())]);
    let webhook = request::Webhook { url: &url, headers: &headers, payload: ENVELOPE };
    t.run(Arc::from(script), keeper.map(Arc::from), &webhook, Instant::now() + Duration::from_secs(5)).await
}

async fn kept_body(t: &Transforms, keeper: &str, script: &str) -> String {
    let out = run_for(t, Some(keeper), script).await.unwrap().unwrap();
    String::from_utf8(out.body).unwrap()
}

async fn body(t: &Transforms, script: &str) -> String {
    let out = run(t, script).await.unwrap().unwrap();
    String::from_utf8(out.body).unwrap()
}

#[tokio::test]
async fn the_identity_gives_the_envelope_and_the_endpoints_request() {
    let t = transforms();
    let out = run(&t, "function handler(webhook) { return webhook; }").await.unwrap().unwrap();
    assert_eq!(out.body, ENVELOPE);
    assert_eq!((out.method, out.target.as_str()), (Method::Post, "/webhook"));
    assert_eq!(out.headers, BTreeMap::from([("X-Tenant".to_string(), "acme".to_string())]));
}

#[tokio::test]
async fn a_reshaped_request_keeps_the_scripts_key_order() {
    let t = transforms();
    let script = r#"function handler(w) {
        w.method = "PUT";
        w.url = w.url + "/slack?team=" + encodeURIComponent(w.payload.data.who);
        w.headers["X-Kind"] = w.payload.type;
        w.payload = {text: "Booking " + w.payload.data.n, blocks: [1, 2]};
        return w;
    }"#;
    let out = run(&t, script).await.unwrap().unwrap();
    assert_eq!(String::from_utf8(out.body).unwrap(), r#"{"text":"Booking 7","blocks":[1,2]}"#);
    assert_eq!((out.method, out.target.as_str()), (Method::Put, "/webhook/slack?team=ann"));
    assert_eq!(out.headers.get("X-Kind").map(String::as_str), Some("booking.confirmed"));
}

#[tokio::test]
async fn there_is_no_clock_no_randomness_and_no_io() {
    let t = transforms();
    let script = r#"function handler(w) {
        w.payload = {
            date: typeof Date, random: typeof Math.random, micro: typeof queueMicrotask,
            promise: typeof Promise, perf: typeof performance, require: typeof require,
            fetch: typeof fetch, std: typeof std, os: typeof os, console: typeof console,
            print: typeof print, atomics: typeof Atomics, weak: typeof WeakRef, sab: typeof SharedArrayBuffer,
        };
        return w;
    }"#;
    let shown = body(&t, script).await;
    let v: serde_json::Value = serde_json::from_str(&shown).unwrap();
    for (name, kind) in v.as_object().unwrap() {
        assert_eq!(kind, "undefined", "{name} is reachable: {shown}");
    }
    let failed = run(&t, "function handler(w) { w.payload = {t: new Date().getTime()}; return w; }").await;
    assert!(failed.unwrap_err().reason.contains("ReferenceError"));
    let failed = run(&t, "function handler(w) { w.payload = Math.random(); return w; }").await;
    assert!(failed.unwrap_err().reason.contains("TypeError"));
}

#[tokio::test]
async fn the_same_script_on_the_same_input_gives_the_same_bytes() {
    let t = transforms();
    let script = r#"var calls = 0;
        function handler(w) {
            calls++;
            var m = new Map([["b", 2], ["a", 1]]);
            w.payload = {calls: calls, keys: Array.from(m.keys()), x: (0.1 + 0.2).toString(), h: JSON.stringify(w)};
            return w;
        }"#;
    let first = body(&t, script).await;
    for _ in 0..20 {
        assert_eq!(body(&t, script).await, first, "each run starts in a fresh context");
    }
    assert!(first.contains(r#""calls":1"#), "{first}");
}

#[tokio::test]
async fn a_kept_sandbox_runs_the_top_level_once_and_is_its_keepers_alone() {
    // One thread: every run meets the same kept sandboxes.
    let t = Transforms::start(1, Duration::from_millis(100), 16 * 1024 * 1024);
    let script = r#"var calls = 0; var seen = [];
        function handler(w) { calls++; seen.push(w.headers["X-Tenant"]); w.payload = {calls: calls, seen: seen.length}; return w; }"#;
    for n in 1..=3 {
        assert_eq!(kept_body(&t, "ep_a", script).await, format!(r#"{{"calls":{n},"seen":{n}}}"#));
    }
    // Another keeper with the same script sees none of ep_a's globals.
    assert_eq!(kept_body(&t, "ep_b", script).await, r#"{"calls":1,"seen":1}"#);
    // A changed script starts anew.
    let changed = format!("{script}\n// v2");
    assert_eq!(kept_body(&t, "ep_a", &changed).await, r#"{"calls":1,"seen":1}"#);
    // A run that hits a limit gives its sandbox up: the next starts anew.
    let looping = r#"var calls = 0; function handler(w) { calls++; if (calls == 2) { for (;;) {} } w.payload = calls; return w; }"#;
    assert_eq!(kept_body(&t, "ep_c", looping).await, "1");
    let e = run_for(&t, Some("ep_c"), looping).await.unwrap_err();
    assert!(e.reason.contains("time limit"), "{e:?}");
    assert_eq!(kept_body(&t, "ep_c", looping).await, "1");
    // Globals that grow run by run meet the keeper's own memory limit, then start anew.
    let hoarding = r#"var kept = []; function handler(w) { kept.push("x".repeat(1024 * 1024) + kept.length); w.payload = kept.length; return w; }"#;
    let mut failed = false;
    for _ in 0..40 {
        match run_for(&t, Some("ep_d"), hoarding).await {
            Ok(_) => {}
            Err(e) => {
                assert!(e.reason.contains("memory limit"), "{e:?}");
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "16 MiB cannot hold 40 MiB of globals");
    assert_eq!(kept_body(&t, "ep_d", hoarding).await, "1");
    // A thread's kept sandboxes hold no more than one run's memory limit
    // together: three holding 6 MiB each cannot all stay.
    let big = r#"var big = "x".repeat(6 * 1024 * 1024); var calls = 0; function handler(w) { calls++; w.payload = calls; return w; }"#;
    for keeper in ["ep_x", "ep_y", "ep_z"] {
        assert_eq!(kept_body(&t, keeper, big).await, "1");
    }
    assert_eq!(kept_body(&t, "ep_x", big).await, "1", "the least recently used was given up");
    assert_eq!(kept_body(&t, "ep_z", big).await, "2", "the most recently used was kept");
    // A top level that fails keeps nothing and says so each time.
    for _ in 0..2 {
        let e = run_for(&t, Some("ep_e"), "throw new TypeError('no'); function handler(w) { return w; }").await;
        assert!(e.unwrap_err().reason.contains("TypeError"));
    }
}

#[tokio::test]
async fn more_runs_than_the_queue_holds_wait_for_room_instead_of_failing() {
    let t = Transforms::start(1, Duration::from_millis(100), 16 * 1024 * 1024);
    let script = "function handler(w) { w.payload = w.payload.data.n; return w; }";
    let runs = (0..500).map(|n| {
        let t = t.clone();
        async move { run_for(&t, Some(&format!("ep_{}", n % 7)), script).await }
    });
    let results = futures::future::join_all(runs).await;
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(failed.is_empty(), "{} of 500 failed, first: {:?}", failed.len(), failed.first());
}

#[tokio::test]
async fn a_script_that_does_not_compile_names_its_line() {
    let t = transforms();
    let e = t.compile("function handler(w) {\n  return w\n  }}\n", Duration::from_secs(5)).await.unwrap_err();
    assert_eq!(e.kind, FailureKind::Compile);
    assert_eq!(e.line, Some(3), "{e:?}");
    assert!(e.reason.starts_with("SyntaxError at line 3"), "{e:?}");
    let e = t.compile("function other(w) { return w; }", Duration::from_secs(5)).await.unwrap_err();
    assert!(e.reason.contains("handler"), "{e:?}");
    t.compile("function handler(w) { return w; }", Duration::from_secs(5)).await.unwrap();
    let e = t.compile(&"x".repeat(MAX_SCRIPT_BYTES + 1), Duration::from_secs(5)).await.unwrap_err();
    assert!(e.reason.contains("at most 65536"), "{e:?}");
}

#[tokio::test]
async fn loops_memory_and_deep_recursion_fail_within_the_limits_and_the_thread_goes_on() {
    let t = transforms();
    let started = Instant::now();
    let e = run(&t, "function handler(w) { while (true) {} }").await.unwrap_err();
    assert!(e.reason.contains("time limit"), "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    let e = t.compile("for (;;) {}", Duration::from_secs(5)).await.unwrap_err();
    assert!(e.reason.contains("time limit"), "{e:?}");
    let e = run(&t, "function handler(w) { var a = []; for (;;) a.push(new Array(1000).fill(w)); }").await.unwrap_err();
    assert!(e.reason.contains("memory limit"), "{e:?}");
    let e =
        run(&t, "function f(n) { return f(n + 1) + 1; } function handler(w) { f(0); return w; }").await.unwrap_err();
    assert!(e.reason.contains("stack"), "{e:?}");
    let e = run(&t, "function handler(w) { w.payload = 'x'.repeat(10 * 1000 * 1000); return w; }").await.unwrap_err();
    assert!(e.reason.contains("memory limit") || e.reason.contains("at most"), "{e:?}");
    let e = run(&t, "function handler(w) { w.payload = 'x'.repeat(300 * 1000); return w; }").await.unwrap_err();
    assert!(e.reason.contains("at most 262144"), "{e:?}");
    assert_eq!(body(&t, "function handler(w) { return w; }").await.as_bytes(), ENVELOPE);
    // Out of memory even for its error, QuickJS throws `null`: that is the memory limit too.
    let e = run(&t, "function handler(w) { throw null; }").await.unwrap_err();
    assert!(e.reason.contains("memory limit"), "{e:?}");
    let e = run(&t, "function handler(w) { throw 42; }").await.unwrap_err();
    assert!(e.reason.contains("not an Error"), "{e:?}");
    // The same limits hold in a kept sandbox (the worker's runs).
    let e = run_for(&t, Some("ep_1"), "function handler(w) { while (true) {} }").await.unwrap_err();
    assert!(e.reason.contains("time limit"), "{e:?}");
    let e = run_for(&t, Some("ep_1"), "function handler(w) { var a = []; for (;;) a.push(new Array(1000).fill(w)); }")
        .await
        .unwrap_err();
    assert!(e.reason.contains("memory limit"), "{e:?}");
    assert_eq!(kept_body(&t, "ep_1", "function handler(w) { return w; }").await.as_bytes(), ENVELOPE);
}

#[tokio::test]
async fn a_thrown_error_is_named_by_its_class_and_line_never_its_message() {
    let t = transforms();
    let e = run(&t, "function handler(w) {\n  throw new TypeError(w.payload.data.who);\n}").await.unwrap_err();
    assert_eq!(e.reason, "the script threw TypeError at line 2");
    assert!(!e.reason.contains("ann"));
    assert_eq!(e.detail.as_deref(), Some("ann"));
    let e = run(&t, "function handler(w) { var x = new Error('a'); x.name = w.payload.data.who; throw x; }").await;
    assert!(!e.unwrap_err().reason.contains("ann"));
    let e = run(&t, "function handler(w) { throw w.payload.data.who; }").await.unwrap_err();
    assert!(!e.reason.contains("ann"), "{e:?}");
}

#[tokio::test]
async fn a_result_outside_the_rules_is_refused() {
    let t = transforms();
    let cases = [
        ("w.url = 'https://elsewhere.example/webhook';", "scheme, host and port"),
        ("w.url = 'http://receiver.example/webhook';", "scheme, host and port"),
        ("w.url = 'https://receiver.example:8443/webhook';", "scheme, host and port"),
        ("w.method = 'GET';", "method"),
        ("w.headers = {'X-Fenix-Signature': 'v1=0'};", "reserved_header"),
        ("w.headers = {'Transfer-Encoding': 'chunked'};", "hop_by_hop_header"),
        ("w.headers = {'X-A': 'a\\r\\nX-B: b'};", "invalid_header_value"),
        ("w.headers = {'X-A': 5};", "string value"),
        ("w.payload = undefined;", "not JSON"),
        ("w.cancel = 'yes';", "cancel"),
    ];
    for (change, reason) in cases {
        let script = format!("function handler(w) {{ {change} return w; }}");
        let e = run(&t, &script).await.unwrap_err();
        assert!(e.reason.contains(reason), "{change}: {e:?}");
    }
    let many: String = (0..21).map(|i| format!("w.headers['X-{i}'] = 'v';")).collect();
    let e = run(&t, &format!("function handler(w) {{ {many} return w; }}")).await.unwrap_err();
    assert!(e.reason.contains("at most 20"), "{e:?}");
    let e = run(&t, "function handler(w) { return 5; }").await.unwrap_err();
    assert!(e.reason.contains("object"), "{e:?}");
    assert_eq!(run(&t, "function handler(w) { w.cancel = true; return w; }").await.unwrap(), Err(Cancelled));
}

#[tokio::test]
async fn a_stored_request_reads_back_the_same() {
    let t = transforms();
    let out = run(&t, "function handler(w) { w.url += '?a=1'; return w; }").await.unwrap().unwrap();
    let back = Transformed::from_stored(&out.head_json(), out.body.clone()).unwrap();
    assert_eq!(back, out);
    let endpoint = url::Url::parse("https://receiver.example/webhook").unwrap();
    assert_eq!(back.url_on(&endpoint).as_str(), "https://receiver.example/webhook?a=1");
}

/// Not a test of speed (no figure is asserted): prints what a small
/// transformation costs per run, for docs and reports.
#[tokio::test]
#[ignore]
async fn measure_a_small_transformation() {
    let t = Transforms::start(1, Duration::from_millis(100), 16 * 1024 * 1024);
    let script = "function handler(w) { w.payload = {text: 'Booking ' + w.payload.data.n}; w.headers['X-Kind'] = w.payload.text; return w; }";
    for _ in 0..50 {
        run(&t, script).await.unwrap().unwrap();
    }
    let n = 2000;
    let started = Instant::now();
    for _ in 0..n {
        run(&t, script).await.unwrap().unwrap();
    }
    println!("a small transformation: {:.1} µs per run", started.elapsed().as_secs_f64() * 1e6 / n as f64);
    // The same run on the sandbox directly: a reused runtime against a new one per run.
    let limits = t.limits();
    let input =
        r#"{"method":"POST","url":"https://r.example/","headers":{},"cancel":false,"payload":{"data":{"n":1}}}"#;
    let reused = sandbox::Sandbox::new(limits).unwrap();
    let started = Instant::now();
    for _ in 0..n {
        assert!(reused.run(script, Some(input)).0.is_ok());
    }
    let per_reused = started.elapsed().as_secs_f64() * 1e6 / n as f64;
    let started = Instant::now();
    for _ in 0..n {
        assert!(sandbox::Sandbox::new(limits).unwrap().run(script, Some(input)).0.is_ok());
    }
    let per_new = started.elapsed().as_secs_f64() * 1e6 / n as f64;
    let mut kept = sandbox::Sandbox::new(limits).unwrap();
    let started = Instant::now();
    for _ in 0..n {
        assert!(kept.run_kept(script, input).0.is_ok());
    }
    let per_kept = started.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!(
        "on the thread: {per_kept:.1} µs in a kept context, {per_reused:.1} µs with a reused runtime, {per_new:.1} µs with a new one per run"
    );
}
