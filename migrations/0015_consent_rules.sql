-- The consent rules enforced where rows are written (docs/approvals-and-claims.md,
-- C1–C5): who closed a task and who archived a project, a withdrawn request, the
-- caller of each write batch, and the triggers that hold every batch to the rules.
ALTER TABLE tasks ADD COLUMN closed_by TEXT;
ALTER TABLE tasks ADD COLUMN last_block_reason TEXT;
ALTER TABLE tasks ADD COLUMN last_block_by TEXT;
ALTER TABLE tasks ADD COLUMN last_block_at TEXT;
ALTER TABLE projects ADD COLUMN archived_by TEXT;
-- A task done through a person's approval was closed by a person.
UPDATE tasks SET closed_by = 'human'
 WHERE status = 'done' AND EXISTS (SELECT 1 FROM approvals a WHERE a.task_id = tasks.id AND a.status = 'approved' AND a.kind = 'signoff');

-- approvals gains the status `withdrawn` (a CHECK changes only with the table).
CREATE TABLE approvals_next (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'closed', 'withdrawn')),
  question TEXT NOT NULL DEFAULT '',
  requested_by TEXT NOT NULL,
  requested_by_token TEXT NOT NULL,
  decided_by TEXT,
  reason TEXT,
  created_at TEXT NOT NULL,
  decided_at TEXT,
  kind TEXT NOT NULL DEFAULT 'signoff' CHECK (kind IN ('question', 'signoff'))
);
INSERT INTO approvals_next (id, account_id, task_id, status, question, requested_by, requested_by_token, decided_by, reason, created_at, decided_at, kind)
  SELECT id, account_id, task_id, status, question, requested_by, requested_by_token, decided_by, reason, created_at, decided_at, kind FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_next RENAME TO approvals;
CREATE UNIQUE INDEX IF NOT EXISTS approvals_one_pending ON approvals (task_id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS approvals_account_status ON approvals (account_id, status, created_at);
CREATE INDEX IF NOT EXISTS approvals_task ON approvals (task_id, created_at);
-- The rebuilt table keeps the move fence of 0011_move_fence.sql.
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

-- The consent rules (docs/approvals-and-claims.md, C1–C5), enforced where rows
-- are written. Every batch of a tool call starts by recording its caller here
-- and ends by removing it (src/mcp/engine.ts), so inside a batch the triggers
-- below know who writes; a batch without a caller (the jobs, the admin CLI, a
-- move) is the server's own. A trigger refuses with a code that the engine
-- turns into a message saying what to do instead.
CREATE TABLE IF NOT EXISTS call_actor (
  batch TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('human', 'agent')),
  name TEXT NOT NULL,
  now TEXT NOT NULL
);

-- Tasks held by someone other than the agent writing now: in progress with a
-- claim that has not lapsed, blocked, or awaiting sign-off, assigned to another
-- agent or to the person (C1). Empty unless an agent is writing.
CREATE VIEW IF NOT EXISTS held_by_other AS
  SELECT h.id AS task_id, h.account_id AS account_id, h.project_id AS project_id, h.assignee AS holder
    FROM call_actor a JOIN tasks h
      ON h.assignee IS NOT NULL AND h.assignee <> a.name AND h.trash_id IS NULL
     AND (h.status IN ('blocked', 'awaiting_approval') OR (h.status = 'in_progress' AND (h.claim_expires_at IS NULL OR h.claim_expires_at > a.now)))
   WHERE a.kind = 'agent';

