-- The event-type catalogue (`/v1/event-types`): what each event type means
-- and, optionally, the JSON Schema (draft 2020-12) its `data` must match at
-- ingestion. Global, not per app: producers send the same types for every
-- tenant. Named `event_type_catalogue` so it cannot be mistaken for the
-- `event_types` filter column of `endpoints`.
--   id        `etype_…`, the order of the list and its cursors (newest first)
--   name      the event type itself, unique, as ingestion matches it (exact, case-sensitive)
--   schema    JSON text of the schema, NULL: any object is accepted
--   example   JSON text of an example `data`, NULL: none (matches the schema when both are set)
--   revision  bumped by every change, so an instance's cache of compiled
--             schemas recompiles only what changed
CREATE TABLE event_type_catalogue (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    schema      TEXT,
    example     TEXT,
    deprecated  BOOLEAN NOT NULL DEFAULT FALSE,
    revision    BIGINT NOT NULL DEFAULT 1,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
