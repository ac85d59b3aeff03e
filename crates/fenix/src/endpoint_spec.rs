//! An endpoint's spec: everything an owner chooses about how Fenix sends to
//! the endpoint (signature scheme, signing algorithm, event-type filter, custom
//! headers, retry schedule, final status codes, attempt timeout, ordering and
//! what a lane does after a dead letter, rate limit), as one typed value.
//!
//! The API parses a request into an [`EndpointSpec`] once (`api::endpoints`,
//! with the checks of `endpoint_policy`); the store writes it through
//! [`EndpointSpec::stored`] and every read decodes it through
//! [`StoredSpec::decode`]: the endpoint's own reads, the claim's delivery
//! targets and the ownership challenges. The columns and their text are those
//! stored before this type existed.
//!
//! A stored value the code does not understand (a scheme it does not know,
//! JSON that is not the stored shape, a negative timeout) is a [`SpecError`]
//! naming the endpoint and the column, never a default: an API read answers
//! 500, and the worker fails that endpoint's deliveries (logging the error)
//! instead of sending them under a policy the owner did not choose.
//!
//! A new endpoint option is a field here, its column in [`SPEC_COLUMNS`] and
//! [`StoredSpec`] (written by `stored`, read by `decode`), its migration, and
//! its place in the API's bodies and answer.

use std::time::Duration;

use fenix_signing::Scheme;

use crate::{
    endpoint_policy::StoredHeaders,
    endpoint_tls::EndpointTls,
    event_types::EventTypeFilter,
    lifecycle::{OnDeadLetter, SigningAlgorithm},
    oauth::spec::EndpointAuth,
};

/// The spec's columns of `endpoints`, for every statement that reads an
/// endpoint's spec (their names appear in no table joined with it). The
/// select lists that read them end with this text (a test checks them).
pub const SPEC_COLUMNS: &str = "signature_scheme, signing_algorithm, event_types, headers, retry_schedule, \
     final_status_codes, attempt_timeout_ms, ordered, on_dead_letter, rate_limit_per_sec, tls, auth, channels, transformation, filter";

/// How Fenix sends to one endpoint, as its owner chose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointSpec {
    /// The signature headers' format.
    pub signature_scheme: Scheme,
    /// What the current key signs with (a rotation may change it).
    pub signing_algorithm: SigningAlgorithm,
    /// The event types the endpoint receives (empty: every type).
    pub event_types: EventTypeFilter,
    /// Custom request headers, sensitive values sealed.
    pub headers: StoredHeaders,
    /// Own waits between attempts; `None`: `FENIX_RETRY_SCHEDULE`.
    pub retry_schedule: Option<Vec<Duration>>,
    /// 4xx statuses that fail a delivery at once, sorted.
    pub final_status_codes: Vec<u16>,
    /// Own attempt timeout; `None`: `FENIX_ATTEMPT_TIMEOUT`.
    pub attempt_timeout: Option<Duration>,
    /// Ordered delivery: one delivery at a time per lane, in event order.
    pub ordered: bool,
    /// What an ordered lane does after a dead letter.
    pub on_dead_letter: OnDeadLetter,
    /// Most requests a second; `None`: no limit of its own.
    pub rate_limit_per_sec: Option<i64>,
    /// Client certificate and extra CAs (`endpoint_tls`); `None`: neither.
    pub tls: Option<EndpointTls>,
    /// OAuth2 client credentials (`oauth::spec`); `None`: no token is sent.
    pub auth: Option<EndpointAuth>,
    /// The channels the endpoint receives (`labels`): only events sharing
    /// one of them; empty: every event.
    pub channels: Vec<String>,
    /// The owner's JavaScript `handler(webhook)` (`transform`), checked
    /// when saved; `None`: the envelope is sent as it is.
    pub transformation: Option<std::sync::Arc<str>>,
    /// The content filter (`filter`, CEL), checked when saved; `None`:
    /// every event the other rules let through.
    pub filter: Option<String>,
}

impl Default for EndpointSpec {
    /// What a create that chooses nothing gets.
    fn default() -> Self {
        EndpointSpec {
            signature_scheme: Scheme::FenixV1,
            signing_algorithm: SigningAlgorithm::default(),
            event_types: EventTypeFilter::default(),
            headers: StoredHeaders::default(),
            retry_schedule: None,
            final_status_codes: Vec::new(),
            attempt_timeout: None,
            ordered: false,
            on_dead_letter: OnDeadLetter::default(),
            rate_limit_per_sec: None,
            tls: None,
            auth: None,
            channels: Vec::new(),
            transformation: None,
            filter: None,
        }
    }
}

