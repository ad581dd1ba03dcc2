-- People who sign in, their sessions, setup links and sign-in throttling; the
-- columns that make a tokens row an app connected through OAuth.
ALTER TABLE tokens ADD COLUMN person_id TEXT;
ALTER TABLE tokens ADD COLUMN client_id TEXT;
ALTER TABLE tokens ADD COLUMN client_name TEXT;
ALTER TABLE tokens ADD COLUMN redirect_uri TEXT;
ALTER TABLE tokens ADD COLUMN grant_id TEXT;
CREATE INDEX IF NOT EXISTS tokens_person_client ON tokens (person_id, client_id);

-- People who sign in (an account's owners) with an email and a password
-- (PBKDF2-SHA256, see src/domain/passwords.ts); NULL until set through a setup link.
CREATE TABLE IF NOT EXISTS people (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS people_account ON people (account_id);

-- One-time links where a person sets a password; only the secret's SHA-256 is kept.
CREATE TABLE IF NOT EXISTS setup_links (
  hash TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES people(id),
  account_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
);
CREATE INDEX IF NOT EXISTS setup_links_person ON setup_links (person_id);

-- Signed-in browsers: the session id's SHA-256 (the id itself lives only in the cookie).
CREATE TABLE IF NOT EXISTS sessions (
  hash TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES people(id),
  account_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_person ON sessions (person_id);
CREATE INDEX IF NOT EXISTS sessions_expiry ON sessions (expires_at);

-- Failed sign-ins, for throttling: key is the SHA-256 of `email:<address>` or `ip:<address>`.
CREATE TABLE IF NOT EXISTS signin_failures (
  key TEXT NOT NULL,
  failed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS signin_failures_key ON signin_failures (key, failed_at);
CREATE INDEX IF NOT EXISTS signin_failures_time ON signin_failures (failed_at);
