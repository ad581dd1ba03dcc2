-- What 0015_consent_rules.sql added columns for but could not fill: who closed
-- each finished task, who archived each archived project, and each blocked
-- task's block as its last block. The database's own history says who: the
-- activity rows of the tool that closed, archived or blocked the record (a
-- person's rows have the actor `human`; an agent's, its name and an agent's
-- token). Where nothing says who (no row, the activity purged by retention, a
-- reopen or unarchive after the last row, or a record the server changed
-- itself), the record counts as the person's: a person's decision must not
-- become undoable by an agent because its record is missing, while what an
-- agent closed stays closed until a person reopens it. Only NULL columns are
-- filled, so what the triggers of 0015 recorded since is kept.
--
-- Only data changes. No caller is recorded (call_actor is empty), so no
-- consent trigger refuses, and neither status nor archived_at nor
-- blocked_reason is set, so the triggers that record who closed, archived or
-- blocked do not fire. The fence of 0011_move_fence.sql would refuse the rows
-- of an account that is moving: the migration passes it as a move's own batch
-- does, with the permit row that lives only inside this file's transaction.
-- A move copying meanwhile sees its checksums differ and copies again.
INSERT OR IGNORE INTO move_permit (held) VALUES (1);

-- A finished task was closed by the agent of the last complete_task or
-- approve_task about it up to its completion, unless a person reopened or
-- approved it after that row (a reopen after it means something unrecorded
-- closed it again); otherwise by the person. A task done through an approved
-- sign-off has 'human' from 0015 already.
UPDATE tasks SET closed_by = coalesce((
  SELECT CASE
           WHEN c.actor <> 'human'
            AND EXISTS (SELECT 1 FROM tokens k WHERE k.id = c.token_id AND k.kind = 'agent')
            AND NOT EXISTS (SELECT 1 FROM activity r
                             WHERE r.target_id = c.target_id AND r.account_id = c.account_id
                               AND r.tool = 'reopen_task' AND r.created_at >= c.created_at)
            AND NOT EXISTS (SELECT 1 FROM approvals a
                             WHERE a.task_id = c.target_id AND a.account_id = c.account_id
                               AND a.status = 'approved' AND a.kind = 'signoff' AND a.decided_at >= c.created_at)
           THEN c.actor
         END
    FROM activity c
   WHERE c.target_id = tasks.id AND c.account_id = tasks.account_id
     AND c.tool IN ('complete_task', 'approve_task')
     AND c.created_at <= coalesce(tasks.completed_at, tasks.updated_at)
   ORDER BY c.created_at DESC, c.id DESC
   LIMIT 1), 'human')
 WHERE status IN ('done', 'cancelled') AND closed_by IS NULL;

-- An archived project was archived by the agent of the last archive_project
-- about it up to its archiving, unless it was unarchived after that row;
-- otherwise by the person.
UPDATE projects SET archived_by = coalesce((
  SELECT CASE
           WHEN c.actor <> 'human'
            AND EXISTS (SELECT 1 FROM tokens k WHERE k.id = c.token_id AND k.kind = 'agent')
            AND NOT EXISTS (SELECT 1 FROM activity r
                             WHERE r.target_id = c.target_id AND r.account_id = c.account_id
                               AND r.tool = 'unarchive_project' AND r.created_at >= c.created_at)
           THEN c.actor
         END
    FROM activity c
   WHERE c.target_id = projects.id AND c.account_id = projects.account_id
     AND c.tool = 'archive_project' AND c.created_at <= projects.archived_at
   ORDER BY c.created_at DESC, c.id DESC
   LIMIT 1), 'human')
 WHERE archived_at IS NOT NULL AND archived_by IS NULL;

-- A blocked task's block is its last block: its reason, by the caller of the
-- block_task that set it (the last one about the task, with no unblock_task
-- after it) at that call's time; otherwise by the person, at the task's last
-- change.
UPDATE tasks SET last_block_reason = blocked_reason,
       last_block_by = coalesce((
         SELECT CASE
                  WHEN c.actor <> 'human' AND EXISTS (SELECT 1 FROM tokens k WHERE k.id = c.token_id AND k.kind = 'agent') THEN c.actor
                  ELSE 'human'
                END
           FROM activity c
          WHERE c.target_id = tasks.id AND c.account_id = tasks.account_id AND c.tool = 'block_task' AND c.created_at <= tasks.updated_at
            AND NOT EXISTS (SELECT 1 FROM activity u
                             WHERE u.target_id = c.target_id AND u.account_id = c.account_id
                               AND u.tool = 'unblock_task' AND u.created_at >= c.created_at)
          ORDER BY c.created_at DESC, c.id DESC
          LIMIT 1), 'human'),
       last_block_at = coalesce((
         SELECT c.created_at
           FROM activity c
          WHERE c.target_id = tasks.id AND c.account_id = tasks.account_id AND c.tool = 'block_task' AND c.created_at <= tasks.updated_at
            AND NOT EXISTS (SELECT 1 FROM activity u
                             WHERE u.target_id = c.target_id AND u.account_id = c.account_id
                               AND u.tool = 'unblock_task' AND u.created_at >= c.created_at)
          ORDER BY c.created_at DESC, c.id DESC
          LIMIT 1), updated_at)
 WHERE blocked_reason IS NOT NULL AND last_block_reason IS NULL;

DELETE FROM move_permit;
