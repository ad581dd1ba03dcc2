-- C1 for a call that would change nothing: an agent's claim-guarded call first inserts the task it
-- names here (src/mcp/engine.ts), and is refused on a task another holds as a call that changes it
-- would be, never answered as if it acted. Nothing is ever stored.
CREATE TABLE IF NOT EXISTS named_task (task_id TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS consent_named_task BEFORE INSERT ON named_task
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim') WHERE EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id);
  SELECT RAISE(IGNORE);
END;
