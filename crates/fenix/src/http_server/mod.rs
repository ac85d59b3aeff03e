//! The API's accept loop: hyper's HTTP/1 connections under Fenix's own
//! timeouts and caps.
//!
//! `axum::serve` has no header-read timeout, no idle timeout and no connection
//! cap, so half-sent requests from a client without a token could hold sockets
//! until the process ran out of file descriptors — which the worker's outbound
//! connections share. Here every connection is tracked (`track.rs`):
//!
//! - a connection must send a request's headers within the header timeout
//!   (counted from its opening, or from the first byte of a later request), and
//!   may wait for its next request no longer than the idle timeout;
//! - a request's body must arrive within the body timeout (`408 request_timeout`);
//! - at most `max_connections` are held: when full, the oldest connection that
//!   is not inside a request (still sending headers, or idle) is closed to
//!   admit the new one, so a flood of half-open connections never locks real
//!   clients out;
//! - at most `max_in_flight` requests are handled at once; one more waits for a
//!   slot (its headers read, its body not) for at most `queue_wait`, then is
//!   answered `503 overloaded` with `Retry-After`. The waiting requests are
//!   bounded by `max_connections` (one request at a time per connection), so a
//!   moment's stall (a checkpoint, a slow commit) is answered late, not refused,
//!   and a sustained overload is still refused.

use crate::api::code::Code;
use std::{
    convert::Infallible,
    io,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    task::{Context, Poll},
    time::Duration,
};

use axum::{
    body::Body,
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
    Router,
};
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::{
    net::{TcpListener, TcpStream},
    sync::{OwnedSemaphorePermit, Semaphore},
    time::Instant,
};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::{api::ApiError, settings::Settings};

mod track;

use track::{InRequest, Phase, Registry, Track, Watched};

/// The timeouts and caps of the API server (see the `FENIX_HTTP_*` settings).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub max_in_flight: usize,
    pub queue_wait: Duration,
}

impl Limits {
    /// The limits the settings name.
    pub fn from_settings(s: &Settings) -> Limits {
        Limits {
            header_timeout: s.http_header_timeout,
            body_timeout: s.http_body_timeout,
            idle_timeout: s.http_idle_timeout,
            max_connections: s.http_max_connections,
            max_in_flight: s.http_max_in_flight,
            queue_wait: s.http_queue_wait,
        }
    }
}

/// Serves `router` on `listener` until `shutdown`; then stops accepting, closes
/// connections between requests, lets requests in flight finish, and returns
/// once every connection is closed (the caller bounds that wait).
pub async fn serve(listener: TcpListener, router: Router, limits: Limits, shutdown: CancellationToken) {
    warn_if_near_fd_limit(limits.max_connections);
    let registry = Arc::new(Registry::new());
    let in_flight = Arc::new(Semaphore::new(limits.max_in_flight));
    let mut count = registry.count.subscribe();
    'accept: loop {
        let stream = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
        };
        // Make room before admitting: the newcomer is served, the oldest
        // connection that is not inside a request gives way.
        while registry.len() >= limits.max_connections {
            let evicted = registry.evict_oldest_outside_request();
            let wait = if evicted { Duration::from_secs(1) } else { Duration::from_millis(50) };
            tokio::select! {
                _ = shutdown.cancelled() => break 'accept,
                _ = count.wait_for(|&n| n < limits.max_connections) => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
        let track = registry.admit();
        let conn =
            Connection { registry: registry.clone(), track, router: router.clone(), in_flight: in_flight.clone() };
        tokio::spawn(conn.run(stream, limits, shutdown.clone()));
        // Let the new connection read what its client already sent before the next accept: under a flood,
        // a real client's request must leave the "no complete headers yet" state before others push it out.
        tokio::task::yield_now().await;
    }
    drop(listener);
    let _ = count.wait_for(|&n| n == 0).await;
}

/// One accepted connection and what its requests need.
struct Connection {
    registry: Arc<Registry>,
    track: Arc<Track>,
    router: Router,
    in_flight: Arc<Semaphore>,
}

