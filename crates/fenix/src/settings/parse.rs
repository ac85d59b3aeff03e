//! The parsers of setting text, shared by the environment and the TOML file
//! (which hands its values over as the same text): each error says what was
//! written and how to write it; the caller adds the setting's name.

use std::{fmt, time::Duration};

use anyhow::{bail, Context};

/// A retention (or failing time before disabling) that never runs out:
/// written `forever` in the settings.
pub const FOREVER: Duration = Duration::MAX;

/// Parses a duration, or `forever` ([`FOREVER`]).
pub fn parse_duration_or_forever(s: &str) -> anyhow::Result<Duration> {
    if s.trim().eq_ignore_ascii_case("forever") {
        return Ok(FOREVER);
    }
    parse_duration(s).context("write a duration such as 30d, or forever")
}

/// Parses `500ms`, `10s`, `1m`, `2h`, `30d`.
pub fn parse_duration(s: &str) -> anyhow::Result<Duration> {
    humantime::parse_duration(s.trim())
        .with_context(|| format!("invalid duration {s:?} (write e.g. 500ms, 10s, 1m, 2h)"))
}

/// Parses a comma-separated list of durations such as `1m,5m,30m,2h` (empty = no retries).
pub fn parse_schedule(s: &str) -> anyhow::Result<Vec<Duration>> {
    s.split(',').map(str::trim).filter(|p| !p.is_empty()).map(parse_duration).collect()
}

/// Parses a comma-separated list of `what` (empty = none).
pub(super) fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> anyhow::Result<Vec<T>>
where
    T::Err: fmt::Display,
{
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<T>().map_err(|e| anyhow::anyhow!("invalid {what} {p:?}: {e}")))
        .collect()
}

/// Parses a whole number (a count, a size in bytes).
pub(super) fn parse_number<T: std::str::FromStr>(s: &str) -> anyhow::Result<T>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    s.trim().parse::<T>().with_context(|| format!("{s:?} is not a number"))
}

/// Parses a size in bytes: a whole number, or one with `KiB` or `MiB`.
pub(super) fn parse_size(s: &str) -> anyhow::Result<usize> {
    let t = s.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let unit = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1024,
        "MiB" => 1024 * 1024,
        _ => anyhow::bail!("{s:?} is not a size (write bytes, or e.g. 512KiB, 16MiB)"),
    };
    let n: usize = digits.parse().with_context(|| format!("{s:?} is not a size (write bytes, or e.g. 16MiB)"))?;
    n.checked_mul(unit).with_context(|| format!("{s:?} is too large"))
}

/// Parses `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off` (empty = false).
pub(super) fn parse_bool(s: &str) -> anyhow::Result<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        other => bail!("invalid boolean {other:?} (write true or false)"),
    }
}

/// Parses the listening address (an IP and a port).
pub(super) fn parse_listen(s: &str) -> anyhow::Result<std::net::SocketAddr> {
    s.trim().parse().with_context(|| format!("{s:?} is not an address like 127.0.0.1:8080"))
}

/// Parses origins separated by spaces or commas, each `scheme://host[:port]`
/// (http or https, nothing else), into their serialised form: they go into
/// the console's `Content-Security-Policy` header, so nothing but an origin may
/// pass (no path, no wildcard, no `;` that would start another directive).
pub fn parse_origins(s: &str) -> anyhow::Result<Vec<String>> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let bad =
                || anyhow::anyhow!("invalid origin {p:?} (write scheme://host[:port], e.g. https://app.example.com)");
            let url = url::Url::parse(p).map_err(|_| bad())?;
            let bare = matches!(url.scheme(), "http" | "https")
                && url.host_str().is_some()
                && url.username().is_empty()
                && url.password().is_none()
                && url.query().is_none()
                && url.fragment().is_none()
                && url.path() == "/"
                && !p.trim_end_matches('/').ends_with(':');
            let origin = url.origin().ascii_serialization();
            let plain = origin.chars().all(|c| c.is_ascii_alphanumeric() || ".-:/[]".contains(c));
            // What was written must be the origin itself (an optional final `/` aside).
            if !bare
                || !plain
                || !p.trim_end_matches('/').eq_ignore_ascii_case(&origin) && !same_but_default_port(p, &url)
            {
                return Err(bad());
            }
            Ok(origin)
        })
        .collect()
}

/// `https://a.example:443` names the same origin as `https://a.example`.
fn same_but_default_port(raw: &str, url: &url::Url) -> bool {
    let Some(port) = url.port_or_known_default() else { return false };
    let with_port = format!("{}://{}:{port}", url.scheme(), url.host_str().unwrap_or_default());
    raw.trim_end_matches('/').eq_ignore_ascii_case(&with_port)
}

/// Text that means "unset" when empty (after trimming): `None`.
pub(super) fn non_empty(s: &str) -> Option<String> {
    Some(s.trim().to_string()).filter(|v| !v.is_empty())
}
