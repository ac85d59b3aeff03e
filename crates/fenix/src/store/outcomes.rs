//! Writing a batch of outcomes so that no single outcome can stall the rest.
//!
//! A batch is one statement (PostgreSQL) or one transaction (SQLite): when the
//! database refuses one row of it (a data error, such as text PostgreSQL cannot
//! store), the whole batch fails, and retrying it as it is would fail forever
//! and stop every tenant's results from being recorded. So a batch refused for
//! its data is split in halves until the refused outcome stands alone; that one
//! is written in a degraded form, and every other outcome is written as it is.
//! An unavailable database (see [`super::Error::is_unavailable`]) is different: the
//! outcomes not written yet are handed back, to be retried as they are.

use std::collections::HashSet;

use super::{deliveries::Outcome, Store};
use crate::time::Millis;

/// The `error_detail` of an attempt whose response could not be stored.
pub const NOT_STORED_DETAIL: &str = "the response could not be stored: the database refused it";

/// How an outcome the database refused was written instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Degraded {
    /// The attempt row without its response excerpt; its `error_detail` says why.
    WithoutResponse,
    /// The delivery row only: the attempt row itself was refused.
    WithoutAttempt,
    /// Nothing could be written; the lease runs out and the delivery comes due again.
    NotWritten,
}

impl Degraded {
    /// Stable text for logs and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Degraded::WithoutResponse => "without_response",
            Degraded::WithoutAttempt => "without_attempt",
            Degraded::NotWritten => "not_written",
        }
    }

    /// The next, smaller form to try after this one was refused too.
    fn next(form: Option<Degraded>) -> Degraded {
        match form {
            None => Degraded::WithoutResponse,
            Some(Degraded::WithoutResponse) => Degraded::WithoutAttempt,
            Some(_) => Degraded::NotWritten,
        }
    }
}

/// What [`Store::record_outcomes_isolating`] did with a batch.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Deliveries whose row now carries their outcome (the others lost their
    /// lease, were not written, or are in `unwritten`).
    pub applied: HashSet<crate::ids::DeliveryId>,
    /// Outcomes the database refused as they were: delivery id → the form written.
    pub degraded: Vec<(crate::ids::DeliveryId, Degraded)>,
    /// Outcomes not written because the database is unavailable: retry them.
    pub unwritten: Vec<Outcome>,
    /// The availability error that stopped the writing, if any.
    pub unavailable: Option<super::Error>,
}

/// A part of a batch still to write.
enum Part {
    /// `outcomes[start..end]` as they are.
    Range(usize, usize),
    /// One outcome the database refused, made smaller.
    Smaller(Box<Outcome>, Degraded),
}

impl Store {
    /// Writes `outcomes` as [`Store::record_outcomes_applied`] does, isolating
    /// any outcome the database refuses (see the module's documentation). The
    /// usual case is one write of the whole batch, with nothing copied.
    pub async fn record_outcomes_isolating(&self, outcomes: &[Outcome], now: Millis) -> Recorded {
        let mut recorded = Recorded::default();
        let mut parts = vec![Part::Range(0, outcomes.len())];
        while let Some(part) = parts.pop() {
            let result = match &part {
                Part::Range(start, end) if start == end => continue,
                Part::Range(start, end) => self.record_outcomes_applied(&outcomes[*start..*end], now).await,
                Part::Smaller(o, _) => self.record_outcomes_applied(std::slice::from_ref(&**o), now).await,
            };
            let e = match result {
                Ok(applied) => {
                    if let Part::Smaller(o, form) = part {
                        recorded.degraded.push((o.delivery_id, form));
                    }
                    recorded.applied.extend(applied);
                    continue;
                }
                Err(e) => e,
            };
            if e.is_unavailable() {
                // Retried later (an outcome already made smaller stays so).
                for part in std::iter::once(part).chain(parts.drain(..)) {
                    match part {
                        Part::Range(start, end) => recorded.unwritten.extend_from_slice(&outcomes[start..end]),
                        Part::Smaller(o, _) => recorded.unwritten.push(*o),
                    }
                }
                recorded.unavailable = Some(e);
                break;
            }
            let (o, form) = match part {
                Part::Range(start, end) if end - start > 1 => {
                    let middle = start + (end - start) / 2;
                    parts.push(Part::Range(middle, end));
                    parts.push(Part::Range(start, middle));
                    continue;
                }
                Part::Range(start, _) => (outcomes[start].clone(), None),
                Part::Smaller(o, form) => (*o, Some(form)),
            };
            let id = o.delivery_id.clone();
            let next = Degraded::next(form);
            tracing::warn!(
                delivery_id = %id,
                endpoint_id = %o.endpoint_id,
                error = %e,
                written_as = next.as_str(),
                "the database refused an outcome; writing it in a smaller form"
            );
            match degrade(o, next) {
                Some(smaller) => parts.push(Part::Smaller(Box::new(smaller), next)),
                None => recorded.degraded.push((id, Degraded::NotWritten)),
            }
        }
        recorded
    }
}

/// `o` in the smaller form `form`, or None when nothing smaller can be written.
fn degrade(mut o: Outcome, form: Degraded) -> Option<Outcome> {
    match form {
        Degraded::WithoutResponse => {
            let a = o.attempt.as_mut()?;
            a.response_excerpt = None;
            a.error_detail = Some(NOT_STORED_DETAIL.into());
            Some(o)
        }
        Degraded::WithoutAttempt if o.attempt.is_some() => {
            o.attempt = None;
            Some(o)
        }
        _ => None,
    }
}
