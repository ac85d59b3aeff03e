-- Endpoint transformations (docs/api.md#transformations).
--
-- The owner's script (JavaScript, at most 64 KiB, checked when saved); NULL:
-- the endpoint sends the envelope as it is.
ALTER TABLE endpoints ADD COLUMN transformation TEXT;

-- The request a delivery's transformation made (transform::Transformed):
-- method, path and query, and custom headers as JSON, and the body. Written
-- before the delivery's first request is sent, so every attempt sends the
-- same bytes, signed anew; NULL: not transformed (yet). Purged with the
-- event's payload (FENIX_PAYLOAD_RETENTION), deleted with the delivery.
ALTER TABLE deliveries ADD COLUMN transformed_request TEXT;
ALTER TABLE deliveries ADD COLUMN transformed_body BLOB;

-- Why a skipped delivery was not sent, where the delivery row is the only
-- place that can say it: 'transformation_cancelled' (its transformation set
-- cancel: true). NULL otherwise; shown only while the delivery is skipped.
ALTER TABLE deliveries ADD COLUMN skip_reason TEXT;

-- Retention finds the transformed requests to purge by their event (ids
-- sort by time); only transformed deliveries are in this index.
CREATE INDEX deliveries_transformed ON deliveries(event_id) WHERE transformed_request IS NOT NULL;
