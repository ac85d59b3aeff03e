-- Proof of endpoint ownership (opt-in: FENIX_REQUIRE_ENDPOINT_VERIFICATION).
-- `unverified` is kept beside `state`, not in it: `endpoints.state` has a
-- CHECK listing its values, which SQLite cannot change without rebuilding the
-- table (and dropping `endpoints` would cascade to deliveries and secrets).
-- The API *shows* an active, unverified endpoint as `pending_verification`
-- (lifecycle::SHOWN_ENDPOINT_STATE_SQL), and the worker skips its deliveries.
ALTER TABLE endpoints ADD COLUMN unverified INTEGER NOT NULL DEFAULT 0;
-- The open challenge of an unverified endpoint (at most one; replaced by a
-- new one on a URL change or `POST …/verify`, deleted once answered).
-- `next_attempt_at` NULL: no attempt is coming, the challenge has expired.
-- A sender claims a due challenge by setting `lease_until`/`lease_token`,
-- and writes its result only while that token still holds, so several
-- instances on one database send each attempt once.
CREATE TABLE endpoint_challenges (
    endpoint_id       TEXT PRIMARY KEY REFERENCES endpoints(id) ON DELETE CASCADE,
    challenge         TEXT NOT NULL,
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   INTEGER,
    lease_until       INTEGER,
    lease_token       INTEGER,
    last_attempt_at   INTEGER,
    last_status       INTEGER,
    last_error        TEXT,
    last_error_detail TEXT,
    created_at        INTEGER NOT NULL
);
CREATE INDEX endpoint_challenges_due ON endpoint_challenges(next_attempt_at) WHERE next_attempt_at IS NOT NULL;
-- An app's own opt-in (besides the global setting): its new endpoints, and
-- endpoints whose URL changes, must prove ownership.
ALTER TABLE apps ADD COLUMN require_endpoint_verification INTEGER NOT NULL DEFAULT 0;
