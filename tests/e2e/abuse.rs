//! The API under a hostile or careless client: floods of half-open connections,
//! slow bodies, idle keep-alive connections, more requests than it handles at
//! once, and the auth scheme in any case. Loopback only; every flood is bounded
//! in count and in time.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use serde_json::{json, Value};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};
use tokio_util::sync::CancellationToken;

use crate::support::{eventually, Backend, Fenix, Plan, Receiver, TestDb};

/// Half-open connections a flood holds at once: thousands, under the test process's open-file limit.
const FLOOD: usize = 2_000;
/// The flooded server's connection cap.
const MAX_CONNECTIONS: usize = 64;
/// The open-file limit the flooded `fenix` runs under: below the flood, as on a modest host.
const FD_LIMIT: u64 = 1_024;
/// A guard against hanging for ever: a server that stops answering fails here (not a timing assertion).
const HANG: Duration = Duration::from_secs(120);

/// The first bytes of a request whose headers never end.
const HALF_SENT: &[u8] = b"POST /v1/apps HTTP/1.1\r\nHost: fenix\r\nContent-Ty";

fn addr_of(fenix: &Fenix) -> String {
    fenix.base.trim_start_matches("http://").to_string()
}

/// `count` half-open connections, each opened again a second after the server
/// closes it, until the flood is dropped (bounded in time by the test's guards).
struct Flood {
    stop: CancellationToken,
    /// Flood connections that were opened at least once.
    started: Arc<AtomicUsize>,
    /// Connections the server closed.
    cut: Arc<AtomicUsize>,
}

