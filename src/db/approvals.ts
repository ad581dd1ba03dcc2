import type { Condition } from "../catalog/tool.ts";
import { notFound } from "../domain/errors.ts";
import type { CursorKey } from "./cursor.ts";
import type { TaskStatus } from "../domain/vocabulary.ts";

export const APPROVAL_STATUSES = ["pending", "approved", "rejected", "closed", "withdrawn"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
/** A question about unfinished work (answered, the task stays where it is) or a sign-off on finished work (approved, it is done). */
export const APPROVAL_KINDS = ["question", "signoff"] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/** An approval as the tools show it, with its task's title. */
export interface Approval {
  id: string;
  task_id: string;
  task_title: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  question: string;
  requested_by: string;
  decided_by: string | null;
  reason: string | null;
  created_at: string;
  decided_at: string | null;
  /** What a pending action (src/db/pending-actions.ts) adds; null for a question or a sign-off. */
  action: null;
}

/** `a` is approvals, `t` its (live) task. */
const APPROVAL_COLUMNS =
  "a.id, a.task_id, t.title AS task_title, a.kind, a.status, a.question, a.requested_by, a.decided_by, a.reason, a.created_at, a.decided_at, NULL AS action";

const FROM_LIVE = "FROM approvals a JOIN tasks t ON t.id = a.task_id AND t.account_id = a.account_id AND t.trash_id IS NULL";

export function selectPendingApproval(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(`SELECT ${APPROVAL_COLUMNS} ${FROM_LIVE} WHERE a.task_id = ? AND a.account_id = ? AND a.status = 'pending'`)
    .bind(taskId, accountId);
}

/** The task's most recently decided (approved, rejected or closed) approval. */
export function selectLatestDecision(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${APPROVAL_COLUMNS} ${FROM_LIVE}
        WHERE a.task_id = ? AND a.account_id = ? AND a.status <> 'pending'
        ORDER BY a.decided_at DESC, a.created_at DESC LIMIT 1`,
    )
    .bind(taskId, accountId);
}

export interface ApprovalWithTask extends Approval {
  task_status: TaskStatus;
  task_assignee: string | null;
  task_auto_ok: number | null;
}

/** An approval of a live task, with that task's current state; not found otherwise. */
export async function requireApproval(db: D1Database, accountId: string, id: string): Promise<ApprovalWithTask> {
  const row = await db
    .prepare(
      `SELECT ${APPROVAL_COLUMNS}, t.status AS task_status, t.assignee AS task_assignee, t.auto_ok AS task_auto_ok
        ${FROM_LIVE} WHERE a.id = ? AND a.account_id = ?`,
    )
    .bind(id, accountId)
    .first<ApprovalWithTask>();
  if (!row) throw notFound("approval", id, "list_pending_approvals lists the open ones, get_task shows a task's pending approval");
  return row;
}

export interface PendingPage {
  projectId?: string;
  after: CursorKey | null;
  limit: number;
}

/** One page of pending approvals of live tasks, oldest first (the queue a person works through; limit + 1 rows), selecting `columns`; positional binds. */
export function pendingPageSql(accountId: string, opts: PendingPage, columns: string): { sql: string; binds: unknown[] } {
  const where = ["a.account_id = ?", "a.status = 'pending'"];
  const binds: unknown[] = [accountId];
  if (opts.projectId) (where.push("t.project_id = ?"), binds.push(opts.projectId));
  if (opts.after) (where.push("(a.created_at > ? OR (a.created_at = ? AND a.id > ?))"), binds.push(opts.after.k, opts.after.k, opts.after.id));
  return { sql: `SELECT ${columns} ${FROM_LIVE} WHERE ${where.join(" AND ")} ORDER BY a.created_at, a.id LIMIT ?`, binds: [...binds, opts.limit + 1] };
}

export const PENDING_APPROVAL_COLUMNS = APPROVAL_COLUMNS;

/** How many approvals of live tasks wait for a person, and how many pending actions (not expired): `{ n, actions }`. */
export function selectPendingCount(db: D1Database, accountId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT (SELECT count(*) ${FROM_LIVE} WHERE a.account_id = ?1 AND a.status = 'pending') AS n,
              (SELECT count(*) FROM pending_actions x WHERE x.account_id = ?1 AND x.status = 'pending' AND x.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) AS actions`,
    )
    .bind(accountId);
}

