//! Typed configuration: built-in defaults, then an optional TOML file, then
//! `FENIX_*` environment variables, then [`Settings::validate`].
//!
//! Every knob an operator meets lives here so the rest of the code never reads
//! the environment itself; tests build a `Settings` directly. Each setting is
//! one row of [`table::SETTINGS`] (its variable, key, default, parser, bounds,
//! view and doc); the defaults, the file, the environment, the validation and
//! `GET /v1/settings` all read that table.

mod bounds;
mod parse;
mod table;
#[cfg(test)]
mod tests;
mod view;

use std::{fmt, net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::{bail, Context};
use serde::Deserialize;

pub use parse::{parse_duration, parse_duration_or_forever, parse_origins, parse_schedule, FOREVER};
pub use table::{Setting, Toml, SETTINGS};
pub use view::{show_duration, REDACTED};

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
    /// A second address serving only what a customer's browser needs (the
    /// portal's pages and the routes a portal session may call), so `listen`
    /// can stay internal.
    pub portal_listen: Option<SocketAddr>,
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
    /// Every outbound request leaves through this proxy (`FENIX_EGRESS_PROXY`).
    pub egress_proxy: Option<crate::egress::EgressProxy>,
    /// Attempts in flight at once, over all endpoints.
    pub worker_concurrency: usize,
    /// Attempts in flight at once to one endpoint.
    pub endpoint_concurrency: usize,
    /// Deliveries claimed per database round trip.
    pub claim_batch: usize,
    /// Deliveries a task (`/v1/apps/{app}/tasks`) acts on per second, at most:
    /// how fast a bulk replay re-queues (kept under the delivery rate, fresh
    /// deliveries keep their latency).
    pub task_rate: usize,
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
    /// Furthest ahead an event may be scheduled (`deliver_at`, `delay`): a
    /// scheduled delivery holds its row (and its payload) until then, so a
    /// producer's typo of a year must not keep it for ever.
    pub max_schedule_ahead: Duration,
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
    /// Requests handled at once; one more waits for a slot for at most
    /// `http_queue_wait`, then is answered `503 overloaded`.
    pub http_max_in_flight: usize,
    /// How long a request over `http_max_in_flight` waits for a slot (its
    /// headers read, its body not): a moment's stall of the database is
    /// answered late rather than refused. Zero refuses at once.
    pub http_queue_wait: Duration,
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
    /// Longest one run of an endpoint's transformation (`transform`).
    pub transform_timeout: Duration,
    /// Most memory one run of a transformation may use, in bytes.
    pub transform_memory: usize,
    /// Threads that run transformations (a bounded queue feeds them).
    pub transform_threads: usize,
}

impl Default for Settings {
    /// Every row's default, parsed as if an operator had written it.
    fn default() -> Self {
        let mut s = Settings::blank();
        for row in SETTINGS {
            (row.set)(&mut s, row.default).unwrap_or_else(|e| panic!("default of {}: {e:#}", row.env));
        }
        s
    }
}

impl Settings {
    /// Furthest ahead an event may be scheduled: `FENIX_MAX_SCHEDULE_AHEAD`,
    /// and never beyond `FENIX_PAYLOAD_RETENTION` (a payload purged before
    /// its event's time could not be sent).
    pub fn schedule_horizon(&self) -> Duration {
        self.max_schedule_ahead.min(self.payload_retention)
    }