-- C1: a held task's row, its place in the tree and its parts change only by its holder or a person.
CREATE TRIGGER IF NOT EXISTS consent_task_held BEFORE UPDATE ON tasks
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND (OLD.project_id IS NOT NEW.project_id OR OLD.parent_id IS NOT NEW.parent_id OR OLD.title IS NOT NEW.title
    OR OLD.notes IS NOT NEW.notes OR OLD.status IS NOT NEW.status OR OLD.priority IS NOT NEW.priority OR OLD.due_at IS NOT NEW.due_at
    OR OLD.estimate_minutes IS NOT NEW.estimate_minutes OR OLD.assignee IS NOT NEW.assignee OR OLD.auto_ok IS NOT NEW.auto_ok
    OR OLD.blocked_reason IS NOT NEW.blocked_reason OR OLD.status_before_block IS NOT NEW.status_before_block
    OR OLD.snoozed_until IS NOT NEW.snoozed_until OR OLD.completed_at IS NOT NEW.completed_at OR OLD.trash_id IS NOT NEW.trash_id
    OR OLD.recurrence IS NOT NEW.recurrence OR OLD.series_id IS NOT NEW.series_id
    OR OLD.claim_expires_at IS NOT NEW.claim_expires_at OR OLD.claim_lease_minutes IS NOT NEW.claim_lease_minutes)
  AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_child_moved BEFORE UPDATE OF parent_id, project_id, trash_id ON tasks
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND (OLD.parent_id IS NOT NEW.parent_id OR OLD.project_id IS NOT NEW.project_id OR OLD.trash_id IS NOT NEW.trash_id)
  AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.parent_id, NEW.parent_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_child_added BEFORE INSERT ON tasks
WHEN NEW.parent_id IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.parent_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_project_held BEFORE UPDATE OF archived_at, trash_id ON projects
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND ((OLD.archived_at IS NULL AND NEW.archived_at IS NOT NULL) OR (OLD.trash_id IS NULL AND NEW.trash_id IS NOT NULL))
  AND EXISTS (SELECT 1 FROM held_by_other WHERE account_id = OLD.account_id AND project_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_steps_insert BEFORE INSERT ON steps
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_steps_update BEFORE UPDATE ON steps
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_steps_delete BEFORE DELETE ON steps
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_runs_insert BEFORE INSERT ON runs
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_runs_update BEFORE UPDATE ON runs
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_runs_delete BEFORE DELETE ON runs
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_approvals_insert BEFORE INSERT ON approvals
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_approvals_update BEFORE UPDATE ON approvals
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_approvals_delete BEFORE DELETE ON approvals
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_labels_insert BEFORE INSERT ON task_labels
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_labels_update BEFORE UPDATE ON task_labels
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_labels_delete BEFORE DELETE ON task_labels
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_calendar_links_insert BEFORE INSERT ON calendar_links
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_calendar_links_update BEFORE UPDATE ON calendar_links
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_calendar_links_delete BEFORE DELETE ON calendar_links
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_dependencies_insert BEFORE INSERT ON task_dependencies
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_dependencies_update BEFORE UPDATE ON task_dependencies
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_dependencies_delete BEFORE DELETE ON task_dependencies
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;

-- C2: consent fields are a person's: a task's auto-OK (a new task by an agent
-- takes its project's or the account's default, its parent's or its series'),
-- a project's default, the account's settings, pausing agents, revoking tokens.
CREATE TRIGGER IF NOT EXISTS consent_auto_ok_new BEFORE INSERT ON tasks
WHEN NEW.auto_ok = 1 AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND coalesce((SELECT default_auto_ok FROM projects WHERE id = NEW.project_id AND account_id = NEW.account_id),
               (SELECT default_auto_ok FROM accounts WHERE id = NEW.account_id), 0) <> 1
  AND NOT EXISTS (SELECT 1 FROM tasks p WHERE p.id = NEW.parent_id AND p.auto_ok = 1)
  AND NOT EXISTS (SELECT 1 FROM tasks s WHERE NEW.series_id IS NOT NULL AND s.series_id = NEW.series_id AND s.auto_ok = 1)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_auto_ok BEFORE UPDATE OF auto_ok ON tasks
WHEN OLD.auto_ok IS NOT NEW.auto_ok AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_project_default_new BEFORE INSERT ON projects
WHEN NEW.default_auto_ok IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_project_default BEFORE UPDATE OF default_auto_ok ON projects
WHEN OLD.default_auto_ok IS NOT NEW.default_auto_ok AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_account_settings BEFORE UPDATE ON accounts
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND (OLD.name IS NOT NEW.name OR OLD.time_zone IS NOT NEW.time_zone OR OLD.default_auto_ok IS NOT NEW.default_auto_ok
    OR OLD.trash_retention_days IS NOT NEW.trash_retention_days OR OLD.activity_retention_days IS NOT NEW.activity_retention_days)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_agent_pause BEFORE UPDATE OF paused_at ON agents
WHEN OLD.paused_at IS NOT NEW.paused_at AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_token_revoke BEFORE UPDATE OF revoked_at ON tokens
WHEN OLD.revoked_at IS NOT NEW.revoked_at AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;

-- C3: a pending request is decided only by a person; the agent that asked may withdraw it.
CREATE TRIGGER IF NOT EXISTS consent_decision BEFORE UPDATE OF status ON approvals
WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent' AND NOT (NEW.status = 'withdrawn' AND name = OLD.requested_by))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:decision');
END;

