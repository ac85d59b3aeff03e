//! The upstream leg: a tunnel through the operator's proxy to one checked
//! address (`ip:port`, never a name): HTTP `CONNECT` (hyper's client, which
//! bounds the answer's head) or SOCKS5. Only a `2xx` answer to `CONNECT` is a
//! tunnel (RFC 9110 §9.3.6: its body, if any, is ignored); `407` (or `401`,
//! as tinyproxy answers) is a refusal of the credentials; any other
//! status, an answer that is not HTTP, a head too long, and every SOCKS5
//! failure are refusals. The whole leg runs within the attempt's timeout.

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine;
use http_body_util::Empty;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use super::proxy_url::{EgressProxy, ProxyScheme};
use super::socks5::{self, Reply};

/// The largest head of the proxy's answer to `CONNECT` (hyper's least buffer).
const MAX_HEAD: usize = 8 * 1024;

/// A byte stream both ways.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// Why no tunnel was opened: what the forwarder answers Fenix's client
/// ([`Failure::reply`]) and, for the operator's log, what happened (never
/// the proxy's password: it is only ever written into the handshake).
#[derive(Debug)]
pub struct Failure {
    pub reply: Reply,
    pub reason: String,
}

impl Failure {
    fn unreachable(reason: impl Into<String>) -> Failure {
        Failure { reply: Reply::NetworkUnreachable, reason: reason.into() }
    }
    fn refused(reason: impl Into<String>) -> Failure {
        Failure { reply: Reply::HostUnreachable, reason: reason.into() }
    }
    fn credentials(reason: impl Into<String>) -> Failure {
        Failure { reply: Reply::GeneralFailure, reason: reason.into() }
    }
    fn receiver(reason: impl Into<String>) -> Failure {
        Failure { reply: Reply::ConnectionRefused, reason: reason.into() }
    }
}

/// A tunnel to `target` through `proxy`, within `timeout`.
pub async fn open(proxy: &EgressProxy, target: SocketAddr, timeout: Duration) -> Result<Box<dyn Io>, Failure> {
    let opening = async {
        let tcp = TcpStream::connect((proxy.host.as_str(), proxy.port))
            .await
            .map_err(|e| Failure::unreachable(format!("could not connect to the proxy: {e}")))?;
        let _ = tcp.set_nodelay(true);
        match proxy.scheme {
            ProxyScheme::HttpConnect => http_connect(tcp, proxy, target).await,
            ProxyScheme::Socks5 => socks5_connect(tcp, proxy, target).await,
        }
    };
    match tokio::time::timeout(timeout, opening).await {
        Ok(opened) => opened,
        Err(_) => Err(Failure::unreachable(format!("no tunnel within {timeout:?}"))),
    }
}

async fn http_connect(tcp: TcpStream, proxy: &EgressProxy, target: SocketAddr) -> Result<Box<dyn Io>, Failure> {
    let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
        .max_buf_size(MAX_HEAD)
        .handshake::<_, Empty<bytes::Bytes>>(TokioIo::new(tcp))
        .await
        .map_err(|e| Failure::unreachable(format!("the proxy's connection failed: {e}")))?;
    // Ends once the tunnel is handed over, or when the answer is refused and `sender` dropped.
    tokio::spawn(async move {
        let _ = conn.with_upgrades().await;
    });
    let authority = target.to_string();
    let mut request = hyper::Request::connect(authority.as_str()).header(hyper::header::HOST, authority.as_str());
    if let Some(c) = &proxy.credentials {
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", c.user, c.password.expose()));
        let mut value = hyper::header::HeaderValue::from_str(&format!("Basic {basic}"))
            .map_err(|_| Failure::credentials("the proxy's credentials are not header text"))?;
        value.set_sensitive(true);
        request = request.header(hyper::header::PROXY_AUTHORIZATION, value);
    }
    let request = request.body(Empty::new()).map_err(|e| Failure::refused(format!("CONNECT {authority}: {e}")))?;
    let answer = sender
        .send_request(request)
        .await
        .map_err(|e| Failure::refused(format!("the proxy's answer to CONNECT is not a tunnel: {e}")))?;
    match answer.status() {
        s if s.is_success() => {}
        // 407 as RFC 9110 says; tinyproxy answers 401 to a CONNECT with wrong credentials.
        s @ (hyper::StatusCode::PROXY_AUTHENTICATION_REQUIRED | hyper::StatusCode::UNAUTHORIZED) => {
            return Err(Failure::credentials(format!("the proxy answered {s}: its credentials were refused")))
        }
        s if could_not_connect(&answer) => {
            return Err(Failure::receiver(format!("the proxy could not connect to {authority}: it answered {s}")))
        }
        s => return Err(Failure::refused(format!("the proxy answered {s} to CONNECT {authority}"))),
    }
    let upgraded = hyper::upgrade::on(answer)
        .await
        .map_err(|e| Failure::refused(format!("the proxy's tunnel could not be taken over: {e}")))?;
    Ok(Box::new(TokioIo::new(upgraded)))
}

/// A gateway's answer that it could not reach the address: `502`, `503`,
/// `504` (squid's `ERR_CONNECT_FAIL` is a 503), or tinyproxy's `500 Unable to connect`.
fn could_not_connect<B>(answer: &hyper::Response<B>) -> bool {
    let reason = answer.extensions().get::<hyper::ext::ReasonPhrase>().map(|r| r.as_bytes());
    matches!(answer.status().as_u16(), 502..=504)
        || (answer.status() == hyper::StatusCode::INTERNAL_SERVER_ERROR && reason == Some(b"Unable to connect"))
}

async fn socks5_connect(mut tcp: TcpStream, proxy: &EgressProxy, target: SocketAddr) -> Result<Box<dyn Io>, Failure> {
    let auth = proxy.credentials.as_ref().map(|c| (c.user.as_str(), c.password.expose()));
    match socks5::connect(&mut tcp, target, auth).await {
        Ok(()) => Ok(Box::new(tcp)),
        Err(socks5::HandshakeError::Credentials) => {
            Err(Failure::credentials("the SOCKS5 proxy refused its credentials"))
        }
        // Network or host unreachable, connection refused, TTL expired: the receiver's side.
        Err(socks5::HandshakeError::Refused(code @ 0x03..=0x06)) => {
            Err(Failure::receiver(format!("the SOCKS5 proxy could not connect to {target} (reply {code:#04x})")))
        }
        Err(e) => Err(Failure::refused(format!("the SOCKS5 proxy opened no tunnel to {target}: {e}"))),
    }
}
