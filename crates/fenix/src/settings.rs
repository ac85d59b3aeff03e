//! Typed configuration: built-in defaults, then an optional TOML file, then
//! `FENIX_*` environment variables, then [`Settings::validate`].
//!
//! Every knob an operator meets lives here so the rest of the code never reads
//! the environment itself; tests build a `Settings` directly.

use std::{fmt, net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::{bail, Context};
use serde::Deserialize;

/// A configuration value that must never be printed (tokens, keys).
#[derive(Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Redacted(pub String);

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Everything Fenix can be told. Durations are written `500ms`, `10s`, `1m`, `2h`, `30d`.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Address of the admin API and ingestion.
    pub listen: SocketAddr,
    /// `sqlite://path` (created if missing) or `postgres://…`.
    pub database_url: String,
    /// Bootstrap admin token; when unset and no token exists one is generated and printed once.
    pub admin_token: Option<Redacted>,
    /// Base64 of 32 bytes; encrypts endpoint secrets at rest.
    pub master_key: Option<Redacted>,
    /// Older master keys still accepted for decryption while `fenix rekey` runs.
    pub previous_master_keys: Vec<Redacted>,
    /// Waits between attempts; the number of attempts is `retry_schedule.len() + 1`.
    pub retry_schedule: Vec<Duration>,
    /// Time limit of one whole attempt (destination re-check with its DNS
    /// resolution, connect, TLS, request, reading the excerpt).
    pub attempt_timeout: Duration,
    /// How long a claimed delivery stays leased before another worker may retry it.
    pub lease_duration: Duration,
    /// Resolvers for destination checks; `None` = the system's.
    pub dns_servers: Option<Vec<SocketAddr>>,
    /// Development only: destination ranges allowed despite the policy.
    pub unsafe_allow_cidrs: Vec<ipnet::IpNet>,
    /// Development only: allow `http://` and ports other than 443.
    pub unsafe_allow_http: bool,
    /// A PEM certificate trusted in addition to the public roots.
    pub extra_ca_cert: Option<PathBuf>,
    /// Attempts in flight at once, over all endpoints.
    pub worker_concurrency: usize,
    /// Attempts in flight at once to one endpoint.
    pub endpoint_concurrency: usize,
    /// Deliveries claimed per database round trip.
    pub claim_batch: usize,
    /// Run the admin API / ingestion.
    pub run_api: bool,
    /// Run the delivery worker.
    pub run_worker: bool,
    /// Payload bytes of older events are purged.
    pub payload_retention: Duration,
    /// Attempts and terminal deliveries older than this are removed.
    pub log_retention: Duration,
    /// Endpoints whose deliveries all failed for this long are disabled.
    pub disable_after_failing: Duration,
    /// Maximum database connections (PostgreSQL) / readers (SQLite).
    pub max_db_connections: u32,
    /// Where Fenix sends its own operator events (`endpoint.disabled`, …); none when unset.
    pub operator_webhook_url: Option<String>,
    /// The operator endpoint's signing secret (`whsec_…`).
    pub operator_webhook_secret: Option<Redacted>,
    /// How often retention and endpoint-health checks run.
    pub maintenance_interval: Duration,
    /// Endpoints one app may have: a tenant cannot multiply its events' fan-out without bound.
    pub max_endpoints_per_app: usize,
    /// Deliveries one event may fan out to; an event matching more endpoints is refused (422).
    pub max_fanout_per_event: usize,
    /// Attempts in flight at once to one destination host, over all its endpoints.
    pub host_concurrency: usize,
    /// A worker that records nothing for this long while deliveries are due
    /// (or whose recorder cannot write for this long) is reported not ready.
    pub worker_stall_after: Duration,
    /// Time a client has to send a request's headers (from the connection's
    /// first byte, or from its opening for a new connection): slow or half-sent
    /// requests must not hold sockets.
    pub http_header_timeout: Duration,
    /// Time a client has to send a request's whole body once its headers arrived.
    pub http_body_timeout: Duration,
    /// How long a keep-alive connection may wait for its next request.
    pub http_idle_timeout: Duration,
    /// Connections the API holds at once; kept well below the file-descriptor
    /// limit, which the worker's outbound connections share.
    pub http_max_connections: usize,
    /// Requests handled at once; more are answered `503 overloaded` at once.
    pub http_max_in_flight: usize,
    /// Destination ranges never contacted although public (e.g. the network's
    /// own NAT64 prefix); wins over `unsafe_allow_cidrs`.
    pub deny_cidrs: Vec<ipnet::IpNet>,
    /// Most events one `POST …/events/batch` may carry.
    pub max_batch_events: usize,
    /// Largest body of one `POST …/events/batch`, in bytes.
    pub max_batch_bytes: usize,
    /// Bytes of items a list page may hold (`FENIX_MAX_PAGE_BYTES`): a page
    /// stops before it, so that one read cannot take `limit` large payloads.
    pub max_page_bytes: usize,
    /// Bytes that the answers carrying payloads may hold at once in this
    /// process (`FENIX_ANSWER_BYTES`); over it a read waits, then answers 503.
    pub answer_bytes: usize,
    /// Where people reach this Fenix (`https://fenix.example.com`), the base
    /// of portal links; `None` = `http://<Host header>`. An `https://` URL
    /// also makes the console's cookies `Secure`.
    pub public_url: Option<String>,
    /// Longest life of a portal link and of the session made from it.
    pub portal_max_ttl: Duration,
    /// Life of an operator's console session.
    pub console_session_ttl: Duration,
    /// Origins (`scheme://host[:port]`) allowed to frame the console (the
    /// portal in a product's iframe); empty = no framing at all.
    pub console_frame_ancestors: Vec<String>,
    /// Strict event types: an event whose type is not in the catalogue, or an
    /// endpoint filter naming none of its types, is refused (422).
    pub event_types_strict: bool,
    /// Proof of ownership for every new endpoint (and every URL change): it
    /// starts `pending_verification` and is sent nothing until it echoes a
    /// challenge (`ownership`). Apps can also ask for it on their own.
    pub require_endpoint_verification: bool,
    /// Waits between the attempts of one ownership challenge; after the last
    /// attempt fails the challenge expires (`POST …/verify` starts a new one).
    pub verification_retry_schedule: Vec<Duration>,
    /// The least attempts in flight an endpoint's adaptive limit falls to
    /// (`endpoint_concurrency` is the most); equal to it, the limit is fixed.
    pub endpoint_concurrency_min: usize,
    /// Longest one event's schema check may take; over it the event is
    /// refused (`schema_too_costly`) and its type flagged.
    pub schema_budget: Duration,
    /// Longest all schema checks of one request (a batch) may take together.
    pub schema_request_budget: Duration,
    /// Schema checks running at once (blocking threads they may hold).
    pub schema_concurrency: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: "127.0.0.1:8080".parse().expect("static address"),
            database_url: "sqlite://fenix.db".into(),
            admin_token: None,
            master_key: None,
            previous_master_keys: Vec::new(),
            retry_schedule: ["1m", "5m", "30m", "2h"]
                .iter()
                .map(|s| parse_duration(s).expect("static duration"))
                .collect(),
            attempt_timeout: Duration::from_secs(10),
            lease_duration: Duration::from_secs(30),
            dns_servers: None,
            unsafe_allow_cidrs: Vec::new(),
            unsafe_allow_http: false,
            extra_ca_cert: None,
            worker_concurrency: 512,
            endpoint_concurrency: 128,
            claim_batch: 256,
            run_api: true,
            run_worker: true,
            payload_retention: Duration::from_secs(30 * 86_400),
            log_retention: Duration::from_secs(90 * 86_400),
            disable_after_failing: Duration::from_secs(3 * 86_400),
            max_db_connections: 16,
            operator_webhook_url: None,
            operator_webhook_secret: None,
            maintenance_interval: Duration::from_secs(60),
            max_endpoints_per_app: 100,
            max_fanout_per_event: 100,
            host_concurrency: 256,
            worker_stall_after: Duration::from_secs(120),
            http_header_timeout: Duration::from_secs(10),
            http_body_timeout: Duration::from_secs(30),
            http_idle_timeout: Duration::from_secs(60),
            http_max_connections: 1024,
            http_max_in_flight: 512,
            deny_cidrs: Vec::new(),
            max_batch_events: 1000,
            max_batch_bytes: 16 * 1024 * 1024,
            max_page_bytes: 4 * 1024 * 1024,
            answer_bytes: 32 * 1024 * 1024,
            public_url: None,
            portal_max_ttl: Duration::from_secs(86_400),
            console_session_ttl: Duration::from_secs(12 * 3600),
            console_frame_ancestors: Vec::new(),
            event_types_strict: false,
            require_endpoint_verification: false,
            verification_retry_schedule: ["10s", "1m", "5m"]
                .iter()
                .map(|s| parse_duration(s).expect("static duration"))
                .collect(),
            endpoint_concurrency_min: 1,
            schema_budget: Duration::from_millis(50),
            schema_request_budget: Duration::from_secs(1),
            schema_concurrency: 4,
        }
    }
}

