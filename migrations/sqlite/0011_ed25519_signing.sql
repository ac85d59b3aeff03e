-- Asymmetric signatures (Ed25519, Standard Webhooks `v1a`) beside HMAC.
-- `signing_algorithm` is what the endpoint's current key is ('hmac' or
-- 'ed25519'); a rotation may change it. New columns, not a changed CHECK:
-- SQLite cannot alter a CHECK without rebuilding `endpoints`.
ALTER TABLE endpoints ADD COLUMN signing_algorithm TEXT NOT NULL DEFAULT 'hmac'
    CHECK (signing_algorithm IN ('hmac', 'ed25519'));
-- An Ed25519 key version's public key, `whpk_<base64>`, in clear: it is
-- public, and reads (the endpoint's keys, the app's key document) must not
-- need the master key. NULL for HMAC secrets. The private key is in `sealed`
-- (`whsk_<base64 seed>`, sealed like an HMAC secret, so `fenix rekey`
-- re-seals it with the rest).
ALTER TABLE endpoint_secrets ADD COLUMN public_key TEXT;
