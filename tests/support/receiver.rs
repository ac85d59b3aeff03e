//! Real receivers on loopback (plain HTTP or HTTPS with a certificate made at
//! test time) that record every request and answer as a [`Plan`] says.

use std::{
    collections::HashMap,
    convert::Infallible,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use http_body_util::{BodyExt, Full};
use hyper::{body::Bytes, server::conn::http1, service::service_fn, Request, Response};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
};
use tokio::net::TcpListener;

/// One request as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// The query string, without `?` ("" when none).
    pub query: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    pub at: Instant,
    /// The HTTP version it came over: `HTTP/1.1` or `HTTP/2.0`.
    pub version: String,
}

impl Received {
    /// A header's value, or "".
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str).unwrap_or("")
    }

    /// The body parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("receiver got JSON")
    }
}

/// True when the signing crate accepts `got` as signed, freshly, with `secret`
/// under fenix-v1 (the default scheme).
pub fn signed_v1_by(secret: &str, got: &Received) -> bool {
    let req = fenix_signing::SignedRequest {
        scheme: fenix_signing::Scheme::FenixV1,
        timestamp: got.header("x-fenix-timestamp"),
        signature_header: got.header("x-fenix-signature"),
        msg_id: None,
        body: &got.body,
    };
    fenix_signing::verify(&req, &[secret], fenix_signing::DEFAULT_TOLERANCE, super::unix_now()).is_ok()
}

/// How to answer one request.
#[derive(Debug, Clone)]
pub struct Plan {
    pub status: u16,
    pub delay: Duration,
    pub headers: Vec<(String, String)>,
    /// Raw bytes: a hostile receiver may answer anything (NUL, invalid UTF-8).
    pub body: Vec<u8>,
}

impl Plan {
    /// Answer `status` at once.
    pub fn status(status: u16) -> Plan {
        Plan { status, delay: Duration::ZERO, headers: vec![], body: Vec::new() }
    }

    /// 200 OK.
    pub fn ok() -> Plan {
        Plan { body: "ok".into(), ..Plan::status(200) }
    }

    /// Adds a response header.
    pub fn with_header(mut self, k: &str, v: &str) -> Plan {
        self.headers.push((k.into(), v.into()));
        self
    }

    /// Waits before answering.
    pub fn after(mut self, d: Duration) -> Plan {
        self.delay = d;
        self
    }

    /// Sets the response body.
    pub fn with_body(mut self, b: impl Into<String>) -> Plan {
        self.body = b.into().into_bytes();
        self
    }

    /// Sets the response body to exactly these bytes.
    pub fn with_bytes(mut self, b: &[u8]) -> Plan {
        self.body = b.to_vec();
        self
    }
}

type Behaviour = Arc<dyn Fn(usize) -> Plan + Send + Sync>;

/// Requests in the receiver's hands (from their head to the answer), and the
/// connections accepted so far.
#[derive(Default)]
struct Concurrency {
    now: AtomicUsize,
    most: AtomicUsize,
    connections: AtomicUsize,
}

/// How an HTTPS receiver presents itself.
pub struct Tls<'a> {
    /// Offer HTTP/2 by ALPN (`h2`, then `http/1.1`); without it, HTTP/1.1 only (no ALPN).
    pub h2: bool,
    /// DNS names the certificate is for, besides `localhost` and `127.0.0.1`.
    pub names: &'a [&'a str],
}

/// One request in the receiver's hands, counted out when dropped.
struct InFlight<'c>(&'c Concurrency);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A receiver; stops when dropped.
pub struct Receiver {
    /// The URL to register, e.g. `http://127.0.0.1:41234/hook`.
    pub url: String,
    /// PEM of the CA that signed an HTTPS receiver's certificate (for FENIX_EXTRA_CA_CERT).
    pub ca_pem_path: Option<PathBuf>,
    requests: Arc<Mutex<Vec<Received>>>,
    behaviour: Arc<Mutex<Behaviour>>,
    /// Requests being answered now, and the most at once so far.
    concurrency: Arc<Concurrency>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// A plain HTTP receiver answering by `behaviour(n)` for the n-th request (0-based).
    pub async fn http(behaviour: impl Fn(usize) -> Plan + Send + Sync + 'static) -> Receiver {
        Receiver::start(None, Arc::new(behaviour)).await
    }

