-- An idempotency key remembers the SHA-256 of its call's canonical arguments, so the
-- same key with other arguments is refused. Existing rows keep NULL and still replay.
ALTER TABLE idempotency_keys ADD COLUMN request_hash TEXT;