/// The spec as its columns hold it ([`SPEC_COLUMNS`]): text as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredSpec {
    pub signature_scheme: String,
    pub signing_algorithm: String,
    /// JSON array of patterns.
    pub event_types: String,
    /// JSON array of `{name, value | sealed}`.
    pub headers: String,
    /// JSON array of milliseconds; `NULL`: the global schedule.
    pub retry_schedule: Option<String>,
    /// JSON array of status codes.
    pub final_status_codes: String,
    pub attempt_timeout_ms: Option<i64>,
    pub ordered: bool,
    pub on_dead_letter: String,
    pub rate_limit_per_sec: Option<i64>,
    /// JSON of `endpoint_tls::EndpointTls` (the key sealed); `NULL`: none.
    pub tls: Option<String>,
    /// JSON of `oauth::spec::EndpointAuth` (the credential sealed); `NULL`: none.
    pub auth: Option<String>,
    /// JSON array of channel names; `[]`: every event.
    pub channels: String,
    /// The script's text; `NULL`: none.
    pub transformation: Option<String>,
    /// The filter's text; `NULL`: none.
    pub filter: Option<String>,
}

/// A stored spec value the code does not understand. Names the endpoint and
/// the column; quotes a value only where it cannot hold a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("endpoint {endpoint_id}: stored {column} {problem}")]
pub struct SpecError {
    pub endpoint_id: String,
    pub column: &'static str,
    problem: String,
}

impl EndpointSpec {
    /// The one encoding of the spec into its columns.
    pub fn stored(&self) -> StoredSpec {
        StoredSpec {
            signature_scheme: self.signature_scheme.as_str().to_string(),
            signing_algorithm: self.signing_algorithm.as_str().to_string(),
            event_types: self.event_types.to_json(),
            headers: self.headers.to_json(),
            retry_schedule: self.retry_schedule.as_deref().map(schedule_column),
            final_status_codes: final_codes_column(&self.final_status_codes),
            attempt_timeout_ms: self.attempt_timeout.map(timeout_column),
            ordered: self.ordered,
            on_dead_letter: self.on_dead_letter.as_str().to_string(),
            rate_limit_per_sec: self.rate_limit_per_sec,
            tls: self.tls.as_ref().map(EndpointTls::to_json),
            auth: self.auth.as_ref().map(EndpointAuth::to_json),
            channels: crate::labels::to_json(&self.channels),
            transformation: self.transformation.as_deref().map(str::to_string),
            filter: self.filter.clone(),
        }
    }
}

/// The stored form of a retry schedule (milliseconds).
pub fn schedule_column(s: &[Duration]) -> String {
    serde_json::to_string(&s.iter().map(|d| d.as_millis() as u64).collect::<Vec<_>>()).expect("numbers serialize")
}

/// The stored form of final status codes.
pub fn final_codes_column(codes: &[u16]) -> String {
    serde_json::to_string(codes).expect("numbers serialize")
}

/// The stored form of an attempt timeout (milliseconds).
pub fn timeout_column(t: Duration) -> i64 {
    i64::try_from(t.as_millis()).unwrap_or(i64::MAX)
}

impl StoredSpec {
    /// The one decoding of the columns of endpoint `endpoint_id`.
    pub fn decode(self, endpoint_id: &str) -> Result<EndpointSpec, SpecError> {
        let fail =
            |column: &'static str, problem: String| SpecError { endpoint_id: endpoint_id.into(), column, problem };
        let unknown = |column, text: &str| fail(column, format!("{:?} is not known", short(text)));
        let not_json = |column, shape: &str| fail(column, format!("is not {shape}"));
        let schedule = match &self.retry_schedule {
            None => None,
            Some(json) => Some(
                serde_json::from_str::<Vec<u64>>(json)
                    .map_err(|_| not_json("retry_schedule", "a JSON array of milliseconds"))?
                    .into_iter()
                    .map(Duration::from_millis)
                    .collect(),
            ),
        };
        let timeout = match self.attempt_timeout_ms {
            None => None,
            Some(ms) => Some(Duration::from_millis(
                u64::try_from(ms).map_err(|_| fail("attempt_timeout_ms", format!("{ms} is negative")))?,
            )),
        };
        Ok(EndpointSpec {
            signature_scheme: Scheme::parse(&self.signature_scheme)
                .ok_or_else(|| unknown("signature_scheme", &self.signature_scheme))?,
            signing_algorithm: self
                .signing_algorithm
                .parse()
                .map_err(|_| unknown("signing_algorithm", &self.signing_algorithm))?,
            event_types: event_types(endpoint_id, &self.event_types)?,
            headers: StoredHeaders::from_json(&self.headers)
                .map_err(|_| not_json("headers", "a JSON array of stored headers"))?,
            retry_schedule: schedule,
            final_status_codes: serde_json::from_str(&self.final_status_codes)
                .map_err(|_| not_json("final_status_codes", "a JSON array of status codes"))?,
            attempt_timeout: timeout,
            ordered: self.ordered,
            on_dead_letter: self.on_dead_letter.parse().map_err(|_| unknown("on_dead_letter", &self.on_dead_letter))?,
            rate_limit_per_sec: self.rate_limit_per_sec,
            tls: self
                .tls
                .as_deref()
                .map(EndpointTls::from_json)
                .transpose()
                .map_err(|_| not_json("tls", "the stored TLS material"))?,
            auth: match &self.auth {
                None => None,
                Some(json) => Some(EndpointAuth::from_json(json).map_err(|p| fail("auth", p.to_string()))?),
            },
            channels: channels(endpoint_id, &self.channels)?,
            transformation: self.transformation.map(std::sync::Arc::from),
            filter: self.filter,
        })
    }
}

