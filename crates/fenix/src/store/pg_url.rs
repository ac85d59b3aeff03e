//! A PostgreSQL `DATABASE_URL` as libpq reads it: a list of hosts, and
//! `target_session_attrs`, which sqlx's own parser does not know.
//!
//! Both of libpq's forms are read: the URL
//! (`postgres://fenix@db1:5432,db2:5432/fenix?target_session_attrs=read-write`)
//! and key/value (`host=db1,db2 port=5432 dbname=fenix target_session_attrs=read-write`).
//! Only the hosts, the ports and `target_session_attrs` are read here;
//! everything else (user, password, TLS, `options`, …) is left to sqlx's
//! parser, and a one-host URL without `target_session_attrs` goes to it
//! untouched, so it means exactly what it meant before. Following the primary
//! among the hosts is `primary.rs`.

use std::str::FromStr;

use sqlx::postgres::PgConnectOptions;
use url::form_urlencoded;

/// What a server must be for Fenix to keep a session on it (libpq's
/// `target_session_attrs`; Fenix writes, so the read-only choices are refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SessionAttrs {
    /// Any server that accepts the connection (libpq's default).
    Any,
    /// A server whose sessions can write: `transaction_read_only` is off.
    ReadWrite,
    /// A server that is not in recovery: `pg_is_in_recovery()` is false.
    Primary,
}

impl SessionAttrs {
    fn parse(v: &str) -> Result<SessionAttrs, String> {
        match v {
            "any" => Ok(SessionAttrs::Any),
            "read-write" => Ok(SessionAttrs::ReadWrite),
            "primary" => Ok(SessionAttrs::Primary),
            "read-only" | "standby" | "prefer-standby" => {
                Err(format!("target_session_attrs={v}: Fenix writes to its database; use read-write or primary"))
            }
            _ => Err(format!("target_session_attrs={v} is not one of any, read-write, primary")),
        }
    }
}

/// One host of the list, with every setting of the URL.
#[derive(Clone, Debug)]
pub(crate) struct PgHost {
    /// `host:port` (or `socket-directory:port`), for the log.
    pub label: String,
    pub options: PgConnectOptions,
}

/// A parsed PostgreSQL `DATABASE_URL`: its hosts, tried in this order, and
/// what a server must be to be used.
#[derive(Clone, Debug)]
pub(crate) struct PgUrl {
    /// Never empty.
    pub hosts: Vec<PgHost>,
    pub attrs: SessionAttrs,
}

/// True when `url` is a PostgreSQL URL in either of libpq's forms (the
/// key/value form starts with `name=`).
pub fn is_postgres_url(url: &str) -> bool {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return true;
    }
    let first = url.trim_start().split(['=', ' ']).next().unwrap_or_default();
    !first.is_empty() && first.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && url.contains('=')
}

/// Checks a PostgreSQL `DATABASE_URL`, for settings: the reason it cannot be used, if any.
pub fn check_postgres_url(url: &str) -> Result<(), String> {
    PgUrl::parse(url).map(|_| ())
}

/// What both forms come to: a one-host URL for sqlx with every setting but
/// the hosts, and the hosts and ports as written (an empty one: the default).
struct Parts {
    rest: String,
    hosts: Vec<String>,
    ports: Vec<String>,
    attrs: Option<String>,
}

