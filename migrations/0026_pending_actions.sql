-- Pending actions: a call an agent's policy asks the person about waits here,
-- nothing run, until a person approves it (the server runs it once, as the
-- agent, and keeps the result), rejects it, or it expires. Only a person
-- decides one; the agent that asked may withdraw it. Like every table the
-- consent rules cover, a batch that names no caller writes none of it.
CREATE TABLE pending_actions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  requested_by TEXT NOT NULL,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  arguments_hash TEXT NOT NULL,
  task_id TEXT,
  project_id TEXT,
  rule TEXT NOT NULL,
  reason TEXT NOT NULL,
  preview TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'withdrawn')),
  decided_by TEXT,
  decided_by_token TEXT,
  -- The person (people.id) who decided it, when a person's call did.
  decided_by_person_id TEXT,
  decided_at TEXT,
  note TEXT,
  result TEXT,
  ran_at TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE UNIQUE INDEX pending_actions_one_call ON pending_actions (token_id, tool, arguments_hash) WHERE status = 'pending';
CREATE INDEX pending_actions_account_status ON pending_actions (account_id, status, created_at);
CREATE INDEX pending_actions_expiry ON pending_actions (status, expires_at);
CREATE TRIGGER consent_action_decision BEFORE UPDATE OF status ON pending_actions
WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent'
                AND NOT (NEW.status = 'withdrawn' AND name = OLD.requested_by)
                AND NOT (NEW.status = 'expired' AND OLD.expires_at <= call_actor.now))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:decision');
END;
CREATE TRIGGER consent_action_new BEFORE INSERT ON pending_actions
WHEN NEW.status <> 'pending' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:decision');
END;
CREATE TRIGGER nocaller_pending_actions_insert BEFORE INSERT ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER nocaller_pending_actions_update BEFORE UPDATE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER nocaller_pending_actions_delete BEFORE DELETE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER move_fence_pending_actions_insert BEFORE INSERT ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER move_fence_pending_actions_update BEFORE UPDATE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER move_fence_pending_actions_delete BEFORE DELETE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
