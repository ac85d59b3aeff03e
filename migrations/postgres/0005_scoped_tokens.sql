-- Scoped tokens. A token is either an admin token (`app_id` NULL, access
-- 'admin': every app, every route) or an app token (one app, 'manage' or
-- 'read'); the CHECK keeps the two kinds apart, so no row can be an admin
-- token that names an app or an app token without one. Deleting an app
-- deletes its tokens. `expires_at` (milliseconds, NULL = never): an expired
-- token never authenticates, its row stays listed until revoked.
-- The name and `token_sha256` stay, so every token issued before still
-- works, as an admin token.
ALTER TABLE admin_tokens
    ADD COLUMN app_id     TEXT COLLATE "C" REFERENCES apps(id) ON DELETE CASCADE,
    ADD COLUMN access     TEXT COLLATE "C" NOT NULL DEFAULT 'admin' CHECK (access IN ('admin', 'manage', 'read')),
    ADD COLUMN expires_at BIGINT,
    ADD CONSTRAINT admin_tokens_kind CHECK ((app_id IS NULL) = (access = 'admin'));
-- For the cascade when an app is deleted.
CREATE INDEX admin_tokens_by_app ON admin_tokens (app_id);
