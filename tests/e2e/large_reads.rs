//! Reads of large payloads are paged by size as well as count: a page of the
//! event log stops before `FENIX_MAX_PAGE_BYTES` of items and says so
//! (`cut_by_size`), holds at least one item however large, and following the
//! cursors returns every event exactly once, with its payload.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::support::{Backend, Fenix, TestDb};

/// The page budget the tests run under (the smallest allowed is 64 KiB).
const PAGE_BYTES: usize = 256 * 1024;

/// Room for the page's own framing (`{"data":[`, `],"next_cursor":"…","cut_by_size":…}`).
const FRAMING: usize = 256;

/// One page as raw text and as JSON.
async fn page(fenix: &Fenix, app: &str, query: &str) -> (String, Value) {
    let resp = fenix.request("GET", &format!("/v1/apps/{app}/events?{query}")).send().await.expect("list events");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("page body");
    assert_eq!(status, 200, "{text:.300}");
    let json = serde_json::from_str(&text).expect("a page is JSON");
    (text, json)
}

/// An event's data: its number and `bytes` of filler.
fn data(n: usize, bytes: usize) -> Value {
    json!({"n": n, "filler": "x".repeat(bytes)})
}

async fn a_page_of_payloads_stops_before_its_byte_budget_and_the_cursors_return_every_event_once(backend: Backend) {
    let db = TestDb::new(backend).await;
    let page_bytes = PAGE_BYTES.to_string();
    let fenix = Fenix::start(&db, &[("FENIX_MAX_PAGE_BYTES", &page_bytes)]).await;
    let app = fenix.create_app("acme").await;
    // Twenty events of 40 KB (six fit in a page), one of 300 KB (larger than a
    // page by itself, so it makes a page of its own) among them, and small ones.
    let mut sent = Vec::new();
    for n in 0..24 {
        let size = match n {
            10 => 300 * 1024,
            n if n % 6 == 5 => 10,
            _ => 40 * 1024,
        };
        let event = json!({"type": "report.ready", "data": data(n, size)});
        let (status, body) =
            fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": [event]}))).await;
        assert_eq!(status, 202, "{body}");
        sent.push(body["data"][0]["id"].as_str().unwrap().to_string());
    }

    let (mut seen, mut pages, mut cut) = (Vec::new(), 0, 0);
    let mut cursor: Option<String> = None;
    loop {
        let query = match &cursor {
            Some(c) => format!("include=payload&limit=250&cursor={c}"),
            None => "include=payload&limit=250".to_string(),
        };
        let (text, body) = page(&fenix, &app, &query).await;
        pages += 1;
        let items = body["data"].as_array().unwrap();
        assert!(!items.is_empty(), "every page holds at least one item: {}", &text[..text.len().min(300)]);
        let largest = items.iter().map(|e| e.to_string().len()).max().unwrap();
        assert!(
            text.len() <= PAGE_BYTES + largest + FRAMING,
            "page {pages} is {} bytes: more than the budget ({PAGE_BYTES}) and one item ({largest})",
            text.len()
        );
        if items.len() > 1 {
            assert!(
                text.len() <= PAGE_BYTES + FRAMING,
                "page {pages} of {} items is {} bytes",
                items.len(),
                text.len()
            );
        }
        for e in items {
            let n = e["data"]["n"].as_u64().unwrap() as usize;
            assert_eq!(e["id"].as_str(), Some(sent[n].as_str()), "each event with its own payload");
            seen.push(sent[n].clone());
        }
        cursor = body["next_cursor"].as_str().map(str::to_string);
        assert_eq!(body["cut_by_size"], json!(cursor.is_some()), "each page but the last was cut by size: {body:.300}");
        cut += usize::from(body["cut_by_size"] == json!(true));
        if cursor.is_none() {
            break;
        }
        assert!(pages < 30, "paging ends");
    }
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no event twice");
    let mut newest_first = sent.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first, "every event, newest first");
    assert!(cut >= 4, "about 1.1 MB of events under 256 KiB pages: {pages} pages");

    // Without payloads the same log is one page, not cut.
    let (_, body) = page(&fenix, &app, "limit=250").await;
    assert_eq!(body["data"].as_array().unwrap().len(), sent.len());
    assert_eq!((body["next_cursor"].clone(), body["cut_by_size"].clone()), (Value::Null, json!(false)));

    // `limit` still cuts first, and says it was not by size.
    let (_, body) = page(&fenix, &app, "include=payload&limit=2").await;
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    assert!(body["next_cursor"].is_string());
    assert_eq!(body["cut_by_size"], json!(false));

    // The largest event read alone comes whole.
    let (status, one) = fenix.call("GET", &format!("/v1/apps/{app}/events/{}?include=payload", sent[10]), None).await;
    assert_eq!(status, 200, "{one:.300}");
    assert_eq!(one["data"], data(10, 300 * 1024));
}

crate::on_both_backends!(a_page_of_payloads_stops_before_its_byte_budget_and_the_cursors_return_every_event_once,);
