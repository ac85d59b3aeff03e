//! The endpoints of a claimed batch, as the worker sends to them: each read
//! with its spec decoded once, in the store ([`StoredSpec::decode`]).
//!
//! A spec the code cannot read fails that endpoint alone: its target carries
//! the [`SpecError`] (the worker fails its deliveries and logs the error) and
//! the batch's other endpoints are sent as usual. A failed read of the whole
//! batch would leave every delivery of it leased again and again.

use crate::{
    endpoint_spec::{EndpointSpec, SpecError, StoredSpec},
    lifecycle::EndpointState,
};

/// The parts of an endpoint the worker needs to send to it.
#[derive(Debug, Clone)]
pub struct EndpointTarget {
    pub id: crate::ids::EndpointId,
    pub url: String,
    /// The shown state, as [`TARGET_COLUMNS`] reads it.
    pub state: EndpointState,
    /// How to send to it; an error when its stored spec cannot be read.
    pub spec: Result<EndpointSpec, SpecError>,
}

/// [`EndpointTarget`] as its columns hold it.
#[derive(sqlx::FromRow)]
struct StoredTarget {
    id: crate::ids::EndpointId,
    url: String,
    state: EndpointState,
    #[sqlx(flatten)]
    spec: StoredSpec,
}

impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for EndpointTarget
where
    StoredTarget: sqlx::FromRow<'r, R>,
{
    fn from_row(row: &'r R) -> sqlx::Result<Self> {
        let t = StoredTarget::from_row(row)?;
        let spec = t.spec.decode(t.id.as_str());
        Ok(EndpointTarget { id: t.id, url: t.url, state: t.state, spec })
    }
}

/// The columns of [`EndpointTarget`], for both backends' batch context reads:
/// its own, then [`crate::endpoint_spec::SPEC_COLUMNS`]. `state` is the
/// *shown* state (`lifecycle::SHOWN_ENDPOINT_STATE_SQL`): an endpoint still
/// proving its ownership sends nothing.
pub const TARGET_COLUMNS: &str = "id, url, \
     CASE WHEN state = 'active' AND unverified THEN 'pending_verification' ELSE state END AS state, \
     signature_scheme, signing_algorithm, event_types, headers, retry_schedule, \
     final_status_codes, attempt_timeout_ms, ordered, on_dead_letter, rate_limit_per_sec, tls, auth, channels, transformation, filter";

#[cfg(test)]
mod tests {
    #[test]
    fn a_targets_columns_end_with_its_spec() {
        assert!(super::TARGET_COLUMNS.ends_with(crate::endpoint_spec::SPEC_COLUMNS));
    }
}
