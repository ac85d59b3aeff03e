-- OAuth2 client credentials per endpoint (issue 31, item 3).
-- The endpoint's auth option: JSON of {type, token_url, client_id, scope,
-- audience, token_endpoint_auth_method} with the client secret or private
-- key sealed under the master key (base64), bound to the endpoint; NULL: none.
ALTER TABLE endpoints ADD COLUMN auth TEXT;

-- The access token each endpoint's option fetched, shared by every instance
-- until shortly before it expires. Sealed like the credential; a cache only
-- (a lost row costs one fetch).
CREATE TABLE oauth_tokens (
    endpoint_id         TEXT PRIMARY KEY REFERENCES endpoints(id) ON DELETE CASCADE,
    -- Hex of SHA-256 of the stored auth option the token was fetched with:
    -- a changed option does not use it.
    fingerprint         TEXT NOT NULL,
    -- Random: a receiver's 401 drops this token, not a newer one.
    token_id            TEXT NOT NULL,
    access_token_sealed BYTEA NOT NULL,
    -- Unix milliseconds: not used from then on.
    use_until           BIGINT NOT NULL,
    fetched_at          BIGINT NOT NULL
);
