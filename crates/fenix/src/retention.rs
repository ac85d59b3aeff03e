//! Retention per app: an app may keep its payloads and its delivery log for
//! less time than the operator does (`FENIX_PAYLOAD_RETENTION`,
//! `FENIX_LOG_RETENTION`), never longer: the operator's retentions are what
//! the operator promised to erase by, for every tenant. The maintenance loop
//! purges at the operator's cutoff over every app, then at each shorter app
//! cutoff over that app alone ([`shorter_cutoff`]).

use std::{fmt, time::Duration};

use crate::{
    settings::FOREVER,
    time::{self, Millis},
};

/// Which of an app's two retentions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// How long an event's payload bytes are kept.
    Payload,
    /// How long finished deliveries and their attempts are kept.
    Log,
}

impl Kind {
    /// The API field that sets it.
    pub const fn field(self) -> &'static str {
        match self {
            Kind::Payload => "payload_retention",
            Kind::Log => "log_retention",
        }
    }

    /// The operator's setting that bounds it.
    pub const fn setting(self) -> &'static str {
        match self {
            Kind::Payload => "FENIX_PAYLOAD_RETENTION",
            Kind::Log => "FENIX_LOG_RETENTION",
        }
    }
}

/// An app's own retention, checked against the operator's: above zero and
/// no longer than `operator` (any finite one fits under `forever`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppRetention(Duration);

/// Why an app's retention was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Zero, or `forever` (an app cannot keep anything longer than a bound).
    Invalid(Kind),
    /// Longer than the operator's retention of the same kind.
    TooLong { kind: Kind, operator: Duration },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Invalid(kind) => {
                write!(f, "{} must be a duration above zero such as 7d or 12h, or null", kind.field())
            }
            Refused::TooLong { kind, operator } => write!(
                f,
                "{} may be at most the operator's {} ({}); null follows it",
                kind.field(),
                kind.setting(),
                humantime::format_duration(*operator)
            ),
        }
    }
}

impl AppRetention {
    /// `d` as `kind` of an app, under the operator's retention of that kind.
    pub fn parse(kind: Kind, d: Duration, operator: Duration) -> Result<AppRetention, Refused> {
        if d.is_zero() || d == FOREVER {
            return Err(Refused::Invalid(kind));
        }
        if operator != FOREVER && d > operator {
            return Err(Refused::TooLong { kind, operator });
        }
        Ok(AppRetention(d))
    }

    /// As stored (`apps.payload_retention_ms`, `apps.log_retention_ms`).
    pub fn as_millis(self) -> Millis {
        time::millis(self.0)
    }

    /// As stored, back: `None` for a value that cannot be one (not above zero).
    pub fn from_millis(ms: Millis) -> Option<AppRetention> {
        (ms > 0).then(|| AppRetention(Duration::from_millis(ms as u64)))
    }

    /// The duration.
    pub fn duration(self) -> Duration {
        self.0
    }
}

/// Written as it is read: the largest whole unit of `d`, `s`, `m`, `h` or
/// `d` (`7d`, `36h`, `90m`), else milliseconds (`1500ms`).
impl fmt::Display for AppRetention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        for (unit, size) in [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)] {
            if ms.is_multiple_of(size) {
                return write!(f, "{}{unit}", ms / size);
            }
        }
        write!(f, "{ms}ms")
    }
}

/// The cutoff of an app's own retention at `now`, when it purges more than
/// the operator's does (`operator`, which the purge over every app applies
/// already): `None` when the app's retention is not shorter.
pub fn shorter_cutoff(now: Millis, app: AppRetention, operator: Duration) -> Option<Millis> {
    (operator == FOREVER || app.0 < operator).then(|| time::sub(now, app.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn an_app_retention_may_be_shorter_than_the_operators_never_longer() {
        assert!(AppRetention::parse(Kind::Payload, 7 * DAY, 30 * DAY).is_ok());
        assert!(AppRetention::parse(Kind::Payload, 30 * DAY, 30 * DAY).is_ok());
        let refused = AppRetention::parse(Kind::Log, 31 * DAY, 30 * DAY).unwrap_err();
        assert_eq!(refused, Refused::TooLong { kind: Kind::Log, operator: 30 * DAY });
        assert!(refused.to_string().contains("FENIX_LOG_RETENTION (30days)"), "{refused}");
        assert!(AppRetention::parse(Kind::Payload, 3650 * DAY, FOREVER).is_ok());
        assert_eq!(AppRetention::parse(Kind::Payload, Duration::ZERO, FOREVER), Err(Refused::Invalid(Kind::Payload)));
        assert_eq!(AppRetention::parse(Kind::Payload, FOREVER, FOREVER), Err(Refused::Invalid(Kind::Payload)));
    }

    #[test]
    fn only_a_shorter_retention_than_the_operators_has_a_cutoff_of_its_own() {
        let now = 100 * 86_400_000;
        let week = AppRetention::parse(Kind::Payload, 7 * DAY, 30 * DAY).unwrap();
        assert_eq!(shorter_cutoff(now, week, 30 * DAY), Some(93 * 86_400_000));
        assert_eq!(shorter_cutoff(now, week, 7 * DAY), None);
        assert_eq!(shorter_cutoff(now, week, FOREVER), Some(93 * 86_400_000));
        assert_eq!(AppRetention::from_millis(week.as_millis()), Some(week));
        assert_eq!(AppRetention::from_millis(0), None);
    }

    #[test]
    fn a_retention_is_shown_in_its_largest_whole_unit() {
        let shown = |d| AppRetention::parse(Kind::Log, d, FOREVER).unwrap().to_string();
        assert_eq!(shown(7 * DAY), "7d");
        assert_eq!(shown(Duration::from_secs(36 * 3600)), "36h");
        assert_eq!(shown(Duration::from_secs(90 * 60)), "90m");
        assert_eq!(shown(Duration::from_secs(45)), "45s");
        assert_eq!(shown(Duration::from_millis(1500)), "1500ms");
    }
}
