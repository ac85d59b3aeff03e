//! What operators watch: an endpoint's stats over a window (the per-endpoint
//! figures) and the Prometheus metrics behind the admin token (bounded labels:
//! outcome, error class, app).

use serde_json::json;

use super::common::{ep_path, id_of, send_events, wait_for_delivery};
use crate::support::{Backend, Fenix, Plan, Receiver, TestDb};

/// A metric sample's value from the text exposition, by its full name with labels.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.trim().parse().ok()))
}

async fn stats_and_metrics_count_attempts_successes_and_dead_letters(backend: Backend) {
    let db = TestDb::new(backend).await;
    let fenix = Fenix::start(&db, &[("FENIX_RETRY_SCHEDULE", "50ms")]).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;
    let app = fenix.create_app("acme").await;
    let ep = id_of(&fenix.create_endpoint(&app, json!({"url": receiver.url})).await);

    // One success at once, one success after a failure, one dead letter after two failures.
    let first = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
    wait_for_delivery(&fenix, &app, &first, &ep, "succeeded").await;
    receiver.set_behaviour(|n| if n == 1 { Plan::status(500) } else { Plan::ok() });
    let second = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
    wait_for_delivery(&fenix, &app, &second, &ep, "succeeded").await;
    receiver.set_behaviour(|_| Plan::status(500));
    let third = send_events(&fenix, &app, "booking.confirmed", 1).await.remove(0);
    wait_for_delivery(&fenix, &app, &third, &ep, "failed").await;
    assert_eq!(receiver.count(), 5);

    let (status, stats) = fenix.call("GET", &ep_path(&app, &ep, "/stats?window=1h"), None).await;
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["attempts"], 5, "{stats}");
    assert_eq!(stats["successes"], 2, "{stats}");
    assert_eq!(stats["failures"], 3, "{stats}");
    let rate = stats["success_rate"].as_f64().expect("a success rate");
    assert!((rate - 0.4).abs() < 1e-9, "{stats}");
    assert_eq!(stats["dead_letter"], 1, "{stats}");
    let (status, bad) = fenix.call("GET", &ep_path(&app, &ep, "/stats?window=soon"), None).await;
    assert_eq!(status, 400, "{bad}");
    assert_eq!(bad["error"]["code"], "invalid_window");

    for token in [None, Some("fxa_wrong_token_0000000000000000")] {
        let (status, refused) = fenix.call_as(token, "GET", "/metrics", None).await;
        assert_eq!(status, 401, "/metrics answered without a valid token: {refused}");
        assert_eq!(refused["error"]["code"], "unauthorized");
    }
    let resp = fenix.request("GET", "/metrics").send().await.expect("metrics");
    assert_eq!(resp.status().as_u16(), 200);
    let text = resp.text().await.expect("metrics text");
    let figure = |series: &str| sample(&text, series);
    assert_eq!(figure("fenix_attempts_total{outcome=\"success\",error=\"none\"}"), Some(2.0), "{text}");
    assert_eq!(figure("fenix_attempts_total{outcome=\"failure\",error=\"http_status\"}"), Some(3.0), "{text}");
    let per_app = |status: &str| figure(&format!("fenix_app_deliveries_total{{app_id=\"{app}\",status=\"{status}\"}}"));
    assert_eq!(per_app("succeeded"), Some(2.0), "{text}");
    assert_eq!(per_app("failed"), Some(1.0), "{text}");
    assert_eq!(figure("fenix_deliveries_dead_letter"), Some(1.0), "{text}");
    assert_eq!(figure("fenix_deliveries_due"), Some(0.0), "nothing is waiting to be sent: {text}");
    assert_eq!(figure("fenix_events_ingested_total"), Some(3.0), "{text}");
    assert_eq!(figure("fenix_delivery_latency_seconds_count"), Some(2.0), "two first successes: {text}");
    assert!(!text.contains(&ep), "labels stay bounded: no endpoint id in the metrics\n{text}");
}

crate::on_both_backends!(stats_and_metrics_count_attempts_successes_and_dead_letters);
