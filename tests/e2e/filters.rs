//! Content filters (issue 32): an endpoint's CEL `filter` decides at fan-out
//! which events it receives (the event's answer counts only the deliveries
//! made), a filter that does not parse or is over the bounds is a 422 with
//! its position, an evaluation that fails is no match (counted per app),
//! `filters/test` evaluates a filter on sample events without storing
//! anything, and an app's costliest filters on its largest events leave
//! another app's events flowing.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{error_code, eventually, id_of, Backend, Fenix, Plan, Receiver, TestDb};

/// The `data.n` of every request a receiver got, sorted.
fn ns(r: &Receiver) -> Vec<i64> {
    let mut n: Vec<i64> = r.received().iter().map(|r| r.json()["data"]["n"].as_i64().unwrap()).collect();
    n.sort();
    n
}

async fn endpoints_receive_exactly_the_events_their_filter_passes(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let (all, big_eur, vip_billing) = (
        Receiver::http(|_| Plan::ok()).await,
        Receiver::http(|_| Plan::ok()).await,
        Receiver::http(|_| Plan::ok()).await,
    );
    fenix.create_endpoint(&app, json!({"url": all.url})).await;
    let big = r#"data.amount > 100 && data.currency == "EUR""#;
    let ep_big = fenix.create_endpoint(&app, json!({"url": big_eur.url, "filter": big})).await;
    assert_eq!(ep_big["filter"], json!(big), "{ep_big}");
    let vip = r#""billing" in channels && has(data.vip) && data.vip == true && type.startsWith("order.")"#;
    fenix.create_endpoint(&app, json!({"url": vip_billing.url, "filter": vip})).await;

    // (n, type, data beyond n, channels) and how many endpoints each goes to.
    let events = [
        (1, "order.paid", json!({"amount": 150, "currency": "EUR"}), json!([]), 2),
        (2, "order.paid", json!({"amount": 50, "currency": "EUR"}), json!([]), 1),
        (3, "order.paid", json!({"amount": 150, "currency": "USD", "vip": true}), json!(["billing"]), 2),
        // No `amount`: an evaluation error is no match.
        (4, "order.paid", json!({"vip": true}), json!(["billing"]), 2),
        (5, "invoice.paid", json!({"amount": 500, "currency": "EUR", "vip": true}), json!(["billing"]), 2),
        (6, "order.paid", json!({"amount": "150", "currency": "EUR"}), json!(["eu"]), 1),
    ];
    for (n, t, extra, channels, expected) in events.clone() {
        let mut data = extra.clone();
        data["n"] = json!(n);
        let ev = fenix.send_event(&app, json!({"type": t, "data": data, "channels": channels})).await;
        assert_eq!(ev["deliveries"], json!(expected), "event {n}: {ev}");
    }
    let total: usize = events.iter().map(|e| e.4).sum();
    eventually("every delivery arrives", Duration::from_secs(10), || async {
        all.count() + big_eur.count() + vip_billing.count() >= total
    })
    .await;
    assert_eq!(ns(&all), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ns(&big_eur), [1, 5]);
    assert_eq!(ns(&vip_billing), [3, 4]);
    assert_eq!(fenix.deliveries(&app, "").await.len(), total, "the log holds only the deliveries made");
    let (_, metrics) = fenix.call("GET", "/metrics", None).await;
    let metrics = metrics.as_str().map(str::to_string).unwrap_or_else(|| metrics.to_string());
    assert!(metrics.contains(&format!("fenix_filter_errors_total{{app_id=\"{app}\"}} 2")), "{metrics}");
    assert!(!metrics.contains("\"150\""), "no event value in the metrics");

    // PATCH: null removes the filter; the endpoint then takes every event.
    let path = format!("/v1/apps/{app}/endpoints/{}", id_of(&ep_big));
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"description": "big"}))).await;
    assert_eq!((status, &patched["filter"]), (200, &json!(big)), "left out, the filter stays: {patched}");
    let (status, patched) = fenix.call("PATCH", &path, Some(json!({"filter": null}))).await;
    assert_eq!((status, &patched["filter"]), (200, &Value::Null), "{patched}");
    let ev = fenix.send_event(&app, json!({"type": "order.paid", "data": {"n": 7, "amount": 1}})).await;
    assert_eq!(ev["deliveries"], json!(2), "{ev}");
}

async fn a_filter_that_does_not_parse_or_is_over_its_bounds_is_refused_with_its_position(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let path = format!("/v1/apps/{app}/endpoints");
    let (status, body) =
        fenix.call("POST", &path, Some(json!({"url": receiver.url, "filter": "data.amount >\n  && true"}))).await;
    assert_eq!((status, error_code(&body)), (422, "invalid_filter"), "{body}");
    assert_eq!(body["error"]["details"][0]["path"], "/filter", "{body}");
    assert_eq!(body["error"]["details"][0]["line"], 2, "{body}");
    assert!(body["error"]["details"][0]["column"].as_u64().is_some(), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("line 2"), "{body}");
    let deep = format!("{}true{}", "(".repeat(1000), ")".repeat(1000));
    let long = vec!["type == \"a\""; 300].join(" || ");
    let nested = "data.items.exists(i, data.items.exists(j, i == j))";
    let unknown = "secrets.key == 1";
    let not_a_bool = "1 + 2";
    for refused in [deep.as_str(), long.as_str(), nested, unknown, not_a_bool] {
        let (status, body) = fenix.call("POST", &path, Some(json!({"url": receiver.url, "filter": refused}))).await;
        assert_eq!(
            (status, error_code(&body)),
            (422, "invalid_filter"),
            "{}: {body}",
            &refused[..40.min(refused.len())]
        );
    }
    // Fenix still answers: nothing of the refused filters was stored.
    let (status, list) = fenix.call("GET", &format!("{path}?limit=10"), None).await;
    assert_eq!((status, list["data"].as_array().map(Vec::len)), (200, Some(0)), "{list}");
}

