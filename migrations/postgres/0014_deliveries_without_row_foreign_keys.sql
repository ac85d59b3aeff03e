-- A delivery's references to its event and endpoint are kept by the writes
-- themselves, not by per-row foreign-key checks: each check is a query of
-- its own (a trigger, `SELECT … FOR KEY SHARE` on the parent row) for every
-- delivery inserted, a quarter of the server's time under batch ingestion
-- (docs/benchmarks.md). Instead:
-- - an ingestion inserts a batch's events and deliveries in one statement,
--   the deliveries only of events written by it, and locks the endpoints it
--   fans out to (`FOR KEY SHARE`, once per endpoint per batch), keeping only
--   deliveries to endpoints that still exist;
-- - deleting an endpoint or an app deletes its deliveries in the same
--   transaction, after the endpoint rows (so an ingestion holding their lock
--   has committed, and its deliveries are seen and deleted);
-- - events are never deleted except with their app.
-- Attempts keep their foreign key to deliveries (ON DELETE CASCADE).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;
ALTER TABLE deliveries DROP CONSTRAINT deliveries_endpoint_id_fkey;
