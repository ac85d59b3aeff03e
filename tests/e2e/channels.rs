//! Channels and tags (issue 32): events carry `channels` and `tags`, an
//! endpoint that lists channels receives only the events sharing one of them
//! (one without receives every event), refused lists are a 422 naming the
//! field, and the event and delivery logs filter by `channel` and `tag`
//! across pages.

use std::{collections::BTreeMap, time::Duration};

use serde_json::{json, Value};

use crate::support::{
    error_code, error_message, event_count, eventually, id_of, Backend, Fenix, Plan, Receiver, TestDb,
};

/// The `data.n` of every request a receiver got, sorted.
fn ns(r: &Receiver) -> Vec<i64> {
    let mut n: Vec<i64> = r.received().iter().map(|r| r.json()["data"]["n"].as_i64().unwrap()).collect();
    n.sort();
    n
}

/// Every item of a list route, following its cursors `limit` at a time; also
/// answers how many pages it took.
async fn all_pages(fenix: &Fenix, path: &str, limit: usize) -> (Vec<Value>, usize) {
    let (mut out, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
    loop {
        let mut p = format!("{path}&limit={limit}");
        if let Some(c) = &cursor {
            p.push_str(&format!("&cursor={c}"));
        }
        let (status, body) = fenix.call("GET", &p, None).await;
        assert_eq!(status, 200, "{p}: {body}");
        let page = body["data"].as_array().unwrap();
        assert!(page.len() <= limit, "{p}: {body}");
        out.extend(page.iter().cloned());
        pages += 1;
        match body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return (out, pages),
        }
    }
}

async fn endpoints_receive_exactly_the_events_of_their_channels(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let (all, billing, billing_eu, eu_orders) = (
        Receiver::http(|_| Plan::ok()).await,
        Receiver::http(|_| Plan::ok()).await,
        Receiver::http(|_| Plan::ok()).await,
        Receiver::http(|_| Plan::ok()).await,
    );
    let ep_all = fenix.create_endpoint(&app, json!({"url": all.url})).await;
    assert_eq!(ep_all["channels"], json!([]), "{ep_all}");
    let ep_billing = fenix.create_endpoint(&app, json!({"url": billing.url, "channels": ["billing"]})).await;
    assert_eq!(ep_billing["channels"], json!(["billing"]), "{ep_billing}");
    let ep_billing_eu =
        fenix.create_endpoint(&app, json!({"url": billing_eu.url, "channels": ["billing", "eu", "billing"]})).await;
    assert_eq!(ep_billing_eu["channels"], json!(["billing", "eu"]), "a repeat is kept once: {ep_billing_eu}");
    let ep_eu_orders = fenix
        .create_endpoint(&app, json!({"url": eu_orders.url, "channels": ["eu"], "event_types": ["order.*"]}))
        .await;

    // (n, type, channels) and how many endpoints each goes to.
    let singles = [
        (1, "order.created", json!([]), 1),                 // all
        (2, "order.created", json!(["billing"]), 3),        // all, billing, billing_eu
        (3, "invoice.paid", json!(["eu", "other"]), 2),     // all, billing_eu (eu_orders: not its type)
        (4, "order.created", json!(["eu"]), 3),             // all, billing_eu, eu_orders
        (5, "order.created", json!(["nobody-listens"]), 1), // all
    ];
    for (n, t, channels, expected) in singles {
        let ev = fenix.send_event(&app, json!({"type": t, "data": {"n": n}, "channels": channels})).await;
        assert_eq!(ev["deliveries"], json!(expected), "event {n}: {ev}");
        assert_eq!(ev["channels"], channels, "event {n}: {ev}");
    }
    // A batch's events route the same way.
    let (status, body) = fenix
        .call(
            "POST",
            &format!("/v1/apps/{app}/events/batch"),
            Some(json!({"events": [
                {"type": "order.shipped", "data": {"n": 6}, "channels": ["billing", "eu"]},
                {"type": "invoice.paid", "data": {"n": 7}, "channels": ["nobody-listens"], "tags": ["vip"]},
            ]})),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let counts: Vec<i64> = body["data"].as_array().unwrap().iter().map(|i| i["deliveries"].as_i64().unwrap()).collect();
    assert_eq!(counts, [4, 1], "{body}");

    let want: BTreeMap<&str, Vec<i64>> = BTreeMap::from([
        ("all", vec![1, 2, 3, 4, 5, 6, 7]),
        ("billing", vec![2, 6]),
        ("billing_eu", vec![2, 3, 4, 6]),
        ("eu_orders", vec![4, 6]),
    ]);
    let receivers = [("all", &all), ("billing", &billing), ("billing_eu", &billing_eu), ("eu_orders", &eu_orders)];
    let total: usize = want.values().map(Vec::len).sum();
    eventually("every delivery arrives", Duration::from_secs(10), || async {
        receivers.iter().map(|(_, r)| r.count()).sum::<usize>() >= total
    })
    .await;
    for ((name, r), ep) in receivers.iter().zip([&ep_all, &ep_billing, &ep_billing_eu, &ep_eu_orders]) {
        assert_eq!(ns(r), want[name], "{name} received");
        let rows = fenix.deliveries(&app, &format!("endpoint_id={}", id_of(ep))).await;
        assert_eq!(rows.len(), want[name].len(), "{name}'s deliveries: {rows:?}");
    }
    assert_eq!(fenix.deliveries(&app, "").await.len(), total);

    // PATCH: left out, channels stay; `[]` makes the endpoint take every event.
    let path = format!("/v1/apps/{app}/endpoints/{}", id_of(&ep_billing));
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"description": "b"}))).await;
    assert_eq!((status, &patched["channels"]), (200, &json!(["billing"])), "{patched}");
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"channels": null}))).await;
    assert_eq!((status, error_code(&patched)), (422, "invalid_body"), "channels cannot be null: {patched}");
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"channels": []}))).await;
    assert_eq!((status, &patched["channels"]), (200, &json!([])), "{patched}");
    let ev = fenix.send_event(&app, json!({"type": "order.created", "data": {"n": 8}, "channels": ["zzz"]})).await;
    assert_eq!(ev["deliveries"], json!(2), "all and the emptied billing endpoint: {ev}");
    eventually("event 8 arrives at billing", Duration::from_secs(10), || async { billing.count() >= 3 }).await;
    assert_eq!(ns(&billing), [2, 6, 8]);

    // A test event goes to its endpoint whatever the channels.
    let (status, sent) =
        fenix.call("POST", &format!("/v1/apps/{app}/endpoints/{}/test", id_of(&ep_eu_orders)), None).await;
    assert_eq!(status, 202, "{sent}");
    eventually("the test event arrives", Duration::from_secs(10), || async { eu_orders.count() >= 3 }).await;
    assert_eq!(eu_orders.received().last().unwrap().json()["type"], "fenix.test");
}

