/**
 * The one-batch forms of the lifecycle writes (complete, reopen, claim, the
 * requests and their decisions): the state each outcome assumes, and
 * statements that act on the rows as they are.
 */
import type { Condition } from "../catalog/tool.ts";
import type { NewApproval } from "./approvals.ts";
import { leaseRestartIf } from "./claims.ts";
import {
  APPROVAL_DECIDED, APPROVAL_ID, APPROVED, ASKED_QUESTION, COMPLETED, COMPLETED_AUTO_OK, COMPLETED_AWAITING, REJECTED, REOPEN_CLOSED, REOPENED, REQUESTED_SIGNOFF, WITHDREW,
} from "./summaries.ts";

/** The task's pending request (of `kind`, when given), in a condition or summary over the task row `tasks`. */
const pendingOf = (kind?: "question" | "signoff", also = "") =>
  `EXISTS (SELECT 1 FROM approvals a WHERE a.task_id = tasks.id AND a.account_id = tasks.account_id AND a.status = 'pending'${kind ? ` AND a.kind = '${kind}'` : ""}${also})`;

/**
 * complete_task's outcome, for every live task it completes or asks about.
 * A person completes a task not finished (its pending request is decided by
 * the batch). An agent completes under auto-OK unless a request other than
 * its own sign-off waits (C3: a person decides it); else it asks for a
 * sign-off, unless a question waits (C3) or the task already awaits one.
 * Without `version`, a completion assumes a task that does not recur (a
 * recurring one's next occurrence is computed from a read); with it, the
 * task at the version read, recurring or not. Binds: ?3 the agent's name.
 */
