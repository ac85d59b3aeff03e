-- Scoped tokens. A token is either an admin token (`app_id` NULL, access
-- 'admin': every app, every route) or an app token (one app, 'manage' or
-- 'read'); the CHECK keeps the two kinds apart, so no row can be an admin
-- token that names an app or an app token without one. Deleting an app
-- deletes its tokens. `expires_at` (milliseconds, NULL = never): an expired
-- token never authenticates, its row stays listed until revoked.
--
-- SQLite cannot add a table CHECK to an existing table, so the table is
-- rebuilt; nothing references it. The name and `token_sha256` stay, so every
-- token issued before still works, as an admin token.
CREATE TABLE admin_tokens_new (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    token_sha256 TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    app_id       TEXT REFERENCES apps(id) ON DELETE CASCADE,
    access       TEXT NOT NULL DEFAULT 'admin' CHECK (access IN ('admin', 'manage', 'read')),
    expires_at   INTEGER,
    CHECK ((app_id IS NULL) = (access = 'admin'))
);
INSERT INTO admin_tokens_new (id, name, token_sha256, created_at)
    SELECT id, name, token_sha256, created_at FROM admin_tokens;
DROP TABLE admin_tokens;
ALTER TABLE admin_tokens_new RENAME TO admin_tokens;
-- For the cascade when an app is deleted.
CREATE INDEX admin_tokens_by_app ON admin_tokens (app_id);