impl PgUrl {
    pub(crate) fn parse(url: &str) -> Result<PgUrl, String> {
        let parts = match url.strip_prefix("postgres://").or_else(|| url.strip_prefix("postgresql://")) {
            Some(rest) => url_form(rest)?,
            None => key_value_form(url)?,
        };
        let single = parts.hosts.len() <= 1 && parts.ports.len() <= 1 && parts.attrs.is_none();
        if single && url.contains("://") {
            // As sqlx reads it, untouched.
            let options = sqlx_options(url)?;
            return Ok(PgUrl { hosts: vec![host_of(options)], attrs: SessionAttrs::Any });
        }
        let attrs = parts.attrs.as_deref().map(SessionAttrs::parse).transpose()?.unwrap_or(SessionAttrs::Any);
        let base = sqlx_options(&parts.rest)?;
        let (mut hosts, mut ports) = (parts.hosts, parts.ports);
        if hosts.is_empty() {
            hosts = vec![String::new(); ports.len().max(1)];
        }
        if ports.len() <= 1 {
            ports = vec![ports.pop().unwrap_or_default(); hosts.len()];
        }
        if ports.len() != hosts.len() {
            return Err(format!("{} hosts but {} ports: give one port, or one per host", hosts.len(), ports.len()));
        }
        let mut out = Vec::new();
        for (host, port) in hosts.iter().zip(&ports) {
            let mut options = base.clone();
            if host.starts_with('/') {
                options = options.socket(host);
            } else if !host.is_empty() {
                options = options.host(host);
            }
            if !port.is_empty() {
                options = options.port(port.parse().map_err(|_| format!("port {port:?} is not a number"))?);
            }
            out.push(host_of(options));
        }
        Ok(PgUrl { hosts: out, attrs })
    }
}

fn sqlx_options(url: &str) -> Result<PgConnectOptions, String> {
    PgConnectOptions::from_str(url).map_err(|e| format!("not a valid PostgreSQL URL: {e}"))
}

fn host_of(options: PgConnectOptions) -> PgHost {
    let at = match options.get_socket() {
        Some(dir) => dir.display().to_string(),
        None => options.get_host().to_string(),
    };
    PgHost { label: format!("{at}:{}", options.get_port()), options }
}

