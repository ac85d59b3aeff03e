//! `fenix receive`: a local receiver for development. It verifies every
//! request with the signing crate (either scheme) and prints one line per
//! request — never the payload.

use std::net::SocketAddr;

use axum::{body::Bytes, http::HeaderMap, http::StatusCode, routing::post, Router};

/// Listens on `listen` and verifies requests against `secrets`.
pub async fn run(listen: SocketAddr, secrets: Vec<String>) -> anyhow::Result<()> {
    let app = Router::new().route(
        "/{*path}",
        post(move |headers: HeaderMap, body: Bytes| {
            let secrets = secrets.clone();
            async move { handle(&headers, &body, &secrets) }
        }),
    );
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("fenix receive: listening on http://{} (POST any path)", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

fn handle(headers: &HeaderMap, body: &[u8], secrets: &[String]) -> (StatusCode, String) {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let scheme = if get("webhook-signature").is_some() {
        fenix_signing::Scheme::StandardWebhooks
    } else {
        fenix_signing::Scheme::FenixV1
    };
    let req = fenix_signing::SignedRequest {
        scheme,
        timestamp: get(scheme.timestamp_header()).unwrap_or(""),
        signature_header: get(scheme.signature_header()).unwrap_or(""),
        msg_id: scheme.msg_id_header().and_then(get),
        body,
    };
    let keys: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let now = crate::time::now_ms() / 1000;
    let event = get("x-fenix-event-id").or_else(|| get("webhook-id")).unwrap_or("?");
    let kind = get("x-fenix-event-type").unwrap_or("?");
    match fenix_signing::verify(&req, &keys, fenix_signing::DEFAULT_TOLERANCE, now) {
        Ok(v) => {
            println!("ok       {event} {kind} ({} bytes, secret #{} matched)", body.len(), v.secret_index + 1);
            (StatusCode::NO_CONTENT, String::new())
        }
        Err(e) => {
            println!("REJECTED {event} {kind}: {e}");
            (StatusCode::UNAUTHORIZED, format!("signature rejected: {e}"))
        }
    }
}
