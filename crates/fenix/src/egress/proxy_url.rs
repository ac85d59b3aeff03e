//! `FENIX_EGRESS_PROXY`, parsed once at start-up: `http://[user:password@]host:port`
//! (HTTP `CONNECT`) or `socks5://[user:password@]host:port`. Anything else
//! (`https://` proxies, a missing port, a path, another scheme) stops Fenix
//! with a message naming the setting. Shown as `scheme://host:port`, with the
//! user but never the password.

use std::fmt;

/// How Fenix speaks to the operator's proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyScheme {
    /// HTTP/1.1 `CONNECT ip:port` (RFC 9110 §9.3.6).
    HttpConnect,
    /// SOCKS5 `CONNECT` to an IP address (RFC 1928), never to a name.
    Socks5,
}

impl ProxyScheme {
    fn as_str(self) -> &'static str {
        match self {
            ProxyScheme::HttpConnect => "http",
            ProxyScheme::Socks5 => "socks5",
        }
    }
}

/// The user and password the proxy asks for (`Proxy-Authorization: Basic`,
/// or SOCKS5's username/password method, RFC 1929).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyCredentials {
    pub user: String,
    pub password: ProxyPassword,
}

/// The proxy's password: never printed (`Debug` shows `[redacted]`).
#[derive(Clone, PartialEq, Eq)]
pub struct ProxyPassword(String);

impl ProxyPassword {
    pub fn new(password: String) -> ProxyPassword {
        ProxyPassword(password)
    }

    /// The password itself, for the proxy's handshake only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ProxyPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The operator's egress proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressProxy {
    pub scheme: ProxyScheme,
    /// A name (resolved by the system's resolver: the proxy is the operator's
    /// own, outside the destination policy) or an IP address, without brackets.
    pub host: String,
    pub port: u16,
    pub credentials: Option<ProxyCredentials>,
}

impl EgressProxy {
    /// Parses the setting's text.
    pub fn parse(text: &str) -> anyhow::Result<EgressProxy> {
        let url = url::Url::parse(text.trim()).map_err(|e| anyhow::anyhow!("the proxy URL is not a URL ({e})"))?;
        let scheme = match url.scheme() {
            "http" => ProxyScheme::HttpConnect,
            "socks5" => ProxyScheme::Socks5,
            "https" => anyhow::bail!(
                "the proxy URL is an https:// proxy, which Fenix does not speak: write http:// (CONNECT) or socks5://"
            ),
            other => anyhow::bail!(
                "the proxy URL has the scheme `{other}`: write http://host:port (CONNECT) or socks5://host:port"
            ),
        };
        let host = match url.host() {
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(host) => host.to_string(),
            None => anyhow::bail!("the proxy URL names no host: write {}://host:port", scheme.as_str()),
        };
        // `url` drops a scheme's default port (80 for http): it must be written anyway.
        let Some(port) = url.port().or_else(|| written_port(text, scheme)) else {
            anyhow::bail!("the proxy URL has no port: write {}://host:port", scheme.as_str())
        };
        if !(url.path().is_empty() || url.path() == "/") || url.query().is_some() || url.fragment().is_some() {
            anyhow::bail!(
                "the proxy URL has a path, query or fragment: write only {}://[user:password@]host:port",
                scheme.as_str()
            );
        }
        let credentials = credentials(&url)?;
        Ok(EgressProxy { scheme, host, port, credentials })
    }

    /// `host:port` as a socket address is written (`[v6]:port`).
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// The port of an `http://…:80` URL, which `url` reports as none.
fn written_port(text: &str, scheme: ProxyScheme) -> Option<u16> {
    (scheme == ProxyScheme::HttpConnect && text.trim().trim_end_matches('/').ends_with(":80")).then_some(80)
}

fn credentials(url: &url::Url) -> anyhow::Result<Option<ProxyCredentials>> {
    let decode = |s: &str| {
        percent_decode(s)
            .ok_or_else(|| anyhow::anyhow!("the proxy URL has a user or password that is not UTF-8 once decoded"))
    };
    match (url.username(), url.password()) {
        ("", None) => Ok(None),
        (_, None) => anyhow::bail!("the proxy URL has a user but no password: write user:password@"),
        (user, Some(password)) => {
            Ok(Some(ProxyCredentials { user: decode(user)?, password: ProxyPassword(decode(password)?) }))
        }
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// `scheme://[user@]host:port`: never the password.
impl fmt::Display for EgressProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.scheme.as_str())?;
        if let Some(c) = &self.credentials {
            write!(f, "{}:redacted@", c.user)?;
        }
        f.write_str(&self.authority())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_socks5_proxies_parse_with_and_without_credentials() {
        let p = EgressProxy::parse("http://proxy.internal:3128").unwrap();
        assert_eq!(
            (p.scheme, p.host.as_str(), p.port, p.credentials),
            (ProxyScheme::HttpConnect, "proxy.internal", 3128, None)
        );
        let p = EgressProxy::parse("socks5://fenix:s%40cret@[::1]:1080").unwrap();
        assert_eq!((p.scheme, p.host.as_str(), p.port), (ProxyScheme::Socks5, "::1", 1080));
        let c = p.credentials.clone().unwrap();
        assert_eq!((c.user.as_str(), c.password.expose()), ("fenix", "s@cret"));
        assert_eq!(p.to_string(), "socks5://fenix:redacted@[::1]:1080");
        assert_eq!(EgressProxy::parse("http://10.0.0.1:80").unwrap().port, 80);
    }

    #[test]
    fn anything_else_is_refused_with_what_to_write() {
        for (text, says) in [
            ("https://proxy:3128", "https://"),
            ("http://proxy", "no port"),
            ("ftp://proxy:21", "scheme `ftp`"),
            ("http://proxy:3128/path", "path"),
            ("http://user@proxy:3128", "no password"),
            ("proxy:3128", "scheme"),
        ] {
            let e = EgressProxy::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn the_password_never_shows() {
        let p = EgressProxy::parse("http://u:hunter2@proxy:3128").unwrap();
        assert!(!p.to_string().contains("hunter2"));
        assert!(!format!("{p:?}").contains("hunter2"));
    }
}
