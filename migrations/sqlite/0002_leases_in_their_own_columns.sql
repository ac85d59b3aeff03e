-- A lease no longer changes `status` or `next_attempt_at`: a claimed delivery
-- stays `pending` with `lease_until` set (the API shows it as `in_flight`).
-- A claim then touches no indexed column, and the only update that moves index
-- entries is the one that records the outcome.
ALTER TABLE deliveries ADD COLUMN lease_until INTEGER;
-- Leases held at upgrade time: due again when they would have expired.
UPDATE deliveries SET status = 'pending' WHERE status = 'in_flight';
DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status = 'pending';
