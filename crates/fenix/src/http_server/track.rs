//! Connection tracking for the API server: where each connection is in its
//! life (waiting for a request, sending headers, inside a request), the
//! deadline that follows from it, and the registry that picks which
//! connection gives way when the cap is reached.

use std::{
    collections::HashMap,
    io,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpStream,
    sync::watch,
    time::Instant,
};

use super::Limits;

/// Where a connection is in its life, for its deadline and for eviction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// No byte of a request yet: a new connection, or an idle keep-alive one.
    Waiting,
    /// Some bytes of a request's headers arrived, not all.
    Headers,
    /// Inside a request: body, handler, response.
    Busy,
}

#[derive(Debug)]
pub(super) struct TrackState {
    pub(super) phase: Phase,
    /// When the current phase's clock started.
    since: Instant,
    /// No request was served yet: waiting counts against the header timeout.
    fresh: bool,
    requests: usize,
    evicted: bool,
}

/// One connection's phase, shared by its I/O, its requests and its watchdog.
#[derive(Debug)]
pub(super) struct Track {
    pub(super) id: u64,
    state: Mutex<TrackState>,
    /// Woken on every phase change and on eviction, so the watchdog re-reads its deadline.
    pub(super) changed: tokio::sync::Notify,
}

impl Track {
    pub(super) fn state(&self) -> std::sync::MutexGuard<'_, TrackState> {
        self.state.lock().expect("connection track lock")
    }

    /// Bytes arrived: a waiting connection starts a request's headers.
    pub(super) fn bytes_arrived(&self) {
        let mut s = self.state();
        if s.phase == Phase::Waiting {
            s.phase = Phase::Headers;
            if !s.fresh {
                s.since = Instant::now();
            }
            drop(s);
            self.changed.notify_one();
        }
    }

    /// A request's headers are complete; the returned guard ends the request when dropped.
    pub(super) fn begin_request(self: &Arc<Self>) -> InRequest {
        let mut s = self.state();
        s.phase = Phase::Busy;
        s.requests += 1;
        drop(s);
        self.changed.notify_one();
        InRequest(self.clone())
    }

    /// When the connection must be closed if its phase has not changed by then.
    pub(super) fn deadline(&self, limits: &Limits) -> Option<Instant> {
        let s = self.state();
        match s.phase {
            _ if s.evicted => Some(Instant::now()),
            Phase::Busy => None,
            Phase::Waiting if !s.fresh => Some(s.since + limits.idle_timeout),
            Phase::Waiting | Phase::Headers => Some(s.since + limits.header_timeout),
        }
    }
}

/// Held from a request's headers to the end of its response body.
pub(super) struct InRequest(Arc<Track>);

impl Drop for InRequest {
    fn drop(&mut self) {
        let mut s = self.0.state();
        s.requests -= 1;
        if s.requests == 0 {
            s.phase = Phase::Waiting;
            s.fresh = false;
            s.since = Instant::now();
        }
        drop(s);
        self.0.changed.notify_one();
    }
}

/// The open connections; `count` mirrors their number for waiters.
pub(super) struct Registry {
    conns: Mutex<(u64, HashMap<u64, Arc<Track>>)>,
    pub(super) count: watch::Sender<usize>,
}

impl Registry {
    pub(super) fn new() -> Registry {
        Registry { conns: Mutex::new((0, HashMap::new())), count: watch::Sender::new(0) }
    }

    pub(super) fn len(&self) -> usize {
        *self.count.borrow()
    }

    pub(super) fn admit(&self) -> Arc<Track> {
        let mut conns = self.conns.lock().expect("registry lock");
        conns.0 += 1;
        let state =
            TrackState { phase: Phase::Waiting, since: Instant::now(), fresh: true, requests: 0, evicted: false };
        let track = Arc::new(Track { id: conns.0, state: Mutex::new(state), changed: Default::default() });
        conns.1.insert(track.id, track.clone());
        self.count.send_replace(conns.1.len());
        track
    }

    pub(super) fn remove(&self, id: u64) {
        let mut conns = self.conns.lock().expect("registry lock");
        conns.1.remove(&id);
        self.count.send_replace(conns.1.len());
    }

    /// Closes the connection that has waited longest outside a request, preferring those that never
    /// completed one; false when every connection is inside a request.
    pub(super) fn evict_oldest_outside_request(&self) -> bool {
        let conns = self.conns.lock().expect("registry lock");
        let oldest = conns
            .1
            .values()
            .filter_map(|t| {
                let s = t.state();
                // Connections that never completed a request (half-open floods) go before idle keep-alive ones.
                (s.phase != Phase::Busy && !s.evicted).then_some(((!s.fresh, s.since), t))
            })
            .min_by_key(|(key, _)| *key);
        let Some((_, track)) = oldest else { return false };
        track.state().evicted = true;
        track.changed.notify_one();
        tracing::debug!("API connection cap reached: closed the oldest connection outside a request");
        true
    }
}

/// The socket, telling its connection's track when request bytes arrive.
pub(super) struct Watched {
    pub(super) stream: TcpStream,
    pub(super) track: Arc<Track>,
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.track.bytes_arrived();
        }
        read
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
