//! The SQL that says where a delivery of an ordered endpoint stands in its
//! lane, written once: the claim (both backends), the PostgreSQL re-check
//! after a claim, readiness (`work_due`), the next due time and the log's
//! `blocked_by` all read the same conditions from here.
//!
//! Each statement that uses them is built once, when first used (a
//! `LazyLock`), so a claim costs no formatting.

use crate::time::Millis;

/// `next_attempt_at` of a delivery *parked* in its ordered lane: it waits
/// behind another delivery of the lane and is not due until that one is
/// final (the write of that outcome makes the lane's next delivery due now).
/// Parked rows sit past every real due time, so a claim, which walks the due
/// index up to now, never steps over the waiting rows of a lane: it meets
/// only lane heads. The API shows no `next_attempt_at` for them.
pub const PARKED: Millis = i64::MAX;

/// Rows `o` of `row`'s lane that are ahead of it and unfinished: `pending`,
/// or `failed` when the endpoint blocks on a dead letter.
pub(crate) fn unfinished_ahead_of(row: &str) -> String {
    format!(
        "o.endpoint_id = {row}.endpoint_id AND o.ordering_key = {row}.ordering_key \
         AND o.lane_seq IS NOT NULL AND o.status IN ('pending', 'failed') AND o.lane_seq < {row}.lane_seq \
         AND (o.status = 'pending' OR (SELECT e.on_dead_letter FROM endpoints e WHERE e.id = {row}.endpoint_id) = 'block')"
    )
}

/// Other rows `l` of `row`'s lane that are `pending` and not parked: with a
/// live lease, they are being sent (a replayed delivery waits for them).
pub(crate) fn others_due_in_lane_of(row: &str) -> String {
    format!(
        "l.endpoint_id = {row}.endpoint_id AND l.ordering_key = {row}.ordering_key AND l.lane_seq IS NOT NULL \
         AND l.status = 'pending' AND l.next_attempt_at < {PARKED} AND l.id <> {row}.id"
    )
}

/// `row` (a delivery with `lane_seq` set) is the head of its lane at `now`
/// (a placeholder such as `$3`): no row of its lane is ahead of it and
/// unfinished, and none is being sent.
pub(crate) fn lane_head(row: &str, now: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM deliveries o WHERE {}) \
         AND NOT EXISTS (SELECT 1 FROM deliveries l WHERE {} AND l.lease_until > {now})",
        unfinished_ahead_of(row),
        others_due_in_lane_of(row)
    )
}

/// `row` is `pending`, due at `now` (a placeholder such as `$3`), and leased
/// to no worker (or its lease ended): what a claim may take.
pub(crate) fn due_and_unclaimed(row: &str, now: &str) -> String {
    format!(
        "{row}.status = 'pending' AND {row}.next_attempt_at <= {now} \
         AND ({row}.lease_until IS NULL OR {row}.lease_until <= {now})"
    )
}

/// The claim: leases (until $1, to owner $2) up to $4 deliveries due at $3,
/// oldest due first, taking only lane heads of ordered endpoints. `lock` is
/// what follows the selection: nothing on SQLite (one writer runs it at a
/// time), `FOR UPDATE OF d SKIP LOCKED` on PostgreSQL (instances claim side
/// by side, each skipping the rows another is taking).
pub(crate) fn claim(lock: &str) -> String {
    format!(
        "UPDATE deliveries SET lease_until = $1, lease_owner = $2, lease_token = lease_token + 1, updated_at = $3 \
         WHERE id IN (SELECT d.id FROM deliveries d WHERE {} \
                      AND (d.lane_seq IS NULL OR ({})) \
                      ORDER BY d.next_attempt_at LIMIT $4{lock}) \
         RETURNING id, app_id, event_id, endpoint_id, attempt_count, budget_start, lease_token, lane_seq",
        due_and_unclaimed("d", "$3"),
        lane_head("d", "$3")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_claims_differ_only_by_their_lock() {
        let (sqlite, postgres) = (claim(""), claim(" FOR UPDATE OF d SKIP LOCKED"));
        assert_eq!(postgres.replace(" FOR UPDATE OF d SKIP LOCKED", ""), sqlite);
        assert!(sqlite.contains("l.next_attempt_at < 9223372036854775807"), "{sqlite}");
    }
}
