-- Fenix schema, SQLite flavour. Every time column holds milliseconds since the
-- Unix epoch (INTEGER), the same unit as the PostgreSQL schema, so the queries
-- are shared between the two backends.

-- Admin API tokens. Only a SHA-256 of each token is kept: a stolen database
-- does not hand out API access.
CREATE TABLE admin_tokens (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    token_sha256 TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL
);

-- Small key/value facts about this database (e.g. the master-key check value).
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

-- Apps: the producer's customers (tenants). `uid` is the producer's own name for them.
CREATE TABLE apps (
    id         TEXT PRIMARY KEY,
    uid        TEXT UNIQUE,
    name       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- Endpoints: where an app's events go. `event_types` is a JSON array of exact
-- types or `prefix.*` patterns (empty = all). `state_reason` says why the last
-- automatic or manual state change happened.
CREATE TABLE endpoints (
    id                 TEXT PRIMARY KEY,
    app_id             TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    url                TEXT NOT NULL,
    description        TEXT NOT NULL DEFAULT '',
    event_types        TEXT NOT NULL DEFAULT '[]',
    state              TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'disabled')),
    state_reason       TEXT,
    state_changed_at   INTEGER,
    rate_limit_per_sec INTEGER,
    signature_scheme   TEXT NOT NULL DEFAULT 'fenix-v1',
    -- Start of the current run of failed attempts (NULL after a success):
    -- an endpoint failing for longer than FENIX_DISABLE_AFTER_FAILING is disabled.
    failing_since      INTEGER,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE INDEX endpoints_by_app ON endpoints(app_id, id);

-- Signing secrets, sealed with the master key (never stored in clear).
-- `expires_at` NULL = the current secret; an older one signs until it expires.
CREATE TABLE endpoint_secrets (
    endpoint_id TEXT NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    sealed      BLOB NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    PRIMARY KEY (endpoint_id, version)
);

-- Events as the producer emitted them. `payload` is the envelope exactly as
-- sent to receivers (NULL once retention purged it); the digest stays.
CREATE TABLE events (
    id              TEXT PRIMARY KEY,
    app_id          TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    event_type      TEXT NOT NULL,
    idempotency_key TEXT,
    payload         BLOB,
    payload_sha256  TEXT NOT NULL,
    delivery_count  INTEGER NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX events_idempotency ON events(app_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX events_by_app ON events(app_id, id);
CREATE INDEX events_by_app_type ON events(app_id, event_type, id);
CREATE INDEX events_by_created ON events(created_at);

-- Deliveries: one event for one endpoint. While `in_flight`, `next_attempt_at`
-- is the lease expiry, so one index serves "what is due" for fresh work and for
-- work whose worker died. A replay starts a fresh attempt budget by setting
-- `budget_start` to `attempt_count`, so attempt numbers keep growing in the log.
-- `lease_token` changes at every claim: a worker that
-- lost its lease cannot overwrite a newer outcome.
CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    app_id          TEXT NOT NULL,
    event_id        TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    endpoint_id     TEXT NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'in_flight', 'succeeded', 'failed', 'skipped')),
    attempt_count   INTEGER NOT NULL DEFAULT 0,
    budget_start    INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    last_attempt_at INTEGER,
    lease_owner     TEXT,
    lease_token     INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX deliveries_due ON deliveries(next_attempt_at) WHERE status IN ('pending', 'in_flight');
CREATE INDEX deliveries_by_app ON deliveries(app_id, id);
CREATE INDEX deliveries_by_endpoint ON deliveries(endpoint_id, id);
CREATE INDEX deliveries_by_event ON deliveries(event_id, id);
CREATE INDEX deliveries_by_app_status ON deliveries(app_id, status, id);
-- Log retention walks old deliveries; dead-letter counts read failed ones.
CREATE INDEX deliveries_by_created ON deliveries(created_at);
CREATE INDEX deliveries_failed ON deliveries(endpoint_id) WHERE status = 'failed';

-- Attempts: one HTTP request each. `id` is the X-Fenix-Delivery-Id sent.
-- `signed_with` is a JSON array of the secret versions that signed it.
CREATE TABLE attempts (
    id               TEXT PRIMARY KEY,
    delivery_id      TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    endpoint_id      TEXT NOT NULL,
    attempt_number   INTEGER NOT NULL,
    started_at       INTEGER NOT NULL,
    duration_ms      INTEGER NOT NULL,
    response_status  INTEGER,
    response_excerpt TEXT,
    error            TEXT,
    error_detail     TEXT,
    signed_with      TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX attempts_by_delivery ON attempts(delivery_id, attempt_number);
CREATE INDEX attempts_by_started ON attempts(started_at);
-- Per-endpoint statistics over a time window.
CREATE INDEX attempts_by_endpoint ON attempts(endpoint_id, started_at);

-- Automatic and manual endpoint state changes, with their reason.
CREATE TABLE endpoint_state_changes (
    id          TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    state       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX endpoint_state_changes_by_endpoint ON endpoint_state_changes(endpoint_id, id);
