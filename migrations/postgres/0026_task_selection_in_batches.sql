-- Tasks select their deliveries in batches, and across apps.
--
-- selection: the task's selection as the store reads it back (JSON), so a
-- selection stopped halfway (a crash while the task was being created) is
-- finished by the runner that takes the task up. selecting: the last
-- delivery id the selection has looked at ('' before the first batch), or
-- NULL once every matching delivery is in task_deliveries; each batch of
-- the selection is its own short transaction, and moves it with `selected`.
-- Rows from before select nothing more: their selection was whole.
--
-- app_id: NULL for an operator's task over every app (or the apps its
-- selection names).
ALTER TABLE tasks ALTER COLUMN app_id DROP NOT NULL;
ALTER TABLE tasks ADD COLUMN selection TEXT;
ALTER TABLE tasks ADD COLUMN selecting TEXT;