impl Flood {
    fn start(addr: &str, count: usize) -> Flood {
        let (stop, started, cut) =
            (CancellationToken::new(), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        for _ in 0..count {
            let (addr, stop, started, cut) = (addr.to_string(), stop.clone(), started.clone(), cut.clone());
            tokio::spawn(async move {
                let mut first = true;
                while !stop.is_cancelled() {
                    let connected = tokio::select! {
                        _ = stop.cancelled() => return,
                        c = TcpStream::connect(&addr) => c,
                    };
                    if let Ok(mut conn) = connected {
                        if std::mem::take(&mut first) {
                            started.fetch_add(1, Ordering::Relaxed);
                        }
                        if conn.write_all(HALF_SENT).await.is_ok() {
                            let mut buf = [0u8; 512];
                            tokio::select! {
                                _ = stop.cancelled() => return,
                                _ = conn.read(&mut buf) => { cut.fetch_add(1, Ordering::Relaxed); }
                            }
                        }
                    }
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            });
        }
        Flood { stop, started, cut }
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Calls the API with the admin token on a new connection, as a client arriving during the flood would.
async fn call_fresh(fenix: &Fenix, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("client");
    let mut req =
        http.request(method.parse().expect("method"), format!("{}{path}", fenix.base)).bearer_auth(&fenix.token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("API request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn the_api_and_deliveries_go_on_during_a_flood_of_half_open_connections(backend: Backend) {
    let db = TestDb::new(backend).await;
    let cap = MAX_CONNECTIONS.to_string();
    let limits = [
        ("FENIX_HTTP_MAX_CONNECTIONS", cap.as_str()),
        ("FENIX_HTTP_MAX_IN_FLIGHT", "32"),
        ("FENIX_HTTP_HEADER_TIMEOUT", "2s"),
    ];
    let fenix = Fenix::start_with_fd_limit(&db, &limits, FD_LIMIT).await;
    let receiver = Receiver::http(|_| Plan::ok()).await;

    // Twice as many half-open connections as the process has file descriptors: each must get in.
    let flood = Flood::start(&addr_of(&fenix), FLOOD);
    let what = format!("all {FLOOD} half-open connections were opened (the server keeps accepting)");
    eventually(&what, Duration::from_secs(60), || async { flood.started.load(Ordering::Relaxed) >= FLOOD }).await;

    // While the flood goes on, new clients are answered and a delivery is made.
    let checks = async {
        let (status, app) = call_fresh(&fenix, "POST", "/v1/apps", Some(json!({"name": "acme", "uid": "acme"}))).await;
        assert_eq!(status, 201, "{app}");
        let app = app["id"].as_str().expect("app id").to_string();
        let endpoint = json!({"url": receiver.url});
        let (status, body) = call_fresh(&fenix, "POST", &format!("/v1/apps/{app}/endpoints"), Some(endpoint)).await;
        assert_eq!(status, 201, "{body}");
        let event = json!({"type": "booking.confirmed", "data": {"n": 1}});
        let (status, event) = call_fresh(&fenix, "POST", &format!("/v1/apps/{app}/events"), Some(event)).await;
        assert_eq!(status, 202, "{event}");
        let deliveries = format!("/v1/apps/{app}/deliveries?event_id={}", event["id"].as_str().expect("event id"));
        eventually("the event was delivered during the flood", Duration::from_secs(60), || async {
            let (status, body) = call_fresh(&fenix, "GET", &deliveries, None).await;
            status == 200 && body["data"][0]["status"] == "succeeded"
        })
        .await;
    };
    tokio::time::timeout(HANG, checks).await.expect("the API stopped answering during the flood");
    assert_eq!(receiver.count(), 1, "the receiver got the event");
    let what = format!("the server holds at most {MAX_CONNECTIONS} connections: it closed the others");
    eventually(&what, Duration::from_secs(60), || async {
        flood.cut.load(Ordering::Relaxed) >= FLOOD - MAX_CONNECTIONS
    })
    .await;
    drop(flood);
    assert!(!fenix.logs().contains("Too many open files"), "fenix ran out of file descriptors");
}

/// Reads one HTTP response (headers, then `Content-Length` bytes or up to EOF).
async fn read_response(conn: &mut TcpStream) -> (u16, String, Value) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut chunk = [0u8; 4096];
        let n = conn.read(&mut chunk).await.expect("read response");
        assert!(n > 0, "connection closed before a response: {:?}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status code");
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse::<usize>().expect("content-length"));
    let mut body = buf[head_end..].to_vec();
    match length {
        Some(n) => {
            while body.len() < n {
                let mut chunk = [0u8; 4096];
                let read = conn.read(&mut chunk).await.expect("read body");
                assert!(read > 0, "connection closed inside the body");
                body.extend_from_slice(&chunk[..read]);
            }
        }
        None => {
            conn.read_to_end(&mut body).await.expect("read body");
        }
    }
    (status, head, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// Reads a response's head only (an interim `100 Continue`, which has no body).
async fn read_head(conn: &mut TcpStream) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let n = conn.read(&mut byte).await.expect("read head");
        assert!(n > 0, "connection closed before a response: {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Waits until the server closes `conn` (a read answers end of file or an error).
async fn closed_by_server(conn: &mut TcpStream) -> bool {
    let mut buf = [0u8; 512];
    let closed = async {
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => continue,
            }
        }
    };
    tokio::time::timeout(HANG, closed).await.unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_that_arrives_too_slowly_is_answered_408() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[("FENIX_HTTP_BODY_TIMEOUT", "1s")]).await;
    let mut conn = TcpStream::connect(addr_of(&fenix)).await.expect("connect");
    let head = format!(
        "POST /v1/apps HTTP/1.1\r\nHost: fenix\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"na",
        fenix.token
    );
    conn.write_all(head.as_bytes()).await.expect("send headers and part of the body");
    let (status, head, body) = tokio::time::timeout(HANG, read_response(&mut conn)).await.expect("no answer at all");
    assert_eq!(status, 408, "{head}{body}");
    assert_eq!(body["error"]["code"], "request_timeout", "{body}");
    assert!(head.contains("connection: close"), "{head}");
    assert!(closed_by_server(&mut conn).await, "the connection is closed after the 408");
    let (status, body) = fenix.call("GET", "/v1/apps", None).await;
    assert_eq!((status, body["data"].clone()), (200, json!([])), "nothing was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_without_complete_headers_or_idle_too_long_are_closed() {
    let db = TestDb::new(Backend::Sqlite).await;
    let timeouts = [("FENIX_HTTP_HEADER_TIMEOUT", "1s"), ("FENIX_HTTP_IDLE_TIMEOUT", "2s")];
    let fenix = Fenix::start(&db, &timeouts).await;

    let mut half_open = TcpStream::connect(addr_of(&fenix)).await.expect("connect");
    half_open.write_all(HALF_SENT).await.expect("send part of the headers");
    let mut silent = TcpStream::connect(addr_of(&fenix)).await.expect("connect");

    let mut idle = TcpStream::connect(addr_of(&fenix)).await.expect("connect");
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: fenix\r\n\r\n").await.expect("send a request");
    let (status, head, _) = read_response(&mut idle).await;
    assert_eq!(status, 200, "{head}");
    assert!(!head.contains("connection: close"), "the connection is kept alive after a request: {head}");

    assert!(closed_by_server(&mut half_open).await, "a connection with half-sent headers is closed");
    assert!(closed_by_server(&mut silent).await, "a connection that sends nothing is closed");
    assert!(closed_by_server(&mut idle).await, "an idle keep-alive connection is closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_over_the_in_flight_cap_are_answered_503_overloaded() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = start_with_two_slots(&db, "200ms").await;
    // Two requests held in flight (`Expect: 100-continue` says when each handler reads its body),
    // then a third, refused once the queue wait is over.
    let mut slow = hold_both_slots(&fenix).await;
    let resp = fenix.request("GET", "/v1/apps").send().await.expect("API request");
    let (status, retry_after) = (resp.status().as_u16(), resp.headers().get("retry-after").cloned());
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    assert_eq!((status, body["error"]["code"].as_str()), (503, Some("overloaded")), "{body}");
    assert_eq!(retry_after.as_ref().and_then(|v| v.to_str().ok()), Some("1"), "503 says when to retry");

    // The held requests finish normally, and then the API answers again.
    for (conn, body) in &mut slow {
        conn.write_all(body.as_bytes()).await.expect("send the body");
        let (status, head, created) = read_response(conn).await;
        assert_eq!(status, 201, "{head}{created}");
    }
    eventually("the API answers again", Duration::from_secs(60), || async {
        fenix.call("GET", "/v1/apps", None).await.0 == 200
    })
    .await;
}

/// Fenix with two in-flight slots, a body timeout long enough to hold them, and `queue_wait`.
async fn start_with_two_slots(db: &TestDb, queue_wait: &str) -> Fenix {
    let limits =
        [("FENIX_HTTP_MAX_IN_FLIGHT", "2"), ("FENIX_HTTP_BODY_TIMEOUT", "5m"), ("FENIX_HTTP_QUEUE_WAIT", queue_wait)];
    Fenix::start(db, &limits).await
}

/// Two requests hold the API's two slots (headers sent, body not yet); a third waits.
async fn hold_both_slots(fenix: &Fenix) -> Vec<(TcpStream, String)> {
    let mut slow = Vec::new();
    for n in 0..2 {
        let body = json!({"name": "slow", "uid": format!("held-{n}")}).to_string();
        let mut conn = TcpStream::connect(addr_of(fenix)).await.expect("connect");
        let head = format!(
            "POST /v1/apps HTTP/1.1\r\nHost: fenix\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
            fenix.token,
            body.len()
        );
        conn.write_all(head.as_bytes()).await.expect("send headers");
        let interim = tokio::time::timeout(HANG, read_head(&mut conn)).await.expect("no answer to the headers");
        assert!(interim.starts_with("HTTP/1.1 100"), "the request is being read: {interim}");
        slow.push((conn, body));
    }
    slow
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_cap_waits_for_a_slot_freed_within_the_queue_wait() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = start_with_two_slots(&db, "60s").await;
    let mut slow = hold_both_slots(&fenix).await;
    // A third request while both slots are taken: it waits instead of 503.
    let waiting = tokio::spawn(fenix.request("GET", "/v1/apps").send());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the third request is not answered while both slots are held");
    // One held request finishes: its slot goes to the waiting one, which is served.
    let (conn, body) = &mut slow[0];
    conn.write_all(body.as_bytes()).await.expect("send the body");
    let (status, head, created) = read_response(conn).await;
    assert_eq!(status, 201, "{head}{created}");
    let resp = tokio::time::timeout(HANG, waiting).await.expect("answered once a slot is free").unwrap().unwrap();
    let status = resp.status().as_u16();
    let listed: Value = resp.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 200, "the waiting request is served, not refused: {listed}");
    assert!(listed["data"].as_array().is_some_and(|a| a.iter().any(|app| app["uid"] == "held-0")), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_scheme_is_accepted_in_any_case() {
    let db = TestDb::new(Backend::Sqlite).await;
    let fenix = Fenix::start(&db, &[]).await;
    let http = reqwest::Client::new();
    let get = |auth: String| {
        let req = http.get(format!("{}/v1/apps", fenix.base)).header("authorization", auth);
        async move {
            let resp = req.send().await.expect("API request");
            let status = resp.status().as_u16();
            (status, resp.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let (status, body) = get(format!("{scheme} {}", fenix.token)).await;
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    for auth in ["BEARER fxa_wrong".to_string(), format!("Basic {}", fenix.token), format!("Bearer{}", fenix.token)] {
        let (status, body) = get(auth.clone()).await;
        assert_eq!((status, body["error"]["code"].as_str()), (401, Some("unauthorized")), "{auth}");
    }
}

crate::on_both_backends!(the_api_and_deliveries_go_on_during_a_flood_of_half_open_connections);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_sigterm_new_connections_are_refused_and_a_request_in_flight_is_answered() {
    let db = TestDb::new(Backend::Sqlite).await;
    let mut fenix = Fenix::start(&db, &[]).await;
    let body = json!({"name": "late", "uid": "late"}).to_string();
    let mut conn = TcpStream::connect(addr_of(&fenix)).await.expect("connect");
    let head = format!(
        "POST /v1/apps HTTP/1.1\r\nHost: fenix\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        fenix.token,
        body.len()
    );
    conn.write_all(head.as_bytes()).await.expect("send headers");
    let interim = tokio::time::timeout(HANG, read_head(&mut conn)).await.expect("no answer to the headers");
    assert!(interim.starts_with("HTTP/1.1 100"), "the request is being read: {interim}");

    let pid = fenix.child.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let addr = addr_of(&fenix);
    eventually("new connections are refused", Duration::from_secs(60), || async {
        TcpStream::connect(&addr).await.is_err()
    })
    .await;

    conn.write_all(body.as_bytes()).await.expect("send the body");
    let (status, head, created) = tokio::time::timeout(HANG, read_response(&mut conn)).await.expect("no answer");
    assert_eq!(status, 201, "{head}{created}");
    assert!(fenix.terminate().await.success(), "fenix exits cleanly");
}
