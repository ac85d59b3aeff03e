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
-- selection names). SQLite cannot drop a NOT NULL, so the table is rebuilt;
-- task_deliveries is rebuilt first beside it (dropping a table that others
-- reference would delete their rows through the cascade), then both take
-- their names back, and the reference follows the rename.
CREATE TABLE tasks_new (
    id          TEXT PRIMARY KEY,
    app_id      TEXT REFERENCES apps(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    state       TEXT NOT NULL,
    filter      TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    selected    INTEGER NOT NULL,
    done        INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0,
    rate_per_s  INTEGER NOT NULL,
    cursor      TEXT NOT NULL DEFAULT '',
    lease_owner TEXT,
    lease_until INTEGER,
    created_at  INTEGER NOT NULL,
    started_at  INTEGER,
    finished_at INTEGER,
    selection   TEXT,
    selecting   TEXT
);
INSERT INTO tasks_new (id, app_id, kind, state, filter, created_by, selected, done, failed, rate_per_s, cursor,
        lease_owner, lease_until, created_at, started_at, finished_at)
    SELECT id, app_id, kind, state, filter, created_by, selected, done, failed, rate_per_s, cursor,
        lease_owner, lease_until, created_at, started_at, finished_at FROM tasks;
CREATE TABLE task_deliveries_new (
    task_id     TEXT NOT NULL REFERENCES tasks_new(id) ON DELETE CASCADE,
    delivery_id TEXT NOT NULL,
    PRIMARY KEY (task_id, delivery_id)
);
INSERT INTO task_deliveries_new (task_id, delivery_id) SELECT task_id, delivery_id FROM task_deliveries;
DROP TABLE task_deliveries;
DROP TABLE tasks;
ALTER TABLE tasks_new RENAME TO tasks;
ALTER TABLE task_deliveries_new RENAME TO task_deliveries;
CREATE INDEX tasks_by_app ON tasks(app_id, id);
CREATE INDEX tasks_unfinished ON tasks(state, id);
