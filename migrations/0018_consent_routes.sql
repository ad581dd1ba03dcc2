-- Consent rules by the routes a held task is reached through (docs/approvals-and-claims.md):
-- who added a dependency (a person's gate is lifted only by a person), a trashed dependency
-- counts as unfinished, "held" as one view that a restore from the trash reads too, a label
-- rename, and a project the person archived.
ALTER TABLE task_dependencies ADD COLUMN added_by TEXT NOT NULL DEFAULT 'human';
-- A link an agent's add_dependency wrote is the agent's; every other link counts as the person's.
UPDATE task_dependencies SET added_by = (
    SELECT a.actor FROM activity a
     WHERE a.account_id = task_dependencies.account_id AND a.target_id = task_dependencies.task_id AND a.tool = 'add_dependency'
       AND instr(a.summary, task_dependencies.depends_on_id) > 0
     ORDER BY a.created_at DESC, a.id DESC LIMIT 1)
 WHERE EXISTS (
    SELECT 1 FROM activity a
     WHERE a.account_id = task_dependencies.account_id AND a.target_id = task_dependencies.task_id AND a.tool = 'add_dependency'
       AND instr(a.summary, task_dependencies.depends_on_id) > 0);
DROP VIEW IF EXISTS held_by_other;

CREATE VIEW IF NOT EXISTS holds AS
  SELECT h.id AS task_id, h.account_id AS account_id, h.project_id AS project_id, h.assignee AS holder, h.trash_id AS trash_id
    FROM call_actor a JOIN tasks h
      ON h.assignee IS NOT NULL AND h.assignee <> a.name
     AND (h.status IN ('blocked', 'awaiting_approval') OR (h.status = 'in_progress' AND (h.claim_expires_at IS NULL OR h.claim_expires_at > a.now)))
   WHERE a.kind = 'agent';
CREATE VIEW IF NOT EXISTS held_by_other AS
  SELECT task_id, account_id, project_id, holder FROM holds WHERE trash_id IS NULL;
DROP TRIGGER IF EXISTS consent_waits;
CREATE TRIGGER IF NOT EXISTS consent_waits BEFORE UPDATE OF status ON tasks
WHEN NEW.status IN ('done', 'awaiting_approval') AND OLD.status NOT IN ('done', 'awaiting_approval')
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks w ON w.id = d.depends_on_id
               WHERE d.task_id = OLD.id AND d.account_id = OLD.account_id AND w.status NOT IN ('done', 'cancelled'))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:waits');
END;
CREATE TRIGGER IF NOT EXISTS consent_gate_removed BEFORE DELETE ON task_dependencies
WHEN OLD.added_by = 'human' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM tasks w WHERE w.id = OLD.task_id AND w.trash_id IS NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:gate');
END;
CREATE TRIGGER IF NOT EXISTS consent_label_renamed BEFORE UPDATE OF name ON labels
WHEN OLD.name IS NOT NEW.name AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM task_labels tl JOIN held_by_other h ON h.task_id = tl.task_id WHERE tl.label_id = OLD.id AND tl.account_id = OLD.account_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_restored BEFORE UPDATE OF trash_id ON tasks
WHEN OLD.trash_id IS NOT NULL AND NEW.trash_id IS NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM holds WHERE task_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_archived_new BEFORE INSERT ON tasks
WHEN NEW.project_id IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM projects p WHERE p.id = NEW.project_id AND p.archived_at IS NOT NULL AND p.archived_by = 'human')
  AND NOT EXISTS (SELECT 1 FROM tasks s WHERE NEW.series_id IS NOT NULL AND s.series_id = NEW.series_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_archived_move BEFORE UPDATE OF project_id ON tasks
WHEN OLD.project_id IS NOT NEW.project_id AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM projects p WHERE p.id IN (OLD.project_id, NEW.project_id) AND p.archived_at IS NOT NULL AND p.archived_by = 'human')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_archived_edit BEFORE UPDATE OF name, description ON projects
WHEN (OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description)
  AND OLD.archived_at IS NOT NULL AND OLD.archived_by = 'human' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