    /// An HTTPS receiver with a fresh CA and a certificate for 127.0.0.1 and localhost;
    /// the CA's PEM is written into `dir`.
    pub async fn https(dir: &Path, behaviour: impl Fn(usize) -> Plan + Send + Sync + 'static) -> Receiver {
        Receiver::https_with(dir, Tls { h2: false, names: &[] }, behaviour).await
    }

    /// An HTTPS receiver as `tls` says: speaking HTTP/2 when it offers `h2`
    /// and the client picks it, HTTP/1.1 otherwise.
    pub async fn https_with(
        dir: &Path,
        tls: Tls<'_>,
        behaviour: impl Fn(usize) -> Plan + Send + Sync + 'static,
    ) -> Receiver {
        Receiver::https_inner(dir, tls, None, Arc::new(behaviour)).await
    }

    /// An HTTPS receiver (a fresh CA, its certificate for 127.0.0.1,
    /// localhost and `names`) that requires a client certificate issued by
    /// the CA of PEM `client_ca`: a client without one, or with another, fails
    /// the handshake.
    pub async fn https_requiring_client_cert(
        dir: &Path,
        names: &[&str],
        client_ca: &str,
        behaviour: impl Fn(usize) -> Plan + Send + Sync + 'static,
    ) -> Receiver {
        Receiver::https_inner(dir, Tls { h2: false, names }, Some(client_ca), Arc::new(behaviour)).await
    }

    async fn https_inner(dir: &Path, tls: Tls<'_>, client_ca: Option<&str>, behaviour: Behaviour) -> Receiver {
        let (acceptor, ca_pem) = tls_acceptor(&tls, client_ca);
        let ca_path = dir.join(format!("ca-{}.pem", ulid::Ulid::new()));
        std::fs::write(&ca_path, ca_pem).expect("write CA");
        let mut r = Receiver::start(Some(acceptor), behaviour).await;
        r.url = r.url.replace("http://", "https://");
        r.ca_pem_path = Some(ca_path);
        r
    }

