//! `fenix listen`: a local receiver for development, like `stripe listen`. It
//! verifies every request with the signing crate (either scheme) and prints
//! one line per request — event id, type, attempt id, verified or why not —
//! and the payload only when asked with `--show-payload`.

use std::{
    collections::HashSet,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use axum::{body::Bytes, http::HeaderMap, http::StatusCode, routing::post, Router};

/// What the receiver does with each request.
#[derive(Clone)]
pub struct Listen {
    /// Candidate secrets, newest first: `whsec_…` HMAC secrets, or `whpk_…`
    /// Ed25519 public keys (for an endpoint that signs with Ed25519).
    pub secrets: Vec<String>,
    /// Print the body of verified requests.
    pub show_payload: bool,
}

/// Listens on `addr` until the process is stopped.
pub async fn run(addr: SocketAddr, opts: Listen) -> anyhow::Result<()> {
    let seen: Arc<Mutex<HashSet<String>>> = Arc::default();
    let handler = move |headers: HeaderMap, body: Bytes| {
        let (opts, seen) = (opts.clone(), seen.clone());
        async move {
            let (status, line, answer) = handle(&headers, &body, &opts, crate::time::now_ms() / 1000);
            let event = headers.get("x-fenix-event-id").or_else(|| headers.get("webhook-id"));
            let repeat = event
                .and_then(|v| v.to_str().ok())
                .is_some_and(|id| status.is_success() && !seen.lock().expect("seen lock").insert(id.to_string()));
            println!("{line}{}", if repeat { " (repeat: already received)" } else { "" });
            if opts.show_payload && status.is_success() {
                println!("         {}", String::from_utf8_lossy(&body));
            }
            (status, answer)
        }
    };
    let app = Router::new().route("/", post(handler.clone())).route("/{*path}", post(handler));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("fenix listen: receiving on http://{} (POST any path); Ctrl-C to stop", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}

/// Verifies one request: answers the status, the line to print, and the response body.
pub fn handle(headers: &HeaderMap, body: &[u8], opts: &Listen, now: i64) -> (StatusCode, String, String) {
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
    let event = get("x-fenix-event-id").or_else(|| get("webhook-id")).unwrap_or("-");
    let kind = get("x-fenix-event-type").unwrap_or("-");
    let attempt = get("x-fenix-delivery-id").unwrap_or("-");
    let public: Vec<Option<Result<fenix_signing::Ed25519PublicKey, fenix_signing::SigningError>>> = opts
        .secrets
        .iter()
        .map(|s| s.starts_with("whpk_").then(|| fenix_signing::Ed25519PublicKey::parse(s)))
        .collect();
    let mut keys = Vec::with_capacity(opts.secrets.len());
    for (index, (secret, public)) in opts.secrets.iter().zip(&public).enumerate() {
        keys.push(match public {
            None => fenix_signing::VerifyKey::Hmac(secret),
            Some(Ok(key)) => fenix_signing::VerifyKey::Ed25519(key),
            Some(Err(e)) => {
                let line =
                    format!("REJECTED  {event} {kind} attempt={attempt}: key #{} is not a public key: {e}", index + 1);
                return (StatusCode::INTERNAL_SERVER_ERROR, line, "receiver misconfigured".into());
            }
        });
    }
    match fenix_signing::verify_with(&req, &keys, fenix_signing::DEFAULT_TOLERANCE, now) {
        Ok(v) => (
            StatusCode::OK,
            format!(
                "verified  {event} {kind} attempt={attempt} ({} bytes, secret #{})",
                body.len(),
                v.secret_index + 1
            ),
            "ok".into(),
        ),
        Err(e) => (
            StatusCode::UNAUTHORIZED,
            format!("REJECTED  {event} {kind} attempt={attempt}: {e}"),
            format!("signature rejected: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whpk_key_verifies_ed25519_signatures() {
        let key = fenix_signing::Ed25519SecretKey::from_seed([9; 32]);
        let signing = [fenix_signing::SignKey::Ed25519 { key: &key, key_id: "ep_1.v1" }];
        let body = br#"{"id":"evt_1"}"#;
        let header = fenix_signing::signature_header_with(fenix_signing::Scheme::FenixV1, &signing, "", 1000, body);
        let mut h = HeaderMap::new();
        h.insert("x-fenix-timestamp", "1000".parse().unwrap());
        h.insert("x-fenix-signature", header.unwrap().parse().unwrap());
        let opts = Listen { secrets: vec![key.public_key().to_whpk()], show_payload: false };
        let (status, line, _) = handle(&h, body, &opts, 1000);
        assert_eq!(status, StatusCode::OK, "{line}");
        let other = Listen {
            secrets: vec![fenix_signing::Ed25519SecretKey::from_seed([8; 32]).public_key().to_whpk()],
            ..opts
        };
        assert_eq!(handle(&h, body, &other, 1000).0, StatusCode::UNAUTHORIZED);
        let broken = Listen { secrets: vec!["whpk_AAAA".into()], show_payload: false };
        assert_eq!(handle(&h, body, &broken, 1000).0, StatusCode::INTERNAL_SERVER_ERROR);
    }

    fn signed(secret: &str, ts: i64, body: &[u8]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-fenix-event-id", "evt_1".parse().unwrap());
        h.insert("x-fenix-event-type", "booking.confirmed".parse().unwrap());
        h.insert("x-fenix-delivery-id", "att_1".parse().unwrap());
        h.insert("x-fenix-timestamp", ts.to_string().parse().unwrap());
        h.insert("x-fenix-signature", fenix_signing::fenix_v1_header(&[secret], ts, body).parse().unwrap());
        h
    }

    #[test]
    fn a_signed_request_is_verified_and_the_line_names_event_type_and_attempt_but_not_the_payload() {
        let opts =
            Listen { secrets: vec!["whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdA==".into()], show_payload: false };
        let body = br#"{"id":"evt_1","data":{"secret_marker":1}}"#;
        let (status, line, _) = handle(&signed(&opts.secrets[0], 1000, body), body, &opts, 1000);
        assert_eq!(status, StatusCode::OK);
        assert!(
            line.contains("verified")
                && line.contains("evt_1")
                && line.contains("booking.confirmed")
                && line.contains("att_1")
        );
        assert!(!line.contains("secret_marker"));
    }

    #[test]
    fn a_tampered_or_stale_request_is_rejected_with_the_reason() {
        let opts =
            Listen { secrets: vec!["whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdA==".into()], show_payload: false };
        let headers = signed(&opts.secrets[0], 1000, b"{}");
        let (status, line, _) = handle(&headers, b"{\"x\":1}", &opts, 1000);
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(line.starts_with("REJECTED"));
        let (status, _, _) = handle(&headers, b"{}", &opts, 5000);
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
}
