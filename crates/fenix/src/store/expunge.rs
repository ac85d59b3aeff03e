//! Erasing one event's payload on request (`POST …/events/{evt}/expunge`,
//! migration 0024): the bytes go now, not at the retention's cutoff. The
//! event keeps its metadata and `payload_sha256`, its deliveries their log.
//!
//! Deliveries still to be sent are not settled here but by the worker, on
//! the path a payload purged by retention takes (no payload, no request):
//! that path already keeps ordered lanes moving and leases honest. This
//! transaction only marks them (`skip_reason = 'payload_erased'`, shown once
//! the worker has skipped them) and makes those waiting for a later time due
//! now, so they settle at once.

use std::collections::HashSet;

use super::{events::EventRow, sql::Built, Backend, Conflicts, Store};
use crate::store::Result;
use crate::{
    ids::{AppId, EventId},
    time::Millis,
};

/// The reason an erased event's deliveries show (`skip_reason`).
pub const PAYLOAD_ERASED: &str = "payload_erased";

/// The event's payload goes; the first erasure's time is kept.
const ERASE_PAYLOAD: &str =
    "UPDATE events SET payload = NULL, expunged_at = COALESCE(expunged_at, $3) WHERE id = $1 AND app_id = $2";

/// Its deliveries' transformed requests (the payload in another shape) go too.
const ERASE_TRANSFORMED: &str = "UPDATE deliveries SET transformed_request = NULL, transformed_body = NULL \
     WHERE event_id = $1 AND (transformed_request IS NOT NULL OR transformed_body IS NOT NULL)";

/// Its deliveries still to be sent get their reason, and those waiting for a
/// later time (a retry, a schedule) are due at $2; a leased one keeps its
/// lease, a parked one of an ordered lane its place ($3 = `PARKED`).
const MARK_UNSENT: &str = "UPDATE deliveries SET skip_reason = 'payload_erased', updated_at = $2, \
     next_attempt_at = CASE WHEN lease_until IS NULL AND next_attempt_at > $2 AND next_attempt_at < $3 \
     THEN $2 ELSE next_attempt_at END WHERE event_id = $1 AND status = 'pending'";

impl Store {
    /// Erases the payload of event `id` of app `app_id` at `now` (see the
    /// module's doc); answers the event as it is then, `None` when it is not
    /// the app's. Erasing again changes nothing (`expunged_at` stays the first).
    pub async fn expunge_event(&self, app_id: &AppId, id: &EventId, now: Millis) -> Result<Option<EventRow>> {
        let mut conflicts = Conflicts::default();
        loop {
            match self.expunge_event_once(app_id, id, now).await {
                Err(e) if conflicts.again(&e).await => {}
                Ok(false) => return Ok(None),
                Ok(true) => return self.get_event(app_id, id, false).await,
                Err(e) => return Err(e),
            }
        }
    }

    /// The event first, then its deliveries: the store's lock order.
    async fn expunge_event_once(&self, app_id: &AppId, id: &EventId, now: Millis) -> Result<bool> {
        let mut tx = self.writes().begin_write().await?;
        if tx.execute(ERASE_PAYLOAD, &[id.into(), app_id.into(), now.into()]).await? == 0 {
            return Ok(false);
        }
        tx.execute(ERASE_TRANSFORMED, &[id.into()]).await?;
        tx.execute(MARK_UNSENT, &[id.into(), now.into(), super::queue::PARKED.into()]).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// On SQLite, copies the write-ahead log into the database file and
    /// empties it (`wal_checkpoint(TRUNCATE)`, off the writer's connection):
    /// `secure_delete` zeroes what an erasure freed in the pages it writes to
    /// the log, but older frames of the log still hold the bytes as they were
    /// until they are overwritten. Waits for readers on older snapshots (up to
    /// the busy timeout); answers false when some still held it. PostgreSQL:
    /// nothing to do here (docs/operations.md says what VACUUM does).
    pub async fn flush_erased(&self) -> Result<bool> {
        match &self.backend {
            Backend::Sqlite { checkpoint, .. } => {
                let (busy, _, _): (i64, i64, i64) =
                    sqlx::query_as("PRAGMA wal_checkpoint(TRUNCATE)").fetch_one(checkpoint).await?;
                Ok(busy == 0)
            }
            Backend::Postgres { .. } => Ok(true),
        }
    }

    /// Of `ids` (events a claimed batch found without a payload), those
    /// erased on request rather than purged by retention.
    pub async fn erased_events(&self, ids: &[&str]) -> Result<HashSet<EventId>> {
        if ids.is_empty() {
            return Ok(HashSet::new());
        }
        let mut q = Built::new("SELECT id FROM events WHERE expunged_at IS NOT NULL AND id IN ");
        q.bind_list(ids.iter().copied());
        let found: Vec<EventId> = self.reads().scalar_all(&q.sql, &q.values).await?;
        Ok(found.into_iter().collect())
    }
}
