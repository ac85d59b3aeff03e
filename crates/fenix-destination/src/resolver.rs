//! The checking resolver: DNS resolution that returns only addresses the
//! policy allows, used at registration and, as reqwest's resolver, on every
//! delivery, so the connection goes to exactly the addresses just checked.
//!
//! Nothing is cached (hickory's cache is disabled and `/etc/hosts` is not
//! read): every resolution asks DNS again and is checked again, so a name
//! that rebinds to a private address after registration is refused on the
//! next delivery.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::TokioResolver;
use url::{Host, Url};

use crate::error::{Code, DestinationError};
use crate::url_policy::{parse_error, CheckedHost};
use crate::Policy;

/// Resolves host names and checks every address against a [`Policy`].
///
/// Cheap to clone (the DNS client is shared). Also usable as reqwest's
/// resolver: `reqwest::Client::builder().dns_resolver(Arc::new(resolver))`.
#[derive(Clone)]
pub struct CheckingResolver {
    policy: Arc<Policy>,
    dns: TokioResolver,
}

impl std::fmt::Debug for CheckingResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckingResolver")
            .field("policy", &self.policy)
            .field("name_servers", &self.dns.config().name_servers())
            .finish()
    }
}

impl CheckingResolver {
    /// `dns_servers`: `None` reads the system configuration (`/etc/resolv.conf`);
    /// `Some(addrs)` asks exactly these servers (each over UDP, then TCP), as
    /// `FENIX_DNS_SERVERS` does. Fails when the system configuration cannot be
    /// read or the list is empty.
    pub fn new(policy: Policy, dns_servers: Option<Vec<SocketAddr>>) -> io::Result<Self> {
        let (config, mut opts) = match dns_servers {
            None => hickory_resolver::system_conf::read_system_conf().map_err(io::Error::other)?,
            Some(servers) if servers.is_empty() => {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, "the list of DNS servers is empty"))
            }
            Some(servers) => {
                let mut config = ResolverConfig::new();
                for addr in servers {
                    for protocol in [Protocol::Udp, Protocol::Tcp] {
                        let mut server = NameServerConfig::new(addr, protocol);
                        server.trust_negative_responses = true;
                        config.add_name_server(server);
                    }
                }
                (config, ResolverOpts::default())
            }
        };
        // No cache at all: each resolution is fresh, so rebinding is re-checked.
        opts.cache_size = 0;
        opts.positive_max_ttl = Some(Duration::ZERO);
        opts.negative_max_ttl = Some(Duration::ZERO);
        // /etc/hosts could map any name to a local address; DNS only.
        opts.use_hosts_file = ResolveHosts::Never;
        // A UDP failure is retried over TCP (as is a truncated answer, always).
        opts.try_tcp_on_error = true;
        // Both families, so a name mixing public and private answers is seen whole.
        opts.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
        let dns =
            TokioResolver::builder_with_config(config, TokioConnectionProvider::default()).with_options(opts).build();
        Ok(Self { policy: Arc::new(policy), dns })
    }

    /// The policy this resolver enforces (the delivery path uses it for `check_url`).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The full check used at registration: URL policy, then resolution with
    /// every address checked. IP-literal hosts (possible only inside
    /// `allow_cidrs`) are checked without DNS. Returns the normalised URL.
    pub async fn check_destination(&self, raw_url: &str) -> Result<Url, DestinationError> {
        let url = self.policy.check_url(raw_url)?;
        let host = url.host_str().unwrap_or_default();
        self.resolve_checked(host).await?;
        Ok(url)
    }

    /// Resolves `host` (A and AAAA) and returns its addresses, only if every
    /// one of them passes the policy. Refuses with `destination_unresolvable`
    /// (NXDOMAIN, no address, DNS failure) or `destination_not_public` (any
    /// address not allowed: a mixed answer is refused whole). The host must
    /// also pass the URL policy's host rules (`url_host_not_public`,
    /// `url_host_is_ip`); an allowed IP literal is returned without DNS.
    pub async fn resolve_checked(&self, host: &str) -> Result<Vec<IpAddr>, DestinationError> {
        let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let parsed = match bare.parse::<IpAddr>() {
            Ok(IpAddr::V4(ip)) => Host::Ipv4(ip),
            Ok(IpAddr::V6(ip)) => Host::Ipv6(ip),
            Err(_) => Host::parse(host).map_err(parse_error)?,
        };
        let checked = match &parsed {
            Host::Domain(name) => self.policy.check_host(Host::Domain(name), host)?,
            Host::Ipv4(ip) => self.policy.check_host(Host::Ipv4(*ip), host)?,
            Host::Ipv6(ip) => self.policy.check_host(Host::Ipv6(*ip), host)?,
        };
        match checked {
            CheckedHost::Ip(ip) => self.policy.check_ip(ip).map(|()| vec![ip]),
            CheckedHost::Name(name) => self.lookup_checked(&name).await,
            // Already checked against the allow and deny lists; never sent to DNS.
            CheckedHost::Loopback(_, ips) => Ok(ips),
        }
    }

    async fn lookup_checked(&self, name: &str) -> Result<Vec<IpAddr>, DestinationError> {
        // Fully qualified: no search domains from resolv.conf are ever appended.
        let fqdn = format!("{name}.");
        let lookup = match self.dns.lookup_ip(fqdn.as_str()).await {
            Ok(lookup) => lookup,
            Err(error) => {
                // The resolver's text can name internal servers and zones: the operator's log only.
                tracing::info!(host = name, error = %error, "destination refused: the name could not be resolved");
                return Err(unresolvable(name));
            }
        };
        let mut ips: Vec<IpAddr> = Vec::new();
        for ip in lookup.iter() {
            if !ips.contains(&ip) {
                ips.push(ip);
            }
        }
        if ips.is_empty() {
            tracing::info!(host = name, "destination refused: the name has no A or AAAA records");
            return Err(unresolvable(name));
        }
        for ip in &ips {
            if let Some(reason) = self.policy.refusal_reason(*ip) {
                // Which address and why is internal DNS data: the operator's log only.
                tracing::info!(host = name, address = %ip, reason, "destination refused: an address is not allowed");
                return Err(DestinationError::new(
                    Code::DestinationNotPublic,
                    format_args!(
                        "the host `{name}` resolves to an address that is not publicly reachable; \
                         every address of a webhook endpoint must be public"
                    ),
                ));
            }
        }
        Ok(ips)
    }
}

/// One message for every way a name fails to resolve (NXDOMAIN, no A or
/// AAAA record, SERVFAIL, time-out): which one it was, and the resolver's
/// words for it, are logged for the operator and never shown to the tenant.
fn unresolvable(name: &str) -> DestinationError {
    DestinationError::new(
        Code::DestinationUnresolvable,
        format_args!(
            "the host `{name}` could not be resolved to an address; \
             check that the name exists and has an A or AAAA record, then try again"
        ),
    )
}

/// reqwest's resolver hook. reqwest calls it for every connection to a named
/// host (it never calls a resolver for an IP-literal URL: those rely on
/// [`Policy::check_url`]). Only checked addresses are returned; a refusal is
/// a boxed [`DestinationError`], found again by walking `reqwest::Error`'s
/// `source()` chain. Build the client with `.no_proxy()`, or a proxy would
/// be resolved and contacted instead of the destination.
impl reqwest::dns::Resolve for CheckingResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            match this.resolve_checked(&host).await {
                Ok(ips) => {
                    let addrs: reqwest::dns::Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
                    Ok(addrs)
                }
                Err(refusal) => {
                    tracing::debug!(host, code = refusal.code(), "destination refused");
                    Err(refusal.into())
                }
            }
        })
    }
}
