-- Recurring tasks (a schedule on the live occurrence, a series id on every
-- occurrence), webhook endpoints and their deliveries, and the stale-run
-- announcements of the minute cron.
ALTER TABLE tasks ADD COLUMN recurrence TEXT;
ALTER TABLE tasks ADD COLUMN series_id TEXT;
CREATE INDEX IF NOT EXISTS tasks_series ON tasks (series_id, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS tasks_series_rule ON tasks (series_id) WHERE recurrence IS NOT NULL AND trash_id IS NULL;
CREATE INDEX IF NOT EXISTS runs_status_last_event ON runs (status, last_event_at);

CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  secret_prefix TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_account ON webhooks (account_id, created_at);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  delivered_at TEXT,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_created ON webhook_deliveries (created_at);

CREATE TABLE IF NOT EXISTS stale_run_notices (
  run_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  last_event_at TEXT NOT NULL,
  event_id TEXT NOT NULL,
  notified_at TEXT NOT NULL
);
