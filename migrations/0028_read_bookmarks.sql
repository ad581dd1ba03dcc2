-- Reads near the user: each caller's D1 bookmark after its latest write (src/db/read-sessions.ts), so that
-- its reads, served by a nearby replica once read replication is on, never start before that write.
-- No row is needed for what came before: a caller without one reads in a session of its own, and every
-- replica has long caught up with writes made before this version ran.
CREATE TABLE IF NOT EXISTS read_bookmarks (
  account_id TEXT NOT NULL,
  holder TEXT NOT NULL,
  bookmark TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (account_id, holder)
) WITHOUT ROWID;
