-- Limits that hold across every instance on one database (issue 17).
-- SQLite has no counterpart: it is one instance, whose worker keeps its
-- limits in memory (worker/gate.rs), so its migrations skip 0013.
--
-- Concurrency slots: an instance leases slots of an endpoint's or a host's
-- concurrency limit in blocks, one row per (kind, key, owner), and uses them
-- for as many deliveries as it likes without asking again. The row's lease is
-- renewed while the instance lives; a killed instance's slots count for
-- nothing once `lease_until` (milliseconds) has passed. Granting takes an
-- advisory lock per (kind, key), so two instances never both take the last
-- slot. No foreign key: a host is no row, and an endpoint deleted meanwhile
-- must not make a grant fail (the rows are dropped when released or stale).
CREATE TABLE limit_slots (
    kind TEXT NOT NULL CHECK (kind IN ('endpoint', 'host')),
    key TEXT NOT NULL,
    owner TEXT NOT NULL,
    slots BIGINT NOT NULL CHECK (slots > 0),
    lease_until BIGINT NOT NULL,
    PRIMARY KEY (kind, key, owner)
);

-- Rate limits: the next free send time of a rate-limited endpoint, in
-- microseconds of the database's clock (1/rate is often below a
-- millisecond's resolution, and one clock for every instance means no skew).
-- An instance takes a run of k consecutive send times in one statement
-- (k sized by the rate, about 250 ms of sends) and spaces its requests over
-- them; times it does not use are lost, never given to anyone twice.
CREATE TABLE endpoint_send_slots (
    endpoint_id TEXT PRIMARY KEY,
    next_at_us BIGINT NOT NULL
);
