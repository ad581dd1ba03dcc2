import type { CursorKey } from "./cursor.ts";
import { selectWaitedOnBy, selectWaitsOn } from "./dependencies.ts";
import { selectTaskLabels } from "./labels.ts";
import { selectTask, TASK_COLUMNS } from "./tasks.ts";
import { selectLatestAnswer } from "./approvals.ts";

/** What list_tasks filters by (and the console's task list). */
export interface TaskListFilter {
  projectId?: string;
  statuses?: readonly string[];
  label?: string;
  assignee?: string;
  unassigned?: boolean;
  dueAfter?: string;
  dueBefore?: string;
  /** Leave out tasks snoozed past this time. */
  hideSnoozedAt?: string;
  after: CursorKey | null;
  limit: number;
}

/** Live tasks of the account, newest first, filtered; fetches limit + 1 rows. */
export function selectTaskList(db: D1Database, accountId: string, f: TaskListFilter): D1PreparedStatement {
  const where = ["t.account_id = ?", "t.trash_id IS NULL"];
  const binds: unknown[] = [accountId];
  if (f.projectId) (where.push("t.project_id = ?"), binds.push(f.projectId));
  if (f.statuses) (where.push(`t.status IN (${f.statuses.map(() => "?").join(", ")})`), binds.push(...f.statuses));
  if (f.assignee) (where.push("t.assignee = ?"), binds.push(f.assignee));
  if (f.unassigned) where.push("t.assignee IS NULL");
  if (f.dueAfter) (where.push("t.due_at >= ?"), binds.push(f.dueAfter));
  if (f.dueBefore) (where.push("t.due_at < ?"), binds.push(f.dueBefore));
  if (f.hideSnoozedAt) (where.push("(t.snoozed_until IS NULL OR t.snoozed_until <= ?)"), binds.push(f.hideSnoozedAt));
  if (f.label) {
    where.push("EXISTS (SELECT 1 FROM task_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.task_id = t.id AND l.account_id = t.account_id AND l.name = ?)");
    binds.push(f.label);
  }
  if (f.after) (where.push("(t.created_at < ? OR (t.created_at = ? AND t.id < ?))"), binds.push(f.after.k, f.after.k, f.after.id));
  return db
    .prepare(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY t.created_at DESC, t.id DESC LIMIT ?`)
    .bind(...binds, f.limit + 1);
}

/**
 * Everything get_task shows, as named statements for one batch: the task, its
 * steps, labels, dependencies both ways, latest comments, recent runs, pending
 * approval and subtask count.
 */
export function taskDetailStatements(db: D1Database, a: string, taskId: string, latest = 5) {
  return {
    task: selectTask(db, a, taskId),
    steps: db.prepare("SELECT id, position, text, status FROM steps WHERE task_id = ? AND account_id = ? AND trash_id IS NULL ORDER BY position").bind(taskId, a),
    labels: selectTaskLabels(db, a, taskId),
    waitsOn: selectWaitsOn(db, a, taskId),
    blocks: selectWaitedOnBy(db, a, taskId),
    comments: db
      .prepare("SELECT id, author, body, created_at FROM comments WHERE task_id = ? AND account_id = ? AND trash_id IS NULL ORDER BY created_at DESC, id DESC LIMIT ?")
      .bind(taskId, a, latest),
    runs: db
      .prepare("SELECT r.id, g.name AS agent, r.status, r.started_at, r.finished_at FROM runs r JOIN agents g ON g.id = r.agent_id WHERE r.task_id = ? AND r.account_id = ? ORDER BY r.started_at DESC LIMIT ?")
      .bind(taskId, a, latest),
    approval: db
      .prepare("SELECT id, kind, question, requested_by, created_at, choices, accepts_words FROM approvals WHERE task_id = ? AND account_id = ? AND status = 'pending'")
      .bind(taskId, a),
    answer: selectLatestAnswer(db, a, taskId),
    subtasks: db.prepare("SELECT count(*) AS n FROM tasks WHERE parent_id = ? AND account_id = ? AND trash_id IS NULL").bind(taskId, a),
    lastBlock: db
      .prepare("SELECT last_block_reason AS reason, last_block_by AS blocked_by, last_block_at AS blocked_at FROM tasks WHERE id = ? AND account_id = ? AND last_block_reason IS NOT NULL")
      .bind(taskId, a),
  };
}
