-- While an account moves (src/db/move-account.ts) its rows are fenced in the
-- database itself: every insert, update and delete of a row of an account whose
-- `moving_to` is set fails with 'account moving', whatever route it came by (a
-- tool, a page, a job, the admin CLI, a stale cached route). Only the move's own
-- batches pass: each begins by inserting the one row of move_permit and ends by
-- deleting it, inside the same transaction, so no other writer ever sees it.
-- Reads' bookkeeping (tokens.last_used_at, agents.last_seen_at) is not fenced,
-- nor is ending a session (a sign-out ends it in every database).
CREATE TABLE IF NOT EXISTS move_permit (
  held INTEGER PRIMARY KEY CHECK (held = 1)
);
CREATE TRIGGER IF NOT EXISTS move_fence_agents_insert BEFORE INSERT ON agents WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_agents_update BEFORE UPDATE OF id, account_id, name, paused_at, paused_by, created_at ON agents WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_agents_delete BEFORE DELETE ON agents WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tokens_insert BEFORE INSERT ON tokens WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tokens_update BEFORE UPDATE OF id, account_id, kind, scope, agent_id, label, hash, prefix, created_at, expires_at, revoked_at, person_id, client_id, client_name, redirect_uri, grant_id ON tokens WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tokens_delete BEFORE DELETE ON tokens WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_projects_insert BEFORE INSERT ON projects WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_projects_update BEFORE UPDATE ON projects WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_projects_delete BEFORE DELETE ON projects WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tasks_insert BEFORE INSERT ON tasks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tasks_update BEFORE UPDATE ON tasks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tasks_delete BEFORE DELETE ON tasks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_dependencies_insert BEFORE INSERT ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_dependencies_update BEFORE UPDATE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_dependencies_delete BEFORE DELETE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_steps_insert BEFORE INSERT ON steps WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_steps_update BEFORE UPDATE ON steps WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_steps_delete BEFORE DELETE ON steps WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_comments_insert BEFORE INSERT ON comments WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_comments_update BEFORE UPDATE ON comments WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_comments_delete BEFORE DELETE ON comments WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_labels_insert BEFORE INSERT ON labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_labels_update BEFORE UPDATE ON labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_labels_delete BEFORE DELETE ON labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_labels_insert BEFORE INSERT ON task_labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_labels_update BEFORE UPDATE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_labels_delete BEFORE DELETE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_runs_insert BEFORE INSERT ON runs WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_runs_update BEFORE UPDATE ON runs WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_runs_delete BEFORE DELETE ON runs WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_run_events_insert BEFORE INSERT ON run_events WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_run_events_update BEFORE UPDATE ON run_events WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_run_events_delete BEFORE DELETE ON run_events WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_approvals_insert BEFORE INSERT ON approvals WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_approvals_update BEFORE UPDATE ON approvals WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_approvals_delete BEFORE DELETE ON approvals WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_calendar_links_insert BEFORE INSERT ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_calendar_links_update BEFORE UPDATE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_calendar_links_delete BEFORE DELETE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_connectors_insert BEFORE INSERT ON connectors WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_connectors_update BEFORE UPDATE ON connectors WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_connectors_delete BEFORE DELETE ON connectors WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_trash_insert BEFORE INSERT ON trash WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_trash_update BEFORE UPDATE ON trash WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_trash_delete BEFORE DELETE ON trash WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_activity_insert BEFORE INSERT ON activity WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_activity_update BEFORE UPDATE ON activity WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_activity_delete BEFORE DELETE ON activity WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_idempotency_keys_insert BEFORE INSERT ON idempotency_keys WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_idempotency_keys_update BEFORE UPDATE ON idempotency_keys WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_idempotency_keys_delete BEFORE DELETE ON idempotency_keys WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhooks_insert BEFORE INSERT ON webhooks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhooks_update BEFORE UPDATE ON webhooks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhooks_delete BEFORE DELETE ON webhooks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhook_deliveries_insert BEFORE INSERT ON webhook_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhook_deliveries_update BEFORE UPDATE ON webhook_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhook_deliveries_delete BEFORE DELETE ON webhook_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_stale_run_notices_insert BEFORE INSERT ON stale_run_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_stale_run_notices_update BEFORE UPDATE ON stale_run_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_stale_run_notices_delete BEFORE DELETE ON stale_run_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_claim_lapse_notices_insert BEFORE INSERT ON claim_lapse_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_claim_lapse_notices_update BEFORE UPDATE ON claim_lapse_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_claim_lapse_notices_delete BEFORE DELETE ON claim_lapse_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_people_insert BEFORE INSERT ON people WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_people_update BEFORE UPDATE ON people WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_people_delete BEFORE DELETE ON people WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_setup_links_insert BEFORE INSERT ON setup_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_setup_links_update BEFORE UPDATE ON setup_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_setup_links_delete BEFORE DELETE ON setup_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_sessions_insert BEFORE INSERT ON sessions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_sessions_update BEFORE UPDATE ON sessions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_accounts_update BEFORE UPDATE ON accounts WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND OLD.moving_to IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_accounts_delete BEFORE DELETE ON accounts WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND OLD.moving_to IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
