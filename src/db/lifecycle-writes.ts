/**
 * The one-batch forms of the lifecycle writes (complete, reopen): the state
 * their usual case assumes, and statements that act on the rows as they are.
 */
import type { Condition } from "../catalog/tool.ts";
import type { NewApproval } from "./approvals.ts";
import { leaseRestartIf } from "./claims.ts";
import { APPROVAL_ID, APPROVED, COMPLETED_AUTO_OK, COMPLETED_AWAITING, REJECTED, REOPEN_CLOSED, REOPENED } from "./summaries.ts";

/**
 * complete_task's usual case: a live task neither finished nor awaiting
 * approval, without a pending approval, and — when the call completes it —
 * not recurring (the next occurrence is computed from what a read shows).
 * A person always completes; an agent completes under auto-OK, else asks.
 */
export function completableCondition(c: { taskId: string; accountId: string; agent: boolean }): Condition {
  const completes = c.agent ? "(coalesce(auto_ok, 0) <> 1 OR recurrence IS NULL)" : "recurrence IS NULL";
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL
      AND status NOT IN ('done', 'cancelled', 'awaiting_approval') AND ${completes}
      AND NOT EXISTS (SELECT 1 FROM approvals WHERE task_id = ?1 AND account_id = ?2 AND status = 'pending'))`,
    binds: [c.taskId, c.accountId],
  };
}

/** Sets for complete_task: done (a person, or an agent under auto-OK) or awaiting approval. Binds: now. */
export function completeSet(agent: boolean): string {
  if (!agent) return "status = 'done', completed_at = ?, blocked_reason = NULL, status_before_block = NULL";
  return `status = CASE WHEN coalesce(auto_ok, 0) = 1 THEN 'done' ELSE 'awaiting_approval' END,
          completed_at = CASE WHEN coalesce(auto_ok, 0) = 1 THEN ? ELSE completed_at END,
          blocked_reason = NULL, status_before_block = NULL`;
}

/** The summary of an agent's complete_task from the row before: done under auto-OK, else awaiting the approval it opens. */
export function completedByAgentSummary(approvalId: string): Condition {
  const awaiting = COMPLETED_AWAITING.sql({}, { approval: approvalId });
  return { sql: `CASE WHEN coalesce(auto_ok, 0) = 1 THEN ${COMPLETED_AUTO_OK.sql({}).sql} ELSE ${awaiting.sql} END`, binds: awaiting.binds };
}

/** The approval an agent's completion opens, unless the task has auto-OK. */
export function insertApprovalUnlessAutoOk(db: D1Database, a: NewApproval): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO approvals (id, account_id, task_id, kind, status, question, requested_by, requested_by_token, created_at)
       SELECT ?, ?, ?, 'signoff', 'pending', ?, ?, ?, ? FROM tasks WHERE id = ?3 AND account_id = ?2 AND coalesce(auto_ok, 0) <> 1`,
    )
    .bind(a.id, a.accountId, a.taskId, a.question, a.requestedBy, a.requestedByToken, a.now);
}

/** request_approval's usual case: a question about unfinished work (a task awaiting approval gets a sign-off instead). */
export const ASKABLE = "status NOT IN ('done', 'cancelled', 'awaiting_approval')";

/** reopen_task's usual case: a live task that is done, cancelled or awaiting approval. */
export const REOPENABLE = "status IN ('done', 'cancelled', 'awaiting_approval')";

/**
 * Decides the task's pending approval (if any) and returns it as decided
 * (task_title is the caller's to add).
 */
export function decidePendingApproval(
  db: D1Database,
  accountId: string,
  taskId: string,
  d: { status: "approved" | "rejected" | "closed" | "withdrawn"; decidedBy: string; reason: string | null; now: string },
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE approvals SET status = ?, decided_by = ?, reason = ?, decided_at = ?
        WHERE task_id = ? AND account_id = ? AND status = 'pending'
       RETURNING id, task_id, kind, status, question, requested_by, decided_by, reason, created_at, decided_at`,
    )
    .bind(d.status, d.decidedBy, d.reason, d.now, taskId, accountId);
}

/** A person's decision's usual case: the live task awaits approval, with a pending sign-off (and, approved, does not recur). */
export function awaitingCondition(approve: boolean): string {
  return `status = 'awaiting_approval'${approve ? " AND recurrence IS NULL" : ""}
    AND EXISTS (SELECT 1 FROM approvals a WHERE a.task_id = tasks.id AND a.account_id = tasks.account_id AND a.status = 'pending' AND a.kind = 'signoff')`;
}

/** The id of the task's pending approval, in a summary over the task row. */
const PENDING_ID = "(SELECT a.id FROM approvals a WHERE a.task_id = tasks.id AND a.account_id = tasks.account_id AND a.status = 'pending')";

const PENDING = { approval: { sql: PENDING_ID } };

/** reopen_task's summary from the row before, given the reason's suffix. */
export const reopenedSummary = (reason: string): Condition =>
  REOPENED.sql({ status: { sql: "status" }, closed: { sql: `coalesce(${REOPEN_CLOSED.sql(PENDING).sql}, '')` } }, { reason });

/** reopen_task sets. */
export const REOPEN_SET = "status = 'open', completed_at = NULL";

/** claim_task's usual case: an open task, nobody's or the caller's (bind: the caller), and what it sets (bind: the caller). */
export const CLAIMABLE = "status = 'open' AND (assignee IS NULL OR assignee = ?)";
/** Binds: the claimant, when its lease runs out and its length (both null for a person's claim, which never lapses). */
export const CLAIM_SET = "assignee = ?, status = 'in_progress', claim_expires_at = ?, claim_lease_minutes = ?";

/** set_auto_ok: the task's auto-OK differs from the bound 0/1, and what it sets. */
export const AUTO_OK_DIFFERS = "coalesce(auto_ok = 1, 0) <> ?";
export const AUTO_OK_SET = "auto_ok = ?";

/** approve_task sets (bind: now) and its summary over the task before (given the note's suffix). */
export const APPROVE_SET = "status = 'done', completed_at = ?, blocked_reason = NULL, status_before_block = NULL";
export const approvedSummary = (note: string): Condition => APPROVED.sql({ approval: APPROVAL_ID.sql(PENDING) }, { note, next: "" });

/** reject_task sets, and its summary over the task before (back in progress). */
/** Back in progress; an agent's claim lease starts over instead of having run out while the task waited (bind: now). */
export const REJECT_SET = `status = 'in_progress', ${leaseRestartIf("1")}`;
export const rejectedSummary = (commentId: string, reason: string): Condition =>
  REJECTED.sql({ approval: APPROVAL_ID.sql(PENDING) }, { status: "in_progress", comment: commentId, reason });
