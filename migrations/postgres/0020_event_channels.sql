-- Channels and tags (issue 32, "Routing").
-- An event's channels and tags as given (JSON arrays of names, at most 10
-- each, no repeats), shown with the event; '[]': none.
ALTER TABLE events ADD COLUMN channels TEXT NOT NULL DEFAULT '[]';
ALTER TABLE events ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';

-- An endpoint's channels (JSON array of names, at most 10): it receives only
-- events sharing at least one; '[]': every event, as before.
ALTER TABLE endpoints ADD COLUMN channels TEXT NOT NULL DEFAULT '[]';

-- The logs filter by channel and by tag (`GET …/events?channel=`,
-- `GET …/deliveries?tag=`). A JSON column cannot be searched by an index on
-- both backends (PostgreSQL would need jsonb and GIN, SQLite has neither),
-- and copying the names onto each delivery, as `event_type` is, would
-- multiply the rows written per event by its fan-out and make the filter a
-- many-valued column again. So each name of an event is one row here, written
-- in the event's transaction (events are never rewritten): its primary key
-- answers the event log's page directly, newest event first from the cursor
-- (`app_id, kind, name` equal, `event_id` descending), and the delivery log
-- reaches the deliveries of those events through `deliveries_by_event`.
-- No foreign key (a per-row check on every insert, see 0014): rows are
-- deleted with their app (`delete_app`), and events never otherwise.
CREATE TABLE event_labels (
    app_id   TEXT NOT NULL,
    -- 'channel' or 'tag'.
    kind     TEXT NOT NULL,
    name     TEXT NOT NULL,
    event_id TEXT NOT NULL,
    PRIMARY KEY (app_id, kind, name, event_id)
);
