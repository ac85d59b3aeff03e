//! The egress proxy (`FENIX_EGRESS_PROXY`): every outbound request of Fenix
//! leaves through the operator's proxy, so receivers see its fixed address,
//! while the destination policy keeps deciding where requests may go.
//!
//! reqwest cannot be told to ask a proxy for an address instead of the URL's
//! name, so Fenix's clients talk to an in-process forwarder ([`Egress`]) on
//! `127.0.0.1`, as to a SOCKS5 proxy with local resolution: reqwest resolves
//! the name through the checking resolver (a refusal is the usual
//! `destination_blocked`, before anything is sent), then asks the forwarder
//! for the checked address. The forwarder checks that address against the
//! policy once more, opens a tunnel to it through the operator's proxy
//! ([`upstream`]: HTTP `CONNECT ip:port` or SOCKS5 to the IP) and splices the
//! two. TLS with the receiver (SNI and the certificate's name) stays end to
//! end in reqwest, and plain `http://` (development only) goes through the
//! same tunnel. The forwarder takes only connections that know a random
//! credential made at each start, and holds a bounded number of tunnels.

pub mod proxy_url;
mod socks5;
mod upstream;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rand::RngCore;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

pub use proxy_url::{EgressProxy, ProxyCredentials, ProxyPassword, ProxyScheme};
use socks5::Reply;

/// Tunnels the forwarder holds at once (each is two sockets). reqwest keeps
/// idle connections pooled, and each holds its tunnel, so this is generous;
/// a connection over it is refused at once rather than queued.
const MAX_TUNNELS: usize = 4096;

/// The user name of the forwarder's credential (the password is random).
const USER: &str = "fenix";

/// The running forwarder: what Fenix's clients are given as their proxy.
#[derive(Clone)]
pub struct Egress {
    proxy: reqwest::Proxy,
    #[cfg(test)]
    address: std::net::SocketAddr,
    #[cfg(test)]
    password: String,
    #[cfg(test)]
    tunnels: Arc<Semaphore>,
}

struct Forwarder {
    upstream: EgressProxy,
    policy: fenix_destination::Policy,
    timeout: Duration,
    password: String,
    tunnels: Arc<Semaphore>,
}

impl Egress {
    /// Binds the forwarder on `127.0.0.1` and serves it for the life of the
    /// process. Must be called inside the Tokio runtime.
    pub fn start(
        upstream: EgressProxy,
        policy: fenix_destination::Policy,
        timeout: Duration,
    ) -> anyhow::Result<Egress> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).context("binding the egress forwarder")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let listener = TcpListener::from_std(listener).context("serving the egress forwarder")?;
        let mut secret = [0u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut secret);
        let password = hex::encode(secret);
        let proxy = reqwest::Proxy::all(format!("socks5://{USER}:{password}@{address}"))
            .context("the egress forwarder's address")?;
        tracing::info!(proxy = %upstream, "deliveries leave through the egress proxy");
        let tunnels = Arc::new(Semaphore::new(MAX_TUNNELS));
        let forwarder =
            Arc::new(Forwarder { upstream, policy, timeout, password: password.clone(), tunnels: tunnels.clone() });
        tokio::spawn(forwarder.serve(listener));
        #[cfg(not(test))]
        let _ = password;
        Ok(Egress {
            proxy,
            #[cfg(test)]
            address,
            #[cfg(test)]
            password,
            #[cfg(test)]
            tunnels,
        })
    }

    /// The proxy every outbound client is built with (`Outbound::builder`).
    pub fn proxy(&self) -> reqwest::Proxy {
        self.proxy.clone()
    }
}

