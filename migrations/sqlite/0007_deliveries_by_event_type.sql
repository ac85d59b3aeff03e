-- The delivery log filters by event type (`GET …/deliveries?event_type=`,
-- what the console's filter asks). A join to `events` cannot answer a page of
-- 50 newest-first without walking every delivery of the app when the type is
-- rare, so each delivery carries its event's type (written with it at
-- ingestion; an event's type never changes) and the filter has its index,
-- newest first on the primary key like the app's and the status's.
-- Rows from before are filled from their event (this rewrites the table once).
ALTER TABLE deliveries ADD COLUMN event_type TEXT NOT NULL DEFAULT '';
UPDATE deliveries SET event_type = COALESCE((SELECT e.event_type FROM events e WHERE e.id = deliveries.event_id), '');
CREATE INDEX deliveries_by_app_type ON deliveries(app_id, event_type, id);
