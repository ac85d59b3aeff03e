//! Every setting in one row: its variable, its TOML key, its default, how its
//! text is parsed into its field, its bounds, how `GET /v1/settings` shows it
//! and a one-line doc. Defaults, the file, the environment, validation and the
//! settings view are all derived from [`SETTINGS`]; a new setting is a field
//! of [`Settings`] and one row here (and its line in docs/configuration.md,
//! which a test holds to this table).
//!
//! The rows are in the order of docs/configuration.md, which is also the order
//! of `GET /v1/settings`.

use std::{path::PathBuf, time::Duration};

use super::{
    bounds::{at_most_other, count, human, is_public_url, positive_at_most, retention, schedule, span},
    parse::{
        non_empty, parse_bool, parse_duration, parse_duration_or_forever, parse_list, parse_listen, parse_number,
        parse_origins, parse_schedule, parse_size,
    },
    view::{dur, list, secret, url_redacted, waits, REDACTED},
    Redacted, Settings,
};

/// How the TOML file writes a setting: durations and lists are strings,
/// numbers and booleans plain TOML values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toml {
    Str,
    Int,
    Bool,
}

/// One setting. `set` parses the text (of the environment, of the file, or
/// `default`) into its field; `check` returns what is wrong, to follow the
/// variable's name in the error (`"(0) must be between 1 and 10000"`).
pub struct Setting {
    /// The environment variable (`FENIX_…`, or `DATABASE_URL`).
    pub env: &'static str,
    /// The TOML file's key; `None`: environment only.
    pub key: Option<&'static str>,
    /// The value when nothing sets it, written as an operator would write it.
    pub default: &'static str,
    pub toml: Toml,
    /// Tokens and keys: shown only as set or not.
    pub secret: bool,
    /// One line for the operator; docs/configuration.md says the rest.
    pub doc: &'static str,
    pub set: fn(&mut Settings, &str) -> anyhow::Result<()>,
    /// The value in force as `GET /v1/settings` shows it, secrets redacted.
    pub show: fn(&Settings) -> Option<String>,
    pub check: fn(&Settings) -> Result<(), String>,
}

const STR: Setting = Setting {
    env: "",
    key: None,
    default: "",
    toml: Toml::Str,
    secret: false,
    doc: "",
    set: |_, _| Ok(()),
    show: |_| None,
    check: |_| Ok(()),
};
const INT: Setting = Setting { toml: Toml::Int, ..STR };
const BOOL: Setting = Setting { toml: Toml::Bool, ..STR };
const SECRET: Setting = Setting { secret: true, ..STR };

const MS: Duration = Duration::from_millis(1);
const SECOND: Duration = Duration::from_secs(1);
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);
const MIB: usize = 1024 * 1024;

