//! The settings' bounds, each giving what is wrong to follow the variable's
//! name (`FENIX_CLAIM_BATCH (0) must be between 1 and 10000`): a value out of
//! its range is refused at start instead of overflowing later.

use std::time::Duration;

use super::FOREVER;

/// Longest finite retention or failing time: 100 years (longer means `forever`).
const MAX_FINITE: Duration = Duration::from_secs(36_500 * 86_400);

pub(super) fn human(d: Duration) -> String {
    super::view::show_duration(d)
}

/// A base for links: http(s), a host, no query, fragment or credentials.
pub(super) fn is_public_url(u: &str) -> bool {
    url::Url::parse(u).is_ok_and(|p| {
        matches!(p.scheme(), "http" | "https")
            && p.host().is_some()
            && p.query().is_none()
            && p.fragment().is_none()
            && p.username().is_empty()
            && p.password().is_none()
    })
}

pub(super) fn count(n: usize, min: usize, max: usize) -> Result<(), String> {
    if (min..=max).contains(&n) {
        return Ok(());
    }
    Err(format!("({n}) must be between {min} and {max}"))
}

/// Between 1 and another setting (a minimum under its maximum, a share of a whole).
pub(super) fn at_most_other(n: usize, other: &str, max: usize) -> Result<(), String> {
    if (1..=max).contains(&n) {
        return Ok(());
    }
    Err(format!("({n}) must be between 1 and {other} ({max})"))
}

pub(super) fn span(d: Duration, min: Duration, max: Duration) -> Result<(), String> {
    if (min..=max).contains(&d) {
        return Ok(());
    }
    Err(format!("({}) must be between {} and {}", human(d), human(min), human(max)))
}

pub(super) fn positive_at_most(d: Duration, max: Duration) -> Result<(), String> {
    if d.is_zero() {
        return Err("must be greater than zero".into());
    }
    if d > max {
        return Err(format!("({}) must be at most {}", human(d), human(max)));
    }
    Ok(())
}

/// A retention or failing time: above zero and at most 100 years, or `forever`.
/// A huge finite one once wrapped around and purged every payload.
pub(super) fn retention(d: Duration) -> Result<(), String> {
    let forever = " (or write forever)";
    if d.is_zero() {
        return Err(format!("must be greater than zero{forever}"));
    }
    if d != FOREVER && d > MAX_FINITE {
        return Err(format!("({}) must be at most {}{forever}", human(d), human(MAX_FINITE)));
    }
    Ok(())
}

/// At most `max_len` waits, each at most `max_wait`.
pub(super) fn schedule(waits: &[Duration], max_len: usize, max_wait: Option<Duration>) -> Result<(), String> {
    if waits.len() > max_len {
        return Err(format!("has {} waits; at most {max_len} are allowed", waits.len()));
    }
    let Some(max) = max_wait else { return Ok(()) };
    match waits.iter().position(|w| *w > max) {
        Some(i) => Err(format!("(wait {}: {}) must be at most {}", i + 1, human(waits[i]), human(max))),
        None => Ok(()),
    }
}
