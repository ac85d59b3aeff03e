//! The forwarder against fake upstream proxies on loopback: only a `2xx`
//! answer to `CONNECT` is a tunnel; the policy's refusal and the proxy's
//! failures come back as the classes the delivery log shows.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// A fake HTTP proxy: answers each connection's head with `answer`; after a
/// `200` it answers the tunnelled request as the receiver would. Returns its
/// address and the heads it received.
async fn fake_proxy(answer: &'static [u8]) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let head = read_head(&mut conn).await;
                seen.lock().unwrap().push(head);
                let _ = conn.write_all(answer).await;
                if answer.starts_with(b"HTTP/1.1 200") {
                    read_head(&mut conn).await;
                    let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\ntunnelled").await;
                }
            });
        }
    });
    (address, heads)
}

async fn read_head(conn: &mut tokio::net::TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).await.unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

fn loopback_policy() -> fenix_destination::Policy {
    fenix_destination::Policy {
        allow_http: true,
        allow_cidrs: vec!["127.0.0.0/8".parse().unwrap()],
        deny_cidrs: vec![],
    }
}

fn upstream(address: SocketAddr, credentials: Option<(&str, &str)>) -> EgressProxy {
    EgressProxy {
        scheme: ProxyScheme::HttpConnect,
        host: address.ip().to_string(),
        port: address.port(),
        credentials: credentials
            .map(|(u, p)| ProxyCredentials { user: u.into(), password: ProxyPassword::new(p.into()) }),
    }
}

/// A GET of `http://127.0.0.1:9/` through the forwarder: the body, or what
/// the delivery log would make of the failure.
async fn get_through(egress: &Egress) -> Result<String, Option<EgressRefusal>> {
    let client = reqwest::Client::builder().proxy(egress.proxy()).build().unwrap();
    match client.get("http://127.0.0.1:9/hook").send().await {
        Ok(answer) => Ok(answer.text().await.unwrap()),
        Err(e) => {
            let mut chain = String::new();
            let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(&e);
            while let Some(s) = source {
                chain.push_str(&format!("{s}: "));
                source = s.source();
            }
            Err(refusal_in(&chain.to_ascii_lowercase()))
        }
    }
}

const TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_2xx_answer_is_a_tunnel_to_the_checked_address_with_the_proxy_credentials() {
    let (proxy, heads) = fake_proxy(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
    let egress = Egress::start(upstream(proxy, Some(("op", "pw"))), loopback_policy(), TIMEOUT).unwrap();
    assert_eq!(get_through(&egress).await, Ok("tunnelled".into()));
    let head = heads.lock().unwrap()[0].clone();
    assert!(head.starts_with("CONNECT 127.0.0.1:9 HTTP/1.1\r\n"), "{head}");
    assert!(head.to_ascii_lowercase().contains("proxy-authorization: basic b3a6chc="), "{head}");
}

#[tokio::test]
async fn an_answer_that_is_not_a_tunnel_is_refused_as_a_proxy_failure() {
    for answer in [
        &b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n"[..],
        b"SSH-2.0-OpenSSH_9.2\r\n\r\n",
        b"HTTP/1.1 302 Found\r\nlocation: http://elsewhere/\r\n\r\n",
        b"\x05\x00",
    ] {
        let (proxy, _) = fake_proxy(answer).await;
        let egress = Egress::start(upstream(proxy, None), loopback_policy(), TIMEOUT).unwrap();
        let got = get_through(&egress).await;
        assert!(matches!(got, Err(Some(EgressRefusal::Proxy(why))) if why.contains("without a tunnel")), "{got:?}");
    }
}

#[tokio::test]
async fn a_head_too_long_is_refused() {
    let long: &'static [u8] = format!("HTTP/1.1 200 OK\r\nx-pad: {}\r\n\r\n", "a".repeat(64 * 1024)).leak().as_bytes();
    let (proxy, _) = fake_proxy(long).await;
    let egress = Egress::start(upstream(proxy, None), loopback_policy(), TIMEOUT).unwrap();
    let got = get_through(&egress).await;
    assert!(matches!(got, Err(Some(EgressRefusal::Proxy(why))) if why.contains("without a tunnel")), "{got:?}");
}

#[tokio::test]
async fn refused_credentials_and_an_unreachable_proxy_say_so() {
    let (proxy, _) = fake_proxy(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n").await;
    let egress = Egress::start(upstream(proxy, Some(("op", "wrong"))), loopback_policy(), TIMEOUT).unwrap();
    let got = get_through(&egress).await;
    assert!(matches!(got, Err(Some(EgressRefusal::Proxy(why))) if why.contains("credentials")), "{got:?}");

    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let egress = Egress::start(upstream(closed, None), loopback_policy(), TIMEOUT).unwrap();
    let got = get_through(&egress).await;
    assert!(matches!(got, Err(Some(EgressRefusal::Proxy(why))) if why.contains("could not be reached")), "{got:?}");
}

#[tokio::test]
async fn an_address_the_policy_refuses_never_reaches_the_proxy() {
    let (proxy, heads) = fake_proxy(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
    let egress = Egress::start(upstream(proxy, None), fenix_destination::Policy::default(), TIMEOUT).unwrap();
    assert_eq!(get_through(&egress).await, Err(Some(EgressRefusal::DestinationBlocked)));
    assert!(heads.lock().unwrap().is_empty());
}

#[tokio::test]
async fn only_fenix_knows_the_forwarders_credential() {
    let (proxy, heads) = fake_proxy(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
    let egress = Egress::start(upstream(proxy, None), loopback_policy(), TIMEOUT).unwrap();
    let target: SocketAddr = "127.0.0.1:9".parse().unwrap();
    for password in ["", "guess", &egress.password[1..]] {
        let mut conn = tokio::net::TcpStream::connect(egress.address).await.unwrap();
        let got = socks5::connect(&mut conn, target, Some((USER, password))).await;
        assert!(matches!(got, Err(socks5::HandshakeError::Credentials)), "{password:?}: {got:?}");
    }
    let mut conn = tokio::net::TcpStream::connect(egress.address).await.unwrap();
    let got = socks5::connect(&mut conn, target, None).await;
    assert!(matches!(got, Err(socks5::HandshakeError::Credentials)), "{got:?}");
    assert!(heads.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_receiver_that_never_closes_does_not_hold_its_tunnel_after_fenix_let_go() {
    // A proxy whose tunnel answers one request, then keeps the connection open for ever.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                read_head(&mut conn).await;
                let _ = conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
                read_head(&mut conn).await;
                let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await;
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(conn);
            });
        }
    });
    let egress = Egress::start(upstream(address, None), loopback_policy(), Duration::from_millis(200)).unwrap();
    assert_eq!(get_through(&egress).await, Ok("ok".into()));
    // get_through's client is gone, and its pooled connection with it.
    while egress.tunnels.available_permits() != MAX_TUNNELS {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A fake SOCKS5 proxy that wants `op`/`pw`: records the address it is asked
/// for, grants it, then answers the tunnelled request.
async fn fake_socks5() -> (SocketAddr, Arc<Mutex<Vec<SocketAddr>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let Ok(target) = socks5::accept(&mut conn, b"op", b"pw").await else { return };
                seen.lock().unwrap().push(target);
                socks5::reply(&mut conn, Reply::Success).await.unwrap();
                read_head(&mut conn).await;
                let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nsocks").await;
            });
        }
    });
    (address, asked)
}

