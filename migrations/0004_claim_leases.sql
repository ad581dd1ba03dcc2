-- Claim leases: when an agent's claim runs out unless renewed, and for how
-- long each renewal grants it; the announcements of lapsed claims.
-- Claims taken before this migration keep no lease (they never lapse).
ALTER TABLE tasks ADD COLUMN claim_expires_at TEXT;
ALTER TABLE tasks ADD COLUMN claim_lease_minutes INTEGER;
CREATE INDEX IF NOT EXISTS tasks_claim_expiry ON tasks (claim_expires_at) WHERE claim_expires_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS claim_lapse_notices (
  task_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  expired_at TEXT NOT NULL,
  event_id TEXT NOT NULL,
  notified_at TEXT NOT NULL
);
