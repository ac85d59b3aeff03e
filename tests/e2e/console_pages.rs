//! The console's pages as files (issue 15, items 3 and 4): every file of
//! `crates/fenix/console/` is served by the binary, byte for byte, with a
//! Content-Security-Policy that allows no inline script or style, framing only
//! for the origins `FENIX_CONSOLE_FRAME_ANCESTORS` names, no MIME sniffing and
//! no Referer; and the files themselves hold nothing that policy would have to
//! allow (inline script or style, event-handler attributes, markup parsed from
//! strings, another host). The browser suite (`tests/console/`) drives the pages.

use std::{path::PathBuf, process::Command};

use crate::support::{Backend, Fenix, TestDb};

const CSP_WITHOUT_ANCESTORS: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors ";

/// The console's source folder; the binary embeds exactly these files.
fn console_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("console")
}

/// Every file of the console with its text, `index.html` included.
fn console_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(console_dir())
        .expect("crates/fenix/console")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("console file is UTF-8 text"))
        })
        .collect();
    files.sort();
    assert!(files.iter().any(|(n, _)| n == "index.html") && files.iter().any(|(n, _)| n == "app.js"), "{files:?}");
    files
}

fn header<'a>(resp: &'a reqwest::Response, name: &str) -> &'a str {
    resp.headers().get(name).map(|v| v.to_str().expect("ASCII header")).unwrap_or("")
}

