-- The master keys this database was sealed with, each proven by a canary
-- (issue 27, finding 4). An instance given a current key the database does
-- not know (a mistyped FENIX_MASTER_KEY beside the real key in
-- FENIX_PREVIOUS_MASTER_KEYS) used to start and seal new secrets with it,
-- which every other instance then failed to open. Now a start opens the
-- canary of its current key and of each previous key it is given, and
-- refuses unless its current key is the newest here; only `fenix rekey`
-- (with the newest key among the previous ones) records a new key.
CREATE TABLE master_key_canaries (
    -- Hex of the 8-byte key id every sealed value carries (secrets.rs);
    -- a digest of the key, not the key.
    key_id TEXT PRIMARY KEY,
    -- A known text sealed with this key, the key id in the associated data:
    -- it opens with this key only.
    canary BLOB NOT NULL,
    -- The order the keys became current in: the highest is the key every
    -- instance must seal with. Unique, so two instances recording different
    -- keys at once cannot both become the newest.
    generation BIGINT NOT NULL UNIQUE,
    -- Unix milliseconds, shown in errors (when the newest key was recorded).
    created_at BIGINT NOT NULL
);
