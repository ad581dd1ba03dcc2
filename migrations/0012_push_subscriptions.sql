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

-- A moving account's devices and their deliveries are fenced like its other rows (0011_move_fence.sql).
CREATE TRIGGER IF NOT EXISTS move_fence_push_subscriptions_insert BEFORE INSERT ON push_subscriptions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_subscriptions_update BEFORE UPDATE ON push_subscriptions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_subscriptions_delete BEFORE DELETE ON push_subscriptions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_deliveries_insert BEFORE INSERT ON push_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_deliveries_update BEFORE UPDATE ON push_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_deliveries_delete BEFORE DELETE ON push_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