export interface PendingApprovalRow extends Approval {
  task_status: TaskStatus;
  task_assignee: string | null;
  task_notes: string;
  project_id: string | null;
  project_name: string | null;
}

/**
 * One page of the pending approvals of live tasks, newest first, with their
 * task (notes cut to `clip` characters) and project.
 */
export function selectPendingNewestFirst(db: D1Database, accountId: string, limit: number, offset: number, clip: number): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${APPROVAL_COLUMNS}, t.status AS task_status, t.assignee AS task_assignee, substr(t.notes, 1, ?4) AS task_notes,
              t.project_id, p.name AS project_name
         ${FROM_LIVE} LEFT JOIN projects p ON p.id = t.project_id AND p.account_id = t.account_id
        WHERE a.account_id = ?1 AND a.status = 'pending' ORDER BY a.created_at DESC, a.id DESC LIMIT ?2 OFFSET ?3`,
    )
    .bind(accountId, limit, offset, clip);
}

/** The task ids of that page, as a subquery. Binds: ?1 account id, ?2 limit, ?5 offset. */
export const PENDING_TASK_IDS =
  `SELECT a.task_id ${FROM_LIVE} WHERE a.account_id = ?1 AND a.status = 'pending' ORDER BY a.created_at DESC, a.id DESC LIMIT ?2 OFFSET ?5`;

export interface NewApproval {
  id: string;
  kind: ApprovalKind;
  accountId: string;
  taskId: string;
  taskTitle: string;
  question: string;
  requestedBy: string;
  requestedByToken: string;
  now: string;
}

export function insertApproval(db: D1Database, a: NewApproval): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO approvals (id, account_id, task_id, kind, status, question, requested_by, requested_by_token, created_at)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
    )
    .bind(a.id, a.accountId, a.taskId, a.kind, a.question, a.requestedBy, a.requestedByToken, a.now);
}

/** The approval as `insertApproval` wrote it. */
export function newApprovalValue(a: NewApproval): Approval {
  return {
    id: a.id,
    task_id: a.taskId,
    task_title: a.taskTitle,
    kind: a.kind,
    status: "pending",
    question: a.question,
    requested_by: a.requestedBy,
    decided_by: null,
    reason: null,
    created_at: a.now,
    decided_at: null,
    action: null,
  };
}

/** Decides a pending approval (approved, rejected or closed); touches nothing already decided. */
export function decideApproval(
  db: D1Database,
  accountId: string,
  id: string,
  d: { status: Exclude<ApprovalStatus, "pending">; decidedBy: string; reason: string | null; now: string },
): D1PreparedStatement {
  return db
    .prepare("UPDATE approvals SET status = ?, decided_by = ?, reason = ?, decided_at = ? WHERE id = ? AND account_id = ? AND status = 'pending'")
    .bind(d.status, d.decidedBy, d.reason, d.now, id, accountId);
}

export function decidedValue(
  a: Approval,
  d: { status: Exclude<ApprovalStatus, "pending">; decidedBy: string; reason: string | null; now: string },
): Approval {
  return { ...a, status: d.status, decided_by: d.decidedBy, reason: d.reason, decided_at: d.now };
}

/** Guard: this approval is still pending. */
export function approvalIsPending(c: { approvalId: string; accountId: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM approvals WHERE id = ? AND account_id = ? AND status = 'pending')", binds: [c.approvalId, c.accountId] };
}

/** A person's answer to a question, as get_task shows it. */
export interface LatestAnswer {
  id: string;
  question: string;
  answer: "yes" | "no";
  reason: string | null;
  decided_by: string;
  decided_at: string;
}

/** The task's latest answered question (null: none answered). */
export function selectLatestAnswer(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT a.id, a.question, CASE a.status WHEN 'approved' THEN 'yes' ELSE 'no' END AS answer, a.reason, a.decided_by, a.decided_at
         FROM approvals a WHERE a.task_id = ? AND a.account_id = ? AND a.kind = 'question' AND a.status IN ('approved', 'rejected')
        ORDER BY a.decided_at DESC, a.id DESC LIMIT 1`,
    )
    .bind(taskId, accountId);
}

/** Guard: the task has no pending approval. */
export function noPendingApproval(c: { taskId: string; accountId: string }): Condition {
  return { sql: "NOT EXISTS (SELECT 1 FROM approvals WHERE task_id = ? AND account_id = ? AND status = 'pending')", binds: [c.taskId, c.accountId] };
}
