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
);
-- While an account moves, its rows here are fenced like every other table's (schema.sql, move_fence_*).
CREATE TRIGGER IF NOT EXISTS move_fence_read_bookmarks_insert BEFORE INSERT ON read_bookmarks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_read_bookmarks_update BEFORE UPDATE ON read_bookmarks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_read_bookmarks_delete BEFORE DELETE ON read_bookmarks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