async fn filters_test_evaluates_sample_events_and_stores_nothing(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let app = fenix.create_app("acme").await;
    let path = format!("/v1/apps/{app}/filters/test");
    let body = json!({
        "filter": r#"data.amount > 100 && "eu" in channels"#,
        "events": [
            {"type": "order.paid", "data": {"amount": 120}, "channels": ["eu"]},
            {"type": "order.paid", "data": {"amount": 120}},
            {"type": "order.paid", "data": {"total": 120}, "channels": ["eu"]},
        ]
    });
    let (status, answer) = fenix.call("POST", &path, Some(body)).await;
    assert_eq!(status, 200, "{answer}");
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results[0], json!({"matched": true}), "{answer}");
    assert_eq!(results[1], json!({"matched": false}), "{answer}");
    assert_eq!(results[2]["matched"], false, "{answer}");
    assert!(results[2]["error"].as_str().unwrap().contains("amount"), "{answer}");
    let (status, answer) =
        fenix.call("POST", &path, Some(json!({"filter": "type ==", "events": [{"type": "a"}]}))).await;
    assert_eq!((status, error_code(&answer)), (422, "invalid_filter"), "{answer}");
    assert!(answer["error"]["details"][0]["line"].as_u64().is_some(), "{answer}");
    let (status, answer) = fenix.call("POST", &path, Some(json!({"filter": "true", "events": []}))).await;
    assert_eq!((status, error_code(&answer)), (422, "invalid_sample"), "{answer}");
    let (status, answer) = fenix
        .call("POST", &path, Some(json!({"filter": "true", "events": [{"type": "a", "channels": ["bad name"]}]})))
        .await;
    assert_eq!((status, error_code(&answer)), (422, "invalid_channels"), "{answer}");
    let (status, answer) = fenix
        .call(
            "POST",
            "/v1/apps/app_0000000000000000000000000/filters/test",
            Some(json!({"filter": "true", "events": [{"type": "a"}]})),
        )
        .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(fenix.deliveries(&app, "").await.len(), 0);
}

/// App A's endpoints carry the costliest filters the bounds allow and A
/// sends the largest events they bite on, many at once; app B's events are
/// still accepted and delivered within a second each.
async fn costly_filters_of_one_app_leave_another_apps_events_flowing(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let (a, b) = (fenix.create_app("costly").await, fenix.create_app("calm").await);
    let sink = Receiver::http(|_| Plan::ok()).await;
    let calm = Receiver::http(|_| Plan::ok()).await;
    let costly = "data.items.exists(i, i + \"x\" == \"zzx\") && data.items.exists_one(i, i == \"zz\") \
                  && !data.items.all(i, i.startsWith(\"zz\"))";
    for _ in 0..3 {
        fenix.create_endpoint(&a, json!({"url": sink.url, "filter": costly})).await;
    }
    fenix.create_endpoint(&b, json!({"url": calm.url, "filter": "data.n >= 0"})).await;
    let items: Vec<String> = (0..2_000).map(|i| format!("item-{i:06}-{}", "p".repeat(20))).collect();
    let data = json!({"items": items});
    let flood = async {
        let mut sent = 0;
        let until = Instant::now() + Duration::from_secs(6);
        while Instant::now() < until {
            let path = format!("/v1/apps/{a}/events");
            let batch: Vec<_> =
                (0..8).map(|_| fenix.call("POST", &path, Some(json!({"type": "big", "data": data})))).collect();
            for (status, body) in futures::future::join_all(batch).await {
                assert!(status == 202 || status == 503, "{status}: {body}");
                sent += 1;
            }
        }
        sent
    };
    let calm_flow = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        for n in 0..10usize {
            let sent = Instant::now();
            let ev = fenix.send_event(&b, json!({"type": "calm", "data": {"n": n}})).await;
            assert_eq!(ev["deliveries"], 1, "{ev}");
            eventually("app B's event arrives within a second", Duration::from_secs(1), || async { calm.count() > n })
                .await;
            assert!(sent.elapsed() < Duration::from_secs(1), "app B's event {n} took {:?}", sent.elapsed());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let (sent, ()) = tokio::join!(flood, calm_flow);
    assert!(sent > 0);
    assert_eq!(sink.count(), 0, "no big event passes the costly filters");
}

crate::on_both_backends!(
    endpoints_receive_exactly_the_events_their_filter_passes,
    a_filter_that_does_not_parse_or_is_over_its_bounds_is_refused_with_its_position,
    filters_test_evaluates_sample_events_and_stores_nothing,
    costly_filters_of_one_app_leave_another_apps_events_flowing,
);
