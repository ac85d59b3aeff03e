-- Per-endpoint policy (issue 16, item 3).
-- `headers`: the owner's custom request headers, a JSON array of
--   {"name": …, "value": …} in clear, or {"name": …, "sealed": <base64>} for
--   credential headers (Authorization, Cookie, and names marked sensitive):
--   sealed with the master key like endpoint_secrets.sealed, bound to the
--   endpoint and the header's name; `fenix rekey` re-seals them. Kept on the
--   endpoint's row so the worker's one read of a claimed batch's endpoints
--   carries them.
-- `retry_schedule`: the endpoint's own waits in milliseconds (JSON array);
--   NULL = FENIX_RETRY_SCHEDULE.
-- `final_status_codes`: 4xx statuses that fail a delivery at once (JSON array).
-- `attempt_timeout_ms`: the endpoint's own attempt timeout; NULL = FENIX_ATTEMPT_TIMEOUT.
ALTER TABLE endpoints ADD COLUMN headers TEXT NOT NULL DEFAULT '[]';
ALTER TABLE endpoints ADD COLUMN retry_schedule TEXT;
ALTER TABLE endpoints ADD COLUMN final_status_codes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE endpoints ADD COLUMN attempt_timeout_ms INTEGER;
