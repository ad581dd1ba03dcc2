-- Web Push: the browsers and phones a person asked to be notified on, and
-- which device has had which event (so a retried message reaches each once).
CREATE TABLE IF NOT EXISTS push_subscriptions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  person_id TEXT NOT NULL REFERENCES people(id),
  endpoint TEXT NOT NULL UNIQUE,
  p256dh TEXT NOT NULL,
  auth TEXT NOT NULL,
  origin TEXT NOT NULL,
  label TEXT NOT NULL,
  events TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_delivered_at TEXT,
  last_failure_at TEXT,
  last_error TEXT
);
CREATE INDEX IF NOT EXISTS push_subscriptions_account ON push_subscriptions (account_id, created_at);
CREATE TABLE IF NOT EXISTS push_deliveries (
  subscription_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  delivered_at TEXT NOT NULL,
  PRIMARY KEY (subscription_id, event_id)
);
CREATE INDEX IF NOT EXISTS push_deliveries_delivered ON push_deliveries (delivered_at);
