//! Event types (`booking.confirmed`) and the filters endpoints subscribe with
//! (exact types or `prefix.*`; an empty filter means every type).

/// A refused event type or filter, as the API answers it (422 with the code of its `kind`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEventType {
    pub kind: Invalid,
    /// Says what a valid one looks like.
    pub message: String,
}

/// What was refused (the API's code: `invalid_event_type`, `invalid_event_types`, `unknown_event_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// A type's name.
    Type,
    /// An endpoint's filter.
    Filter,
    /// A type (or a filter's pattern) the catalogue does not hold, in strict mode.
    NotCatalogued,
}

fn invalid(kind: Invalid, message: impl Into<String>) -> InvalidEventType {
    InvalidEventType { kind, message: message.into() }
}

/// A producer's event type: 1–128 characters of `A-Z a-z 0-9 _ - . :`, no leading or trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventType(String);

impl EventType {
    /// Parses an event type.
    pub fn parse(s: &str) -> Result<EventType, InvalidEventType> {
        if valid_name(s) {
            Ok(EventType(s.to_string()))
        } else {
            Err(invalid(
                Invalid::Type,
                "type must be 1-128 characters of A-Z a-z 0-9 _ - . : without a leading or trailing dot, e.g. booking.confirmed",
            ))
        }
    }

    /// The type as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && !s.starts_with('.')
        && !s.ends_with('.')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
}

/// The event types an endpoint subscribes to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventTypeFilter(Vec<String>);

impl EventTypeFilter {
    /// Parses patterns: exact types, or `prefix.*`; at most 100.
    pub fn parse(patterns: &[String]) -> Result<EventTypeFilter, InvalidEventType> {
        if patterns.len() > 100 {
            return Err(invalid(Invalid::Filter, "at most 100 event type patterns per endpoint"));
        }
        for p in patterns {
            let name = p.strip_suffix(".*").unwrap_or(p);
            if !valid_name(name) {
                return Err(invalid(
                    Invalid::Filter,
                    format!("{p:?} is not an event type or a prefix.* pattern (e.g. booking.confirmed or booking.*)"),
                ));
            }
        }
        let mut v = patterns.to_vec();
        v.sort();
        v.dedup();
        Ok(EventTypeFilter(v))
    }

    /// Reads the stored JSON form (`endpoint_spec` decides what an
    /// unreadable one means).
    pub fn from_json(json: &str) -> Result<EventTypeFilter, serde_json::Error> {
        serde_json::from_str(json).map(EventTypeFilter)
    }

    /// The stored JSON form.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).expect("strings serialize")
    }

    /// The patterns.
    pub fn patterns(&self) -> &[String] {
        &self.0
    }

    /// True when an event of type `t` goes to this endpoint.
    pub fn matches(&self, t: &str) -> bool {
        self.0.is_empty()
            || self.0.iter().any(|p| match p.strip_suffix(".*") {
                Some(prefix) => {
                    t.len() > prefix.len() + 1 && t.starts_with(prefix) && t.as_bytes()[prefix.len()] == b'.'
                }
                None => p == t,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(p: &[&str]) -> EventTypeFilter {
        EventTypeFilter::parse(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn an_empty_filter_matches_every_type() {
        assert!(filter(&[]).matches("anything.at.all"));
    }

    #[test]
    fn exact_types_match_only_themselves() {
        let f = filter(&["booking.confirmed"]);
        assert!(f.matches("booking.confirmed"));
        assert!(!f.matches("booking.confirmed.late"));
        assert!(!f.matches("booking.cancelled"));
    }

    #[test]
    fn prefix_patterns_match_below_the_prefix_only() {
        let f = filter(&["booking.*"]);
        assert!(f.matches("booking.confirmed"));
        assert!(f.matches("booking.payment.failed"));
        assert!(!f.matches("booking"));
        assert!(!f.matches("bookings.confirmed"));
    }

    #[test]
    fn malformed_patterns_and_types_are_refused() {
        assert!(EventTypeFilter::parse(&["*".into()]).is_err());
        assert!(EventTypeFilter::parse(&["a b".into()]).is_err());
        assert!(EventType::parse("").is_err());
        assert!(EventType::parse(".x").is_err());
        assert!(EventType::parse("user.created").is_ok());
    }
}
