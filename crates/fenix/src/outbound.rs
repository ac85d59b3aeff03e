//! Outbound HTTP: the clients through which every request to a customer's
//! server goes (deliveries, ownership challenges, OAuth2 token fetches).
//!
//! All of them share one set of rules, written once in [`Outbound::builder`]:
//! no redirects, the checking resolver (every address of every connection is
//! checked against the destination policy), the attempt timeout, HTTPS only
//! unless `FENIX_UNSAFE_ALLOW_HTTP`, the extra CA when given, and with
//! `FENIX_EGRESS_PROXY` the egress forwarder as their proxy (`egress`; without
//! it, no proxy at all: the environment's `HTTPS_PROXY` is ignored). The common client
//! ([`Outbound::client`]) serves every endpoint that has no TLS material of its
//! own; an endpoint with a client certificate or CA certificates gets a client
//! built from the same builder with those added (`worker::clients`).

use std::sync::Arc;

use anyhow::Context;

use crate::settings::Settings;

/// The outbound clients' shared rules and the common client.
#[derive(Clone)]
pub struct Outbound {
    settings: Arc<OutboundSettings>,
    resolver: fenix_destination::CheckingResolver,
    client: reqwest::Client,
}

/// The settings every outbound client is built with.
struct OutboundSettings {
    attempt_timeout: std::time::Duration,
    pool_idle_per_host: usize,
    allow_http: bool,
    extra_ca: Option<reqwest::Certificate>,
    /// The egress forwarder, when `FENIX_EGRESS_PROXY` is set.
    egress: Option<crate::egress::Egress>,
}

impl Outbound {
    /// The rules from `settings`, and the common client.
    pub fn new(settings: &Settings, resolver: fenix_destination::CheckingResolver) -> anyhow::Result<Outbound> {
        let extra_ca = match &settings.extra_ca_cert {
            None => None,
            Some(path) => {
                let pem =
                    std::fs::read(path).with_context(|| format!("reading FENIX_EXTRA_CA_CERT {}", path.display()))?;
                Some(reqwest::Certificate::from_pem(&pem).context("FENIX_EXTRA_CA_CERT is not a PEM certificate")?)
            }
        };
        let egress = match &settings.egress_proxy {
            None => None,
            Some(proxy) => {
                Some(crate::egress::Egress::start(proxy.clone(), resolver.policy().clone(), settings.attempt_timeout)?)
            }
        };
        let settings = Arc::new(OutboundSettings {
            attempt_timeout: settings.attempt_timeout,
            pool_idle_per_host: settings.worker_concurrency,
            allow_http: settings.unsafe_allow_http,
            extra_ca,
            egress,
        });
        let client = builder(&settings, &resolver).build().context("building the HTTP client")?;
        Ok(Outbound { settings, resolver, client })
    }

    /// The common client: endpoints without TLS material of their own,
    /// ownership challenges, token fetches.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// A builder holding every rule outbound clients share. Over HTTPS it
    /// offers `h2` and `http/1.1` by ALPN (reqwest's `http2` feature), so a
    /// receiver that speaks HTTP/2 gets an endpoint's attempts multiplexed over
    /// one connection; every attempt is still checked first (`worker::attempt`).
    pub fn builder(&self) -> reqwest::ClientBuilder {
        builder(&self.settings, &self.resolver)
    }
}

/// The shared rules as a builder (the common client is built from it too).
fn builder(s: &OutboundSettings, resolver: &fenix_destination::CheckingResolver) -> reqwest::ClientBuilder {
    let mut b = reqwest::Client::builder()
        .user_agent(concat!("Fenix-Webhooks/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(resolver.clone()))
        .timeout(s.attempt_timeout)
        .connect_timeout(s.attempt_timeout)
        .pool_max_idle_per_host(s.pool_idle_per_host)
        .tcp_nodelay(true)
        .https_only(!s.allow_http);
    b = match &s.egress {
        Some(egress) => b.proxy(egress.proxy()),
        None => b.no_proxy(),
    };
    if let Some(ca) = &s.extra_ca {
        b = b.add_root_certificate(ca.clone());
    }
    b
}
