//! One rule for what a client sends: an unknown field, an unknown query
//! parameter, a malformed body or a cursor that is not this list's is refused
//! with `400` naming it, never ignored to answer something the client did not
//! ask for. (Issue 14, finding 3.)

use serde_json::{json, Value};

use crate::support::{error_code, error_message, Backend, Fenix, Plan, Receiver, TestDb};

async fn a_misspelt_query_parameter_is_refused_naming_it(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep = ep["id"].as_str().unwrap();
    let evt = fenix.send_event(&app, json!({"type": "a.b", "data": {}})).await;
    let evt = evt["id"].as_str().unwrap();
    for (path, param) in [
        (format!("/v1/apps/{app}/deliveries?staus=failed"), "staus"),
        (format!("/v1/apps/{app}/deliveries?status=failed&endpoint=ep_x"), "endpoint"),
        (format!("/v1/apps/{app}/events?evnt_type=a.b"), "evnt_type"),
        (format!("/v1/apps/{app}/events/{evt}?includes=payload"), "includes"),
        ("/v1/apps?limt=1".to_string(), "limt"),
        (format!("/v1/apps/{app}/endpoints?page=2"), "page"),
        (format!("/v1/apps/{app}/endpoints/{ep}/stats?windows=1h"), "windows"),
    ] {
        let (status, body) = fenix.call("GET", &path, None).await;
        assert_eq!((status, error_code(&body)), (400, "invalid_query"), "{path}: {body}");
        assert!(error_message(&body).contains(&format!("`{param}`")), "{path}: {body}");
    }
    // Calls that take no query parameter refuse one too, and change nothing.
    for (method, path) in [
        ("POST", format!("/v1/apps/{app}/endpoints/{ep}/pause?replay=true")),
        ("DELETE", format!("/v1/apps/{app}/endpoints/{ep}?force=1")),
        ("GET", format!("/v1/apps/{app}?expand=endpoints")),
        ("POST", format!("/v1/apps/{app}/events?dry_run=true")),
    ] {
        let body = (method == "POST" && path.contains("/events")).then(|| json!({"type": "a.b", "data": {}}));
        let (status, answer) = fenix.call(method, &path, body).await;
        assert_eq!((status, error_code(&answer)), (400, "invalid_query"), "{method} {path}: {answer}");
        let param = path.split_once('?').unwrap().1.split('=').next().unwrap();
        assert!(error_message(&answer).contains(&format!("`{param}`")), "{method} {path}: {answer}");
    }
    let (_, endpoint) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}"), None).await;
    assert_eq!(endpoint["state"], "active", "neither paused nor deleted: {endpoint}");
    let (_, events) = fenix.call("GET", &format!("/v1/apps/{app}/events"), None).await;
    assert_eq!(events["data"].as_array().unwrap().len(), 1, "no event stored: {events}");
    let (status, body) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries?status=failed&limit=5"), None).await;
    assert_eq!((status, body["data"].clone()), (200, json!([])), "known parameters still filter: {body}");
}

async fn a_cursor_continues_only_its_own_list_with_the_same_filters(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let other = fenix.create_app("other").await;
    for a in [&app, &other] {
        fenix.create_endpoint(a, json!({"url": receiver.url})).await;
        fenix.create_endpoint(a, json!({"url": receiver.url})).await;
        for _ in 0..3 {
            fenix.send_event(a, json!({"type": "a.b", "data": {}})).await;
        }
    }
    let first = |path: String| {
        let fenix = &fenix;
        async move {
            let (status, body) = fenix.call("GET", &path, None).await;
            assert_eq!(status, 200, "{path}: {body}");
            body["next_cursor"].as_str().unwrap_or_else(|| panic!("{path} has a next page: {body}")).to_string()
        }
    };
    let events = first(format!("/v1/apps/{app}/events?event_type=a.b&limit=1")).await;
    let deliveries = first(format!("/v1/apps/{app}/deliveries?limit=1")).await;
    let endpoints = first(format!("/v1/apps/{app}/endpoints?limit=1")).await;
    let apps = first("/v1/apps?limit=1".to_string()).await;
    assert!(!events.starts_with("evt_") && !deliveries.starts_with("dlv_"), "opaque: {events} {deliveries}");

    // The same list and filters continue, whatever the limit, and by uid as by id.
    for path in [
        format!("/v1/apps/{app}/events?event_type=a.b&limit=1&cursor={events}"),
        format!("/v1/apps/acme/events?event_type=a.b&cursor={events}"),
        format!("/v1/apps/{app}/deliveries?cursor={deliveries}"),
        format!("/v1/apps/{app}/endpoints?cursor={endpoints}"),
        format!("/v1/apps?cursor={apps}"),
    ] {
        let (status, body) = fenix.call("GET", &path, None).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(!body["data"].as_array().unwrap().is_empty(), "{path}: {body}");
    }
    let (_, page2) = fenix.call("GET", &format!("/v1/apps/{app}/events?event_type=a.b&cursor={events}"), None).await;
    assert_eq!(page2["data"].as_array().unwrap().len(), 2, "the two older events: {page2}");

    // Another list, another app, other filters, a bare id or garbage: refused.
    let evt = page2["data"][0]["id"].as_str().unwrap();
    for path in [
        format!("/v1/apps/{app}/events?cursor={events}"),
        format!("/v1/apps/{app}/events?event_type=a.*&cursor={events}"),
        format!("/v1/apps/{app}/events?event_type=a.b&since=2020-01-01T00:00:00Z&cursor={events}"),
        format!("/v1/apps/{other}/events?event_type=a.b&cursor={events}"),
        format!("/v1/apps/{app}/deliveries?cursor={events}"),
        format!("/v1/apps/{app}/deliveries?status=succeeded&cursor={deliveries}"),
        format!("/v1/apps/{other}/deliveries?cursor={deliveries}"),
        format!("/v1/apps/{other}/endpoints?cursor={endpoints}"),
        format!("/v1/apps?cursor={endpoints}"),
        format!("/v1/apps/{app}/events?event_type=a.b&cursor={evt}"),
        format!("/v1/apps/{app}/events?event_type=a.b&cursor={}", &events[..events.len() - 3]),
        format!("/v1/apps/{app}/events?event_type=a.b&cursor=garbage"),
        format!("/v1/apps/{app}/events?event_type=a.b&cursor="),
    ] {
        let (status, body) = fenix.call("GET", &path, None).await;
        assert_eq!((status, error_code(&body)), (400, "invalid_cursor"), "{path}: {body}");
        assert!(error_message(&body).contains("next_cursor"), "{body}");
    }
}

