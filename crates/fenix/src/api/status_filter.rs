//! The delivery log's `?status=` filter: a status as shown (`scheduled`,
//! `pending`, `in_flight`, `succeeded`, `failed`, `skipped`) or `failing`, a delivery
//! still being retried after a failed attempt, which a status alone cannot
//! name (it is `pending` or `in_flight` meanwhile).

use utoipa::openapi::{
    schema::{ObjectBuilder, Type},
    RefOr, Schema,
};

use super::{code::Code, error::ApiError};
use crate::lifecycle::DeliveryStatus;

/// What `?status=` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    Is(DeliveryStatus),
    /// `pending` (leased or not) with at least one failed attempt.
    Failing,
}

const FAILING: &str = "failing";

impl StatusFilter {
    pub fn parse(text: &str) -> Result<StatusFilter, ApiError> {
        if text == FAILING {
            return Ok(StatusFilter::Failing);
        }
        text.parse::<DeliveryStatus>()
            .map(StatusFilter::Is)
            .map_err(|_| ApiError::new(Code::InvalidStatus, format!("status must be one of {}", values().join(", "))))
    }

    /// Its text, as the cursor's list scope records it.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusFilter::Is(status) => status.as_str(),
            StatusFilter::Failing => FAILING,
        }
    }
}

fn values() -> Vec<&'static str> {
    DeliveryStatus::ALL.iter().map(|s| s.as_str()).chain([FAILING]).collect()
}

/// The parameter's schema: the closed set of [`values`].
pub fn schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values()))
        .description(Some("A status as shown, or `failing`: pending with at least one failed attempt"))
        .examples([serde_json::json!(FAILING)])
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_and_failing_are_read_and_nothing_else() {
        for text in values() {
            assert_eq!(StatusFilter::parse(text).unwrap().as_str(), text);
        }
        assert_eq!(StatusFilter::parse("failing").unwrap(), StatusFilter::Failing);
        let refused = StatusFilter::parse("broken").unwrap_err();
        assert!(refused.message.contains("failing"), "{}", refused.message);
    }
}
