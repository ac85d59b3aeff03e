//! Small readers and runners every suite wanted and had each written again:
//! the parts of an API answer a test asserts on, a free loopback port, and
//! the `fenix` command line run against a test's database.

use std::{
    process::{Command, Output},
    time::Duration,
};

use serde_json::Value;

use super::{eventually, fenix::base_env, Fenix, TestDb};

/// The `error.code` of an error answer. Panics when `body` is not an error
/// body, so a success answer can never pass for an error in an assertion.
pub fn error_code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_else(|| panic!("not an error body: {body}"))
}

/// The `error.code` of an answer, or "" when it has none: for checks that see
/// success and error answers alike (a poll, a table of expected answers whose
/// failure message should name the row rather than panic inside the reader).
pub fn error_code_or_empty(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

/// The `error.message` of an answer, or "" when it has none.
pub fn error_message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

/// The `id` of an API answer (an event, an endpoint, a delivery, …); panics,
/// showing the answer, when it has none.
pub fn id_of(v: &Value) -> String {
    v["id"].as_str().unwrap_or_else(|| panic!("no id in {v}")).to_string()
}

/// A loopback port that was free a moment ago, for a server that must be told
/// its port rather than bind port 0 (PostgreSQL, a receiver in another
/// language, the README's quick start).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port").local_addr().expect("addr").port()
}

/// Runs `fenix <args>` to its exit against the test's database, with the same
/// settings `Fenix::start` gives the server and nothing else from the
/// environment but `PATH`; answers its output whatever its exit status.
pub fn fenix_cli(db: &TestDb, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fenix"));
    cmd.args(args).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in base_env(db) {
        cmd.env(k, v);
    }
    cmd.output().expect("run fenix")
}

/// Runs `fenix <args>` as [`fenix_cli`] does, asserts that it succeeded and
/// answers its standard output.
pub fn fenix_cli_stdout(db: &TestDb, args: &[&str]) -> String {
    let out = fenix_cli(db, args);
    assert!(out.status.success(), "fenix {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The one delivery of `event_id` (an event sent to a single endpoint);
/// panics, listing them, when the event has not exactly one.
pub async fn delivery_of(fenix: &Fenix, app: &str, event_id: &str) -> Value {
    let found = fenix.deliveries(app, &format!("event_id={event_id}")).await;
    assert_eq!(found.len(), 1, "one delivery of {event_id}: {found:?}");
    found.into_iter().next().unwrap()
}

/// How many events the app has stored, read as one page of up to 250: enough
/// for the suites that count what a request stored or refused to store.
pub async fn event_count(fenix: &Fenix, app: &str) -> usize {
    let (status, page) = fenix.call("GET", &format!("/v1/apps/{app}/events?limit=250"), None).await;
    assert_eq!(status, 200, "{page}");
    page["data"].as_array().unwrap().len()
}

/// Reads an endpoint (its state, verification, url, …); asserts the read succeeded.
pub async fn endpoint(fenix: &Fenix, app: &str, ep: &str) -> Value {
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}"), None).await;
    assert_eq!(status, 200, "read endpoint {ep}: {body}");
    body
}

/// Waits up to `within` until the endpoint is in `state`; returns it.
pub async fn wait_for_state(fenix: &Fenix, app: &str, ep: &str, state: &str, within: Duration) -> Value {
    eventually(&format!("endpoint {ep} is {state}"), within, || async {
        endpoint(fenix, app, ep).await["state"] == state
    })
    .await;
    endpoint(fenix, app, ep).await
}

/// POSTs `body` to `path` as the admin; answers the status, the `Retry-After`
/// seconds (when given) and the body, for the suites that check rate limits.
pub async fn post_with_retry_after(fenix: &Fenix, path: &str, body: Value) -> (u16, Option<u64>, Value) {
    let resp = fenix.request("POST", path).json(&body).send().await.expect("API request");
    let status = resp.status().as_u16();
    let retry_after = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().parse().expect("seconds"));
    (status, retry_after, resp.json().await.unwrap_or_default())
}
