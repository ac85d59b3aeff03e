//! Answers bounded in bytes. A read that carries payloads (the event log with
//! `include=payload`, one event with its payload) could otherwise hold
//! `limit` × the largest event in memory, and many of them at once the
//! whole machine: 250 events of 255 KB are a 64 MB answer, eight of them
//! took an instance from 54 MB to 728 MB.
//!
//! Two bounds, both in bytes:
//! - a **page** stops before `FENIX_MAX_PAGE_BYTES` of items ([`fitting`]),
//!   with at least one item so that paging always progresses; its size is
//!   known from the stored lengths before any payload is loaded;
//! - the **process** holds at most `FENIX_ANSWER_BYTES` of such answers at
//!   once ([`AnswerBytes`]): a read takes its page's bytes before it loads
//!   the payloads and gives them back when its answer has been written. Over
//!   the budget it waits up to [`WAIT`], then is answered `503 overloaded`
//!   with `Retry-After` (a smaller page would only move the wait to the
//!   client's next request, and would make page sizes depend on load).
//!
//! Nothing here knows HTTP: the API's `sized_page` writes the answers.

use std::{sync::Arc, time::Duration};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Longest a read waits for room in the process's budget before it is
/// answered `503 overloaded`. Long enough to ride out a burst of large reads
/// (one 4 MiB answer is written in well under a second on loopback), short
/// enough that the client hears back before its own time limit.
pub const WAIT: Duration = Duration::from_secs(5);

/// The process's budget of bytes for answers that carry payloads.
#[derive(Debug, Clone)]
pub struct AnswerBytes {
    bytes: Arc<Semaphore>,
    total: usize,
}

/// Bytes of the budget held by one answer, until it is dropped (when the
/// answer's body has been written, or the request ends otherwise).
#[derive(Debug)]
pub struct Held {
    _permit: OwnedSemaphorePermit,
}

impl AnswerBytes {
    /// A budget of `total` bytes (`FENIX_ANSWER_BYTES`, at most 2 GiB).
    pub fn new(total: usize) -> AnswerBytes {
        let total = total.clamp(1, u32::MAX as usize);
        AnswerBytes { bytes: Arc::new(Semaphore::new(total)), total }
    }

    /// Takes `bytes` of the budget (an answer larger than the whole budget
    /// takes all of it), waiting up to `wait`; `None` when it did not come.
    pub async fn take(&self, bytes: usize, wait: Duration) -> Option<Held> {
        let n = bytes.clamp(1, self.total) as u32;
        let permit = tokio::time::timeout(wait, self.bytes.clone().acquire_many_owned(n)).await.ok()?;
        Some(Held { _permit: permit.expect("the answer budget is never closed") })
    }

    /// Bytes held by answers right now (for metrics and tests).
    pub fn in_use(&self) -> usize {
        self.total - self.bytes.available_permits()
    }
}

/// How many of the leading items of `sizes` (in page order, at most `limit`)
/// fit in `budget` bytes, and their bytes: always at least one (a single item
/// larger than the budget makes a page of its own, so paging progresses).
pub fn fitting(sizes: impl IntoIterator<Item = usize>, limit: usize, budget: usize) -> (usize, usize) {
    let (mut count, mut bytes) = (0usize, 0usize);
    for size in sizes.into_iter().take(limit) {
        if count > 0 && bytes + size > budget {
            break;
        }
        count += 1;
        bytes += size;
    }
    (count, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_stops_before_its_budget_and_holds_at_least_one_item() {
        assert_eq!(fitting([40, 40, 40], 250, 100), (2, 80));
        assert_eq!(fitting([40, 60, 1], 250, 100), (2, 100));
        assert_eq!(fitting([500, 1], 250, 100), (1, 500));
        assert_eq!(fitting([1, 1, 1], 2, 100), (2, 2));
        assert_eq!(fitting([], 50, 100), (0, 0));
    }

    #[tokio::test]
    async fn the_budget_is_given_back_when_an_answer_is_dropped_and_waits_are_bounded() {
        let budget = AnswerBytes::new(100);
        let first = budget.take(70, WAIT).await.unwrap();
        assert_eq!(budget.in_use(), 70);
        assert!(budget.take(40, Duration::from_millis(20)).await.is_none(), "over the budget: no room");
        let huge = tokio::spawn({
            let budget = budget.clone();
            async move { budget.take(10_000, WAIT).await.is_some() }
        });
        drop(first);
        assert!(huge.await.unwrap(), "an answer larger than the budget takes all of it once free");
        assert_eq!(budget.in_use(), 0);
    }
}