async fn refused_channels_and_tags_are_422_naming_the_field(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let eleven: Vec<String> = (0..11).map(|i| format!("c{i}")).collect();
    let long = "a".repeat(129);
    let send = |body: Value| {
        let fenix = &fenix;
        let app = &app;
        async move { fenix.call("POST", &format!("/v1/apps/{app}/events"), Some(body)).await }
    };
    for (field, value, code, named) in [
        ("channels", json!(eleven), "invalid_channels", "channels holds 11 names"),
        ("tags", json!(eleven), "invalid_tags", "tags holds 11 names"),
        ("channels", json!(["ok", "has space"]), "invalid_channels", "channels[1] "),
        ("channels", json!(["ok", "a/b"]), "invalid_channels", "channels[1] "),
        ("tags", json!(["nul\u{0}byte"]), "invalid_tags", "tags[0] "),
        ("channels", json!([long]), "invalid_channels", "channels[0] is 129 bytes"),
        ("tags", json!(["ok", ""]), "invalid_tags", "tags[1] "),
        ("tags", json!([".lead"]), "invalid_tags", "tags[0] "),
    ] {
        let (status, body) = send(json!({"type": "t.x", "data": {}, field: value})).await;
        assert_eq!((status, error_code(&body)), (422, code), "{field}={value}: {body}");
        assert!(error_message(&body).starts_with(named), "{field}={value}: {body}");
    }
    let (status, body) = send(json!({"type": "t.x", "data": {}, "channels": "billing"})).await;
    assert_eq!(status / 100, 4, "a string is not a list: {body}");

    // In a batch: the event's index and the name's place.
    let (status, body) = fenix
        .call(
            "POST",
            &format!("/v1/apps/{app}/events/batch"),
            Some(json!({"events": [
                {"type": "t.x", "data": {}},
                {"type": "t.x", "data": {}, "tags": ["vip"]},
                {"type": "t.x", "data": {}, "channels": ["ok", "not ok"]},
            ]})),
        )
        .await;
    assert_eq!((status, error_code(&body)), (422, "invalid_channels"), "{body}");
    assert!(error_message(&body).starts_with("events[2].channels[1] "), "{body}");
    assert_eq!(event_count(&fenix, &app).await, 0, "no refused event was stored");
    assert_eq!(receiver.count(), 0);

    // Endpoints: on create and on patch.
    let (status, body) = fenix
        .call("POST", &format!("/v1/apps/{app}/endpoints"), Some(json!({"url": receiver.url, "channels": eleven})))
        .await;
    assert_eq!((status, error_code(&body)), (422, "invalid_channels"), "{body}");
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "channels": ["a"]})).await;
    let (status, body) = fenix
        .call("PATCH", &format!("/v1/apps/{app}/endpoints/{}", id_of(&ep)), Some(json!({"channels": ["x\u{0}"]})))
        .await;
    assert_eq!((status, error_code(&body)), (422, "invalid_channels"), "{body}");
    assert!(error_message(&body).starts_with("channels[0] "), "{body}");

    // The logs' filters take one valid name.
    for path in ["events?channel=a%20b", "deliveries?tag=.x", "events?tag=%00"] {
        let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/{path}"), None).await;
        assert_eq!((status, error_code(&body)), (400, "invalid_query"), "{path}: {body}");
    }

    // Ten names, a repeat kept once where it first appears.
    let ev = fenix
        .send_event(&app, json!({"type": "t.x", "data": {}, "channels": ["b", "a", "b"], "tags": eleven[..10]}))
        .await;
    assert_eq!((&ev["channels"], ev["tags"].as_array().unwrap().len()), (&json!(["b", "a"]), 10), "{ev}");
    let (_, read) = fenix.call("GET", &format!("/v1/apps/{app}/events/{}", id_of(&ev)), None).await;
    assert_eq!((&read["channels"], &read["tags"]), (&ev["channels"], &ev["tags"]), "{read}");
}

