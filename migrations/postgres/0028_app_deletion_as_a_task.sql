-- Deleting an app is a task (kind 'delete_app') that erases its log, events
-- and endpoints in bounded batches, then the app's row. From the moment the
-- deletion is asked, deleted_at is set: the API no longer finds the app (its
-- id and uid answer 404), its tokens and sessions are gone and its endpoints
-- are disabled, so nothing more is sent for it while its rows are erased.
ALTER TABLE apps ADD COLUMN deleted_at BIGINT;
