-- Per-agent policies (src/catalog/policy.ts): an agent's rules and a
-- connection's own, stored as JSON text. Every existing agent and token gets
-- NULL, no rules: it keeps exactly what its scope lets it do today. Only a
-- person sets, widens or removes a policy: an agent's batch is refused.
ALTER TABLE agents ADD COLUMN policy TEXT;
ALTER TABLE tokens ADD COLUMN policy TEXT;
CREATE TRIGGER consent_agent_policy BEFORE UPDATE OF policy ON agents
WHEN OLD.policy IS NOT NEW.policy AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER consent_token_policy BEFORE UPDATE OF policy ON tokens
WHEN OLD.policy IS NOT NEW.policy AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
-- A moving account's policies are fenced like its other rows (0011_move_fence.sql).
DROP TRIGGER IF EXISTS move_fence_agents_update;
CREATE TRIGGER move_fence_agents_update BEFORE UPDATE OF id, account_id, name, paused_at, paused_by, created_at, policy ON agents WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
DROP TRIGGER IF EXISTS move_fence_tokens_update;
CREATE TRIGGER move_fence_tokens_update BEFORE UPDATE OF id, account_id, kind, scope, agent_id, label, hash, prefix, created_at, expires_at, revoked_at, person_id, client_id, client_name, redirect_uri, grant_id, policy ON tokens WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
