import type { Condition } from "../catalog/tool.ts";
import { notFound, ToolError } from "../domain/errors.ts";
import { selectTask, type TaskRow } from "./tasks.ts";
import { readBatch } from "./batch.ts";

export type StepStatus = "pending" | "in_progress" | "done" | "skipped";

export interface Step {
  id: string;
  task_id: string;
  position: number;
  text: string;
  status: StepStatus;
  created_at: string;
  updated_at: string;
}

/** A step as found by id, live or in the trash, with what its deletion needs. */
export interface StepLookup extends Step {
  trash_id: string | null;
  trash_purge_after: string | null;
  retention_days: number;
}

const STEP_COLUMNS = "s.id, s.task_id, s.position, s.text, s.status, s.created_at, s.updated_at";

/** Stored order; ties (a restored step meeting a reordered one) fall back to age. */
const STEP_ORDER = "ORDER BY s.position, s.created_at, s.id";

export function toStep(r: Step): Step {
  return { id: r.id, task_id: r.task_id, position: r.position, text: r.text, status: r.status, created_at: r.created_at, updated_at: r.updated_at };
}

export function selectLiveSteps(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(`SELECT ${STEP_COLUMNS} FROM steps s WHERE s.task_id = ? AND s.account_id = ? AND s.trash_id IS NULL ${STEP_ORDER}`)
    .bind(taskId, accountId);
}

/** The task (if live) and its live steps, in order, in one round trip. */
export async function taskWithSteps(db: D1Database, accountId: string, taskId: string): Promise<{ task: TaskRow | null; steps: Step[] }> {
  const { task, steps } = await readBatch(db, { task: selectTask(db, accountId, taskId), steps: selectLiveSteps(db, accountId, taskId) });
  const row = (task[0] as TaskRow | undefined) ?? null;
  return { task: row, steps: row ? (steps as Step[]).map(toStep) : [] };
}

/**
 * The task (if live), where appending starts (after every step ever placed,
 * trashed ones included, so a restore keeps its place) and how many steps are
 * live, in one round trip.
 */
export async function taskForAppend(
  db: D1Database, accountId: string, taskId: string,
): Promise<{ task: TaskRow | null; maxPosition: number; live: number }> {
  const { task, stats } = await readBatch(db, {
    task: selectTask(db, accountId, taskId),
    stats: db
      .prepare(
        `SELECT coalesce(max(position), 0) AS max_position, coalesce(sum(trash_id IS NULL), 0) AS live
           FROM steps WHERE task_id = ? AND account_id = ?`,
      )
      .bind(taskId, accountId),
  });
  const row = stats[0] as { max_position: number; live: number } | undefined;
  return { task: (task[0] as TaskRow | undefined) ?? null, maxPosition: row?.max_position ?? 0, live: row?.live ?? 0 };
}

/** Guard: the task is still live and nobody appended steps since `taskForAppend` read (its highest position then). */
export function stepsUnchangedSinceRead(c: { taskId: string; accountId: string; maxPosition: number }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL)
   AND (SELECT coalesce(max(position), 0) FROM steps WHERE task_id = ?1 AND account_id = ?2) = ?3`,
    binds: [c.taskId, c.accountId, c.maxPosition],
  };
}

/** Guard: the step is live and its task too (the step is ?1, the account ?2). */
export function stepIsLive(c: { stepId: string; accountId: string }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM steps s JOIN tasks t ON t.id = s.task_id AND t.account_id = s.account_id AND t.trash_id IS NULL
            WHERE s.id = ?1 AND s.account_id = ?2 AND s.trash_id IS NULL)`,
    binds: [c.stepId, c.accountId],
  };
}

/**
 * Guard: the task is live and its live steps are exactly these ids, each once
 * (as many live steps as ids, and as many of them among the ids).
 */
export function liveStepsAre(c: { taskId: string; accountId: string; stepIds: string[] }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL)
   AND (SELECT count(*) FROM steps WHERE task_id = ?1 AND account_id = ?2 AND trash_id IS NULL) = ?4
   AND (SELECT count(*) FROM steps WHERE task_id = ?1 AND account_id = ?2 AND trash_id IS NULL
         AND id IN (SELECT value FROM json_each(?3))) = ?4`,
    binds: [c.taskId, c.accountId, JSON.stringify(c.stepIds), c.stepIds.length],
  };
}

/** A step of a live task of this account, whether live or in the trash; null if there is none. */
export async function findStep(db: D1Database, accountId: string, stepId: string): Promise<StepLookup | null> {
  return db
    .prepare(
      `SELECT ${STEP_COLUMNS}, s.trash_id, tr.purge_after AS trash_purge_after, a.trash_retention_days AS retention_days
         FROM steps s
         JOIN tasks t ON t.id = s.task_id AND t.account_id = s.account_id AND t.trash_id IS NULL
         JOIN accounts a ON a.id = s.account_id
         LEFT JOIN trash tr ON tr.id = s.trash_id AND tr.account_id = s.account_id
        WHERE s.id = ? AND s.account_id = ?`,
    )
    .bind(stepId, accountId)
    .first<StepLookup>();
}

const STEP_HINT = "list_steps shows a task's step ids";

/** A live step of a live task of this account, or a not-found error that says where it went. */
export async function requireLiveStep(db: D1Database, accountId: string, stepId: string): Promise<StepLookup> {
  const row = await findStep(db, accountId, stepId);
  if (!row) throw notFound("step", stepId, STEP_HINT);
  if (row.trash_id) {
    throw new ToolError("not_found", `Step ${stepId} is in the trash (${row.trash_id}); restore_from_trash brings it back, ${STEP_HINT}.`);
  }
  return row;
}

/** A step of a live task, live or trashed (for convergent deletion), or not found. */
export async function requireStep(db: D1Database, accountId: string, stepId: string): Promise<StepLookup> {
  const row = await findStep(db, accountId, stepId);
  if (!row) throw notFound("step", stepId, STEP_HINT);
  return row;
}

/** Positions 1..n in the order of the JSON array of ids; only steps whose position changes are touched. */
export function reorderSteps(db: D1Database, accountId: string, taskId: string, orderedIds: string[], now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE steps SET position = o.pos, updated_at = ?1
         FROM (SELECT value AS id, key + 1 AS pos FROM json_each(?2)) AS o
        WHERE steps.id = o.id AND steps.task_id = ?3 AND steps.account_id = ?4 AND steps.trash_id IS NULL
          AND steps.position != o.pos`,
    )
    .bind(now, JSON.stringify(orderedIds), taskId, accountId);
}