export function completableCondition(c: { taskId: string; accountId: string; agent: string | null; version?: number }): Condition {
  const once = c.version === undefined ? "recurrence IS NULL" : "1";
  const completes = c.agent === null
    ? once
    : `CASE WHEN coalesce(auto_ok, 0) = 1
        THEN ${once} AND NOT ${pendingOf(undefined, " AND NOT (a.kind = 'signoff' AND a.requested_by = ?3)")}
        ELSE NOT ${pendingOf("question")} AND NOT (status = 'awaiting_approval' AND ${pendingOf()}) END`;
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL AND status NOT IN ('done', 'cancelled')
      AND (?4 IS NULL OR version = ?4) AND (${completes}))`,
    binds: [c.taskId, c.accountId, c.agent, c.version ?? null],
  };
}

/** Done at `now`: the task gives up its schedule (a recurring one hands it on to its next occurrence). */
const doneSet = (now: string): Condition => ({ sql: "status = 'done', completed_at = ?, blocked_reason = NULL, status_before_block = NULL, recurrence = NULL", binds: [now] });

/**
 * How a write completes a task at `now`: what it sets where the task
 * (before) is so, and — when not every such task is done by it — the
 * condition over the task `t` (before) under which it is, which the
 * statements that go with a completion (its running runs end, its request is
 * decided) take as theirs (a predicate without binds).
 */
export interface Completion {
  set: Condition;
  where: Condition;
  completes?: string;
}

/**
 * complete_task's: done (a person, or an agent under auto-OK), else awaiting
 * approval, where a task that already awaits it is left as it is.
 */
export function completion(agent: boolean, now: string): Completion {
  if (!agent) return { set: doneSet(now), where: { sql: "1", binds: [] } };
  const auto = "coalesce(auto_ok, 0) = 1";
  return {
    set: {
      sql: `status = CASE WHEN ${auto} THEN 'done' ELSE 'awaiting_approval' END,
          completed_at = CASE WHEN ${auto} THEN ? ELSE completed_at END,
          recurrence = CASE WHEN ${auto} THEN NULL ELSE recurrence END,
          blocked_reason = NULL, status_before_block = NULL`,
      binds: [now],
    },
    where: { sql: `${auto} OR status <> 'awaiting_approval'`, binds: [] },
    completes: `coalesce(t.auto_ok, 0) = 1`,
  };
}

/** approve_task's: done, unless it is already. */
export const approvalCompletion = (now: string): Completion => ({ set: doneSet(now), where: { sql: "status <> 'done'", binds: [] }, completes: "t.status <> 'done'" });

/** A decision of a pending request: its status and reason. */
export interface Decided {
  status: "approved" | "rejected" | "closed" | "withdrawn";
  reason: string | null;
}

/** The pending request's decision in a summary over the task row: "; approval apr_… approved" (a question's as `question`), or nothing. */
function decidedSummary(d: Decided & { question?: Decided }): Condition {
  const q = d.question ?? d;
  const piece = APPROVAL_DECIDED.sql({ approval: { sql: "a.id" }, status: { sql: "CASE a.kind WHEN 'question' THEN ? ELSE ? END", binds: [q.status, d.status] } });
  return {
    sql: `coalesce((SELECT ${piece.sql} FROM approvals a WHERE a.task_id = tasks.id AND a.account_id = tasks.account_id AND a.status = 'pending'), '')`,
    binds: piece.binds,
  };
}

/**
 * complete_task's summary from the row before: completed (by a person, or
 * an agent under auto-OK), with the decision of its pending request and
 * `next` (the next occurrence's piece); or, asking, awaiting the pending
 * sign-off (or `createdId`, the one the batch opens when none is pending).
 */
export function completedSummary(c: { agent: boolean; decided: Decided & { question?: Decided }; next: string; createdId: string }): Condition {
  const decided = decidedSummary(c.decided);
  const done = (s: typeof COMPLETED) => ({ sql: `${s.sql({}).sql} || ${decided.sql} || ?`, binds: [...decided.binds, c.next] });
  if (!c.agent) return done(COMPLETED);
  const auto = done(COMPLETED_AUTO_OK);
  const awaiting = COMPLETED_AWAITING.sql({ approval: { sql: `coalesce(${PENDING_ID}, ?)`, binds: [c.createdId] } });
  return { sql: `CASE WHEN coalesce(auto_ok, 0) = 1 THEN ${auto.sql} ELSE ${awaiting.sql} END`, binds: [...auto.binds, ...awaiting.binds] };
}

/** The sign-off an agent's completion opens: none under auto-OK, nor while a request is pending (the completion reuses that one). */
export function insertSignoffAsking(db: D1Database, a: NewApproval): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO approvals (id, account_id, task_id, kind, status, question, requested_by, requested_by_token, created_at)
       SELECT ?, ?, ?, 'signoff', 'pending', ?, ?, ?, ? FROM tasks WHERE id = ?3 AND account_id = ?2 AND coalesce(auto_ok, 0) <> 1
          AND NOT EXISTS (SELECT 1 FROM approvals WHERE task_id = ?3 AND account_id = ?2 AND status = 'pending')`,
    )
    .bind(a.id, a.accountId, a.taskId, a.question, a.requestedBy, a.requestedByToken, a.now);
}

/**
 * Sets columns by SQL expressions over the row before (`set`), bumping the
 * version, of the live task where `where` holds; nothing otherwise.
 */
export function setTaskWhere(db: D1Database, accountId: string, id: string, set: Condition, where: Condition, now: string): D1PreparedStatement {
  return db
    .prepare(`UPDATE tasks SET ${set.sql}, version = version + 1, updated_at = ? WHERE id = ? AND account_id = ? AND trash_id IS NULL AND (${where.sql})`)
    .bind(...set.binds, now, id, accountId, ...where.binds);
}

/**
 * request_approval's outcome: a live task not finished and without a pending
 * request. Its request is a question about unfinished work, or a sign-off of
 * a task that awaits approval.
 */