async fn the_logs_filter_by_channel_and_tag_across_pages(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let other = fenix.create_app("other").await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    fenix.create_endpoint(&app, json!({"url": receiver.url, "channels": ["billing"]})).await;
    fenix.create_endpoint(&other, json!({"url": receiver.url})).await;

    // Event n: channel billing when n % 3 == 0, eu when n % 5 == 0; tag vip when n is even.
    let labels = |n: i64| {
        let channels: Vec<&str> =
            [(n % 3 == 0).then_some("billing"), (n % 5 == 0).then_some("eu")].into_iter().flatten().collect();
        let tags: Vec<&str> = (n % 2 == 0).then_some("vip").into_iter().collect();
        (channels, tags)
    };
    let mut ids = BTreeMap::new();
    // Some singles, then a batch: both ingestion paths write the labels.
    for n in 0..10 {
        let (channels, tags) = labels(n);
        let ev =
            fenix.send_event(&app, json!({"type": "t.x", "data": {"n": n}, "channels": channels, "tags": tags})).await;
        ids.insert(n, id_of(&ev));
    }
    let batch: Vec<Value> = (10..30)
        .map(|n| {
            let (channels, tags) = labels(n);
            json!({"type": "t.x", "data": {"n": n}, "channels": channels, "tags": tags})
        })
        .collect();
    let (status, body) =
        fenix.call("POST", &format!("/v1/apps/{app}/events/batch"), Some(json!({"events": batch}))).await;
    assert_eq!(status, 202, "{body}");
    for (i, item) in body["data"].as_array().unwrap().iter().enumerate() {
        ids.insert(10 + i as i64, id_of(item));
    }
    // The other app's events carry the same names and must never show.
    fenix
        .send_event(&other, json!({"type": "t.x", "data": {"n": 100}, "channels": ["billing"], "tags": ["vip"]}))
        .await;

    let ns_of = |items: &[Value]| -> Vec<i64> {
        items.iter().map(|e| *ids.iter().find(|(_, id)| **id == id_of(e)).expect("an event of the app").0).collect()
    };
    // Newest first: descending n.
    let expect = |keep: &dyn Fn(i64) -> bool| -> Vec<i64> { (0..30).rev().filter(|n| keep(*n)).collect() };
    let billing = expect(&|n| n % 3 == 0);
    let eu = expect(&|n| n % 5 == 0);
    let vip = expect(&|n| n % 2 == 0);
    let billing_vip = expect(&|n| n % 6 == 0);

    let log = format!("/v1/apps/{app}/events?");
    for (query, want) in [
        ("channel=billing", &billing),
        ("channel=eu", &eu),
        ("tag=vip", &vip),
        ("channel=billing&tag=vip", &billing_vip),
    ] {
        let (items, pages) = all_pages(&fenix, &format!("{log}{query}"), 3).await;
        assert_eq!(&ns_of(&items), want, "events?{query}");
        assert_eq!(pages, want.len().div_ceil(3).max(1), "events?{query}: pages of 3");
        let (items, _) = all_pages(&fenix, &format!("{log}{query}&include=payload"), 4).await;
        assert_eq!(&ns_of(&items), want, "events?{query}&include=payload");
        assert!(items.iter().all(|e| e["data"]["n"].is_i64()), "{items:?}");
    }
    let (none, _) = all_pages(&fenix, &format!("{log}channel=nobody"), 5).await;
    assert!(none.is_empty(), "{none:?}");
    // Each event shows its labels.
    let (items, _) = all_pages(&fenix, &format!("{log}channel=eu"), 50).await;
    let fifteen = items.iter().find(|e| id_of(e) == ids[&15]).expect("event 15 is in the eu channel");
    assert_eq!((&fifteen["channels"], &fifteen["tags"]), (&json!(["billing", "eu"]), &json!([])), "{fifteen}");
    let twenty = items.iter().find(|e| id_of(e) == ids[&20]).expect("event 20 is in the eu channel");
    assert_eq!((&twenty["channels"], &twenty["tags"]), (&json!(["eu"]), &json!(["vip"])), "{twenty}");

    // The delivery log: every event went to the first endpoint, the billing ones to both.
    eventually("every delivery is made", Duration::from_secs(10), || async { receiver.count() > 30 + 10 }).await;
    let dlog = format!("/v1/apps/{app}/deliveries?");
    let event_ns = |items: &[Value]| -> Vec<i64> {
        let mut v: Vec<i64> = items
            .iter()
            .map(|d| {
                let event = d["event_id"].as_str().unwrap();
                *ids.iter().find(|(_, id)| id.as_str() == event).expect("an event of the app").0
            })
            .collect();
        v.sort();
        v.reverse();
        v
    };
    let twice = |v: &[i64]| -> Vec<i64> { v.iter().flat_map(|n| [*n, *n]).collect() };
    for (query, want) in [
        ("channel=billing", twice(&billing)),
        ("tag=vip", vip.iter().flat_map(|n| if n % 3 == 0 { vec![*n, *n] } else { vec![*n] }).collect()),
        (
            "channel=eu&tag=vip",
            eu.iter().filter(|n| *n % 2 == 0).flat_map(|n| if n % 3 == 0 { vec![*n, *n] } else { vec![*n] }).collect(),
        ),
        ("channel=billing&status=succeeded", twice(&billing)),
    ] {
        let (items, pages) = all_pages(&fenix, &format!("{dlog}{query}"), 4).await;
        assert_eq!(event_ns(&items), want, "deliveries?{query}");
        assert_eq!(pages, want.len().div_ceil(4).max(1), "deliveries?{query}: pages of 4");
        let mut seen: Vec<&str> = items.iter().map(|d| d["id"].as_str().unwrap()).collect();
        let listed = seen.clone();
        seen.sort();
        seen.reverse();
        assert_eq!(listed, seen, "deliveries?{query}: newest first, each once");
        seen.dedup();
        assert_eq!(seen.len(), items.len(), "deliveries?{query}: a delivery listed twice");
    }

    // A cursor belongs to its filters.
    let (status, page) = fenix.call("GET", &format!("{log}channel=billing&limit=2"), None).await;
    assert_eq!(status, 200, "{page}");
    let cursor = page["next_cursor"].as_str().unwrap();
    let (status, body) = fenix.call("GET", &format!("{log}channel=eu&limit=2&cursor={cursor}"), None).await;
    assert_eq!((status, error_code(&body)), (400, "invalid_cursor"), "{body}");
    let (status, body) = fenix.call("GET", &format!("{log}limit=2&cursor={cursor}"), None).await;
    assert_eq!((status, error_code(&body)), (400, "invalid_cursor"), "{body}");
}

crate::on_both_backends!(
    endpoints_receive_exactly_the_events_of_their_channels,
    refused_channels_and_tags_are_422_naming_the_field,
    the_logs_filter_by_channel_and_tag_across_pages,
);
