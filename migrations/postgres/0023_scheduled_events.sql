-- Scheduled events (docs/api.md#scheduled-events): an event may be sent
-- later, at `deliver_at` (ms since the epoch), at most
-- FENIX_MAX_SCHEDULE_AHEAD ahead. NULL: sent at once, as before.
--
-- On the event, for its answers; on each of its deliveries, for the log:
-- a delivery shows `scheduled` while it is `pending`, unleased and both its
-- `deliver_at` and its `next_attempt_at` are still ahead (a deferral or a
-- parked lane alone never makes a delivery look scheduled, and a replay,
-- due at once, ends it). The queue needs nothing new: the delivery is
-- inserted with `next_attempt_at = deliver_at`, and the claim (on
-- `deliveries_due`) takes no row before it is due.
ALTER TABLE events ADD COLUMN deliver_at BIGINT;
ALTER TABLE deliveries ADD COLUMN deliver_at BIGINT;