/// The `event_types` column of endpoint `endpoint_id`: [`StoredSpec::decode`]
/// reads it so, and the fan-out, which reads this column alone.
pub fn event_types(endpoint_id: &str, json: &str) -> Result<EventTypeFilter, SpecError> {
    EventTypeFilter::from_json(json).map_err(|_| SpecError {
        endpoint_id: endpoint_id.into(),
        column: "event_types",
        problem: "is not a JSON array of patterns".into(),
    })
}

/// The `channels` column of endpoint `endpoint_id`: [`StoredSpec::decode`]
/// reads it so, and the fan-out.
pub fn channels(endpoint_id: &str, json: &str) -> Result<Vec<String>, SpecError> {
    crate::labels::from_json(json).ok_or_else(|| SpecError {
        endpoint_id: endpoint_id.into(),
        column: "channels",
        problem: "is not a JSON array of channel names".into(),
    })
}

/// A closed set's stored text as an error quotes it: at most 40 characters.
fn short(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> EndpointSpec {
        EndpointSpec {
            signature_scheme: Scheme::StandardWebhooks,
            signing_algorithm: SigningAlgorithm::Ed25519,
            event_types: EventTypeFilter::parse(&["booking.*".into(), "a.b".into()]).unwrap(),
            retry_schedule: Some(vec![Duration::from_secs(30), Duration::from_millis(1500)]),
            final_status_codes: vec![400, 404],
            attempt_timeout: Some(Duration::from_secs(5)),
            ordered: true,
            on_dead_letter: OnDeadLetter::Block,
            rate_limit_per_sec: Some(7),
            channels: vec!["billing".into(), "eu".into()],
            transformation: Some("function handler(w) { return w; }".into()),
            ..EndpointSpec::default()
        }
    }

    #[test]
    fn a_spec_reads_back_as_it_was_stored() {
        for s in [spec(), EndpointSpec::default()] {
            assert_eq!(s.stored().decode("ep_1").unwrap(), s);
        }
    }

    #[test]
    fn the_stored_text_is_the_one_stored_before_the_type() {
        let stored = spec().stored();
        assert_eq!(stored.signature_scheme, "standard-webhooks");
        assert_eq!(stored.signing_algorithm, "ed25519");
        assert_eq!(stored.event_types, r#"["a.b","booking.*"]"#);
        assert_eq!(stored.headers, "[]");
        assert_eq!(stored.retry_schedule.as_deref(), Some("[30000,1500]"));
        assert_eq!(stored.final_status_codes, "[400,404]");
        assert_eq!(stored.attempt_timeout_ms, Some(5000));
        assert_eq!(stored.on_dead_letter, "block");
        let default = EndpointSpec::default().stored();
        assert_eq!((default.signature_scheme.as_str(), default.event_types.as_str()), ("fenix-v1", "[]"));
        assert_eq!((default.retry_schedule, default.final_status_codes.as_str()), (None, "[]"));
    }

    #[test]
    fn an_unreadable_stored_value_is_an_error_naming_the_endpoint_and_the_column() {
        let bad = |change: fn(&mut StoredSpec)| {
            let mut s = spec().stored();
            change(&mut s);
            s.decode("ep_9").unwrap_err()
        };
        let e = bad(|s| s.signature_scheme = "xyz".into());
        assert_eq!(e.to_string(), "endpoint ep_9: stored signature_scheme \"xyz\" is not known");
        assert_eq!(bad(|s| s.signing_algorithm = "rsa".into()).column, "signing_algorithm");
        assert_eq!(bad(|s| s.on_dead_letter = "stop".into()).column, "on_dead_letter");
        assert_eq!(bad(|s| s.event_types = "booking.*".into()).column, "event_types");
        assert_eq!(bad(|s| s.channels = "billing".into()).column, "channels");
        assert_eq!(bad(|s| s.retry_schedule = Some("[-1]".into())).column, "retry_schedule");
        assert_eq!(bad(|s| s.final_status_codes = "{}".into()).column, "final_status_codes");
        assert_eq!(bad(|s| s.attempt_timeout_ms = Some(-5)).column, "attempt_timeout_ms");
        let e = bad(|s| s.tls = Some(r#"{"client": "-----BEGIN PRIVATE KEY-----"}"#.into()));
        assert_eq!(e.column, "tls");
        assert!(!e.to_string().contains("PRIVATE"), "{e}");
        let e = bad(|s| s.auth = Some(r#"{"type": "oauth2_client_credentials", "client_secret": "s3cret"}"#.into()));
        assert_eq!(e.column, "auth");
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let e = bad(|s| s.headers = r#"{"Authorization": "Bearer s3cret"}"#.into());
        assert_eq!(e.column, "headers");
        assert!(!e.to_string().contains("s3cret"), "{e}");
    }
}
