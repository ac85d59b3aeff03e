//! A duration in a request body (`expires_in`), in the syntax the settings
//! and the CLI take: `90s`, `30m`, `1h`, `30d` (humantime's), or whole
//! seconds as a JSON number (what the API took first, kept for callers that
//! send it). Anything else is refused with the field's own code and an
//! example, never a parser's message about line and column.

use std::{borrow::Cow, time::Duration};

use serde::Deserialize;
use utoipa::{
    openapi::{schema::OneOfBuilder, ObjectBuilder, RefOr, Schema, Type},
    PartialSchema, ToSchema,
};

use super::{code::Code, error::ApiError};

/// A duration as sent: read as any JSON, judged by [`DurationIn::parse`] (so
/// a wrong value is the field's error, not the body's).
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct DurationIn(serde_json::Value);

impl DurationIn {
    /// The duration, more than zero; `field` and `code` name what was wrong.
    pub fn parse(&self, field: &str, code: Code) -> Result<Duration, ApiError> {
        let refused = || {
            ApiError::new(code, format!("{field} must be a duration such as 90s, 30m, 1h or 30d (or whole seconds)"))
        };
        let d = match &self.0 {
            serde_json::Value::Number(n) => Duration::from_secs(n.as_u64().ok_or_else(refused)?),
            serde_json::Value::String(s) => crate::settings::parse_duration(s).map_err(|_| refused())?,
            _ => return Err(refused()),
        };
        if d.is_zero() {
            return Err(ApiError::new(code, format!("{field} must be more than zero (e.g. 1h)")));
        }
        Ok(d)
    }
}

impl PartialSchema for DurationIn {
    fn schema() -> RefOr<Schema> {
        let text = ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("A duration: 90s, 30m, 1h, 30d"))
            .examples([serde_json::json!("1h")]);
        let seconds =
            ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)).description(Some("Whole seconds"));
        OneOfBuilder::new().item(text).item(seconds).into()
    }
}

impl ToSchema for DurationIn {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Duration")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(v: serde_json::Value) -> Result<u64, String> {
        DurationIn(v).parse("expires_in", Code::InvalidExpiresIn).map(|d| d.as_secs()).map_err(|e| e.message)
    }

    #[test]
    fn the_settings_syntax_and_whole_seconds_are_both_read() {
        use serde_json::json;
        assert_eq!(parsed(json!("1h")), Ok(3600));
        assert_eq!(parsed(json!("30d")), Ok(30 * 86_400));
        assert_eq!(parsed(json!(" 90s ")), Ok(90));
        assert_eq!(parsed(json!(3600)), Ok(3600));
        for wrong in [json!("soon"), json!(-5), json!(1.5), json!(true), json!("0s"), json!(0)] {
            let message = parsed(wrong.clone()).unwrap_err();
            assert!(message.starts_with("expires_in must be"), "{wrong}: {message}");
            assert!(message.contains("1h"), "an example is given: {message}");
        }
    }
}