/// A fake proxy that answers whatever it is sent with `answer`, at once.
async fn answering(answer: &'static [u8]) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let mut buf = [0u8; 64];
            let _ = conn.read(&mut buf).await;
            let _ = conn.write_all(answer).await;
        }
    });
    address
}

fn socks(address: SocketAddr, credentials: Option<(&str, &str)>) -> EgressProxy {
    EgressProxy { scheme: ProxyScheme::Socks5, ..upstream(address, credentials) }
}

#[tokio::test]
async fn a_socks5_proxy_is_asked_for_the_address_with_its_credentials() {
    let (proxy, asked) = fake_socks5().await;
    let egress = Egress::start(socks(proxy, Some(("op", "pw"))), loopback_policy(), TIMEOUT).unwrap();
    assert_eq!(get_through(&egress).await, Ok("socks".into()));
    assert_eq!(*asked.lock().unwrap(), vec!["127.0.0.1:9".parse::<SocketAddr>().unwrap()]);

    let egress = Egress::start(socks(proxy, Some(("op", "wrong"))), loopback_policy(), TIMEOUT).unwrap();
    let got = get_through(&egress).await;
    assert!(matches!(got, Err(Some(EgressRefusal::Proxy(why))) if why.contains("credentials")), "{got:?}");
}

#[tokio::test]
async fn a_socks5_proxy_that_answers_http_or_refuses_gives_no_tunnel() {
    for answer in [&b"HTTP/1.1 400 Bad Request\r\n\r\n"[..], b"\x05\x00\x05\x02\x00\x01\0\0\0\0\0\0"] {
        let egress = Egress::start(socks(answering(answer).await, None), loopback_policy(), TIMEOUT).unwrap();
        let got = get_through(&egress).await;
        assert!(matches!(got, Err(Some(EgressRefusal::Proxy(why))) if why.contains("without a tunnel")), "{got:?}");
    }
}

#[tokio::test]
async fn a_gateway_that_could_not_reach_the_receiver_is_a_connect_failure_not_the_proxys() {
    for answer in [
        &b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n"[..],
        b"HTTP/1.1 503 Service Unavailable\r\nx-squid-error: ERR_CONNECT_FAIL 111\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 500 Unable to connect\r\nserver: tinyproxy/1.11.1\r\n\r\n",
    ] {
        let (proxy, _) = fake_proxy(answer).await;
        let egress = Egress::start(upstream(proxy, None), loopback_policy(), TIMEOUT).unwrap();
        assert_eq!(get_through(&egress).await, Err(Some(EgressRefusal::ReceiverUnreachable)));
    }
    // Any other 500 is the proxy's own failure.
    let (proxy, _) = fake_proxy(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n").await;
    let egress = Egress::start(upstream(proxy, None), loopback_policy(), TIMEOUT).unwrap();
    let got = get_through(&egress).await;
    assert!(matches!(got, Err(Some(EgressRefusal::Proxy(why))) if why.contains("without a tunnel")), "{got:?}");
}
