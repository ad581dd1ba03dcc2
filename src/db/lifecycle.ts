import { selectLatestDecision, selectPendingApproval, toApproval, type Approval, type ApprovalRow } from "./approvals.ts";
import { selectOccurrenceAfter } from "./series.ts";
import { selectTaskWithTrash, TASK_COLUMNS, taskMissing, type TaskRow, type TaskStatus, type TaskWithTrash } from "./tasks.ts";
import { readBatch } from "./batch.ts";

/** A live task with what its lifecycle depends on: its pending approval and its latest decided one. */
export interface TaskState {
  task: TaskRow;
  pending: Approval | null;
  latest: Approval | null;
  /** The account's time zone (a recurring task's next occurrence is computed in it). */
  timeZone: string;
  /** For a completed occurrence of a series: the live occurrence its completion created. */
  next: TaskRow | null;
  /** The comment its latest decision wrote with the body asked for (the same task, body and time), or null: none asked, or deleted or edited since. */
  decisionCommentId: string | null;
}

/** The task, its pending approval and its latest decision, in one round trip; not found (or in the trash, saying so) if the task isn't live. */
export async function readTaskState(db: D1Database, accountId: string, taskId: string, opts: { decisionComment?: string } = {}): Promise<TaskState> {
  const { task, pending, latest, trashed, account, next, comment } = await readBatch(db, {
    task: db.prepare(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = ? AND t.account_id = ? AND t.trash_id IS NULL`).bind(taskId, accountId),
    pending: selectPendingApproval(db, accountId, taskId),
    latest: selectLatestDecision(db, accountId, taskId),
    trashed: selectTaskWithTrash(db, accountId, taskId),
    account: db.prepare("SELECT time_zone FROM accounts WHERE id = ?").bind(accountId),
    next: selectOccurrenceAfter(db, accountId, taskId),
    comment: selectDecisionComment(db, accountId, taskId, opts.decisionComment ?? null),
  });
  const row = task[0] as TaskRow | undefined;
  if (!row) throw taskMissing(taskId, trashed[0] as TaskWithTrash | undefined);
  return {
    task: row,
    pending: pending[0] ? (toApproval(pending[0] as ApprovalRow) as Approval) : null,
    latest: latest[0] ? (toApproval(latest[0] as ApprovalRow) as Approval) : null,
    timeZone: (account[0] as { time_zone: string } | undefined)?.time_zone ?? "UTC",
    next: (next[0] as TaskRow | undefined) ?? null,
    decisionCommentId: (comment[0] as { id: string } | undefined)?.id ?? null,
  };
}

/** The comment the task's latest decision wrote with this body (none without one), to ride in readTaskState's batch. */
function selectDecisionComment(db: D1Database, accountId: string, taskId: string, body: string | null): D1PreparedStatement {
  return db
    .prepare(
      `SELECT id FROM comments WHERE task_id = ?1 AND account_id = ?2 AND body = ?3 AND trash_id IS NULL
          AND created_at = (SELECT decided_at FROM approvals WHERE task_id = ?1 AND account_id = ?2 AND status <> 'pending' ORDER BY decided_at DESC, created_at DESC LIMIT 1)
        ORDER BY id LIMIT 1`,
    )
    .bind(taskId, accountId, body);
}

/** Guard: the task is live and still at the version that was read. */
export { taskAtVersion } from "./tasks.ts";

/** Lifecycle columns a transition may set. */
export interface TaskTransition {
  status?: TaskStatus;
  completed_at?: string | null;
  assignee?: string | null;
  auto_ok?: number;
  blocked_reason?: null;
  status_before_block?: null;
  /** A completed occurrence hands its schedule on to the next one. */
  recurrence?: null;
  /** An agent's claim lease (claim_task); null for none. */
  claim_expires_at?: string | null;
  claim_lease_minutes?: number | null;
}

/** Applies a transition to the task at the version that was read (else it matches no row), bumping the version. */
export function transitionTask(
  db: D1Database,
  accountId: string,
  task: TaskRow,
  change: TaskTransition,
  now: string,
): D1PreparedStatement {
  const fields = Object.keys(change) as (keyof TaskTransition)[];
  return db
    .prepare(
      `UPDATE tasks SET ${fields.map((f) => `${f} = ?`).join(", ")}, version = version + 1, updated_at = ?
        WHERE id = ? AND account_id = ? AND version = ? AND trash_id IS NULL`,
    )
    .bind(...fields.map((f) => change[f] ?? null), now, task.id, accountId, task.version);
}

/** The task row as `transitionTask` leaves it. */
export function transitioned(task: TaskRow, change: TaskTransition, now: string): TaskRow {
  return { ...task, ...change, version: task.version + 1, updated_at: now } as TaskRow;
}

/** A comment on the task (used for a rejection's reason). */
export function insertTaskComment(
  db: D1Database,
  c: { id: string; accountId: string; taskId: string; authorTokenId: string; author: string; body: string; now: string },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    .bind(c.id, c.accountId, c.taskId, c.authorTokenId, c.author, c.body, c.now, c.now);
}