/// Every setting, in the order of docs/configuration.md and of `GET /v1/settings`.
pub static SETTINGS: &[Setting] = &[
    Setting {
        env: "FENIX_LISTEN",
        key: Some("listen"),
        default: "127.0.0.1:8080",
        doc: "address of the admin API and ingestion",
        set: |s, v| parse_listen(v).map(|a| s.listen = a),
        show: |s| Some(s.listen.to_string()),
        ..STR
    },
    Setting {
        env: "FENIX_PORTAL_LISTEN",
        key: Some("portal_listen"),
        doc: "a second address for customers' browsers: the portal only, no admin route",
        set: |s, v| {
            s.portal_listen = if v.trim().is_empty() { None } else { Some(parse_listen(v)?) };
            Ok(())
        },
        show: |s| s.portal_listen.map(|a| a.to_string()),
        check: |s| match s.portal_listen {
            Some(p) if p == s.listen && p.port() != 0 => Err(format!("({p}) must differ from FENIX_LISTEN")),
            _ => Ok(()),
        },
        ..STR
    },
    Setting {
        env: "DATABASE_URL",
        key: Some("database_url"),
        default: "sqlite://fenix.db",
        doc: "sqlite://PATH (created if missing), postgres://… or libpq's key/value form (host=a,b …)",
        set: |s, v| {
            if let Some(url) = non_empty(v) {
                s.database_url = url;
            }
            Ok(())
        },
        show: |s| Some(url_redacted(&s.database_url, false)),
        check: |s| {
            if s.database_url.starts_with("sqlite:") {
                Ok(())
            } else if crate::store::is_postgres_url(&s.database_url) {
                crate::store::check_postgres_url(&s.database_url)
            } else {
                Err("must start with sqlite:// or postgres://, or be libpq's key/value form (host=…)".into())
            }
        },
        ..STR
    },
    Setting {
        env: "FENIX_ADMIN_TOKEN",
        key: Some("admin_token"),
        doc: "bootstrap admin token, registered at every start",
        set: |s, v| set_secret(&mut s.admin_token, v),
        show: |s| secret(s.admin_token.as_ref()),
        ..SECRET
    },
    Setting {
        env: "FENIX_MASTER_KEY",
        key: Some("master_key"),
        doc: "base64 of 32 bytes; encrypts endpoint secrets at rest",
        set: |s, v| set_secret(&mut s.master_key, v),
        show: |s| secret(s.master_key.as_ref()),
        ..SECRET
    },
    Setting {
        env: "FENIX_PREVIOUS_MASTER_KEYS",
        doc: "older master keys still accepted for decryption while `fenix rekey` runs",
        set: |s, v| {
            s.previous_master_keys =
                v.split(',').map(str::trim).filter(|p| !p.is_empty()).map(|p| Redacted(p.into())).collect();
            Ok(())
        },
        show: |s| (!s.previous_master_keys.is_empty()).then(|| vec![REDACTED; s.previous_master_keys.len()].join(",")),
        ..SECRET
    },
    Setting {
        env: "FENIX_RETRY_SCHEDULE",
        key: Some("retry_schedule"),
        default: "1m,5m,30m,2h",
        doc: "waits between attempts; attempts = waits + 1",
        set: |s, v| parse_schedule(v).map(|w| s.retry_schedule = w),
        show: |s| waits(&s.retry_schedule),
        check: |s| schedule(&s.retry_schedule, 20, Some(30 * DAY)),
        ..STR
    },
    Setting {
        env: "FENIX_ATTEMPT_TIMEOUT",
        key: Some("attempt_timeout"),
        default: "10s",
        doc: "time limit of one whole attempt",
        set: |s, v| parse_duration(v).map(|d| s.attempt_timeout = d),
        show: |s| dur(s.attempt_timeout),
        check: |s| positive_at_most(s.attempt_timeout, HOUR),
        ..STR
    },
    Setting {
        env: "FENIX_LEASE_DURATION",
        key: Some("lease_duration"),
        default: "30s",
        doc: "how long a claimed delivery stays reserved for its worker",
        set: |s, v| parse_duration(v).map(|d| s.lease_duration = d),
        show: |s| dur(s.lease_duration),
        check: |s| {
            if s.lease_duration <= s.attempt_timeout {
                return Err(format!(
                    "({}) must be longer than FENIX_ATTEMPT_TIMEOUT ({}) so a running attempt keeps its lease",
                    human(s.lease_duration),
                    human(s.attempt_timeout)
                ));
            }
            positive_at_most(s.lease_duration, DAY)
        },
        ..STR
    },
    Setting {
        env: "FENIX_WORKER_CONCURRENCY",
        key: Some("worker_concurrency"),
        default: "512",
        doc: "attempts in flight at once in one process",
        set: |s, v| parse_number(v).map(|n| s.worker_concurrency = n),
        show: |s| Some(s.worker_concurrency.to_string()),
        check: |s| count(s.worker_concurrency, 1, 100_000),
        ..INT
    },
    Setting {
        env: "FENIX_ENDPOINT_CONCURRENCY",
        key: Some("endpoint_concurrency"),
        default: "128",
        doc: "the most attempts in flight at once to one endpoint",
        set: |s, v| parse_number(v).map(|n| s.endpoint_concurrency = n),
        show: |s| Some(s.endpoint_concurrency.to_string()),
        check: |s| count(s.endpoint_concurrency, 1, 100_000),
        ..INT
    },
    Setting {
        env: "FENIX_CLAIM_BATCH",
        key: Some("claim_batch"),
        default: "256",
        doc: "deliveries claimed per database round trip",
        set: |s, v| parse_number(v).map(|n| s.claim_batch = n),
        show: |s| Some(s.claim_batch.to_string()),
        check: |s| count(s.claim_batch, 1, 10_000),
        ..INT
    },
    Setting {
        env: "FENIX_TASK_RATE",
        key: Some("task_rate"),
        default: "1000",
        doc: "deliveries a task (bulk replay, cancel or skip) acts on per second, at most",
        set: |s, v| parse_number(v).map(|n| s.task_rate = n),
        show: |s| Some(s.task_rate.to_string()),
        check: |s| count(s.task_rate, 1, 100_000),
        ..INT
    },
    Setting {
        env: "FENIX_MAX_DB_CONNECTIONS",
        key: Some("max_db_connections"),
        default: "16",
        doc: "PostgreSQL pool size / SQLite readers",
        set: |s, v| parse_number(v).map(|n| s.max_db_connections = n),
        show: |s| Some(s.max_db_connections.to_string()),
        check: |s| count(s.max_db_connections as usize, 1, 10_000),
        ..INT
    },
    Setting {
        env: "FENIX_PAYLOAD_RETENTION",
        key: Some("payload_retention"),
        default: "30d",
        doc: "payload bytes of older events are purged",
        set: |s, v| parse_duration_or_forever(v).map(|d| s.payload_retention = d),
        show: |s| dur(s.payload_retention),
        check: |s| retention(s.payload_retention),
        ..STR
    },
    Setting {
        env: "FENIX_LOG_RETENTION",
        key: Some("log_retention"),
        default: "90d",
        doc: "finished deliveries and their attempts older than this are deleted",
        set: |s, v| parse_duration_or_forever(v).map(|d| s.log_retention = d),
        show: |s| dur(s.log_retention),
        check: |s| retention(s.log_retention),
        ..STR
    },
    Setting {
        env: "FENIX_DISABLE_AFTER_FAILING",
        key: Some("disable_after_failing"),
        default: "3d",
        doc: "an endpoint whose attempts all failed for this long is disabled",
        set: |s, v| parse_duration_or_forever(v).map(|d| s.disable_after_failing = d),
        show: |s| dur(s.disable_after_failing),
        check: |s| retention(s.disable_after_failing),
        ..STR
    },
    Setting {
        env: "FENIX_MAINTENANCE_INTERVAL",
        key: Some("maintenance_interval"),
        default: "60s",
        doc: "how often retention and the endpoint-health check run",
        set: |s, v| parse_duration(v).map(|d| s.maintenance_interval = d),
        show: |s| dur(s.maintenance_interval),
        check: |s| span(s.maintenance_interval, 10 * MS, DAY),
        ..STR
    },
    Setting {
        env: "FENIX_OPERATOR_WEBHOOK_URL",
        key: Some("operator_webhook_url"),
        doc: "where Fenix sends its own operator events",
        set: |s, v| {
            s.operator_webhook_url = non_empty(v);
            Ok(())
        },
        show: |s| s.operator_webhook_url.as_deref().map(|u| url_redacted(u, true)),
        ..STR
    },
    Setting {
        env: "FENIX_OPERATOR_WEBHOOK_SECRET",
        key: Some("operator_webhook_secret"),
        doc: "the operator endpoint's signing secret (whsec_…)",
        set: |s, v| set_secret(&mut s.operator_webhook_secret, v),
        show: |s| secret(s.operator_webhook_secret.as_ref()),
        ..SECRET
    },
    Setting {
        env: "FENIX_DNS_SERVERS",
        key: Some("dns_servers"),
        doc: "DNS servers for destination checks (IP:port); unset = the system's",
        set: |s, v| {
            if !v.trim().is_empty() {
                s.dns_servers = Some(parse_list(v, "DNS server address (write host:port)")?);
            }
            Ok(())
        },
        show: |s| s.dns_servers.as_deref().and_then(list),
        ..STR
    },
    Setting {
        env: "FENIX_UNSAFE_ALLOW_HTTP",
        key: Some("unsafe_allow_http"),
        default: "false",
        doc: "development only: allow http:// and ports other than 443",
        set: |s, v| parse_bool(v).map(|b| s.unsafe_allow_http = b),
        show: |s| Some(s.unsafe_allow_http.to_string()),
        ..BOOL
    },
    Setting {
        env: "FENIX_UNSAFE_ALLOW_CIDRS",
        key: Some("unsafe_allow_cidrs"),
        doc: "development only: destination ranges allowed despite the policy",
        set: |s, v| parse_list(v, "CIDR range").map(|c| s.unsafe_allow_cidrs = c),
        show: |s| list(&s.unsafe_allow_cidrs),
        ..STR
    },
    Setting {
        env: "FENIX_EXTRA_CA_CERT",
        key: Some("extra_ca_cert"),
        doc: "a PEM certificate trusted in addition to the public roots",
        set: |s, v| {
            if let Some(path) = non_empty(v) {
                s.extra_ca_cert = Some(PathBuf::from(path));
            }
            Ok(())
        },
        show: |s| s.extra_ca_cert.as_ref().map(|p| p.display().to_string()),
        ..STR
    },
    Setting {
        env: "FENIX_EGRESS_PROXY",
        key: Some("egress_proxy"),
        doc: "every outbound request through this proxy: http://[user:password@]host:port or socks5://…",
        set: |s, v| {
            s.egress_proxy = match non_empty(v) {
                None => None,
                Some(text) => Some(crate::egress::EgressProxy::parse(&text)?),
            };
            Ok(())
        },
        show: |s| s.egress_proxy.as_ref().map(ToString::to_string),
        ..STR
    },
    Setting {
        env: "FENIX_MAX_ENDPOINTS_PER_APP",
        key: Some("max_endpoints_per_app"),
        default: "100",
        doc: "endpoints one app may have",
        set: |s, v| parse_number(v).map(|n| s.max_endpoints_per_app = n),
        show: |s| Some(s.max_endpoints_per_app.to_string()),
        check: |s| count(s.max_endpoints_per_app, 1, 100_000),
        ..INT
    },
    Setting {
        env: "FENIX_MAX_FANOUT_PER_EVENT",
        key: Some("max_fanout_per_event"),
        default: "100",
        doc: "deliveries one event may fan out to",
        set: |s, v| parse_number(v).map(|n| s.max_fanout_per_event = n),
        show: |s| Some(s.max_fanout_per_event.to_string()),
        check: |s| count(s.max_fanout_per_event, 1, 100_000),
        ..INT
    },
    Setting {
        env: "FENIX_MAX_BATCH_EVENTS",
        key: Some("max_batch_events"),
        default: "1000",
        doc: "events one POST …/events/batch may carry",
        set: |s, v| parse_number(v).map(|n| s.max_batch_events = n),
        show: |s| Some(s.max_batch_events.to_string()),
        check: |s| count(s.max_batch_events, 1, 10_000),
        ..INT
    },
    Setting {
        env: "FENIX_MAX_BATCH_BYTES",
        key: Some("max_batch_bytes"),
        default: "16777216",
        doc: "largest body of one POST …/events/batch, in bytes",
        set: |s, v| parse_number(v).map(|n| s.max_batch_bytes = n),
        show: |s| Some(s.max_batch_bytes.to_string()),
        check: |s| count(s.max_batch_bytes, 1, 256 * MIB),
        ..INT
    },
    Setting {
        env: "FENIX_MAX_SCHEDULE_AHEAD",
        key: Some("max_schedule_ahead"),
        default: "30d",
        doc: "furthest ahead an event's deliver_at or delay may be",
        set: |s, v| parse_duration(v).map(|d| s.max_schedule_ahead = d),
        show: |s| dur(s.max_schedule_ahead),
        // Never beyond FENIX_PAYLOAD_RETENTION either (a payload purged before
        // its time is never sent): `Settings::schedule_horizon` applies both.
        check: |s| span(s.max_schedule_ahead, SECOND, 3650 * DAY),
        ..STR
    },
    Setting {
        env: "FENIX_MAX_PAGE_BYTES",
        key: Some("max_page_bytes"),
        default: "4194304",
        doc: "bytes of items one list page may hold",
        set: |s, v| parse_number(v).map(|n| s.max_page_bytes = n),
        show: |s| Some(s.max_page_bytes.to_string()),
        // At least 64 KiB: an excerpt-laden list of attempts fits.
        check: |s| count(s.max_page_bytes, 64 * 1024, 1024 * MIB),
        ..INT
    },
    Setting {
        env: "FENIX_ANSWER_BYTES",
        key: Some("answer_bytes"),
        default: "33554432",
        doc: "bytes the answers carrying payloads may hold at once in this process",
        set: |s, v| parse_number(v).map(|n| s.answer_bytes = n),
        show: |s| Some(s.answer_bytes.to_string()),
        // The process may hold at least one full page.
        check: |s| {
            let max = 2048 * MIB;
            if (s.max_page_bytes..=max).contains(&s.answer_bytes) {
                return Ok(());
            }
            Err(format!(
                "({}) must be at least FENIX_MAX_PAGE_BYTES ({}) and at most {max}",
                s.answer_bytes, s.max_page_bytes
            ))
        },
        ..INT
    },
    Setting {
        env: "FENIX_HOST_CONCURRENCY",
        key: Some("host_concurrency"),
        default: "256",
        doc: "attempts in flight at once to one destination host",
        set: |s, v| parse_number(v).map(|n| s.host_concurrency = n),
        show: |s| Some(s.host_concurrency.to_string()),
        check: |s| count(s.host_concurrency, 1, 100_000),
        ..INT
    },
    Setting {
        env: "FENIX_WORKER_STALL_AFTER",
        key: Some("worker_stall_after"),
        default: "2m",
        doc: "a worker that records nothing this long while work is due is not ready",
        set: |s, v| parse_duration(v).map(|d| s.worker_stall_after = d),
        show: |s| dur(s.worker_stall_after),
        check: |s| span(s.worker_stall_after, SECOND, DAY),
        ..STR
    },
    Setting {
        env: "FENIX_HTTP_HEADER_TIMEOUT",
        key: Some("http_header_timeout"),
        default: "10s",
        doc: "time a client has to send a request's headers",
        set: |s, v| parse_duration(v).map(|d| s.http_header_timeout = d),
        show: |s| dur(s.http_header_timeout),
        check: |s| span(s.http_header_timeout, 100 * MS, 300 * SECOND),
        ..STR
    },
    Setting {
        env: "FENIX_HTTP_BODY_TIMEOUT",
        key: Some("http_body_timeout"),
        default: "30s",
        doc: "time a client has to send a request's body once its headers arrived",
        set: |s, v| parse_duration(v).map(|d| s.http_body_timeout = d),
        show: |s| dur(s.http_body_timeout),
        check: |s| span(s.http_body_timeout, 100 * MS, HOUR),
        ..STR
    },
    Setting {
        env: "FENIX_HTTP_IDLE_TIMEOUT",
        key: Some("http_idle_timeout"),
        default: "60s",
        doc: "how long a kept-alive connection may wait for its next request",
        set: |s, v| parse_duration(v).map(|d| s.http_idle_timeout = d),
        show: |s| dur(s.http_idle_timeout),
        check: |s| span(s.http_idle_timeout, 100 * MS, HOUR),
        ..STR
    },
    Setting {
        env: "FENIX_HTTP_MAX_CONNECTIONS",
        key: Some("http_max_connections"),
        default: "1024",
        doc: "connections the API holds at once",
        set: |s, v| parse_number(v).map(|n| s.http_max_connections = n),
        show: |s| Some(s.http_max_connections.to_string()),
        check: |s| count(s.http_max_connections, 1, 1_000_000),
        ..INT
    },
    Setting {
        env: "FENIX_HTTP_MAX_IN_FLIGHT",
        key: Some("http_max_in_flight"),
        default: "512",
        doc: "requests handled at once; one more is answered 503 overloaded",
        set: |s, v| parse_number(v).map(|n| s.http_max_in_flight = n),
        show: |s| Some(s.http_max_in_flight.to_string()),
        check: |s| at_most_other(s.http_max_in_flight, "FENIX_HTTP_MAX_CONNECTIONS", s.http_max_connections),
        ..INT
    },
    Setting {
        env: "FENIX_HTTP_QUEUE_WAIT",
        key: Some("http_queue_wait"),
        default: "1s",
        doc: "how long a request over FENIX_HTTP_MAX_IN_FLIGHT waits for a slot before 503 overloaded (0: none)",
        set: |s, v| parse_duration(v).map(|d| s.http_queue_wait = d),
        show: |s| dur(s.http_queue_wait),
        check: |s| span(s.http_queue_wait, Duration::ZERO, 60 * SECOND),
        ..STR
    },
    Setting {
        env: "FENIX_DENY_CIDRS",
        key: Some("deny_cidrs"),
        doc: "public destination ranges never contacted; wins over FENIX_UNSAFE_ALLOW_CIDRS",
        set: |s, v| parse_list(v, "CIDR range").map(|c| s.deny_cidrs = c),
        show: |s| list(&s.deny_cidrs),
        ..STR
    },
    Setting {
        env: "FENIX_PUBLIC_URL",
        key: Some("public_url"),
        doc: "where people reach this Fenix, the base of portal links",
        set: |s, v| {
            s.public_url = non_empty(v.trim().trim_end_matches('/'));
            Ok(())
        },
        show: |s| s.public_url.clone(),
        check: |s| {
            match &s.public_url {
            Some(u) if !is_public_url(u) => Err(format!(
                "({u:?}) must be an http:// or https:// URL such as https://fenix.example.com, without query, fragment or credentials"
            )),
            _ => Ok(()),
        }
        },
        ..STR
    },
    Setting {
        env: "FENIX_PORTAL_MAX_TTL",
        key: Some("portal_max_ttl"),
        default: "24h",
        doc: "longest life of a portal link and of the session made from it",
        set: |s, v| parse_duration(v).map(|d| s.portal_max_ttl = d),
        show: |s| dur(s.portal_max_ttl),
        check: |s| span(s.portal_max_ttl, SECOND, 30 * DAY),
        ..STR
    },
    Setting {
        env: "FENIX_CONSOLE_SESSION_TTL",
        key: Some("console_session_ttl"),
        default: "12h",
        doc: "life of an operator's console session",
        set: |s, v| parse_duration(v).map(|d| s.console_session_ttl = d),
        show: |s| dur(s.console_session_ttl),
        check: |s| span(s.console_session_ttl, SECOND, 30 * DAY),
        ..STR
    },
    Setting {
        env: "FENIX_CONSOLE_FRAME_ANCESTORS",
        key: Some("console_frame_ancestors"),
        doc: "origins allowed to frame the console; empty = no framing",
        set: |s, v| parse_origins(v).map(|o| s.console_frame_ancestors = o),
        show: |s| list(&s.console_frame_ancestors),
        ..STR
    },
    Setting {
        env: "FENIX_EVENT_TYPES_STRICT",
        key: Some("event_types_strict"),
        default: "false",
        doc: "refuse events and filters naming types outside the catalogue",
        set: |s, v| parse_bool(v).map(|b| s.event_types_strict = b),
        show: |s| Some(s.event_types_strict.to_string()),
        ..BOOL
    },
    Setting {
        env: "FENIX_REQUIRE_ENDPOINT_VERIFICATION",
        key: Some("require_endpoint_verification"),
        default: "false",
        doc: "every new endpoint (and URL change) must prove its ownership",
        set: |s, v| parse_bool(v).map(|b| s.require_endpoint_verification = b),
        show: |s| Some(s.require_endpoint_verification.to_string()),
        ..BOOL
    },
    Setting {
        env: "FENIX_VERIFICATION_RETRY_SCHEDULE",
        key: Some("verification_retry_schedule"),
        default: "10s,1m,5m",
        doc: "waits between the attempts of one ownership challenge",
        set: |s, v| parse_schedule(v).map(|w| s.verification_retry_schedule = w),
        show: |s| waits(&s.verification_retry_schedule),
        check: |s| schedule(&s.verification_retry_schedule, 10, None),
        ..STR
    },
    Setting {
        env: "FENIX_ENDPOINT_CONCURRENCY_MIN",
        key: Some("endpoint_concurrency_min"),
        default: "1",
        doc: "the least attempts in flight an endpoint's adaptive limit falls to",
        set: |s, v| parse_number(v).map(|n| s.endpoint_concurrency_min = n),
        show: |s| Some(s.endpoint_concurrency_min.to_string()),
        check: |s| at_most_other(s.endpoint_concurrency_min, "FENIX_ENDPOINT_CONCURRENCY", s.endpoint_concurrency),
        ..INT
    },
    Setting {
        env: "FENIX_SCHEMA_BUDGET",
        key: Some("schema_budget"),
        default: "50ms",
        doc: "longest one event's schema check may take",
        set: |s, v| parse_duration(v).map(|d| s.schema_budget = d),
        show: |s| dur(s.schema_budget),
        check: |s| span(s.schema_budget, MS, 60 * SECOND),
        ..STR
    },
    Setting {
        env: "FENIX_SCHEMA_REQUEST_BUDGET",
        key: Some("schema_request_budget"),
        default: "1s",
        doc: "longest all schema checks of one request may take together",
        set: |s, v| parse_duration(v).map(|d| s.schema_request_budget = d),
        show: |s| dur(s.schema_request_budget),
        check: |s| {
            span(s.schema_request_budget, MS, 60 * SECOND)?;
            if s.schema_request_budget < s.schema_budget {
                return Err(format!(
                    "({}) must be at least FENIX_SCHEMA_BUDGET ({})",
                    human(s.schema_request_budget),
                    human(s.schema_budget)
                ));
            }
            Ok(())
        },
        ..STR
    },
    Setting {
        env: "FENIX_SCHEMA_CONCURRENCY",
        key: Some("schema_concurrency"),
        default: "4",
        doc: "schema checks running at once (blocking threads they may hold)",
        set: |s, v| parse_number(v).map(|n| s.schema_concurrency = n),
        show: |s| Some(s.schema_concurrency.to_string()),
        check: |s| count(s.schema_concurrency, 1, 256),
        ..INT
    },
    Setting {
        env: "FENIX_TRANSFORM_TIMEOUT",
        key: Some("transform_timeout"),
        default: "100ms",
        doc: "longest one run of an endpoint's transformation may take",
        set: |s, v| parse_duration(v).map(|d| s.transform_timeout = d),
        show: |s| dur(s.transform_timeout),
        check: |s| span(s.transform_timeout, MS, 10 * SECOND),
        ..STR
    },
    Setting {
        env: "FENIX_TRANSFORM_MEMORY",
        key: Some("transform_memory"),
        default: "16MiB",
        doc: "most memory one run of an endpoint's transformation may use",
        set: |s, v| parse_size(v).map(|n| s.transform_memory = n),
        show: |s| Some(format!("{}KiB", s.transform_memory / 1024)),
        check: |s| count(s.transform_memory, 1024 * 1024, 1024 * 1024 * 1024),
        ..STR
    },
    Setting {
        env: "FENIX_TRANSFORM_THREADS",
        key: Some("transform_threads"),
        default: "2",
        doc: "threads that run endpoints' transformations",
        set: |s, v| parse_number(v).map(|n| s.transform_threads = n),
        show: |s| Some(s.transform_threads.to_string()),
        check: |s| count(s.transform_threads, 1, 64),
        ..INT
    },
];

/// A secret from text; empty text leaves it as it was.
fn set_secret(field: &mut Option<Redacted>, v: &str) -> anyhow::Result<()> {
    if !v.is_empty() {
        *field = Some(Redacted(v.to_string()));
    }
    Ok(())
}
