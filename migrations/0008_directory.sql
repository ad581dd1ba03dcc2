-- The directory: which database holds each account (a deployment may have
-- several D1 databases; the first one keeps the directory), and what arrives
-- without an account (a sign-in email, the hash of a token made before tokens
-- carried their account) → the account. Every account so far lives here, in the first one.
CREATE TABLE IF NOT EXISTS directory_accounts (
  account_id TEXT PRIMARY KEY,
  shard TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS directory_keys (
  kind TEXT NOT NULL CHECK (kind IN ('email', 'token')),
  key TEXT NOT NULL,
  account_id TEXT NOT NULL,
  PRIMARY KEY (kind, key)
);
CREATE INDEX IF NOT EXISTS directory_keys_account ON directory_keys (account_id);
INSERT OR IGNORE INTO directory_accounts (account_id, shard, updated_at)
  SELECT id, 'DB', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM accounts;
INSERT OR IGNORE INTO directory_keys (kind, key, account_id)
  SELECT 'email', email, account_id FROM people;