    async fn start(tls: Option<tokio_rustls::TlsAcceptor>, behaviour: Behaviour) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let addr = listener.local_addr().expect("addr");
        let requests: Arc<Mutex<Vec<Received>>> = Arc::default();
        let behaviour = Arc::new(Mutex::new(behaviour));
        let concurrency: Arc<Concurrency> = Arc::default();
        let (reqs, beh, conc) = (requests.clone(), behaviour.clone(), concurrency.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                conc.connections.fetch_add(1, Ordering::SeqCst);
                let (reqs, beh, tls, conc) = (reqs.clone(), beh.clone(), tls.clone(), conc.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req: Request<hyper::body::Incoming>| {
                        let (reqs, beh, conc) = (reqs.clone(), beh.clone(), conc.clone());
                        async move {
                            let now = conc.now.fetch_add(1, Ordering::SeqCst) + 1;
                            conc.most.fetch_max(now, Ordering::SeqCst);
                            // Counted out when the answer is made or the request dropped (its
                            // sender went away mid-answer): either way it is no longer in flight.
                            let _in_flight = InFlight(&conc);
                            let resp = answer(req, &reqs, &beh).await;
                            Ok::<_, Infallible>(resp)
                        }
                    });
                    match tls {
                        Some(acceptor) => {
                            match acceptor.accept(stream).into_fallible().await {
                                // HTTP/2 when ALPN chose it (the acceptor offers it only
                                // for an `h2` receiver), else HTTP/1.1.
                                Ok(s) => {
                                    let _ = auto::Builder::new(TokioExecutor::new())
                                        .serve_connection(TokioIo::new(s), svc)
                                        .await;
                                }
                                Err((_, stream)) => linger(stream).await,
                            }
                        }
                        None => {
                            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                        }
                    }
                });
            }
        });
        Receiver { url: format!("http://{addr}/hook"), ca_pem_path: None, requests, behaviour, concurrency, task }
    }

    /// Changes how later requests are answered.
    pub fn set_behaviour(&self, behaviour: impl Fn(usize) -> Plan + Send + Sync + 'static) {
        *self.behaviour.lock().unwrap() = Arc::new(behaviour);
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.requests.lock().unwrap().clone()
    }

    /// The most requests that were being answered at one time so far.
    pub fn max_concurrent(&self) -> usize {
        self.concurrency.most.load(Ordering::SeqCst)
    }

    /// How many connections were accepted so far.
    pub fn connections(&self) -> usize {
        self.concurrency.connections.load(Ordering::SeqCst)
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

/// A refused handshake's connection closed as servers close it (a lingering
/// close): the alert already written, the client's bytes read until it hangs
/// up. Dropped at once, the unread bytes would make the kernel answer with a
/// reset, which may reach the client before the alert does.
async fn linger(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = stream.shutdown().await;
    let mut buf = [0u8; 4096];
    let drain = async { while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {} };
    let _ = tokio::time::timeout(Duration::from_secs(5), drain).await;
}

async fn answer(
    req: Request<hyper::body::Incoming>,
    reqs: &Mutex<Vec<Received>>,
    beh: &Mutex<Behaviour>,
) -> Response<Full<Bytes>> {
    let method = req.method().to_string();
    let version = format!("{:?}", req.version());
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_ascii_lowercase(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = req.into_body().collect().await.map(|b| b.to_bytes().to_vec()).unwrap_or_default();
    let n = {
        let mut all = reqs.lock().unwrap();
        all.push(Received { method, path, query, headers, body, at: Instant::now(), version });
        all.len() - 1
    };
    let behaviour = beh.lock().unwrap().clone();
    let mut plan = behaviour(n);
    plan.body = echo_challenge(plan.body, &reqs.lock().unwrap()[n].body);
    if !plan.delay.is_zero() {
        tokio::time::sleep(plan.delay).await;
    }
    let mut resp = Response::builder().status(plan.status);
    for (k, v) in &plan.headers {
        resp = resp.header(k, v);
    }
    resp.body(Full::new(Bytes::from(plan.body))).expect("response")
}

/// Written in a plan's body, stands for the ownership challenge of the
/// request (`data.challenge` of a `webhook.verification` body), so a receiver
/// can echo it.
pub const CHALLENGE: &str = "{{challenge}}";

fn echo_challenge(body: Vec<u8>, request: &[u8]) -> Vec<u8> {
    let Ok(text) = String::from_utf8(body.clone()) else { return body };
    if !text.contains(CHALLENGE) {
        return body;
    }
    let sent: serde_json::Value = serde_json::from_slice(request).unwrap_or_default();
    text.replace(CHALLENGE, sent["data"]["challenge"].as_str().unwrap_or("")).into_bytes()
}

fn tls_acceptor(tls: &Tls<'_>, client_ca: Option<&str>) -> (tokio_rustls::TlsAcceptor, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "Fenix test CA");
    let ca = ca_params.self_signed(&ca_key).expect("CA cert");
    let leaf_key = KeyPair::generate().expect("leaf key");
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    names.extend(tls.names.iter().map(|n| n.to_string()));
    let leaf_params = CertificateParams::new(names).expect("leaf params");
    let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).expect("leaf cert");
    let certs = vec![leaf.der().clone()];
    let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).expect("key der");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = rustls::ServerConfig::builder();
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            use rustls::pki_types::{pem::PemObject, CertificateDer};
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots.add(cert.expect("client CA PEM")).expect("client CA");
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder(Arc::new(roots)).build().expect("verifier");
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(certs, key).expect("TLS config");
    if tls.h2 {
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    }
    (tokio_rustls::TlsAcceptor::from(Arc::new(config)), ca.pem())
}
