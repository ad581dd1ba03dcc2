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