export function askableCondition(c: { taskId: string; accountId: string }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL AND status NOT IN ('done', 'cancelled') AND NOT ${pendingOf()})`,
    binds: [c.taskId, c.accountId],
  };
}

/** The kind of request request_approval opens, over the task row. */
const REQUEST_KIND = "CASE WHEN status = 'awaiting_approval' THEN 'signoff' ELSE 'question' END";

/** request_approval's request, its kind by the task's status. */
export function insertRequest(db: D1Database, a: Omit<NewApproval, "kind" | "taskTitle">): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO approvals (id, account_id, task_id, kind, status, question, requested_by, requested_by_token, created_at)
       SELECT ?1, ?2, ?3, ${REQUEST_KIND}, 'pending', ?4, ?5, ?6, ?7 FROM tasks WHERE id = ?3 AND account_id = ?2`,
    )
    .bind(a.id, a.accountId, a.taskId, a.question, a.requestedBy, a.requestedByToken, a.now);
}

/** request_approval's summary from the row before: the question asked, or the sign-off requested. */
export function requestedSummary(approvalId: string, question: string): Condition {
  const signoff = REQUESTED_SIGNOFF.sql({}, { approval: approvalId, question });
  const asked = ASKED_QUESTION.sql({}, { approval: approvalId, question });
  return { sql: `CASE WHEN status = 'awaiting_approval' THEN ${signoff.sql} ELSE ${asked.sql} END`, binds: [...signoff.binds, ...asked.binds] };
}

/** A withdrawal's usual case: the live task has a pending request, asked by `requestedBy`. */
export function ownPendingRequest(c: { taskId: string; accountId: string; requestedBy: string }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL AND ${pendingOf(undefined, " AND a.requested_by = ?3")})`,
    binds: [c.taskId, c.accountId, c.requestedBy],
  };
}

/** A withdrawal's task goes back to work where it awaits approval with a pending sign-off (so, before the withdrawal). */
export const SIGNOFF_AWAITED: Condition = { sql: `status = 'awaiting_approval' AND ${pendingOf("signoff")}`, binds: [] };
export const WITHDRAW_SET: Condition = { sql: "status = 'in_progress'", binds: [] };

/** A withdrawal's summary from the pending request: what it was (the words given, a question's first) and its id. */
export function withdrewSummary(c: { taskId: string; accountId: string; question: string; signoff: string }): Condition {
  const e = WITHDREW.sql({ what: { sql: "CASE kind WHEN 'question' THEN ? ELSE ? END", binds: [c.question, c.signoff] }, approval: { sql: "id" } });
  return { sql: `SELECT ${e.sql} FROM approvals WHERE task_id = ? AND account_id = ? AND status = 'pending'`, binds: [...e.binds, c.taskId, c.accountId] };
}

/** reopen_task's usual case: a live task that is done, cancelled or awaiting approval. */
export const REOPENABLE: Condition = { sql: "status IN ('done', 'cancelled', 'awaiting_approval')", binds: [] };

/**
 * Decides the task's pending request, if any (a question as `question` says,
 * when given), and returns it as decided (task_title is the caller's to add);
 * with `onlyIf`, only while that holds of the task (`t`).
 */
export function decidePendingApproval(
  db: D1Database,
  accountId: string,
  taskId: string,
  d: Decided & { decidedBy: string; now: string; question?: Decided; onlyIf?: string },
): D1PreparedStatement {
  const q = d.question ?? d;
  const only = d.onlyIf ? ` AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = ?7 AND t.account_id = ?8 AND (${d.onlyIf}))` : "";
  return db
    .prepare(
      `UPDATE approvals SET status = CASE kind WHEN 'question' THEN ?2 ELSE ?1 END, decided_by = ?3,
              reason = CASE kind WHEN 'question' THEN ?5 ELSE ?4 END, decided_at = ?6
        WHERE task_id = ?7 AND account_id = ?8 AND status = 'pending'${only}
       RETURNING id, task_id, kind, status, question, requested_by, decided_by, reason, created_at, decided_at, NULL AS action`,
    )
    .bind(d.status, q.status, d.decidedBy, d.reason, q.reason, d.now, taskId, accountId);
}

/**
 * A person's decision of a sign-off (approve_task, reject_task): the live
 * task awaits approval or has a pending sign-off, and no question waits (a
 * question is answered instead). A rejected task is not finished; an
 * approved one not cancelled and, to be done by the batch, not recurring (a
 * recurring one's next occurrence is computed from a read) — or, with
 * `version`, the task at the version read.
 */
export function decidableCondition(c: { taskId: string; accountId: string; approve: boolean; version?: number }): Condition {
  const state = c.approve ? "status <> 'cancelled' AND (?3 IS NOT NULL OR recurrence IS NULL OR status = 'done')" : "status NOT IN ('done', 'cancelled')";
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL AND ${state} AND (?3 IS NULL OR version = ?3)
      AND NOT ${pendingOf("question")} AND (status = 'awaiting_approval' OR ${pendingOf()}))`,
    binds: [c.taskId, c.accountId, c.version ?? null],
  };
}

