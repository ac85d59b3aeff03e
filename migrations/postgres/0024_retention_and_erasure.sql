-- Retention and erasure per app (docs/operations.md#retention).
--
-- An app's own retentions, in milliseconds: NULL follows the operator's
-- FENIX_PAYLOAD_RETENTION / FENIX_LOG_RETENTION. The API accepts no more than
-- the operator's; should the operator lower theirs later, the shorter one
-- applies (the purge over every app runs at the operator's cutoff anyway).
ALTER TABLE apps ADD COLUMN payload_retention_ms BIGINT;
ALTER TABLE apps ADD COLUMN log_retention_ms BIGINT;

-- When the event's payload was erased on request (POST …/events/{evt}/expunge):
-- its payload (and its deliveries' transformed requests) are NULL from then
-- on, the metadata and payload_sha256 stay. NULL: never erased (a payload
-- purged by retention is NULL without it).
ALTER TABLE events ADD COLUMN expunged_at BIGINT;