impl Connection {
    /// Serves the connection until it ends, its deadline passes, it is evicted or shutdown drains it.
    async fn run(self, stream: TcpStream, limits: Limits, shutdown: CancellationToken) {
        let _slot = Slot(self.registry.clone(), self.track.id);
        let track = self.track.clone();
        let io = TokioIo::new(Watched { stream, track: track.clone() });
        let (router, in_flight) = (self.router, self.in_flight);
        let service = hyper::service::service_fn(move |req| {
            handle(req, track.clone(), router.clone(), in_flight.clone(), limits)
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        // Fenix's watchdog below times headers and idleness; hyper's own header timer would need a timer and
        // restarts at the end of every response, which would cut idle connections at the header timeout.
        builder.header_read_timeout(None);
        let conn = builder.serve_connection(io, service);
        tokio::pin!(conn);
        let mut draining = false;
        loop {
            let changed = self.track.changed.notified();
            let deadline = self.track.deadline(&limits);
            tokio::select! {
                served = conn.as_mut() => {
                    if let Err(e) = served {
                        tracing::debug!(error = %e, "API connection ended with an error");
                    }
                    return;
                }
                _ = shutdown.cancelled(), if !draining => {
                    draining = true;
                    if self.track.state().phase != Phase::Busy {
                        return;
                    }
                    conn.as_mut().graceful_shutdown();
                }
                _ = sleep_until(deadline) => {
                    if self.track.deadline(&limits).is_some_and(|d| d <= Instant::now()) {
                        tracing::debug!("API connection closed: header, idle timeout or eviction");
                        return;
                    }
                }
                _ = changed => {}
            }
        }
    }
}

/// Removes its connection from the registry however the task ends.
struct Slot(Arc<Registry>, u64);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.remove(self.1);
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// One request: the in-flight cap, the body timeout, then the router.
async fn handle(
    req: hyper::Request<Incoming>,
    track: Arc<Track>,
    router: Router,
    in_flight: Arc<Semaphore>,
    limits: Limits,
) -> Result<Response, Infallible> {
    let in_request = track.begin_request();
    let Some(permit) = in_flight_slot(in_flight, limits.queue_wait).await else {
        return Ok(hold(overloaded(hyper::body::Body::is_end_stream(req.body())), in_request, None));
    };
    let body_timeout = limits.body_timeout;
    let timed_out = Arc::new(AtomicBool::new(false));
    let req = req.map(|body| {
        if hyper::body::Body::is_end_stream(&body) {
            Body::new(body)
        } else {
            Body::new(TimedBody {
                inner: body,
                deadline: Box::pin(tokio::time::sleep(body_timeout)),
                timed_out: timed_out.clone(),
            })
        }
    });
    let resp = router.oneshot(req).await.unwrap_or_else(|e| match e {});
    let resp = if timed_out.load(Ordering::Relaxed) {
        let message = format!("the request body did not arrive within {}", humantime::format_duration(body_timeout));
        closing(ApiError::new(Code::RequestTimeout, message).into_response())
    } else {
        resp
    };
    Ok(hold(resp, in_request, Some(permit)))
}

/// A slot among the requests in flight: at once when one is free, else the
/// first one freed within `wait` (the semaphore is fair: first come, first
/// served); `None` when none was.
async fn in_flight_slot(in_flight: Arc<Semaphore>, wait: Duration) -> Option<OwnedSemaphorePermit> {
    if let Ok(permit) = in_flight.clone().try_acquire_owned() {
        return Some(permit);
    }
    if wait.is_zero() {
        return None;
    }
    tokio::time::timeout(wait, in_flight.acquire_owned()).await.ok()?.ok()
}

/// Keeps the request counted (phase and in-flight permit) until its response body is written.
fn hold(resp: Response, in_request: InRequest, permit: Option<OwnedSemaphorePermit>) -> Response {
    resp.map(|body| Body::new(Held { body, _held: (in_request, permit) }))
}

/// A response body carrying what must live as long as it; sizes pass through,
/// so a response keeps its `Content-Length`.
struct Held {
    body: Body,
    _held: (InRequest, Option<OwnedSemaphorePermit>),
}

impl hyper::body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// `503 overloaded`: retry in a second. A request whose body was not read closes its connection.
fn overloaded(bodiless: bool) -> Response {
    let mut resp =
        ApiError::new(Code::Overloaded, "too many requests are being handled; retry shortly").into_response();
    resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    if bodiless {
        resp
    } else {
        closing(resp)
    }
}

/// A response after which the connection closes (its request was not read to the end).
fn closing(mut resp: Response) -> Response {
    resp.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// A request body that must arrive by a deadline; past it, reading fails and
/// the request is answered `408` whatever the handler made of the failure.
struct TimedBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    timed_out: Arc<AtomicBool>,
}

impl hyper::body::Body for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if std::future::Future::poll(self.deadline.as_mut(), cx).is_ready() {
            self.timed_out.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err("the request body did not arrive in time".into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Connection errors are the client's business; anything else (out of file
/// descriptors) is logged and waited out briefly instead of spinning.
async fn accept_failed(e: io::Error) {
    use io::ErrorKind::*;
    if matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset) {
        return;
    }
    tracing::warn!(error = %e, "API accept failed");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Warns when the connection cap leaves too few file descriptors for the
/// worker's outbound connections and the database (Linux only; elsewhere silent).
fn warn_if_near_fd_limit(max_connections: usize) {
    let Ok(limits) = std::fs::read_to_string("/proc/self/limits") else { return };
    let soft = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<usize>().ok());
    if let Some(soft) = soft {
        if max_connections > soft / 2 {
            tracing::warn!(
                max_connections,
                fd_limit = soft,
                "FENIX_HTTP_MAX_CONNECTIONS is more than half the open-file limit: deliveries may run out of sockets; \
                 raise the limit (ulimit -n) or lower the cap"
            );
        }
    }
}