async fn bodies_with_unknown_fields_or_malformed_json_are_refused_everywhere(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url})).await;
    let ep = ep["id"].as_str().unwrap();
    let (_, dlvs) = fenix.call("GET", &format!("/v1/apps/{app}/deliveries"), None).await;
    assert_eq!(dlvs["data"], json!([]));
    fenix.send_event(&app, json!({"type": "a.b", "data": {}})).await;
    let dlv = fenix.deliveries(&app, "").await[0]["id"].as_str().unwrap().to_string();
    let posts = [
        "/v1/apps".to_string(),
        format!("/v1/apps/{app}/endpoints"),
        format!("/v1/apps/{app}/events"),
        format!("/v1/apps/{app}/endpoints/{ep}/pause"),
        format!("/v1/apps/{app}/endpoints/{ep}/resume"),
        format!("/v1/apps/{app}/endpoints/{ep}/secret/rotate"),
        format!("/v1/apps/{app}/endpoints/{ep}/replay"),
        format!("/v1/apps/{app}/deliveries/{dlv}/replay"),
    ];
    let patches = [format!("/v1/apps/{app}"), format!("/v1/apps/{app}/endpoints/{ep}")];
    let all = posts.iter().map(|p| ("POST", p)).chain(patches.iter().map(|p| ("PATCH", p)));
    for (method, path) in all {
        let (status, body) = fenix.call(method, path, Some(json!({"pasue": true}))).await;
        assert_eq!((status, error_code(&body)), (400, "unknown_field"), "{method} {path}: {body}");
        assert!(error_message(&body).contains("`pasue`"), "{method} {path}: {body}");
        let resp = fenix
            .request(method, path)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .expect("an answer");
        assert_eq!(resp.status().as_u16(), 400, "{method} {path}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(error_code(&body), "malformed_json", "{method} {path}: {body}");
    }
    let (_, endpoint) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}"), None).await;
    assert_eq!(endpoint["state"], "active", "no refused pause took effect: {endpoint}");
    // Options-free POSTs still take an empty body or `{}`.
    let pause = format!("/v1/apps/{app}/endpoints/{ep}/pause");
    let resp = fenix.request("POST", &pause).send().await.expect("an answer");
    assert_eq!(resp.status().as_u16(), 200, "an empty body");
    let resume = format!("/v1/apps/{app}/endpoints/{ep}/resume");
    let (status, body) = fenix.call("POST", &resume, Some(json!({}))).await;
    assert_eq!((status, body["state"].clone()), (200, json!("active")), "{body}");
    let (status, body) = fenix.call("POST", &pause, Some(json!({}))).await;
    assert_eq!((status, body["state"].clone()), (200, json!("paused")), "{body}");
}

async fn a_null_in_a_patch_clears_a_uid_and_is_refused_where_a_field_cannot_be_null(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = fenix.create_endpoint(&app, json!({"url": receiver.url, "description": "main"})).await;
    let ep = ep["id"].as_str().unwrap();

    let (status, body) = fenix.call("PATCH", &format!("/v1/apps/{app}"), Some(json!({"uid": null}))).await;
    assert_eq!((status, body["uid"].clone()), (200, Value::Null), "null removes the uid: {body}");
    let (status, _) = fenix.call("GET", "/v1/apps/acme", None).await;
    assert_eq!(status, 404, "the old uid no longer names the app");
    let (status, body) = fenix.call("PATCH", &format!("/v1/apps/{app}"), Some(json!({"name": "Renamed"}))).await;
    assert_eq!((status, body["uid"].clone()), (200, Value::Null), "left out, the uid stays removed: {body}");

    for (path, field) in [
        (format!("/v1/apps/{app}"), "name"),
        (format!("/v1/apps/{app}/endpoints/{ep}"), "url"),
        (format!("/v1/apps/{app}/endpoints/{ep}"), "description"),
        (format!("/v1/apps/{app}/endpoints/{ep}"), "event_types"),
    ] {
        let (status, body) = fenix.call("PATCH", &path, Some(json!({ field: null }))).await;
        assert_eq!((status, error_code(&body)), (422, "invalid_body"), "{field}: {body}");
        assert!(error_message(&body).contains(field) && error_message(&body).contains("null"), "{field}: {body}");
    }
    let (_, endpoint) = fenix.call("GET", &format!("/v1/apps/{app}/endpoints/{ep}"), None).await;
    assert_eq!(endpoint["description"], "main", "unchanged: {endpoint}");
}

crate::on_both_backends!(
    a_misspelt_query_parameter_is_refused_naming_it,
    a_cursor_continues_only_its_own_list_with_the_same_filters,
    bodies_with_unknown_fields_or_malformed_json_are_refused_everywhere,
    a_null_in_a_patch_clears_a_uid_and_is_refused_where_a_field_cannot_be_null,
);
