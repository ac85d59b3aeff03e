//! What a transformation is given (`Webhook`) and what it may return: the
//! result checked into a [`Transformed`] request (or [`Cancelled`]), and that
//! request's stored form, so every attempt of a delivery sends the same one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{sandbox::RawResult, Failure, MAX_OUTPUT_BYTES};
use crate::endpoint_policy::{self, MAX_HEADERS, MAX_HEADER_BYTES};

/// The input of `handler(webhook)`.
pub struct Webhook<'a> {
    /// The endpoint's URL.
    pub url: &'a url::Url,
    /// The endpoint's custom headers whose values are not sealed.
    pub headers: &'a BTreeMap<String, String>,
    /// The envelope Fenix would send: JSON text.
    pub payload: &'a [u8],
}

impl Webhook<'_> {
    /// The input as JSON text (the envelope spliced in as it is).
    pub(super) fn to_json(&self) -> String {
        let head = serde_json::json!({"method": "POST", "url": self.url.as_str(), "headers": self.headers});
        let head = head.to_string();
        let payload = String::from_utf8_lossy(self.payload);
        let mut s = String::with_capacity(head.len() + payload.len() + 32);
        s.push_str(&head[..head.len() - 1]);
        s.push_str(",\"cancel\":false,\"payload\":");
        s.push_str(&payload);
        s.push('}');
        s
    }
}

/// The methods a transformed request may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Post,
    Put,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }

    pub fn to_http(self) -> reqwest::Method {
        match self {
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
        }
    }
}

/// The handler set `cancel: true`: the delivery is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// A request a transformation made, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transformed {
    pub method: Method,
    /// The path and query (`/a/b?c=d`); scheme, host and port are the endpoint's.
    pub target: String,
    /// Custom headers (checked like the owner's own), sealed ones not among them.
    pub headers: BTreeMap<String, String>,
    /// The body: JSON text as the sandbox wrote it.
    #[serde(skip)]
    pub body: Vec<u8>,
}

impl Transformed {
    /// The stored form of everything but the body (`deliveries.transformed_request`).
    pub fn head_json(&self) -> String {
        serde_json::to_string(self).expect("strings serialize")
    }

    /// Reads a stored request back; `None` when it is not the stored shape.
    pub fn from_stored(head: &str, body: Vec<u8>) -> Option<Transformed> {
        let t: Transformed = serde_json::from_str(head).ok()?;
        Some(Transformed { body, ..t })
    }

    /// The URL to send to: `endpoint` with this path and query.
    pub fn url_on(&self, endpoint: &url::Url) -> url::Url {
        let mut u = endpoint.clone();
        let (path, query) = match self.target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (self.target.as_str(), None),
        };
        u.set_path(path);
        u.set_query(query);
        u
    }
}

/// The parts of the handler's result other than `payload`.
#[derive(Deserialize)]
struct Returned {
    method: Option<serde_json::Value>,
    url: Option<serde_json::Value>,
    headers: Option<serde_json::Value>,
    cancel: Option<serde_json::Value>,
}

fn refused(reason: String) -> Failure {
    Failure::run(&reason, None, None)
}

/// The handler's result checked against the endpoint's URL.
pub(super) fn checked(raw: &RawResult, endpoint: &url::Url) -> Result<Result<Transformed, Cancelled>, Failure> {
    let r: Returned = serde_json::from_str(&raw.envelope)
        .map_err(|_| refused("the handler's result is not an object of method, url, headers, payload".into()))?;
    match r.cancel {
        None | Some(serde_json::Value::Null) | Some(serde_json::Value::Bool(false)) => {}
        Some(serde_json::Value::Bool(true)) => return Ok(Err(Cancelled)),
        Some(_) => return Err(refused("cancel must be true or false".into())),
    }
    let method = match r.method.as_ref().and_then(|m| m.as_str()) {
        Some(m) if m.eq_ignore_ascii_case("POST") => Method::Post,
        Some(m) if m.eq_ignore_ascii_case("PUT") => Method::Put,
        _ => return Err(refused("method must be \"POST\" or \"PUT\"".into())),
    };
    let Some(url) = r.url.as_ref().and_then(|u| u.as_str()) else {
        return Err(refused("url must be a string".into()));
    };
    let target = same_origin(url, endpoint)?;
    let headers = checked_headers(r.headers)?;
    let Some(payload) = &raw.payload else {
        return Err(refused("payload is not JSON (undefined or a function)".into()));
    };
    if payload.len() > MAX_OUTPUT_BYTES {
        return Err(refused(format!("the payload is {} bytes; at most {MAX_OUTPUT_BYTES} are allowed", payload.len())));
    }
    Ok(Ok(Transformed { method, target, headers, body: payload.clone().into_bytes() }))
}

/// The path and query of `url`, which must keep the endpoint's scheme, host and port.
fn same_origin(url: &str, endpoint: &url::Url) -> Result<String, Failure> {
    let parsed = url::Url::parse(url).map_err(|_| refused("url is not a valid absolute URL".into()))?;
    if parsed.scheme() != endpoint.scheme()
        || parsed.host_str() != endpoint.host_str()
        || parsed.port_or_known_default() != endpoint.port_or_known_default()
    {
        return Err(refused(
            "url may change only the path and the query: its scheme, host and port must stay the endpoint's".into(),
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(refused("url must not carry credentials".into()));
    }
    if parsed.fragment().is_some() {
        return Err(refused("url must not have a fragment".into()));
    }
    let mut target = parsed.path().to_string();
    if let Some(q) = parsed.query() {
        target.push('?');
        target.push_str(q);
    }
    if target.len() > 8 * 1024 {
        return Err(refused("url's path and query are longer than 8 KiB".into()));
    }
    Ok(target)
}

/// The returned headers, by the rules of the owner's own (`endpoint_policy`).
fn checked_headers(given: Option<serde_json::Value>) -> Result<BTreeMap<String, String>, Failure> {
    let map = match given {
        None | Some(serde_json::Value::Null) => return Ok(BTreeMap::new()),
        Some(serde_json::Value::Object(map)) => map,
        Some(_) => return Err(refused("headers must be an object of names to string values".into())),
    };
    if map.len() > MAX_HEADERS {
        return Err(refused(format!("headers has {} entries; at most {MAX_HEADERS} are allowed", map.len())));
    }
    let mut out = BTreeMap::new();
    let mut bytes = 0;
    for (name, value) in map {
        let Some(value) = value.as_str() else {
            return Err(refused(format!("header {} must have a string value", short(&name))));
        };
        endpoint_policy::check_header(&name, value).map_err(|e| {
            // The policy's message names the header, never its value.
            refused(format!("{} ({})", e.message.chars().take(300).collect::<String>(), e.code))
        })?;
        if out.keys().any(|n: &String| n.eq_ignore_ascii_case(&name)) {
            return Err(refused(format!("header {} is given twice (names are case-insensitive)", short(&name))));
        }
        bytes += name.len() + value.len();
        out.insert(name, value.to_string());
    }
    if bytes > MAX_HEADER_BYTES {
        return Err(refused(format!("headers take {bytes} bytes; at most {MAX_HEADER_BYTES} are allowed")));
    }
    Ok(out)
}

/// A header name as a reason quotes it: at most 64 characters.
fn short(name: &str) -> String {
    name.chars().take(64).collect()
}
