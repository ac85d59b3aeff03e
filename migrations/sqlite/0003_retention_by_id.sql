-- Retention finds old rows by id instead: ids are ULIDs that start with their
-- creation time (`dlv_`, `att_`, `evt_` + ULID), so "created before T" is
-- "id below the smallest id of time T" on the primary key. Three indexes fewer
-- to maintain on every event, delivery and attempt written.
DROP INDEX events_by_created;
DROP INDEX deliveries_by_created;
DROP INDEX attempts_by_started;
