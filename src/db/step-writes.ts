/**
 * The one-batch forms of step writes: the state their usual case assumes (a
 * guard condition), and statements that act on and return the rows as they are.
 */
import type { Condition } from "../catalog/tool.ts";
import { stepIsLive, type Step, type StepStatus } from "./steps.ts";
import { STEP_STATUS } from "./summaries.ts";

const STEP_RETURNING = "id, task_id, position, text, status, created_at, updated_at";

/** Guard: the task is live and has room for `adding` more live steps within `limit`. */
export function roomForSteps(c: { taskId: string; accountId: string; adding: number; limit: number }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL)
   AND (SELECT count(*) FROM steps WHERE task_id = ?1 AND account_id = ?2 AND trash_id IS NULL) + ?3 <= ?4`,
    binds: [c.taskId, c.accountId, c.adding, c.limit],
  };
}

/** Appends a step after every step ever placed on the task (trashed ones included); returns it. */
export function appendStep(db: D1Database, accountId: string, s: Omit<Step, "position">): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO steps (id, account_id, task_id, position, text, status, created_at, updated_at)
       SELECT ?1, ?2, ?3, coalesce((SELECT max(position) FROM steps WHERE task_id = ?3 AND account_id = ?2), 0) + 1, ?4, ?5, ?6, ?7
       RETURNING ${STEP_RETURNING}`,
    )
    .bind(s.id, accountId, s.task_id, s.text, s.status, s.created_at, s.updated_at);
}

/** Guard: the step (and its task) is live and `column` differs from the value. */
export function stepDiffers(c: { stepId: string; accountId: string; column: "status" | "text"; value: string }): Condition {
  const live = stepIsLive(c);
  return { sql: `${live.sql} AND EXISTS (SELECT 1 FROM steps WHERE id = ?1 AND account_id = ?2 AND ${c.column} IS NOT ?3)`, binds: [...live.binds, c.value] };
}

/** Sets a live step's status or text; returns the step. */
export function setStep(db: D1Database, accountId: string, stepId: string, column: "status" | "text", value: StepStatus | string, now: string): D1PreparedStatement {
  return db
    .prepare(`UPDATE steps SET ${column} = ?, updated_at = ? WHERE id = ? AND account_id = ? AND trash_id IS NULL RETURNING ${STEP_RETURNING}`)
    .bind(value, now, stepId, accountId);
}

/** The task of a step, for the activity row. */
export function stepTask(accountId: string, stepId: string): { sql: string; binds: unknown[] } {
  return { sql: "SELECT task_id FROM steps WHERE id = ? AND account_id = ?", binds: [stepId, accountId] };
}

/** A summary from the step row before the change: a template rendered over its columns. */
export function stepSummary(accountId: string, stepId: string, e: Condition): { sql: string; binds: unknown[] } {
  return { sql: `SELECT ${e.sql} FROM steps WHERE id = ? AND account_id = ?`, binds: [...e.binds, stepId, accountId] };
}

/** Guard: the live steps of the task are not already in this order. */
export function stepsNotInOrder(c: { taskId: string; accountId: string; stepIds: string[] }): Condition {
  return {
    sql: `(SELECT json_group_array(id) FROM (SELECT id FROM steps
    WHERE task_id = ?1 AND account_id = ?2 AND trash_id IS NULL ORDER BY position, created_at, id)) <> ?3`,
    binds: [c.taskId, c.accountId, JSON.stringify(c.stepIds)],
  };
}

/** The task a step (live or trashed) belongs to: `{ task_id }`. */
export function selectStepTask(db: D1Database, accountId: string, stepId: string): D1PreparedStatement {
  const { sql, binds } = stepTask(accountId, stepId);
  return db.prepare(sql).bind(...binds);
}

/** set_step_status's summary over the step before. */
export const stepStatusSummary = (stepId: string, status: string): Condition => STEP_STATUS.sql({ from: { sql: "status" } }, { step: stepId, to: status });
