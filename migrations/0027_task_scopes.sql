-- Task scopes: the areas a task works in (tasks.scope), so that a claim overlapping a held task's scope is refused; C1 holds the column like the task's other fields.
ALTER TABLE tasks ADD COLUMN scope TEXT;
-- claim_task without task_id: open tasks most urgent first (src/db/claim-next.ts), so the pick stops at the first ready one.
CREATE INDEX IF NOT EXISTS tasks_ready ON tasks (account_id, status, priority DESC, due_at IS NULL, due_at, created_at, id);
DROP TRIGGER IF EXISTS consent_task_held;
CREATE TRIGGER consent_task_held BEFORE UPDATE ON tasks
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND (OLD.project_id IS NOT NEW.project_id OR OLD.parent_id IS NOT NEW.parent_id OR OLD.title IS NOT NEW.title
    OR OLD.notes IS NOT NEW.notes OR OLD.status IS NOT NEW.status OR OLD.priority IS NOT NEW.priority OR OLD.due_at IS NOT NEW.due_at
    OR OLD.estimate_minutes IS NOT NEW.estimate_minutes OR OLD.assignee IS NOT NEW.assignee OR OLD.auto_ok IS NOT NEW.auto_ok
    OR OLD.blocked_reason IS NOT NEW.blocked_reason OR OLD.status_before_block IS NOT NEW.status_before_block
    OR OLD.snoozed_until IS NOT NEW.snoozed_until OR OLD.completed_at IS NOT NEW.completed_at OR OLD.trash_id IS NOT NEW.trash_id
    OR OLD.recurrence IS NOT NEW.recurrence OR OLD.series_id IS NOT NEW.series_id OR OLD.scope IS NOT NEW.scope
    OR OLD.claim_expires_at IS NOT NEW.claim_expires_at OR OLD.claim_lease_minutes IS NOT NEW.claim_lease_minutes)
  AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
