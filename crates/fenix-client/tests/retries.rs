//! Retries on `429`/`503`, against a stand-in server on 127.0.0.1 that
//! refuses the first requests: an idempotent call is retried after the
//! server's `Retry-After`, a call that is not safe to repeat is not, and a
//! refusal's body reads as `Error::Api` with Fenix's code.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use fenix_client::{Error, Fenix};
use serde_json::json;

/// A server whose every answer is `503 overloaded` until `refusals` requests were refused.
async fn flaky_server(refusals: usize) -> (String, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let answer = move || {
        let counter = counter.clone();
        async move {
            if counter.fetch_add(1, Ordering::SeqCst) < refusals {
                let body = json!({"error": {"code": "overloaded", "message": "busy"}}).to_string();
                return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "0")], body).into_response();
            }
            let app = json!({"id": "app_1", "name": "a", "uid": null, "created_at": "t", "updated_at": "t",
                "require_endpoint_verification": false});
            Response::new(app.to_string().into())
        }
    };
    let router =
        Router::new().route("/v1/apps/{app}", get(answer.clone())).route("/v1/apps", axum::routing::post(answer));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, seen)
}

#[tokio::test]
async fn an_idempotent_call_is_retried_after_retry_after() {
    let (url, seen) = flaky_server(2).await;
    let fenix = Fenix::new(&url, "fxa_x").unwrap();
    assert_eq!(*fenix.apps().get("app_1").await.unwrap().id, "app_1");
    assert_eq!(seen.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn retries_stop_at_the_limit_and_answer_the_servers_error() {
    let (url, seen) = flaky_server(usize::MAX).await;
    let fenix = Fenix::builder(&url, "fxa_x").max_retries(1).build().unwrap();
    match fenix.apps().get("app_1").await {
        Err(Error::Api { status: 503, code, retry_after, .. }) => {
            assert_eq!((code.as_str(), retry_after), ("overloaded", Some(std::time::Duration::ZERO)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_create_is_not_retried() {
    let (url, seen) = flaky_server(1).await;
    let fenix = Fenix::new(&url, "fxa_x").unwrap();
    let error = fenix.apps().create("a", None).await.unwrap_err();
    assert_eq!((error.status(), error.code()), (Some(503), Some("overloaded")));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}