/// The headers every console answer must carry, framing refused.
fn assert_locked_down(resp: &reqwest::Response, what: &str) {
    assert_eq!(header(resp, "content-security-policy"), format!("{CSP_WITHOUT_ANCESTORS}'none'"), "{what}");
    assert_eq!(header(resp, "x-frame-options"), "DENY", "{what}");
    assert_eq!(header(resp, "x-content-type-options"), "nosniff", "{what}");
    assert_eq!(header(resp, "referrer-policy"), "no-referrer", "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_console_file_is_served_as_it_is_in_the_source_with_the_security_headers() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let http = reqwest::Client::new();
    let files = console_files();
    let index = &files.iter().find(|(n, _)| n == "index.html").unwrap().1;
    for path in ["/console", "/console/", "/console/portal"] {
        let resp = http.get(format!("{}{path}", fenix.base)).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_locked_down(&resp, path);
        assert_eq!(header(&resp, "content-type"), "text/html; charset=utf-8", "{path}");
        assert_eq!(header(&resp, "cache-control"), "no-store", "{path}");
        assert_eq!(&resp.text().await.unwrap(), index, "{path} answers index.html");
    }
    for (name, text) in files.iter().filter(|(n, _)| n != "index.html") {
        let path = format!("/console/assets/{name}");
        let resp = http.get(format!("{}{path}", fenix.base)).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}: a file of crates/fenix/console/ the binary does not serve");
        assert_locked_down(&resp, &path);
        let expected_type = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("js") => "text/javascript; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            other => panic!("{name}: a console file of an unexpected kind ({other:?})"),
        };
        assert_eq!(header(&resp, "content-type"), expected_type, "{path}");
        assert_eq!(&resp.text().await.unwrap(), text, "{path} is the source file, byte for byte");
    }
    // Unknown names (and attempts to leave the folder) are a JSON 404, locked down too.
    for path in ["/console/assets/nope.js", "/console/assets/..%2F..%2FCargo.toml", "/console/assets/index.html"] {
        let resp = http.get(format!("{}{path}", fenix.base)).send().await.unwrap();
        assert_eq!(resp.status(), 404, "{path}");
        assert_locked_down(&resp, path);
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_found", "{path}: {body}");
    }
    // The pages are not part of the API's document.
    let (_, doc) = fenix.call_as(None, "GET", "/openapi.json", None).await;
    assert!(doc["paths"].as_object().unwrap().keys().all(|p| !p.starts_with("/console")), "{}", doc["paths"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framing_is_allowed_only_for_the_configured_origins() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(
        &db,
        &[("FENIX_CONSOLE_FRAME_ANCESTORS", "https://shop.example.com, http://localhost:3000 https://b.example:443")],
    )
    .await;
    let http = reqwest::Client::new();
    for path in ["/console/portal", "/console/assets/app.js", "/console/assets/nope.js"] {
        let resp = http.get(format!("{}{path}", fenix.base)).send().await.unwrap();
        assert_eq!(
            header(&resp, "content-security-policy"),
            format!("{CSP_WITHOUT_ANCESTORS}https://shop.example.com http://localhost:3000 https://b.example"),
            "{path}"
        );
        assert!(
            resp.headers().get("x-frame-options").is_none(),
            "{path}: X-Frame-Options DENY would forbid the iframe"
        );
        assert_eq!(header(&resp, "x-content-type-options"), "nosniff", "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_ancestor_that_is_not_an_origin_stops_the_start_naming_the_setting() {
    let db = TestDb::new(Backend::Sqlite).await;
    for bad in ["https://shop.example.com; script-src *", "shop.example.com", "https://shop.example.com/portal", "*"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fenix"));
        cmd.arg("serve").env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
        cmd.env("DATABASE_URL", &db.url)
            .env("FENIX_LISTEN", "127.0.0.1:0")
            .env("FENIX_ADMIN_TOKEN", "fxa_test_token_0123456789abcdef")
            .env("FENIX_MASTER_KEY", "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=");
        let out = cmd.env("FENIX_CONSOLE_FRAME_ANCESTORS", bad).output().expect("run fenix");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{bad:?} accepted");
        assert!(stderr.contains("FENIX_CONSOLE_FRAME_ANCESTORS"), "{bad:?}: {stderr}");
    }
}

/// Lines of `text` holding `needle` (case-insensitive), for the failure message.
fn lines_with(text: &str, needle: &str) -> Vec<String> {
    let needle = needle.to_ascii_lowercase();
    text.lines().filter(|l| l.to_ascii_lowercase().contains(&needle)).map(|l| l.trim().to_string()).collect()
}

#[test]
fn the_console_files_hold_no_inline_script_or_style_and_parse_no_markup() {
    let files = console_files();
    let mut found = Vec::new();
    for (name, text) in &files {
        let lower = text.to_ascii_lowercase();
        if name.ends_with(".html") {
            // Every <script> loads a file; no <style> element, no style or on… attribute, no javascript: URL.
            for tag in lower.split("<script").skip(1) {
                let open = &tag[..tag.find('>').unwrap_or(tag.len())];
                if !open.contains(" src=") {
                    found.push(format!("{name}: inline <script{open}>"));
                }
            }
            for needle in ["<style", " style=", "javascript:"] {
                found.extend(lines_with(text, needle).into_iter().map(|l| format!("{name}: {needle}: {l}")));
            }
            let attrs = lower.split(|c: char| c.is_whitespace()).filter(|w| {
                w.starts_with("on")
                    && w.split_once('=').is_some_and(|(a, _)| a.chars().all(|c| c.is_ascii_alphabetic()))
            });
            found.extend(attrs.map(|a| format!("{name}: event-handler attribute {a}")));
        }
        if name.ends_with(".js") {
            for needle in [
                "innerhtml",
                "outerhtml",
                "insertadjacenthtml",
                "document.write",
                "eval(",
                "new function",
                "createcontextualfragment",
                "domparser",
                "srcdoc",
                "javascript:",
                ".style.",
                "csstext",
                "setattribute('style'",
                "setattribute(\"style\"",
            ] {
                found.extend(lines_with(text, needle).into_iter().map(|l| format!("{name}: {needle}: {l}")));
            }
        }
        if name.ends_with(".css") {
            for needle in ["@import", "url("] {
                found.extend(lines_with(text, needle).into_iter().map(|l| format!("{name}: {needle}: {l}")));
            }
        }
    }
    assert!(found.is_empty(), "the CSP would block these, or they turn text into markup:\n{}", found.join("\n"));
}

#[test]
fn no_console_file_refers_to_another_host() {
    // The one absolute URL allowed is the SVG namespace name, which nothing fetches.
    const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";
    let mut found = Vec::new();
    for (name, text) in console_files() {
        let scrubbed = text.replace(SVG_NAMESPACE, "");
        for needle in ["http://", "https://", "src=\"//", "href=\"//", "'//", "\"//", "`//"] {
            found.extend(lines_with(&scrubbed, needle).into_iter().map(|l| format!("{name}: {needle}: {l}")));
        }
    }
    // index.html loads only the console's own files.
    let index = std::fs::read_to_string(console_dir().join("index.html")).unwrap();
    let after_src = index.split(" src=\"").skip(1);
    for part in after_src.chain(index.split(" href=\"").skip(1)) {
        let url = &part[..part.find('"').unwrap_or(part.len())];
        if !(url.starts_with("/console/assets/") || url.starts_with("data:")) {
            found.push(format!("index.html: loads {url}"));
        }
    }
    assert!(found.is_empty(), "the console must load nothing from another host:\n{}", found.join("\n"));
}

#[test]
fn every_console_script_parses_as_an_es_module() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in console_files().into_iter().filter(|(n, _)| n.ends_with(".js")) {
        // As `.mjs`, node parses the file as the browser does: an ES module.
        let path = dir.path().join(name.replace(".js", ".mjs"));
        std::fs::write(&path, text).unwrap();
        let out = Command::new("node")
            .arg("--check")
            .arg(&path)
            .output()
            .expect("node is needed to check the console's scripts");
        assert!(out.status.success(), "{name} does not parse:\n{}", String::from_utf8_lossy(&out.stderr));
    }
}
