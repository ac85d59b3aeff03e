-- Bulk operations as tasks (docs/api.md#tasks): a replay, cancel or skip of
-- many deliveries, run in the background at a bounded rate (FENIX_TASK_RATE).
--
-- A task's row is its audit record: who asked (created_by: "admin", or the
-- kind of app caller), when, and what selection (filter, the JSON as given).
-- Its deliveries are chosen once, when it is created (task_deliveries), so
-- what it acts on is exactly what a dry run with the same filter counted then;
-- it walks them in delivery id order, and cursor (the last delivery id acted
-- on) moves in the same transaction as each batch's changes: a task that
-- stopped halfway (a crash, a kill) goes on after it, acting on each once.
CREATE TABLE tasks (
    id          TEXT PRIMARY KEY,
    app_id      TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    -- replay | cancel | skip
    kind        TEXT NOT NULL,
    -- queued | running | succeeded | failed | cancelled
    state       TEXT NOT NULL,
    filter      TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    selected    INTEGER NOT NULL,
    done        INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0,
    rate_per_s  INTEGER NOT NULL,
    cursor      TEXT NOT NULL DEFAULT '',
    -- The instance running it, until when: a runner that vanished leaves it
    -- to another once the lease ends.
    lease_owner TEXT,
    lease_until INTEGER,
    created_at  INTEGER NOT NULL,
    started_at  INTEGER,
    finished_at INTEGER
);
CREATE INDEX tasks_by_app ON tasks(app_id, id);
CREATE INDEX tasks_unfinished ON tasks(state, id);

-- The deliveries a task selected, walked in delivery id order.
CREATE TABLE task_deliveries (
    task_id     TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    delivery_id TEXT NOT NULL,
    PRIMARY KEY (task_id, delivery_id)
);
