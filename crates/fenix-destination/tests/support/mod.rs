//! A tiny authoritative DNS server on 127.0.0.1 (UDP and TCP on one random
//! port) whose answers come from a closure, so tests can serve public,
//! private, mixed, missing and changing names without touching real DNS.

#![allow(dead_code)]

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use hickory_resolver::proto::op::{Message, MessageType, ResponseCode};
use hickory_resolver::proto::rr::rdata::{A, AAAA};
use hickory_resolver::proto::rr::{RData, Record, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UdpSocket};

/// `None` answers NXDOMAIN; `Some(addresses)` answers NOERROR with those of
/// the asked family (possibly none).
type Answer = dyn Fn(&str, RecordType) -> Option<Vec<IpAddr>> + Send + Sync;

/// How the server answers, beyond the closure's answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    /// Every UDP reply is empty and truncated.
    TruncateUdp,
    /// Every reply is SERVFAIL.
    ServFail,
}

/// A running test DNS server.
pub struct TestDns {
    pub addr: SocketAddr,
    queries: Arc<AtomicUsize>,
    tcp_queries: Arc<AtomicUsize>,
}

impl TestDns {
    /// Starts a server answering with `answer(name_without_trailing_dot, type)`.
    pub async fn start(answer: impl Fn(&str, RecordType) -> Option<Vec<IpAddr>> + Send + Sync + 'static) -> TestDns {
        TestDns::start_with(Arc::new(answer), Mode::Normal).await
    }

    /// A server that answers every question with SERVFAIL, as a broken or
    /// overloaded upstream resolver does.
    pub async fn start_servfail() -> TestDns {
        TestDns::start_with(Arc::new(|_: &str, _| Some(Vec::new())), Mode::ServFail).await
    }

    /// Like [`TestDns::start`], but every UDP reply is empty and truncated, so
    /// only a client that asks again over TCP gets the answers.
    pub async fn start_truncating_udp(
        answer: impl Fn(&str, RecordType) -> Option<Vec<IpAddr>> + Send + Sync + 'static,
    ) -> TestDns {
        TestDns::start_with(Arc::new(answer), Mode::TruncateUdp).await
    }

    async fn start_with(answer: Arc<Answer>, mode: Mode) -> TestDns {
        let queries = Arc::new(AtomicUsize::new(0));
        let tcp_queries = Arc::new(AtomicUsize::new(0));
        let (udp, tcp) = bind_same_port().await;
        let addr = udp.local_addr().unwrap();
        let udp_answer = if mode == Mode::TruncateUdp { None } else { Some(answer.clone()) };
        tokio::spawn(serve_udp(udp, udp_answer, mode, queries.clone()));
        tokio::spawn(serve_tcp(tcp, answer, mode, queries.clone(), tcp_queries.clone()));
        TestDns { addr, queries, tcp_queries }
    }

    /// Starts a server answering from a fixed table of names.
    pub async fn with_zone(zone: &[(&str, &[&str])]) -> TestDns {
        let zone: Vec<(String, Vec<IpAddr>)> = zone
            .iter()
            .map(|(name, ips)| (name.to_string(), ips.iter().map(|ip| ip.parse().unwrap()).collect()))
            .collect();
        TestDns::start(move |name, _| zone.iter().find(|(n, _)| n == name).map(|(_, ips)| ips.clone())).await
    }

    /// How many questions the server has been asked so far.
    pub fn queries(&self) -> usize {
        self.queries.load(Ordering::SeqCst)
    }

    /// How many of those questions came over TCP.
    pub fn tcp_queries(&self) -> usize {
        self.tcp_queries.load(Ordering::SeqCst)
    }
}

async fn bind_same_port() -> (UdpSocket, TcpListener) {
    for _ in 0..50 {
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = udp.local_addr().unwrap();
        if let Ok(tcp) = TcpListener::bind(addr).await {
            return (udp, tcp);
        }
    }
    panic!("no free port for both UDP and TCP on 127.0.0.1");
}

/// `answer: None` replies to everything with an empty, truncated message.
async fn serve_udp(socket: UdpSocket, answer: Option<Arc<Answer>>, mode: Mode, queries: Arc<AtomicUsize>) {
    let mut buf = vec![0u8; 4096];
    while let Ok((len, peer)) = socket.recv_from(&mut buf).await {
        if let Some(reply) = respond(&buf[..len], answer.as_deref(), mode, &queries) {
            let _ = socket.send_to(&reply, peer).await;
        }
    }
}

async fn serve_tcp(
    listener: TcpListener,
    answer: Arc<Answer>,
    mode: Mode,
    queries: Arc<AtomicUsize>,
    tcp_queries: Arc<AtomicUsize>,
) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let answer = answer.clone();
        let queries = queries.clone();
        let tcp_queries = tcp_queries.clone();
        tokio::spawn(async move {
            loop {
                let Ok(len) = stream.read_u16().await else { return };
                let mut buf = vec![0u8; usize::from(len)];
                if stream.read_exact(&mut buf).await.is_err() {
                    return;
                }
                tcp_queries.fetch_add(1, Ordering::SeqCst);
                let Some(reply) = respond(&buf, Some(&*answer), mode, &queries) else {
                    return;
                };
                let len = u16::try_from(reply.len()).unwrap();
                if stream.write_u16(len).await.is_err() || stream.write_all(&reply).await.is_err() {
                    return;
                }
            }
        });
    }
}

fn respond(request: &[u8], answer: Option<&Answer>, mode: Mode, queries: &AtomicUsize) -> Option<Vec<u8>> {
    let request = Message::from_vec(request).ok()?;
    let query = request.queries().first()?.clone();
    queries.fetch_add(1, Ordering::SeqCst);
    let mut reply = Message::new();
    reply
        .set_id(request.id())
        .set_message_type(MessageType::Response)
        .set_op_code(request.op_code())
        .set_recursion_desired(request.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true)
        .add_query(query.clone());
    if mode == Mode::ServFail {
        reply.set_response_code(ResponseCode::ServFail);
        return reply.to_vec().ok();
    }
    let Some(answer) = answer else {
        reply.set_truncated(true);
        return reply.to_vec().ok();
    };
    let name = query.name().to_ascii().to_ascii_lowercase();
    match answer(name.trim_end_matches('.'), query.query_type()) {
        None => {
            reply.set_response_code(ResponseCode::NXDomain);
        }
        Some(ips) => {
            for ip in ips {
                let rdata = match (ip, query.query_type()) {
                    (IpAddr::V4(ip), RecordType::A) => RData::A(A(ip)),
                    (IpAddr::V6(ip), RecordType::AAAA) => RData::AAAA(AAAA(ip)),
                    _ => continue,
                };
                reply.add_answer(Record::from_rdata(query.name().clone(), 60, rdata));
            }
        }
    }
    reply.to_vec().ok()
}