    /// Placeholders that [`Default`] overwrites from the table (a test checks
    /// that every field but the two command-line flags has a row).
    fn blank() -> Settings {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            portal_listen: None,
            database_url: String::new(),
            admin_token: None,
            master_key: None,
            previous_master_keys: Vec::new(),
            retry_schedule: Vec::new(),
            attempt_timeout: Duration::ZERO,
            lease_duration: Duration::ZERO,
            dns_servers: None,
            unsafe_allow_cidrs: Vec::new(),
            unsafe_allow_http: false,
            extra_ca_cert: None,
            egress_proxy: None,
            worker_concurrency: 0,
            endpoint_concurrency: 0,
            claim_batch: 0,
            task_rate: 0,
            run_api: true,
            run_worker: true,
            payload_retention: Duration::ZERO,
            log_retention: Duration::ZERO,
            disable_after_failing: Duration::ZERO,
            max_db_connections: 0,
            operator_webhook_url: None,
            operator_webhook_secret: None,
            maintenance_interval: Duration::ZERO,
            max_endpoints_per_app: 0,
            max_fanout_per_event: 0,
            max_schedule_ahead: Duration::ZERO,
            host_concurrency: 0,
            worker_stall_after: Duration::ZERO,
            http_header_timeout: Duration::ZERO,
            http_body_timeout: Duration::ZERO,
            http_idle_timeout: Duration::ZERO,
            http_max_connections: 0,
            http_max_in_flight: 0,
            http_queue_wait: Duration::ZERO,
            deny_cidrs: Vec::new(),
            max_batch_events: 0,
            max_batch_bytes: 0,
            max_page_bytes: 0,
            answer_bytes: 0,
            public_url: None,
            portal_max_ttl: Duration::ZERO,
            console_session_ttl: Duration::ZERO,
            console_frame_ancestors: Vec::new(),
            event_types_strict: false,
            require_endpoint_verification: false,
            verification_retry_schedule: Vec::new(),
            endpoint_concurrency_min: 0,
            schema_budget: Duration::ZERO,
            schema_request_budget: Duration::ZERO,
            schema_concurrency: 0,
            transform_timeout: Duration::ZERO,
            transform_memory: 0,
            transform_threads: 0,
        }
    }

    /// Defaults, then `file` (if any), then the process environment, then validation.
    pub fn load(file: Option<&std::path::Path>) -> anyhow::Result<Settings> {
        let mut s = Settings::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            s.apply_file(&text).with_context(|| format!("in {}", path.display()))?;
        }
        s.apply_env(|k| std::env::var(k).ok())?;
        s.validate()?;
        Ok(s)
    }

    /// Applies a TOML file's keys, each through its row's parser. Durations
    /// and lists are strings, numbers and booleans plain TOML values; an
    /// unknown key or a value of another type is refused, naming the key.
    fn apply_file(&mut self, text: &str) -> anyhow::Result<()> {
        let table: toml::Table = toml::from_str(text).context("not a TOML file")?;
        for (key, value) in &table {
            let Some(row) = SETTINGS.iter().find(|r| r.key == Some(key.as_str())) else {
                let hint = if SETTINGS.iter().any(|r| r.env.eq_ignore_ascii_case(key)) {
                    " (write the variable's name without FENIX_, in lower case)"
                } else if SETTINGS.iter().any(|r| r.key.is_none() && r.env.ends_with(&key.to_ascii_uppercase())) {
                    " (this setting is read from the environment only)"
                } else {
                    " (the keys are listed in docs/configuration.md)"
                };
                bail!("unknown key `{key}`{hint}");
            };
            let text = match (row.toml, value) {
                (Toml::Str, toml::Value::String(s)) => s.clone(),
                (Toml::Int, toml::Value::Integer(n)) => n.to_string(),
                (Toml::Bool, toml::Value::Boolean(b)) => b.to_string(),
                (kind, other) => {
                    let want = match kind {
                        Toml::Str => "a string, e.g. \"10s\"",
                        Toml::Int => "a whole number, without quotes",
                        Toml::Bool => "true or false, without quotes",
                    };
                    bail!("`{key}` must be {want} (found a {})", other.type_str());
                }
            };
            (row.set)(self, &text).with_context(|| format!("in `{key}`"))?;
        }
        Ok(())
    }

    /// Applies variables from `get` (the environment, or a test's map), each
    /// through its row's parser; an error names the variable.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        for row in SETTINGS {
            if let Some(v) = get(row.env) {
                (row.set)(self, &v).with_context(|| format!("in {}", row.env))?;
            }
        }
        Ok(())
    }

    /// Rejects values out of their row's bounds and combinations that cannot
    /// work, with a message naming the variable and saying what to change.
    /// Every duration and number has a range the arithmetic and the database
    /// can hold: a value out of it is refused at start instead of overflowing later.
    pub fn validate(&self) -> anyhow::Result<()> {
        for row in SETTINGS {
            if let Err(what) = (row.check)(self) {
                bail!("{} {what}", row.env);
            }
        }
        if !self.run_api && !self.run_worker {
            bail!("--api-only and --worker-only cannot both be given");
        }
        Ok(())
    }

    /// True when people reach Fenix over HTTPS (`FENIX_PUBLIC_URL` is `https://…`):
    /// the console's cookies are then `Secure`.
    pub fn served_over_https(&self) -> bool {
        self.public_url.as_deref().is_some_and(|u| u.get(..8).is_some_and(|p| p.eq_ignore_ascii_case("https://")))
    }

    /// True when the database is PostgreSQL (a URL, or libpq's key/value form).
    pub fn is_postgres(&self) -> bool {
        crate::store::is_postgres_url(&self.database_url)
    }

    /// Maximum number of attempts per delivery.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.retry_schedule.len()).unwrap_or(20) + 1
    }
}
