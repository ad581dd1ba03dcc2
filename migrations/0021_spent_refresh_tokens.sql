-- A refresh token is single-use, and its use is now recorded in D1 with one conditional
-- INSERT that exactly one of concurrent requests wins (src/oauth/refresh-replay.ts), in
-- place of a read and a write of the OAuth provider's KV record, which let the same token
-- be exchanged several times at once. Only the first database's rows are used. The KV keys
-- `refresh-retired:…` that recorded replaced tokens before are written no more but still read,
-- so a grant from before this migration keeps its rule: a token it replaced, presented again,
-- ends it. The keys expire by themselves with their grants.
CREATE TABLE spent_refresh_tokens (
  user_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  hash TEXT NOT NULL CHECK (length(hash) = 64 OR hash = 'replayed'),
  spent_at TEXT NOT NULL,
  grant_expires_at TEXT NOT NULL,
  PRIMARY KEY (user_id, grant_id, hash)
);
CREATE INDEX spent_refresh_tokens_expiry ON spent_refresh_tokens (grant_expires_at);
