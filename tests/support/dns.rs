//! A small authoritative DNS server on 127.0.0.1 (UDP and TCP on one random
//! port) whose zone the test changes at runtime: point Fenix at it with
//! `("FENIX_DNS_SERVERS", &dns.server())` and no query ever leaves loopback.
//!
//! A name in the zone answers NOERROR with its addresses of the asked family
//! (A → IPv4, AAAA → IPv6, possibly none); a name not in the zone answers
//! NXDOMAIN; a name marked with [`TestDns::fail`] answers SERVFAIL. Names are
//! matched in lower case without the trailing dot. A name set to hang
//! ([`TestDns::hang`]) is never answered: a slow or hostile name server.

use std::{
    collections::{HashMap, HashSet},
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
};

use hickory_proto::{
    op::{Message, MessageType, ResponseCode},
    rr::{
        rdata::{A, AAAA},
        RData, Record, RecordType,
    },
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, UdpSocket},
};

type Zone = Arc<Mutex<HashMap<String, Vec<IpAddr>>>>;
type QueryLog = Arc<Mutex<Vec<(String, RecordType)>>>;
type Hung = Arc<Mutex<HashSet<String>>>;
type Failing = Arc<Mutex<HashSet<String>>>;

/// A running test DNS server; stops when dropped.
pub struct TestDns {
    /// Where it listens (UDP and TCP).
    pub addr: SocketAddr,
    zone: Zone,
    asked: QueryLog,
    hung: Hung,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    failing: Failing,
}

impl Drop for TestDns {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl TestDns {
    /// Starts a server with an empty zone (every name is NXDOMAIN).
    pub async fn start() -> TestDns {
        let zone: Zone = Arc::default();
        let asked: QueryLog = Arc::default();
        let hung: Hung = Arc::default();
        let failing: Failing = Arc::default();
        let (udp, tcp) = bind_same_port().await;
        let addr = udp.local_addr().expect("dns addr");
        let tasks = vec![
            tokio::spawn(serve_udp(udp, zone.clone(), asked.clone(), hung.clone(), failing.clone())),
            tokio::spawn(serve_tcp(tcp, zone.clone(), asked.clone(), hung.clone(), failing.clone())),
        ];
        TestDns { addr, zone, asked, hung, tasks, failing }
    }

    /// Starts a server answering `zone` (name → addresses).
    pub async fn with_zone(zone: &[(&str, &[&str])]) -> TestDns {
        let dns = TestDns::start().await;
        for (name, ips) in zone {
            dns.set(name, ips);
        }
        dns
    }

    /// The value for `FENIX_DNS_SERVERS`.
    pub fn server(&self) -> String {
        self.addr.to_string()
    }

    /// From now on `name` answers exactly `ips` (an empty list: NOERROR with no records).
    pub fn set(&self, name: &str, ips: &[&str]) {
        let ips = ips.iter().map(|ip| ip.parse().unwrap_or_else(|_| panic!("bad test address {ip}"))).collect();
        self.zone.lock().unwrap().insert(normalise(name), ips);
    }

    /// From now on `name` answers NXDOMAIN.
    pub fn remove(&self, name: &str) {
        self.zone.lock().unwrap().remove(&normalise(name));
    }

    /// From now on questions about `name` get no answer at all (UDP dropped,
    /// TCP held open), like a name server that never answers.
    pub fn hang(&self, name: &str) {
        self.hung.lock().unwrap().insert(normalise(name));
    }

    /// From now on `name` answers SERVFAIL, as a broken upstream resolver does.
    pub fn fail(&self, name: &str) {
        self.failing.lock().unwrap().insert(normalise(name));
    }

    /// How many questions about `name` the server has been asked so far.
    pub fn queries_for(&self, name: &str) -> usize {
        let name = normalise(name);
        self.asked.lock().unwrap().iter().filter(|(n, _)| *n == name).count()
    }
}

fn normalise(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

async fn bind_same_port() -> (UdpSocket, TcpListener) {
    for _ in 0..50 {
        let udp = UdpSocket::bind("127.0.0.1:0").await.expect("bind dns udp");
        let addr = udp.local_addr().expect("dns addr");
        if let Ok(tcp) = TcpListener::bind(addr).await {
            return (udp, tcp);
        }
    }
    panic!("no free port for both UDP and TCP on 127.0.0.1");
}

async fn serve_udp(socket: UdpSocket, zone: Zone, asked: QueryLog, hung: Hung, failing: Failing) {
    let mut buf = vec![0u8; 4096];
    while let Ok((len, peer)) = socket.recv_from(&mut buf).await {
        if is_hung(&buf[..len], &hung, &asked) {
            continue;
        }
        if let Some(reply) = respond(&buf[..len], &zone, &asked, &failing) {
            let _ = socket.send_to(&reply, peer).await;
        }
    }
}

async fn serve_tcp(listener: TcpListener, zone: Zone, asked: QueryLog, hung: Hung, failing: Failing) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let (zone, asked, hung, failing) = (zone.clone(), asked.clone(), hung.clone(), failing.clone());
        tokio::spawn(async move {
            loop {
                let Ok(len) = stream.read_u16().await else { return };
                let mut buf = vec![0u8; usize::from(len)];
                if stream.read_exact(&mut buf).await.is_err() {
                    return;
                }
                if is_hung(&buf, &hung, &asked) {
                    // Hold the connection open without a word (until the server stops).
                    std::future::pending::<()>().await;
                }
                let Some(reply) = respond(&buf, &zone, &asked, &failing) else { return };
                let Ok(len) = u16::try_from(reply.len()) else { return };
                if stream.write_u16(len).await.is_err() || stream.write_all(&reply).await.is_err() {
                    return;
                }
            }
        });
    }
}

/// True (and the question logged) when the asked name is set to hang.
fn is_hung(request: &[u8], hung: &Hung, asked: &QueryLog) -> bool {
    let Ok(message) = Message::from_vec(request) else { return false };
    let Some(query) = message.queries().first() else { return false };
    let name = normalise(&query.name().to_ascii());
    if !hung.lock().unwrap().contains(&name) {
        return false;
    }
    asked.lock().unwrap().push((name, query.query_type()));
    true
}

fn respond(request: &[u8], zone: &Zone, asked: &QueryLog, failing: &Failing) -> Option<Vec<u8>> {
    let request = Message::from_vec(request).ok()?;
    let query = request.queries().first()?.clone();
    let name = normalise(&query.name().to_ascii());
    asked.lock().unwrap().push((name.clone(), query.query_type()));
    let mut reply = Message::new();
    reply
        .set_id(request.id())
        .set_message_type(MessageType::Response)
        .set_op_code(request.op_code())
        .set_recursion_desired(request.recursion_desired())
        .set_recursion_available(true)
        .set_authoritative(true)
        .add_query(query.clone());
    if failing.lock().unwrap().contains(&name) {
        reply.set_response_code(ResponseCode::ServFail);
        return reply.to_vec().ok();
    }
    let answer = zone.lock().unwrap().get(&name).cloned();
    match answer {
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
                reply.add_answer(Record::from_rdata(query.name().clone(), 0, rdata));
            }
        }
    }
    reply.to_vec().ok()
}
