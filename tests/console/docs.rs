//! The server-side snippets of docs/console.md that mint a portal link (Node
//! and Python), run as written against a real Fenix; each link they print
//! opens a portal session. No browser needed.

use std::process::Command;

use serde_json::json;

use super::common::app_with_endpoint;
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

/// The first fenced block of `lang` in docs/console.md.
fn snippet(lang: &str) -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/console.md")).expect("docs");
    let start = doc.find(&format!("```{lang}\n")).unwrap_or_else(|| panic!("no {lang} block")) + lang.len() + 4;
    let len = doc[start..].find("```").expect("closed block");
    doc[start..start + len].to_string()
}

/// Runs the snippet of `lang` with `program`; answers what it printed.
fn run(fenix: &Fenix, dir: &std::path::Path, lang: &str, program: &str, file: &str) -> String {
    let path = dir.join(file);
    std::fs::write(&path, snippet(lang)).expect("write snippet");
    let out = Command::new(program)
        .arg(&path)
        .arg("acme")
        .env("FENIX_URL", &fenix.base)
        .env("FENIX_ADMIN_TOKEN", &fenix.token)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(out.status.success(), "{file} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8").trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_node_and_python_snippets_mint_portal_links_that_open_a_session() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let (app, _) = app_with_endpoint(&fenix, "acme", "Acme Travel", json!({"url": receiver.url})).await;

    let node = run(&fenix, db.dir.path(), "js", "node", "portal-link.mjs");
    let python = run(&fenix, db.dir.path(), "python", "python3", "portal_link.py");
    let client = reqwest::Client::new();
    for url in [&node, &python] {
        let (page, secret) = url.split_once('#').unwrap_or_else(|| panic!("a link with a fragment: {url}"));
        assert_eq!(page, format!("{}/console/portal", fenix.base), "{url}");
        let resp = client
            .post(format!("{}/console/api/portal/exchange", fenix.base))
            .json(&json!({ "link": secret }))
            .send()
            .await
            .expect("exchange");
        assert_eq!(resp.status(), 204, "the printed link opens a session");
        assert!(resp.headers().get("set-cookie").is_some_and(|c| c.to_str().unwrap().starts_with("fenix_session=")));
    }
    let (_, links) = fenix.call("GET", &format!("/v1/apps/{app}/portal-sessions"), None).await;
    let links = links["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(links.len(), 2, "{links:?}");
    assert!(links.iter().all(|l| l["access"] == "manage" && l["used_at"].is_string()), "{links:?}");
}
