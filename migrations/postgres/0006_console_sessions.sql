-- Console sessions: one row per operator session (an admin logged in to the
-- web console with an admin token) or per portal link (minted by an admin for
-- one app's customer) and the session it is exchanged for.
--
-- Only SHA-256 digests of secrets are stored: the link secret (`fxp_…`, sent
-- once in a URL fragment) and the session secret (`fxs_…`, kept in the
-- HttpOnly `fenix_session` cookie). The CSRF token is derived from the
-- session secret, so it is not stored either.
--
-- A portal row is a link until `used_at` is set, in the same statement that
-- sets `session_sha256` (an UPDATE … WHERE used_at IS NULL: of two racing
-- exchanges exactly one wins). It lives until `expires_at` (the link's expiry)
-- or `revoked_at`. An operator row keeps the digest of the admin token that
-- logged in (`admin_token_sha256`): the session is honoured only while that
-- token still exists in `admin_tokens`, so revoking the token ends it.
CREATE TABLE console_sessions (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    -- 'operator' or 'portal'.
    kind               TEXT COLLATE "C" NOT NULL,
    -- The one app a portal session reaches; NULL for operators.
    app_id             TEXT COLLATE "C" REFERENCES apps (id) ON DELETE CASCADE,
    -- 'admin' (operators), 'manage' or 'read' (portal).
    access             TEXT COLLATE "C" NOT NULL,
    link_sha256        TEXT COLLATE "C" UNIQUE,
    used_at            BIGINT,
    session_sha256     TEXT COLLATE "C" UNIQUE,
    admin_token_sha256 TEXT COLLATE "C",
    expires_at         BIGINT NOT NULL,
    revoked_at         BIGINT,
    created_at         BIGINT NOT NULL,
    label              TEXT COLLATE "C",
    CHECK (kind IN ('operator', 'portal')),
    CHECK (access IN ('admin', 'manage', 'read')),
    CHECK ((kind = 'portal') = (app_id IS NOT NULL))
);

-- An app's portal links, newest first (`GET /v1/apps/{app}/portal-sessions`).
CREATE INDEX console_sessions_by_app ON console_sessions (app_id, id);
-- Purging rows long expired.
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