-- C4: agents do not undo what a person decided: a task a person completed,
-- approved or cancelled, an item a person trashed, a project a person archived.
CREATE TRIGGER IF NOT EXISTS consent_closed_by AFTER UPDATE OF status ON tasks
WHEN (NEW.status IN ('done', 'cancelled')) <> (OLD.status IN ('done', 'cancelled'))
BEGIN
  UPDATE tasks SET closed_by = CASE WHEN NEW.status IN ('done', 'cancelled') THEN (SELECT CASE kind WHEN 'human' THEN 'human' ELSE name END FROM call_actor) END
   WHERE rid = NEW.rid;
END;
CREATE TRIGGER IF NOT EXISTS consent_reopen BEFORE UPDATE OF status ON tasks
WHEN OLD.status IN ('done', 'cancelled') AND NEW.status <> OLD.status AND OLD.closed_by = 'human'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_restore BEFORE DELETE ON trash
WHEN OLD.deleted_by = 'human' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_archived_by AFTER UPDATE OF archived_at ON projects
WHEN OLD.archived_at IS NOT NEW.archived_at
BEGIN
  UPDATE projects SET archived_by = CASE WHEN NEW.archived_at IS NOT NULL THEN (SELECT CASE kind WHEN 'human' THEN 'human' ELSE name END FROM call_actor) END
   WHERE id = NEW.id;
END;
CREATE TRIGGER IF NOT EXISTS consent_unarchive BEFORE UPDATE OF archived_at ON projects
WHEN OLD.archived_at IS NOT NULL AND NEW.archived_at IS NULL AND OLD.archived_by = 'human'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;

-- C6: a block's reason ends with the block, and stays readable as the task's last block.
CREATE TRIGGER IF NOT EXISTS tasks_last_block AFTER UPDATE OF blocked_reason ON tasks
WHEN NEW.blocked_reason IS NOT NULL AND NEW.blocked_reason IS NOT OLD.blocked_reason
BEGIN
  UPDATE tasks SET last_block_reason = NEW.blocked_reason,
         last_block_by = (SELECT CASE kind WHEN 'human' THEN 'human' ELSE name END FROM call_actor),
         last_block_at = coalesce((SELECT now FROM call_actor), NEW.updated_at)
   WHERE rid = NEW.rid;
END;

-- An agent completes no task that waits on unfinished work (what it depends on, not yet done or
-- cancelled); a person may. The refusal names what it waits on.
CREATE TRIGGER IF NOT EXISTS consent_waits BEFORE UPDATE OF status ON tasks
WHEN NEW.status IN ('done', 'awaiting_approval') AND OLD.status NOT IN ('done', 'awaiting_approval')
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks w ON w.id = d.depends_on_id
               WHERE d.task_id = OLD.id AND d.account_id = OLD.account_id AND w.status NOT IN ('done', 'cancelled') AND w.trash_id IS NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:waits');
END;

-- C5: a paused agent is given nothing, by anyone, through any route.
CREATE TRIGGER IF NOT EXISTS consent_paused_new BEFORE INSERT ON tasks
WHEN NEW.assignee IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor)
  AND EXISTS (SELECT 1 FROM agents WHERE account_id = NEW.account_id AND name = NEW.assignee AND paused_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:paused');
END;
CREATE TRIGGER IF NOT EXISTS consent_paused BEFORE UPDATE OF assignee ON tasks
WHEN NEW.assignee IS NOT NULL AND OLD.assignee IS NOT NEW.assignee AND EXISTS (SELECT 1 FROM call_actor)
  AND EXISTS (SELECT 1 FROM agents WHERE account_id = NEW.account_id AND name = NEW.assignee AND paused_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:paused');
END;
