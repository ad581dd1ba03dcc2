-- A refresh token is single-use, and its use is now recorded in D1 with one conditional
-- INSERT that exactly one of concurrent requests wins (src/oauth/refresh-replay.ts), in
-- place of a read and a write of the OAuth provider's KV record, which let the same token
-- be exchanged several times at once. Only the first database's rows are used. The KV keys
-- `refresh-retired:…` that recorded replaced tokens before are no longer read and expire by
-- themselves with their grants; until a grant from before this migration expires, a token of it
-- replaced before the one before its current one, presented again, is refused without ending it.
CREATE TABLE spent_refresh_tokens (
  user_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  hash TEXT NOT NULL CHECK (length(hash) = 64 OR hash = 'replayed'),
  spent_at TEXT NOT NULL,
  grant_expires_at TEXT NOT NULL,
  PRIMARY KEY (user_id, grant_id, hash)
);
CREATE INDEX spent_refresh_tokens_expiry ON spent_refresh_tokens (grant_expires_at);