/** The id of the task's pending approval, in a summary over the task row. */
const PENDING_ID = "(SELECT a.id FROM approvals a WHERE a.task_id = tasks.id AND a.account_id = tasks.account_id AND a.status = 'pending')";

const PENDING = { approval: { sql: PENDING_ID } };

/** " apr_…" for the pending approval, or nothing when none is pending. */
const PENDING_ID_PIECE = { approval: { sql: `coalesce(${APPROVAL_ID.sql(PENDING).sql}, '')` } };

/** reopen_task's summary from the row before, given the reason's suffix. */
export const reopenedSummary = (reason: string): Condition =>
  REOPENED.sql({ status: { sql: "status" }, closed: { sql: `coalesce(${REOPEN_CLOSED.sql(PENDING).sql}, '')` } }, { reason });

/** reopen_task sets. */
export const REOPEN_SET: Condition = { sql: "status = 'open', completed_at = NULL", binds: [] };

/** claim_task's usual case: a task open or in progress, nobody's, or open and the caller's. */
export const claimable = (caller: string): Condition => ({
  sql: "status IN ('open', 'in_progress') AND (assignee IS NULL OR (assignee = ? AND status = 'open'))",
  binds: [caller],
});
/** claim_task sets: the claimant, when its lease runs out and its length (both null for a person's claim, which never lapses). */
export const claimSet = (claimant: string, lease: { claim_expires_at: string | null; claim_lease_minutes: number | null }): Condition => ({
  sql: "assignee = ?, status = 'in_progress', claim_expires_at = ?, claim_lease_minutes = ?",
  binds: [claimant, lease.claim_expires_at, lease.claim_lease_minutes],
});

/** set_auto_ok: the task's auto-OK differs from the choice, and what it sets. */
export const autoOkDiffers = (on: boolean): Condition => ({ sql: "coalesce(auto_ok = 1, 0) <> ?", binds: [on ? 1 : 0] });
export const autoOkSet = (on: boolean): Condition => ({ sql: "auto_ok = ?", binds: [on ? 1 : 0] });

/** approve_task's summary over the task before, given the note's and the next occurrence's suffixes. */
export const approvedSummary = (note: string, next: string): Condition => APPROVED.sql(PENDING_ID_PIECE, { note, next });

/**
 * reject_task sets where the task awaits approval or is open: back in
 * progress, and an agent's claim lease starts over instead of having run out
 * while the task waited (bind: now); and its summary over the task before
 * (back in progress, or as it is).
 */
export const rejectSet = (now: string): Condition => ({ sql: `status = 'in_progress', ${leaseRestartIf("1")}`, binds: [now] });
const REJECTABLE = "status IN ('awaiting_approval', 'open')";
export const REJECTABLE_BACK: Condition = { sql: REJECTABLE, binds: [] };
export const rejectedSummary = (commentId: string, reason: string): Condition =>
  REJECTED.sql({ ...PENDING_ID_PIECE, status: { sql: `CASE WHEN ${REJECTABLE} THEN 'in_progress' ELSE status END` } }, { comment: commentId, reason });