/// The TOML file's shape: every field optional, same names as the variables without `FENIX_`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    listen: Option<String>,
    database_url: Option<String>,
    admin_token: Option<Redacted>,
    master_key: Option<Redacted>,
    retry_schedule: Option<String>,
    attempt_timeout: Option<String>,
    lease_duration: Option<String>,
    dns_servers: Option<String>,
    unsafe_allow_cidrs: Option<String>,
    unsafe_allow_http: Option<bool>,
    extra_ca_cert: Option<PathBuf>,
    worker_concurrency: Option<usize>,
    endpoint_concurrency: Option<usize>,
    claim_batch: Option<usize>,
    payload_retention: Option<String>,
    log_retention: Option<String>,
    disable_after_failing: Option<String>,
    max_db_connections: Option<u32>,
    operator_webhook_url: Option<String>,
    operator_webhook_secret: Option<Redacted>,
    maintenance_interval: Option<String>,
    max_endpoints_per_app: Option<usize>,
    max_fanout_per_event: Option<usize>,
    host_concurrency: Option<usize>,
    worker_stall_after: Option<String>,
    http_header_timeout: Option<String>,
    http_body_timeout: Option<String>,
    http_idle_timeout: Option<String>,
    http_max_connections: Option<usize>,
    http_max_in_flight: Option<usize>,
    deny_cidrs: Option<String>,
    max_batch_events: Option<usize>,
    max_batch_bytes: Option<usize>,
    max_page_bytes: Option<usize>,
    answer_bytes: Option<usize>,
    public_url: Option<String>,
    portal_max_ttl: Option<String>,
    console_session_ttl: Option<String>,
    console_frame_ancestors: Option<String>,
    event_types_strict: Option<bool>,
    require_endpoint_verification: Option<bool>,
    verification_retry_schedule: Option<String>,
    endpoint_concurrency_min: Option<usize>,
    schema_budget: Option<String>,
    schema_request_budget: Option<String>,
    schema_concurrency: Option<usize>,
}

/// A retention (or failing time before disabling) that never runs out:
/// written `forever` in the settings.
pub const FOREVER: Duration = Duration::MAX;

/// Longest finite retention or failing time: 100 years (longer means `forever`).
const MAX_FINITE: Duration = Duration::from_secs(36_500 * 86_400);

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

fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> anyhow::Result<Vec<T>>
where
    T::Err: fmt::Display,
{
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<T>().map_err(|e| anyhow::anyhow!("invalid {what} {p:?}: {e}")))
        .collect()
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

fn parse_bool(s: &str) -> anyhow::Result<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" | "" => Ok(false),
        other => bail!("invalid boolean {other:?} (write true or false)"),
    }
}

