-- Fenix schema, PostgreSQL flavour. Every time column holds milliseconds since the
-- Unix epoch (BIGINT), the same unit as the SQLite schema, so the queries
-- are shared between the two backends.
-- Text columns use the "C" collation: ids compare byte-wise, as on SQLite,
-- which keeps cursor pagination identical on both backends.

-- Admin API tokens. Only a SHA-256 of each token is kept: a stolen database
-- does not hand out API access.
CREATE TABLE admin_tokens (
    id           TEXT COLLATE "C" PRIMARY KEY,
    name         TEXT COLLATE "C" NOT NULL,
    token_sha256 TEXT COLLATE "C" NOT NULL UNIQUE,
    created_at   BIGINT NOT NULL
);

-- Small key/value facts about this database (e.g. the master-key check value).
CREATE TABLE meta (
    key   TEXT COLLATE "C" PRIMARY KEY,
    value BYTEA NOT NULL
);

-- Apps: the producer's customers (tenants). `uid` is the producer's own name for them.
CREATE TABLE apps (
    id         TEXT COLLATE "C" PRIMARY KEY,
    uid        TEXT COLLATE "C" UNIQUE,
    name       TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Endpoints: where an app's events go. `event_types` is a JSON array of exact
-- types or `prefix.*` patterns (empty = all). `state_reason` says why the last
-- automatic or manual state change happened.
CREATE TABLE endpoints (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    app_id             TEXT COLLATE "C" NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    url                TEXT COLLATE "C" NOT NULL,
    description        TEXT COLLATE "C" NOT NULL DEFAULT '',
    event_types        TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    state              TEXT COLLATE "C" NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'disabled')),
    state_reason       TEXT COLLATE "C",
    state_changed_at   BIGINT,
    rate_limit_per_sec BIGINT,
    signature_scheme   TEXT COLLATE "C" NOT NULL DEFAULT 'fenix-v1',
    -- Start of the current run of failed attempts (NULL after a success):
    -- an endpoint failing for longer than FENIX_DISABLE_AFTER_FAILING is disabled.
    failing_since      BIGINT,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX endpoints_by_app ON endpoints(app_id, id);

-- Signing secrets, sealed with the master key (never stored in clear).
-- `expires_at` NULL = the current secret; an older one signs until it expires.
CREATE TABLE endpoint_secrets (
    endpoint_id TEXT COLLATE "C" NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    version     BIGINT NOT NULL,
    sealed      BYTEA NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT,
    PRIMARY KEY (endpoint_id, version)
);

-- Events as the producer emitted them. `payload` is the envelope exactly as
-- sent to receivers (NULL once retention purged it); the digest stays.
CREATE TABLE events (
    id              TEXT COLLATE "C" PRIMARY KEY,
    app_id          TEXT COLLATE "C" NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    event_type      TEXT COLLATE "C" NOT NULL,
    idempotency_key TEXT COLLATE "C",
    payload         BYTEA,
    payload_sha256  TEXT COLLATE "C" NOT NULL,
    delivery_count  BIGINT NOT NULL,
    created_at      BIGINT NOT NULL
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
    id              TEXT COLLATE "C" PRIMARY KEY,
    app_id          TEXT COLLATE "C" NOT NULL,
    event_id        TEXT COLLATE "C" NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    endpoint_id     TEXT COLLATE "C" NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    status          TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'in_flight', 'succeeded', 'failed', 'skipped')),
    attempt_count   BIGINT NOT NULL DEFAULT 0,
    budget_start    BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    last_attempt_at BIGINT,
    lease_owner     TEXT COLLATE "C",
    lease_token     BIGINT NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
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
    id               TEXT COLLATE "C" PRIMARY KEY,
    delivery_id      TEXT COLLATE "C" NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    endpoint_id      TEXT COLLATE "C" NOT NULL,
    attempt_number   BIGINT NOT NULL,
    started_at       BIGINT NOT NULL,
    duration_ms      BIGINT NOT NULL,
    response_status  BIGINT,
    response_excerpt TEXT COLLATE "C",
    error            TEXT COLLATE "C",
    error_detail     TEXT COLLATE "C",
    signed_with      TEXT COLLATE "C" NOT NULL DEFAULT '[]'
);
CREATE INDEX attempts_by_delivery ON attempts(delivery_id, attempt_number);
CREATE INDEX attempts_by_started ON attempts(started_at);
-- Per-endpoint statistics over a time window.
CREATE INDEX attempts_by_endpoint ON attempts(endpoint_id, started_at);

-- Automatic and manual endpoint state changes, with their reason.
CREATE TABLE endpoint_state_changes (
    id          TEXT COLLATE "C" PRIMARY KEY,
    endpoint_id TEXT COLLATE "C" NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    state       TEXT COLLATE "C" NOT NULL,
    reason      TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX endpoint_state_changes_by_endpoint ON endpoint_state_changes(endpoint_id, id);
