//! A request through an endpoint's own client (`worker::clients`): during a
//! rotation's overlap, a TLS handshake that fails with the new client
//! certificate is tried once more, within the same attempt, with the previous
//! one. Material that could not be loaded fails the attempt as
//! `client_certificate`, without a request.

use super::{refused, AttemptResult, Request};
use crate::{error_class::ErrorClass, worker::clients::EndpointClient};

/// Sends `req` through endpoint client `own` (`common` for an endpoint
/// without TLS material of its own) with `send`; when the current identity
/// fails the handshake (`tls`) and a previous one is live, once more with
/// that one, within the same attempt. Material that could not be loaded
/// fails the attempt as `client_certificate`, without a request.
pub(in crate::worker) async fn send_with<'a, F, Fut>(
    own: &'a EndpointClient,
    common: &'a reqwest::Client,
    req: Request,
    send: F,
) -> AttemptResult
where
    F: Fn(&'a reqwest::Client, Request) -> Fut,
    Fut: std::future::Future<Output = AttemptResult>,
{
    let (current, previous) = match own {
        EndpointClient::Common => return send(common, req).await,
        EndpointClient::Own { current, previous } => (current, previous),
    };
    let current = match current {
        Ok(c) => c,
        Err(why) => return refused(ErrorClass::ClientCertificate, why.to_string()),
    };
    let Some(Ok(previous)) = previous else { return send(current, req).await };
    let again = req.clone();
    let result = send(current, req).await;
    if result.error != Some(ErrorClass::Tls) {
        return result;
    }
    tracing::debug!("the TLS handshake failed with the new client certificate; trying the previous one");
    send(previous, again).await
}