impl Settings {
    /// Defaults, then `file` (if any), then the process environment, then validation.
    pub fn load(file: Option<&std::path::Path>) -> anyhow::Result<Settings> {
        let mut s = Settings::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let f: FileSettings = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
            s.apply_file(f)?;
        }
        s.apply_env(|k| std::env::var(k).ok())?;
        s.validate()?;
        Ok(s)
    }

    fn apply_file(&mut self, f: FileSettings) -> anyhow::Result<()> {
        let mut vars = Vec::new();
        let mut push = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                vars.push((format!("FENIX_{k}"), v));
            }
        };
        push("LISTEN", f.listen);
        push("RETRY_SCHEDULE", f.retry_schedule);
        push("ATTEMPT_TIMEOUT", f.attempt_timeout);
        push("LEASE_DURATION", f.lease_duration);
        push("DNS_SERVERS", f.dns_servers);
        push("UNSAFE_ALLOW_CIDRS", f.unsafe_allow_cidrs);
        push("UNSAFE_ALLOW_HTTP", f.unsafe_allow_http.map(|b| b.to_string()));
        push("WORKER_CONCURRENCY", f.worker_concurrency.map(|v| v.to_string()));
        push("ENDPOINT_CONCURRENCY", f.endpoint_concurrency.map(|v| v.to_string()));
        push("CLAIM_BATCH", f.claim_batch.map(|v| v.to_string()));
        push("PAYLOAD_RETENTION", f.payload_retention);
        push("LOG_RETENTION", f.log_retention);
        push("DISABLE_AFTER_FAILING", f.disable_after_failing);
        push("MAX_DB_CONNECTIONS", f.max_db_connections.map(|v| v.to_string()));
        push("OPERATOR_WEBHOOK_URL", f.operator_webhook_url);
        push("MAINTENANCE_INTERVAL", f.maintenance_interval);
        push("MAX_ENDPOINTS_PER_APP", f.max_endpoints_per_app.map(|v| v.to_string()));
        push("MAX_FANOUT_PER_EVENT", f.max_fanout_per_event.map(|v| v.to_string()));
        push("HOST_CONCURRENCY", f.host_concurrency.map(|v| v.to_string()));
        push("WORKER_STALL_AFTER", f.worker_stall_after);
        push("HTTP_HEADER_TIMEOUT", f.http_header_timeout);
        push("HTTP_BODY_TIMEOUT", f.http_body_timeout);
        push("HTTP_IDLE_TIMEOUT", f.http_idle_timeout);
        push("HTTP_MAX_CONNECTIONS", f.http_max_connections.map(|v| v.to_string()));
        push("HTTP_MAX_IN_FLIGHT", f.http_max_in_flight.map(|v| v.to_string()));
        push("DENY_CIDRS", f.deny_cidrs);
        push("MAX_BATCH_EVENTS", f.max_batch_events.map(|v| v.to_string()));
        push("MAX_BATCH_BYTES", f.max_batch_bytes.map(|v| v.to_string()));
        push("MAX_PAGE_BYTES", f.max_page_bytes.map(|v| v.to_string()));
        push("ANSWER_BYTES", f.answer_bytes.map(|v| v.to_string()));
        push("PUBLIC_URL", f.public_url);
        push("PORTAL_MAX_TTL", f.portal_max_ttl);
        push("CONSOLE_SESSION_TTL", f.console_session_ttl);
        push("CONSOLE_FRAME_ANCESTORS", f.console_frame_ancestors);
        push("EVENT_TYPES_STRICT", f.event_types_strict.map(|b| b.to_string()));
        push("REQUIRE_ENDPOINT_VERIFICATION", f.require_endpoint_verification.map(|b| b.to_string()));
        push("VERIFICATION_RETRY_SCHEDULE", f.verification_retry_schedule);
        push("ENDPOINT_CONCURRENCY_MIN", f.endpoint_concurrency_min.map(|v| v.to_string()));
        push("SCHEMA_BUDGET", f.schema_budget);
        push("SCHEMA_REQUEST_BUDGET", f.schema_request_budget);
        push("SCHEMA_CONCURRENCY", f.schema_concurrency.map(|v| v.to_string()));
        if let Some(v) = f.database_url {
            vars.push(("DATABASE_URL".into(), v));
        }
        if let Some(p) = f.extra_ca_cert {
            vars.push(("FENIX_EXTRA_CA_CERT".into(), p.display().to_string()));
        }
        if f.admin_token.is_some() {
            self.admin_token = f.admin_token;
        }
        if f.master_key.is_some() {
            self.master_key = f.master_key;
        }
        if f.operator_webhook_secret.is_some() {
            self.operator_webhook_secret = f.operator_webhook_secret;
        }
        self.apply_env(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    /// Applies variables from `get` (the environment, or a file mapped to the same names).
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        let ctx = |k: &'static str| move || format!("in {k}");
        if let Some(v) = get("FENIX_LISTEN") {
            self.listen = v
                .trim()
                .parse()
                .with_context(|| format!("FENIX_LISTEN {v:?} is not an address like 127.0.0.1:8080"))?;
        }
        if let Some(v) = get("DATABASE_URL").filter(|v| !v.trim().is_empty()) {
            self.database_url = v.trim().to_string();
        }
        if let Some(v) = get("FENIX_ADMIN_TOKEN").filter(|v| !v.is_empty()) {
            self.admin_token = Some(Redacted(v));
        }
        if let Some(v) = get("FENIX_MASTER_KEY").filter(|v| !v.is_empty()) {
            self.master_key = Some(Redacted(v));
        }
        if let Some(v) = get("FENIX_PREVIOUS_MASTER_KEYS") {
            self.previous_master_keys =
                v.split(',').map(str::trim).filter(|p| !p.is_empty()).map(|p| Redacted(p.into())).collect();
        }
        if let Some(v) = get("FENIX_RETRY_SCHEDULE") {
            self.retry_schedule = parse_schedule(&v).with_context(ctx("FENIX_RETRY_SCHEDULE"))?;
        }
        if let Some(v) = get("FENIX_ATTEMPT_TIMEOUT") {
            self.attempt_timeout = parse_duration(&v).with_context(ctx("FENIX_ATTEMPT_TIMEOUT"))?;
        }
        if let Some(v) = get("FENIX_LEASE_DURATION") {
            self.lease_duration = parse_duration(&v).with_context(ctx("FENIX_LEASE_DURATION"))?;
        }
        if let Some(v) = get("FENIX_DNS_SERVERS").filter(|v| !v.trim().is_empty()) {
            self.dns_servers =
                Some(parse_list(&v, "DNS server address (write host:port)").with_context(ctx("FENIX_DNS_SERVERS"))?);
        }
        if let Some(v) = get("FENIX_UNSAFE_ALLOW_CIDRS") {
            self.unsafe_allow_cidrs = parse_list(&v, "CIDR range").with_context(ctx("FENIX_UNSAFE_ALLOW_CIDRS"))?;
        }
        if let Some(v) = get("FENIX_UNSAFE_ALLOW_HTTP") {
            self.unsafe_allow_http = parse_bool(&v).with_context(ctx("FENIX_UNSAFE_ALLOW_HTTP"))?;
        }
        if let Some(v) = get("FENIX_EXTRA_CA_CERT").filter(|v| !v.trim().is_empty()) {
            self.extra_ca_cert = Some(PathBuf::from(v.trim()));
        }
        let num = |k: &'static str| -> anyhow::Result<Option<usize>> {
            get(k).map(|v| v.trim().parse::<usize>().with_context(|| format!("{k} {v:?} is not a number"))).transpose()
        };
        if let Some(n) = num("FENIX_WORKER_CONCURRENCY")? {
            self.worker_concurrency = n;
        }
        if let Some(n) = num("FENIX_ENDPOINT_CONCURRENCY")? {
            self.endpoint_concurrency = n;
        }
        if let Some(n) = num("FENIX_CLAIM_BATCH")? {
            self.claim_batch = n;
        }
        if let Some(n) = num("FENIX_MAX_DB_CONNECTIONS")? {
            self.max_db_connections = u32::try_from(n).context("FENIX_MAX_DB_CONNECTIONS is too large")?;
        }
        if let Some(v) = get("FENIX_PAYLOAD_RETENTION") {
            self.payload_retention = parse_duration_or_forever(&v).with_context(ctx("FENIX_PAYLOAD_RETENTION"))?;
        }
        if let Some(v) = get("FENIX_LOG_RETENTION") {
            self.log_retention = parse_duration_or_forever(&v).with_context(ctx("FENIX_LOG_RETENTION"))?;
        }
        if let Some(v) = get("FENIX_OPERATOR_WEBHOOK_URL") {
            self.operator_webhook_url = Some(v.trim().to_string()).filter(|v| !v.is_empty());
        }
        if let Some(v) = get("FENIX_OPERATOR_WEBHOOK_SECRET").filter(|v| !v.is_empty()) {
            self.operator_webhook_secret = Some(Redacted(v));
        }
        if let Some(v) = get("FENIX_MAINTENANCE_INTERVAL") {
            self.maintenance_interval = parse_duration(&v).with_context(ctx("FENIX_MAINTENANCE_INTERVAL"))?;
        }
        if let Some(v) = get("FENIX_DISABLE_AFTER_FAILING") {
            self.disable_after_failing =
                parse_duration_or_forever(&v).with_context(ctx("FENIX_DISABLE_AFTER_FAILING"))?;
        }
        if let Some(n) = num("FENIX_MAX_ENDPOINTS_PER_APP")? {
            self.max_endpoints_per_app = n;
        }
        if let Some(n) = num("FENIX_MAX_FANOUT_PER_EVENT")? {
            self.max_fanout_per_event = n;
        }
        if let Some(n) = num("FENIX_MAX_BATCH_EVENTS")? {
            self.max_batch_events = n;
        }
        if let Some(n) = num("FENIX_MAX_BATCH_BYTES")? {
            self.max_batch_bytes = n;
        }
        if let Some(n) = num("FENIX_MAX_PAGE_BYTES")? {
            self.max_page_bytes = n;
        }
        if let Some(n) = num("FENIX_ANSWER_BYTES")? {
            self.answer_bytes = n;
        }
        if let Some(n) = num("FENIX_HOST_CONCURRENCY")? {
            self.host_concurrency = n;
        }
        if let Some(v) = get("FENIX_WORKER_STALL_AFTER") {
            self.worker_stall_after = parse_duration(&v).with_context(ctx("FENIX_WORKER_STALL_AFTER"))?;
        }
        if let Some(v) = get("FENIX_HTTP_HEADER_TIMEOUT") {
            self.http_header_timeout = parse_duration(&v).with_context(ctx("FENIX_HTTP_HEADER_TIMEOUT"))?;
        }
        if let Some(v) = get("FENIX_HTTP_BODY_TIMEOUT") {
            self.http_body_timeout = parse_duration(&v).with_context(ctx("FENIX_HTTP_BODY_TIMEOUT"))?;
        }
        if let Some(v) = get("FENIX_HTTP_IDLE_TIMEOUT") {
            self.http_idle_timeout = parse_duration(&v).with_context(ctx("FENIX_HTTP_IDLE_TIMEOUT"))?;
        }
        if let Some(n) = num("FENIX_HTTP_MAX_CONNECTIONS")? {
            self.http_max_connections = n;
        }
        if let Some(n) = num("FENIX_HTTP_MAX_IN_FLIGHT")? {
            self.http_max_in_flight = n;
        }
        if let Some(v) = get("FENIX_DENY_CIDRS") {
            self.deny_cidrs = parse_list(&v, "CIDR range").with_context(ctx("FENIX_DENY_CIDRS"))?;
        }
        if let Some(v) = get("FENIX_PUBLIC_URL") {
            self.public_url = Some(v.trim().trim_end_matches('/').to_string()).filter(|v| !v.is_empty());
        }
        if let Some(v) = get("FENIX_PORTAL_MAX_TTL") {
            self.portal_max_ttl = parse_duration(&v).with_context(ctx("FENIX_PORTAL_MAX_TTL"))?;
        }
        if let Some(v) = get("FENIX_CONSOLE_SESSION_TTL") {
            self.console_session_ttl = parse_duration(&v).with_context(ctx("FENIX_CONSOLE_SESSION_TTL"))?;
        }
        if let Some(v) = get("FENIX_CONSOLE_FRAME_ANCESTORS") {
            self.console_frame_ancestors = parse_origins(&v).with_context(ctx("FENIX_CONSOLE_FRAME_ANCESTORS"))?;
        }
        if let Some(v) = get("FENIX_EVENT_TYPES_STRICT") {
            self.event_types_strict = parse_bool(&v).with_context(ctx("FENIX_EVENT_TYPES_STRICT"))?;
        }
        if let Some(v) = get("FENIX_REQUIRE_ENDPOINT_VERIFICATION") {
            self.require_endpoint_verification =
                parse_bool(&v).with_context(ctx("FENIX_REQUIRE_ENDPOINT_VERIFICATION"))?;
        }
        if let Some(v) = get("FENIX_VERIFICATION_RETRY_SCHEDULE") {
            self.verification_retry_schedule =
                parse_schedule(&v).with_context(ctx("FENIX_VERIFICATION_RETRY_SCHEDULE"))?;
        }
        if let Some(n) = num("FENIX_ENDPOINT_CONCURRENCY_MIN")? {
            self.endpoint_concurrency_min = n;
        }
        if let Some(v) = get("FENIX_SCHEMA_BUDGET") {
            self.schema_budget = parse_duration(&v).with_context(ctx("FENIX_SCHEMA_BUDGET"))?;
        }
        if let Some(v) = get("FENIX_SCHEMA_REQUEST_BUDGET") {
            self.schema_request_budget = parse_duration(&v).with_context(ctx("FENIX_SCHEMA_REQUEST_BUDGET"))?;
        }
        if let Some(n) = num("FENIX_SCHEMA_CONCURRENCY")? {
            self.schema_concurrency = n;
        }
        Ok(())
    }

    /// Rejects combinations that cannot work, with a message saying what to change.
    pub fn validate(&self) -> anyhow::Result<()> {
        if !(self.database_url.starts_with("sqlite:")
            || self.database_url.starts_with("postgres://")
            || self.database_url.starts_with("postgresql://"))
        {
            bail!("DATABASE_URL must start with sqlite:// or postgres://");
        }
        if self.retry_schedule.len() > 20 {
            bail!("FENIX_RETRY_SCHEDULE has {} waits; at most 20 are allowed", self.retry_schedule.len());
        }
        if self.verification_retry_schedule.len() > 10 {
            bail!(
                "FENIX_VERIFICATION_RETRY_SCHEDULE has {} waits; at most 10 are allowed",
                self.verification_retry_schedule.len()
            );
        }
        if self.attempt_timeout.is_zero() {
            bail!("FENIX_ATTEMPT_TIMEOUT must be greater than zero");
        }
        if self.lease_duration <= self.attempt_timeout {
            bail!(
                "FENIX_LEASE_DURATION ({:?}) must be longer than FENIX_ATTEMPT_TIMEOUT ({:?}) so a running attempt keeps its lease",
                self.lease_duration,
                self.attempt_timeout
            );
        }
        if self.worker_concurrency == 0 || self.endpoint_concurrency == 0 || self.claim_batch == 0 {
            bail!("FENIX_WORKER_CONCURRENCY, FENIX_ENDPOINT_CONCURRENCY and FENIX_CLAIM_BATCH must be at least 1");
        }
        if !self.run_api && !self.run_worker {
            bail!("--api-only and --worker-only cannot both be given");
        }
        self.validate_ranges()?;
        self.validate_console()?;
        if !(1..=self.endpoint_concurrency).contains(&self.endpoint_concurrency_min) {
            bail!(
                "FENIX_ENDPOINT_CONCURRENCY_MIN ({}) must be between 1 and FENIX_ENDPOINT_CONCURRENCY ({})",
                self.endpoint_concurrency_min,
                self.endpoint_concurrency
            );
        }
        Ok(())
    }

    /// The console's settings: a public URL that can be the base of a link,
    /// session lives between a second and 30 days.
    fn validate_console(&self) -> anyhow::Result<()> {
        if let Some(u) = &self.public_url {
            let ok = url::Url::parse(u).is_ok_and(|p| {
                matches!(p.scheme(), "http" | "https")
                    && p.host().is_some()
                    && p.query().is_none()
                    && p.fragment().is_none()
                    && p.username().is_empty()
                    && p.password().is_none()
            });
            if !ok {
                bail!("FENIX_PUBLIC_URL ({u:?}) must be an http:// or https:// URL such as https://fenix.example.com, without query, fragment or credentials");
            }
        }
        for (name, d) in
            [("FENIX_PORTAL_MAX_TTL", self.portal_max_ttl), ("FENIX_CONSOLE_SESSION_TTL", self.console_session_ttl)]
        {
            if d < Duration::from_secs(1) || d > Duration::from_secs(30 * 86_400) {
                bail!("{name} ({}) must be between 1s and 30d", humantime::format_duration(d));
            }
        }
        Ok(())
    }

    /// True when people reach Fenix over HTTPS (`FENIX_PUBLIC_URL` is `https://…`):
    /// the console's cookies are then `Secure`.
    pub fn served_over_https(&self) -> bool {
        self.public_url.as_deref().is_some_and(|u| u.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("https://")))
    }

    /// Every duration and number within a range that the arithmetic and the
    /// database can hold, with the variable named: a value out of range is
    /// refused at start instead of overflowing later (a huge retention once
    /// wrapped around and purged every payload).
    fn validate_ranges(&self) -> anyhow::Result<()> {
        let at_most = |name: &str, d: Duration, max: Duration, hint: &str| -> anyhow::Result<()> {
            if d > max {
                bail!(
                    "{name} ({}) must be at most {}{hint}",
                    humantime::format_duration(d),
                    humantime::format_duration(max)
                );
            }
            Ok(())
        };
        let day = Duration::from_secs(86_400);
        for (i, wait) in self.retry_schedule.iter().enumerate() {
            at_most(&format!("FENIX_RETRY_SCHEDULE (wait {})", i + 1), *wait, 30 * day, "")?;
        }
        at_most("FENIX_ATTEMPT_TIMEOUT", self.attempt_timeout, Duration::from_secs(3600), "")?;
        at_most("FENIX_LEASE_DURATION", self.lease_duration, day, "")?;
        let forever = " (or write forever)";
        for (name, d) in [
            ("FENIX_PAYLOAD_RETENTION", self.payload_retention),
            ("FENIX_LOG_RETENTION", self.log_retention),
            ("FENIX_DISABLE_AFTER_FAILING", self.disable_after_failing),
        ] {
            if d != FOREVER {
                at_most(name, d, MAX_FINITE, forever)?;
            }
            if d.is_zero() {
                bail!("{name} must be greater than zero{forever}");
            }
        }
        if self.maintenance_interval < Duration::from_millis(10) {
            bail!("FENIX_MAINTENANCE_INTERVAL must be at least 10ms");
        }
        at_most("FENIX_MAINTENANCE_INTERVAL", self.maintenance_interval, day, "")?;
        for (name, n, max) in [
            ("FENIX_WORKER_CONCURRENCY", self.worker_concurrency, 100_000),
            ("FENIX_ENDPOINT_CONCURRENCY", self.endpoint_concurrency, 100_000),
            ("FENIX_CLAIM_BATCH", self.claim_batch, 10_000),
            ("FENIX_MAX_DB_CONNECTIONS", self.max_db_connections as usize, 10_000),
            ("FENIX_MAX_ENDPOINTS_PER_APP", self.max_endpoints_per_app, 100_000),
            ("FENIX_MAX_FANOUT_PER_EVENT", self.max_fanout_per_event, 100_000),
            ("FENIX_MAX_BATCH_EVENTS", self.max_batch_events, 10_000),
            ("FENIX_MAX_BATCH_BYTES", self.max_batch_bytes, 256 * 1024 * 1024),
            ("FENIX_SCHEMA_CONCURRENCY", self.schema_concurrency, 256),
        ] {
            if !(1..=max).contains(&n) {
                bail!("{name} ({n}) must be between 1 and {max}");
            }
        }
        if !(1..=100_000).contains(&self.host_concurrency) {
            bail!("FENIX_HOST_CONCURRENCY must be between 1 and 100000 (got {})", self.host_concurrency);
        }
        self.validate_schema_budgets()?;
        self.validate_answer_bytes()?;
        if self.worker_stall_after < Duration::from_secs(1) || self.worker_stall_after > Duration::from_secs(86_400) {
            bail!("FENIX_WORKER_STALL_AFTER must be between 1s and 24h (got {:?})", self.worker_stall_after);
        }
        self.validate_http_limits()
    }

    /// The validation budgets: long enough for a real check, short enough that
    /// a request never waits long on one, the request's at least one event's.
    /// A page holds at least 64 KiB (an excerpt-laden list of attempts fits),
    /// and the process may hold at least one full page.
    fn validate_answer_bytes(&self) -> anyhow::Result<()> {
        let (min, max) = (64 * 1024, 1024 * 1024 * 1024);
        if !(min..=max).contains(&self.max_page_bytes) {
            bail!("FENIX_MAX_PAGE_BYTES ({}) must be between {min} and {max}", self.max_page_bytes);
        }
        if !(self.max_page_bytes..=2 * max).contains(&self.answer_bytes) {
            bail!(
                "FENIX_ANSWER_BYTES ({}) must be at least FENIX_MAX_PAGE_BYTES ({}) and at most {}",
                self.answer_bytes,
                self.max_page_bytes,
                2 * max
            );
        }
        Ok(())
    }

    fn validate_schema_budgets(&self) -> anyhow::Result<()> {
        let (min, max) = (Duration::from_millis(1), Duration::from_secs(60));
        for (name, d) in
            [("FENIX_SCHEMA_BUDGET", self.schema_budget), ("FENIX_SCHEMA_REQUEST_BUDGET", self.schema_request_budget)]
        {
            if d < min || d > max {
                bail!("{name} must be between 1ms and 60s (got {})", humantime::format_duration(d));
            }
        }
        if self.schema_request_budget < self.schema_budget {
            bail!(
                "FENIX_SCHEMA_REQUEST_BUDGET ({}) must be at least FENIX_SCHEMA_BUDGET ({})",
                humantime::format_duration(self.schema_request_budget),
                humantime::format_duration(self.schema_budget)
            );
        }
        Ok(())
    }

    /// The API server's timeouts and caps: each within a range that keeps the
    /// server answering (a zero timeout would close every connection, an
    /// unbounded one would let half-sent requests hold sockets for ever).
    fn validate_http_limits(&self) -> anyhow::Result<()> {
        let timeouts = [
            ("FENIX_HTTP_HEADER_TIMEOUT", self.http_header_timeout, Duration::from_secs(300)),
            ("FENIX_HTTP_BODY_TIMEOUT", self.http_body_timeout, Duration::from_secs(3600)),
            ("FENIX_HTTP_IDLE_TIMEOUT", self.http_idle_timeout, Duration::from_secs(3600)),
        ];
        for (name, value, max) in timeouts {
            if value < Duration::from_millis(100) || value > max {
                bail!("{name} ({value:?}) must be between 100ms and {max:?}");
            }
        }
        if !(1..=1_000_000).contains(&self.http_max_connections) {
            bail!("FENIX_HTTP_MAX_CONNECTIONS ({}) must be between 1 and 1000000", self.http_max_connections);
        }
        if self.http_max_in_flight == 0 || self.http_max_in_flight > self.http_max_connections {
            bail!(
                "FENIX_HTTP_MAX_IN_FLIGHT ({}) must be between 1 and FENIX_HTTP_MAX_CONNECTIONS ({})",
                self.http_max_in_flight,
                self.http_max_connections
            );
        }
        Ok(())
    }

    /// True when the database is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.database_url.starts_with("postgres")
    }

    /// Maximum number of attempts per delivery.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.retry_schedule.len()).unwrap_or(20) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_schedule_gives_five_attempts() {
        let s = Settings::default();
        assert_eq!(s.max_attempts(), 5);
        assert_eq!(s.retry_schedule[3], Duration::from_secs(7200));
    }

    #[test]
    fn environment_overrides_defaults() {
        let mut s = Settings::default();
        s.apply_env(|k| match k {
            "FENIX_RETRY_SCHEDULE" => Some("100ms, 2s".into()),
            "FENIX_UNSAFE_ALLOW_CIDRS" => Some("127.0.0.0/8,::1/128".into()),
            "FENIX_UNSAFE_ALLOW_HTTP" => Some("true".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(s.retry_schedule, vec![Duration::from_millis(100), Duration::from_secs(2)]);
        assert_eq!(s.unsafe_allow_cidrs.len(), 2);
        assert!(s.unsafe_allow_http);
    }

    #[test]
    fn a_bad_duration_names_the_variable() {
        let err = Settings::default().apply_env(|k| (k == "FENIX_ATTEMPT_TIMEOUT").then(|| "soon".into())).unwrap_err();
        assert!(format!("{err:#}").contains("FENIX_ATTEMPT_TIMEOUT"));
    }

    #[test]
    fn out_of_range_durations_and_numbers_are_refused_naming_the_variable() {
        for (var, value) in [
            ("FENIX_PAYLOAD_RETENTION", "100000000d"),
            ("FENIX_LOG_RETENTION", "0s"),
            ("FENIX_DISABLE_AFTER_FAILING", "500000y"),
            ("FENIX_RETRY_SCHEDULE", "1m,400d"),
            ("FENIX_ATTEMPT_TIMEOUT", "2d"),
            ("FENIX_MAINTENANCE_INTERVAL", "0s"),
            ("FENIX_WORKER_CONCURRENCY", "10000000"),
            ("FENIX_MAX_ENDPOINTS_PER_APP", "0"),
            ("FENIX_MAX_FANOUT_PER_EVENT", "100000000"),
        ] {
            let mut s = Settings { lease_duration: Duration::from_secs(7200), ..Settings::default() };
            let err = s.apply_env(|k| (k == var).then(|| value.into())).and_then(|_| s.validate());
            let err = format!("{:#}", err.expect_err(var));
            assert!(err.contains(var), "{var}={value}: {err}");
        }
    }

    #[test]
    fn a_retention_of_forever_is_accepted() {
        let mut s = Settings::default();
        s.apply_env(|k| k.ends_with("_RETENTION").then(|| "forever".into())).unwrap();
        s.validate().unwrap();
        assert_eq!((s.payload_retention, s.log_retention), (FOREVER, FOREVER));
    }

    #[test]
    fn http_limits_out_of_range_name_their_variable() {
        let cases = [
            ("FENIX_HTTP_HEADER_TIMEOUT", "0s"),
            ("FENIX_HTTP_HEADER_TIMEOUT", "1h"),
            ("FENIX_HTTP_BODY_TIMEOUT", "10ms"),
            ("FENIX_HTTP_IDLE_TIMEOUT", "2h"),
            ("FENIX_HTTP_MAX_CONNECTIONS", "0"),
            ("FENIX_HTTP_MAX_IN_FLIGHT", "0"),
            ("FENIX_HTTP_MAX_IN_FLIGHT", "2000"),
        ];
        for (name, value) in cases {
            let mut s = Settings::default();
            s.apply_env(|k| (k == name).then(|| value.into())).unwrap();
            let err = s.validate().expect_err(&format!("{name}={value} must be refused"));
            assert!(format!("{err:#}").contains(name), "{name}={value}: {err:#}");
        }
        let mut s = Settings::default();
        s.apply_env(|k| match k {
            "FENIX_HTTP_HEADER_TIMEOUT" => Some("2s".into()),
            "FENIX_HTTP_MAX_CONNECTIONS" => Some("64".into()),
            "FENIX_HTTP_MAX_IN_FLIGHT" => Some("8".into()),
            _ => None,
        })
        .unwrap();
        s.validate().unwrap();
        assert_eq!(
            (s.http_header_timeout, s.http_max_connections, s.http_max_in_flight),
            (Duration::from_secs(2), 64, 8)
        );
    }

    #[test]
    fn schema_budgets_are_read_and_checked_naming_the_variable() {
        let mut s = Settings::default();
        assert_eq!((s.schema_budget, s.schema_request_budget), (Duration::from_millis(50), Duration::from_secs(1)));
        let env = [
            ("FENIX_SCHEMA_BUDGET", "20ms"),
            ("FENIX_SCHEMA_REQUEST_BUDGET", "200ms"),
            ("FENIX_SCHEMA_CONCURRENCY", "2"),
        ];
        s.apply_env(|k| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())).unwrap();
        assert_eq!(
            (s.schema_budget, s.schema_request_budget, s.schema_concurrency),
            (Duration::from_millis(20), Duration::from_millis(200), 2)
        );
        s.validate().unwrap();
        for (name, value) in [
            ("FENIX_SCHEMA_BUDGET", "0s"),
            ("FENIX_SCHEMA_BUDGET", "2m"),
            ("FENIX_SCHEMA_REQUEST_BUDGET", "10ms"),
            ("FENIX_SCHEMA_CONCURRENCY", "0"),
        ] {
            let mut s = Settings::default();
            s.apply_env(|k| (k == name).then(|| value.to_string())).unwrap();
            let e = s.validate().unwrap_err().to_string();
            assert!(e.contains(name), "{name}={value}: {e}");
        }
    }

    #[test]
    fn secrets_are_redacted_in_debug() {
        let s = Settings { admin_token: Some(Redacted("fxa_topsecret".into())), ..Settings::default() };
        assert!(!format!("{s:?}").contains("topsecret"));
    }

    #[test]
    fn an_out_of_range_host_concurrency_names_the_variable() {
        for bad in ["0", "100001"] {
            let mut s = Settings::default();
            s.apply_env(|k| (k == "FENIX_HOST_CONCURRENCY").then(|| bad.into())).unwrap();
            let err = s.validate().unwrap_err();
            assert!(format!("{err:#}").contains("FENIX_HOST_CONCURRENCY"), "{err:#}");
        }
        let err = Settings::default().apply_env(|k| (k == "FENIX_HOST_CONCURRENCY").then(|| "-1".into())).unwrap_err();
        assert!(format!("{err:#}").contains("FENIX_HOST_CONCURRENCY"));
    }

    #[test]
    fn an_out_of_range_stall_threshold_names_the_variable() {
        let mut s = Settings::default();
        s.apply_env(|k| (k == "FENIX_WORKER_STALL_AFTER").then(|| "10ms".into())).unwrap();
        assert!(format!("{:#}", s.validate().unwrap_err()).contains("FENIX_WORKER_STALL_AFTER"));
    }

    #[test]
    fn deny_cidrs_are_read_as_a_list_and_a_bad_range_names_the_variable() {
        let mut s = Settings::default();
        s.apply_env(|k| (k == "FENIX_DENY_CIDRS").then(|| "2001:db8:64::/96, 203.0.113.0/24".into())).unwrap();
        assert_eq!(s.deny_cidrs, vec!["2001:db8:64::/96".parse().unwrap(), "203.0.113.0/24".parse().unwrap()]);
        let err =
            Settings::default().apply_env(|k| (k == "FENIX_DENY_CIDRS").then(|| "10.0.0.0/33".into())).unwrap_err();
        assert!(format!("{err:#}").contains("FENIX_DENY_CIDRS"), "{err:#}");
    }
    #[test]
    fn console_settings_are_read_and_checked() {
        let mut s = Settings::default();
        assert_eq!(
            (s.portal_max_ttl, s.console_session_ttl),
            (Duration::from_secs(86_400), Duration::from_secs(43_200))
        );
        assert!(!s.served_over_https());
        s.apply_env(|k| match k {
            "FENIX_PUBLIC_URL" => Some(" https://fenix.example.com/hooks/ ".into()),
            "FENIX_PORTAL_MAX_TTL" => Some("2h".into()),
            "FENIX_CONSOLE_SESSION_TTL" => Some("30m".into()),
            _ => None,
        })
        .unwrap();
        s.validate().unwrap();
        assert_eq!(s.public_url.as_deref(), Some("https://fenix.example.com/hooks"));
        assert!(s.served_over_https());
        assert_eq!((s.portal_max_ttl, s.console_session_ttl), (Duration::from_secs(7200), Duration::from_secs(1800)));
        for (name, value) in [
            ("FENIX_PUBLIC_URL", "fenix.example.com"),
            ("FENIX_PUBLIC_URL", "ftp://fenix.example.com"),
            ("FENIX_PUBLIC_URL", "https://user:pw@fenix.example.com"),
            ("FENIX_PUBLIC_URL", "https://fenix.example.com/?a=1"),
            ("FENIX_PORTAL_MAX_TTL", "0s"),
            ("FENIX_PORTAL_MAX_TTL", "31d"),
            ("FENIX_CONSOLE_SESSION_TTL", "500ms"),
        ] {
            let mut s = Settings::default();
            s.apply_env(|k| (k == name).then(|| value.into())).unwrap();
            let err = s.validate().expect_err(&format!("{name}={value} must be refused"));
            assert!(format!("{err:#}").contains(name), "{name}={value}: {err:#}");
        }
    }

    #[test]
    fn console_frame_ancestors_take_origins_only() {
        let mut s = Settings::default();
        s.apply_env(|k| {
            (k == "FENIX_CONSOLE_FRAME_ANCESTORS")
                .then(|| "https://app.example.com, http://localhost:3000 https://b.example:443/".into())
        })
        .unwrap();
        assert_eq!(
            s.console_frame_ancestors,
            ["https://app.example.com", "http://localhost:3000", "https://b.example"]
        );
        for bad in [
            "app.example.com",
            "https://app.example.com/portal",
            "https://*.example.com",
            "https://app.example.com; script-src *",
            "ftp://app.example.com",
            "https://user@app.example.com",
            "https://app.example.com?x",
            "'self'",
            "https://app.example.com;",
        ] {
            let err = Settings::default()
                .apply_env(|k| (k == "FENIX_CONSOLE_FRAME_ANCESTORS").then(|| bad.into()))
                .unwrap_err();
            assert!(format!("{err:#}").contains("FENIX_CONSOLE_FRAME_ANCESTORS"), "{bad}: {err:#}");
        }
    }

    #[test]
    fn the_endpoint_concurrency_minimum_must_lie_between_1_and_the_maximum() {
        let with = |min: &str, max: &str| {
            let mut s = Settings::default();
            s.apply_env(|k| match k {
                "FENIX_ENDPOINT_CONCURRENCY_MIN" => Some(min.into()),
                "FENIX_ENDPOINT_CONCURRENCY" => Some(max.into()),
                _ => None,
            })
            .unwrap();
            s.validate()
        };
        assert!(with("32", "32").is_ok(), "min = max: the fixed limit");
        for (min, max) in [("0", "32"), ("33", "32")] {
            let err = with(min, max).unwrap_err();
            assert!(format!("{err:#}").contains("FENIX_ENDPOINT_CONCURRENCY_MIN"), "{err:#}");
        }
    }
}