impl Forwarder {
    async fn serve(self: Arc<Self>, listener: TcpListener) {
        loop {
            match listener.accept().await {
                Ok((conn, _)) => {
                    let Ok(permit) = self.tunnels.clone().try_acquire_owned() else {
                        tracing::warn!(
                            max = MAX_TUNNELS,
                            "egress forwarder: every tunnel is in use; connection refused"
                        );
                        continue;
                    };
                    let this = self.clone();
                    tokio::spawn(async move {
                        this.tunnel(conn).await;
                        drop(permit);
                    });
                }
                Err(e) => {
                    // Out of descriptors, most likely: wait rather than spin.
                    tracing::warn!(error = %e, "egress forwarder: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    /// One connection of Fenix's client: handshake, checks, tunnel, splice.
    async fn tunnel(&self, mut conn: TcpStream) {
        let _ = conn.set_nodelay(true);
        let asked = socks5::accept(&mut conn, USER.as_bytes(), self.password.as_bytes());
        let target = match tokio::time::timeout(self.timeout, asked).await {
            Ok(Ok(target)) => target,
            Ok(Err(socks5::HandshakeError::Name)) => {
                tracing::warn!("egress forwarder: asked for a name, not a checked address; refused");
                let _ = socks5::reply(&mut conn, Reply::NotAllowed).await;
                return;
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "egress forwarder: handshake refused");
                return;
            }
            Err(_) => return,
        };
        if let Err(refusal) = self.policy.check_ip(target.ip()) {
            tracing::info!(address = %target, code = refusal.code(), "egress forwarder: destination refused");
            let _ = socks5::reply(&mut conn, Reply::NotAllowed).await;
            return;
        }
        match upstream::open(&self.upstream, target, self.timeout).await {
            Ok(tunnel) => {
                if socks5::reply(&mut conn, Reply::Success).await.is_ok() {
                    splice(conn, tunnel, self.timeout).await;
                }
            }
            Err(failure) => {
                tracing::warn!(proxy = %self.upstream, address = %target, reason = %failure.reason,
                    "egress proxy: no tunnel");
                let _ = socks5::reply(&mut conn, failure.reply).await;
            }
        }
    }
}

/// Copies both ways until both sides are done; once one side is done, the
/// other has `grace` to finish. Fenix's client never half-closes a live
/// connection, so its end means the connection was dropped: a receiver that
/// then keeps its side open (or a proxy that never closes) cannot hold the
/// tunnel, and its slot, for ever.
async fn splice(client: TcpStream, upstream: Box<dyn upstream::Io>, grace: Duration) {
    use tokio::io::AsyncWriteExt;
    let (mut client_read, mut client_write) = client.into_split();
    let (mut upstream_read, mut upstream_write) = tokio::io::split(upstream);
    let up = async {
        let _ = tokio::io::copy(&mut client_read, &mut upstream_write).await;
        let _ = upstream_write.shutdown().await;
    };
    let down = async {
        let _ = tokio::io::copy(&mut upstream_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    };
    tokio::pin!(up, down);
    tokio::select! {
        () = &mut up => { let _ = tokio::time::timeout(grace, down).await; }
        () = &mut down => { let _ = tokio::time::timeout(grace, up).await; }
    }
}

/// What an outbound request's failure says about the egress path, read from
/// the text of its error chain (lower case): reqwest reports the forwarder's
/// SOCKS5 reply there, and nothing else speaks SOCKS5 to Fenix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EgressRefusal {
    /// The forwarder's own check of the address refused it.
    DestinationBlocked,
    /// The proxy could not connect to the receiver's address (what `connect` means without a proxy).
    ReceiverUnreachable,
    /// The proxy path failed; the text says how, for the delivery log.
    Proxy(&'static str),
}

/// The refusal in a failed request's error chain, if the egress path made it.
pub fn refusal_in(chain_lower: &str) -> Option<EgressRefusal> {
    if !chain_lower.contains("socks error") {
        return None;
    }
    let table = [
        ("socks error: connection not allowed", EgressRefusal::DestinationBlocked),
        ("socks error: connection refused", EgressRefusal::ReceiverUnreachable),
        (
            "socks error: network unreachable",
            EgressRefusal::Proxy("the egress proxy could not be reached, or opened no tunnel in time"),
        ),
        (
            "socks error: host unreachable",
            EgressRefusal::Proxy("the egress proxy answered without a tunnel (see Fenix's log for its answer)"),
        ),
        (
            "socks error: general server failure",
            EgressRefusal::Proxy("the egress proxy refused Fenix's credentials (FENIX_EGRESS_PROXY)"),
        ),
    ];
    for (text, refusal) in table {
        if chain_lower.contains(text) {
            return Some(refusal);
        }
    }
    Some(EgressRefusal::Proxy("the egress forwarder could not serve the request (see Fenix's log)"))
}

#[cfg(test)]
mod tests;