/// `user:pass@h1:p1,h2:p2/db?k=v…` (after the scheme).
fn url_form(rest: &str) -> Result<Parts, String> {
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, host_list) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (mut hosts, mut ports) = (Vec::new(), Vec::new());
    if !host_list.is_empty() {
        for spec in host_list.split(',') {
            let (host, port) = split_host_port(spec)?;
            hosts.push(percent_decode(host)?);
            ports.push(port.to_string());
        }
    }
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let mut kept = Vec::new();
    let mut attrs = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = form_urlencoded::parse(pair.as_bytes()).next().unwrap_or_default();
        match &*key {
            "target_session_attrs" => attrs = Some(value.into_owned()),
            "host" => hosts = value.split(',').map(String::from).collect(),
            "port" => ports = value.split(',').map(String::from).collect(),
            _ => kept.push(pair),
        }
    }
    // A host is set on each host's options below; `localhost` only holds its place.
    let user = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
    let query = if kept.is_empty() { String::new() } else { format!("?{}", kept.join("&")) };
    Ok(Parts { rest: format!("postgres://{user}localhost{path}{query}"), hosts, ports, attrs })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(spec: &str) -> Result<(&str, &str), String> {
    if let Some(v6) = spec.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(|| format!("{spec:?}: unclosed ["))?;
        return match after {
            "" => Ok((host, "")),
            _ => after.strip_prefix(':').map(|p| (host, p)).ok_or_else(|| format!("{spec:?}: expected :port")),
        };
    }
    Ok(spec.rsplit_once(':').unwrap_or((spec, "")))
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or_else(|| format!("{s:?}: a % not followed by two hex digits"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{s:?} is not UTF-8"))
}

/// `host=a,b port=5432 dbname=fenix user='x y' …`, as libpq reads it: values
/// in single quotes may hold spaces, a backslash escapes the next character.
fn key_value_form(s: &str) -> Result<Parts, String> {
    let mut chars = s.chars().peekable();
    let (mut hosts, mut ports, mut attrs) = (Vec::new(), Vec::new(), None);
    let mut query = form_urlencoded::Serializer::new(String::new());
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(format!("{key:?} has no value: expected key=value pairs or a postgres:// URL"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        let quoted = chars.next_if_eq(&'\'').is_some();
        loop {
            match chars.next() {
                Some('\\') => value.push(chars.next().ok_or("a backslash ends the URL")?),
                Some('\'') if quoted => break,
                Some(c) if !quoted && c.is_whitespace() => break,
                Some(c) => value.push(c),
                None if quoted => return Err(format!("the value of {key} has no closing quote")),
                None => break,
            }
        }
        match key.as_str() {
            "host" | "hostaddr" => hosts = value.split(',').map(String::from).collect(),
            "port" => ports = value.split(',').map(String::from).collect(),
            "target_session_attrs" => attrs = Some(value),
            _ => {
                query.append_pair(&key, &value);
            }
        }
    }
    let query = query.finish();
    let query = if query.is_empty() { String::new() } else { format!("?{query}") };
    Ok(Parts { rest: format!("postgres://localhost{query}"), hosts, ports, attrs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(url: &PgUrl) -> Vec<&str> {
        url.hosts.iter().map(|h| h.label.as_str()).collect()
    }

    #[test]
    fn a_url_with_several_hosts_lists_them_in_order_with_their_ports() {
        let url = PgUrl::parse("postgres://fenix:s%40cret@db1:5433,[::1]:5434,db3/fenix?sslmode=disable&target_session_attrs=read-write&application_name=fx").unwrap();
        assert_eq!(labels(&url), ["db1:5433", "::1:5434", "db3:5432"]);
        assert_eq!(url.attrs, SessionAttrs::ReadWrite);
        for h in &url.hosts {
            assert_eq!(h.options.get_username(), "fenix");
            assert_eq!(h.options.get_database(), Some("fenix"));
            assert_eq!(h.options.get_application_name(), Some("fx"));
            assert!(matches!(h.options.get_ssl_mode(), sqlx::postgres::PgSslMode::Disable));
        }
    }

    #[test]
    fn the_key_value_form_reads_host_and_port_lists_and_quoted_values() {
        let url = PgUrl::parse(
            "host=10.0.0.1,10.0.0.2 port=6432 dbname=fenix user='fe nix' password=p\\'w target_session_attrs=primary",
        )
        .unwrap();
        assert_eq!(labels(&url), ["10.0.0.1:6432", "10.0.0.2:6432"]);
        assert_eq!(url.attrs, SessionAttrs::Primary);
        assert_eq!(url.hosts[1].options.get_username(), "fe nix");
        assert_eq!(url.hosts[1].options.get_database(), Some("fenix"));
        let paired = PgUrl::parse("host=a,b,/run/pg port=1,2,3 target_session_attrs=read-write").unwrap();
        assert_eq!(labels(&paired), ["a:1", "b:2", "/run/pg:3"]);
        assert!(is_postgres_url("host=a,b port=1"));
        assert!(!is_postgres_url("sqlite://fenix.db") && !is_postgres_url("fenix.db"));
    }

    #[test]
    fn a_one_host_url_means_what_sqlx_reads_and_any_server_will_do() {
        let url = PgUrl::parse("postgres://u@127.0.0.1:55432/postgres?sslmode=disable").unwrap();
        assert_eq!(labels(&url), ["127.0.0.1:55432"]);
        assert_eq!(url.attrs, SessionAttrs::Any);
        let kept = PgUrl::parse("postgresql://u@h/db?target_session_attrs=read-write").unwrap();
        assert_eq!((labels(&kept), kept.attrs), (vec!["h:5432"], SessionAttrs::ReadWrite));
    }

    #[test]
    fn what_fenix_cannot_use_is_refused_with_the_reason() {
        for (url, says) in [
            ("postgres://a,b/db?target_session_attrs=standby", "Fenix writes"),
            ("postgres://a,b/db?target_session_attrs=sometimes", "not one of"),
            ("host=a,b,c port=1,2", "3 hosts but 2 ports"),
            ("postgres://a:x,b/db", "not a number"),
            ("host=a user='open", "no closing quote"),
            ("host", "has no value"),
        ] {
            let err = PgUrl::parse(url).unwrap_err();
            assert!(err.contains(says), "{url}: {err}");
        }
    }
}
