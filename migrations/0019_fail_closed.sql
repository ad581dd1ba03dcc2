-- Fail closed (docs/approvals-and-claims.md): a batch that records no caller in
-- call_actor is refused on every table the consent rules cover, unless it names
-- itself as the server's (kind 'server', a name such as 'server:purge'). Before
-- this, a batch without a caller counted as the server's own and passed every rule.
--
-- Later data migrations that write tasks, projects, steps, runs, approvals,
-- task_labels, calendar_links, task_dependencies, labels or trash must record a
-- server caller first and remove it last, inside the migration's own file:
--   INSERT INTO call_actor (batch, kind, name, now) VALUES ('mig_00NN', 'server', 'server:migration', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
--   ... the data changes ...
--   DELETE FROM call_actor WHERE batch = 'mig_00NN';
-- (0017 and 0018 wrote rows with no caller; they run before this file.)

-- call_actor gains the kind 'server'. It is empty between batches, so it is made
-- again; the views that read it are dropped first and made again after it, as they were.
DROP VIEW IF EXISTS held_by_other;
DROP VIEW IF EXISTS holds;
DROP TABLE IF EXISTS call_actor;
CREATE TABLE IF NOT EXISTS call_actor (
  batch TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('human', 'agent', 'server')),
  name TEXT NOT NULL,
  now TEXT NOT NULL
);
CREATE VIEW IF NOT EXISTS holds AS
  SELECT h.id AS task_id, h.account_id AS account_id, h.project_id AS project_id, h.assignee AS holder, h.trash_id AS trash_id
    FROM call_actor a JOIN tasks h
      ON h.assignee IS NOT NULL AND h.assignee <> a.name
     AND (h.status IN ('blocked', 'awaiting_approval') OR (h.status = 'in_progress' AND (h.claim_expires_at IS NULL OR h.claim_expires_at > a.now)))
   WHERE a.kind = 'agent';
CREATE VIEW IF NOT EXISTS held_by_other AS
  SELECT task_id, account_id, project_id, holder FROM holds WHERE trash_id IS NULL;

-- A server caller is recorded as nobody: who closed, archived or blocked stays NULL, as it did for a batch with no caller.
DROP TRIGGER IF EXISTS consent_closed_by;
CREATE TRIGGER IF NOT EXISTS consent_closed_by AFTER UPDATE OF status ON tasks
WHEN (NEW.status IN ('done', 'cancelled')) <> (OLD.status IN ('done', 'cancelled'))
BEGIN
  UPDATE tasks SET closed_by = CASE WHEN NEW.status IN ('done', 'cancelled') THEN (SELECT CASE kind WHEN 'human' THEN 'human' WHEN 'agent' THEN name END FROM call_actor) END
   WHERE rid = NEW.rid;
END;
DROP TRIGGER IF EXISTS consent_archived_by;
CREATE TRIGGER IF NOT EXISTS consent_archived_by AFTER UPDATE OF archived_at ON projects
WHEN OLD.archived_at IS NOT NEW.archived_at
BEGIN
  UPDATE projects SET archived_by = CASE WHEN NEW.archived_at IS NOT NULL THEN (SELECT CASE kind WHEN 'human' THEN 'human' WHEN 'agent' THEN name END FROM call_actor) END
   WHERE id = NEW.id;
END;
DROP TRIGGER IF EXISTS tasks_last_block;
CREATE TRIGGER IF NOT EXISTS tasks_last_block AFTER UPDATE OF blocked_reason ON tasks
WHEN NEW.blocked_reason IS NOT NULL AND NEW.blocked_reason IS NOT OLD.blocked_reason
BEGIN
  UPDATE tasks SET last_block_reason = NEW.blocked_reason,
         last_block_by = (SELECT CASE kind WHEN 'human' THEN 'human' WHEN 'agent' THEN name END FROM call_actor),
         last_block_at = coalesce((SELECT now FROM call_actor), NEW.updated_at)
   WHERE rid = NEW.rid;
END;
-- C5 holds people and agents; the server's writers copy, restore or seed rows as they are.
DROP TRIGGER IF EXISTS consent_paused_new;
CREATE TRIGGER IF NOT EXISTS consent_paused_new BEFORE INSERT ON tasks
WHEN NEW.assignee IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind <> 'server')
  AND EXISTS (SELECT 1 FROM agents WHERE account_id = NEW.account_id AND name = NEW.assignee AND paused_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:paused');
END;
DROP TRIGGER IF EXISTS consent_paused;
CREATE TRIGGER IF NOT EXISTS consent_paused BEFORE UPDATE OF assignee ON tasks
WHEN NEW.assignee IS NOT NULL AND OLD.assignee IS NOT NEW.assignee AND EXISTS (SELECT 1 FROM call_actor WHERE kind <> 'server')
  AND EXISTS (SELECT 1 FROM agents WHERE account_id = NEW.account_id AND name = NEW.assignee AND paused_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:paused');
END;

-- The refusal of a batch with no caller.
CREATE TRIGGER IF NOT EXISTS nocaller_tasks_insert BEFORE INSERT ON tasks WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_tasks_update BEFORE UPDATE ON tasks WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_tasks_delete BEFORE DELETE ON tasks WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_projects_insert BEFORE INSERT ON projects WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_projects_update BEFORE UPDATE ON projects WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_projects_delete BEFORE DELETE ON projects WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_steps_insert BEFORE INSERT ON steps WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_steps_update BEFORE UPDATE ON steps WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_steps_delete BEFORE DELETE ON steps WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_runs_insert BEFORE INSERT ON runs WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_runs_update BEFORE UPDATE ON runs WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_runs_delete BEFORE DELETE ON runs WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_approvals_insert BEFORE INSERT ON approvals WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_approvals_update BEFORE UPDATE ON approvals WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_approvals_delete BEFORE DELETE ON approvals WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_labels_insert BEFORE INSERT ON task_labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_labels_update BEFORE UPDATE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_labels_delete BEFORE DELETE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_calendar_links_insert BEFORE INSERT ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_calendar_links_update BEFORE UPDATE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_calendar_links_delete BEFORE DELETE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_dependencies_insert BEFORE INSERT ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_dependencies_update BEFORE UPDATE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_dependencies_delete BEFORE DELETE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_labels_insert BEFORE INSERT ON labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_labels_update BEFORE UPDATE ON labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_labels_delete BEFORE DELETE ON labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_trash_insert BEFORE INSERT ON trash WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_trash_update BEFORE UPDATE ON trash WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_trash_delete BEFORE DELETE ON trash WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
