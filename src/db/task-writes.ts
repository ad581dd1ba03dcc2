/**
 * The one-batch forms of task writes: each names the state its usual case
 * assumes (a guard condition), and sets, summarises and returns from the row
 * as it is in the batch, so no read comes first. Binds are listed per part.
 */
import type { Condition } from "../catalog/tool.ts";
import { leaseRestartIf } from "./claims.ts";
import {
  BLOCKED_TASK, DELETED_SUBTASKS, DELETED_TASK, MOVED_SUBTASKS, MOVED_TASK, NO_PROJECT, sqlLiteral, UNBLOCKED_TASK, type WAITS_ON,
} from "./summaries.ts";
import { assigneePersonId, liveSubtree, SUBTREE_OUTSIDE_PROJECT, TASK_RETURNING } from "./tasks.ts";
import type { PersonRef } from "../domain/principal.ts";

/** Guard condition: the live task matches `where` (a condition over its columns). */
export function liveTaskIs(accountId: string, id: string, where: Condition): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL AND (${where.sql}))`,
    binds: [id, accountId, ...where.binds],
  };
}

/** Sets columns by SQL expressions over the row before (`set`), bumps the version, returns the task as written. */
export function setTask(db: D1Database, accountId: string, id: string, set: Condition, now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE tasks SET ${set.sql}, version = version + 1, updated_at = ?
        WHERE id = ? AND account_id = ? AND trash_id IS NULL RETURNING ${TASK_RETURNING}`,
    )
    .bind(...set.binds, now, id, accountId);
}

/** An activity summary computed from the task row before the write: a template rendered over its columns. */
export function taskSummary(accountId: string, id: string, e: Condition): { sql: string; binds: unknown[] } {
  return { sql: `SELECT ${e.sql} FROM tasks WHERE id = ? AND account_id = ?`, binds: [...e.binds, id, accountId] };
}

/** Where block_task changes the status: the task is neither finished nor blocked. */
export const BLOCKABLE: Condition = { sql: "status NOT IN ('done', 'cancelled', 'blocked')", binds: [] };
/** block_task sets: blocked with the reason, keeping the status it had to go back to. */
export const blockSet = (reason: string): Condition => ({ sql: "status = 'blocked', status_before_block = status, blocked_reason = ?", binds: [reason] });
/** block_task's summary over the task before. */
export const blockedSummary = (reason: string): Condition => BLOCKED_TASK.sql({ status: { sql: "status" } }, { reason });

/** unblock_task: back to the status before the block (or open). */
export const BLOCKED: Condition = { sql: "status = 'blocked'", binds: [] };
const BACK = "CASE WHEN status_before_block IS NOT NULL AND status_before_block <> 'blocked' THEN status_before_block ELSE 'open' END";
const UNBLOCK_SET = `status = ${BACK}, status_before_block = NULL, blocked_reason = NULL`;
/** unblock_task sets: back as before the block, and an agent's claim lease starts over when the task goes back in progress. */
export const unblockSet = (now: string): Condition => ({ sql: `${UNBLOCK_SET}, ${leaseRestartIf(`${BACK} = 'in_progress'`)}`, binds: [now] });
/** unblock_task's summary over the task before. */
export const unblockedSummary = (): Condition => UNBLOCKED_TASK.sql({ status: { sql: BACK } });

/** A column differs from the value given. */
export const differs = (column: "assignee" | "snoozed_until", value: string | null): Condition => ({ sql: `${column} IS NOT ?`, binds: [value] });
export const setColumn = (column: "assignee" | "snoozed_until", value: string | null): Condition => ({ sql: `${column} = ?`, binds: [value] });
/**
 * A new assignee with its lease (both null: none, as for a person's assignment); the old one's lease goes with it.
 * `person`: the caller's person, recorded as who the assignee is when it is `human` (any other assignee clears it).
 */
export const assignSet = (
  assignee: string | null,
  lease: { claim_expires_at: string | null; claim_lease_minutes: number | null },
  person: PersonRef | null,
): Condition => ({
  sql: "assignee = ?, claim_expires_at = ?, claim_lease_minutes = ?, assignee_person_id = ?",
  binds: [assignee, lease.claim_expires_at, lease.claim_lease_minutes, assigneePersonId(assignee, person)],
});

/** The two tasks of a dependency as refs, in the batch after the change. Binds: id, accountId. */
export function selectTaskRef(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare("SELECT id, title, status FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(id, accountId);
}

/** Guard condition: both tasks are live and the link between them is (or is not) there. */
export function dependencyIs(c: { taskId: string; accountId: string; dependsOnId: string; present: boolean }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL)
      AND EXISTS (SELECT 1 FROM tasks WHERE id = ?3 AND account_id = ?2 AND trash_id IS NULL)
      AND ${c.present ? "" : "NOT "}EXISTS (SELECT 1 FROM task_dependencies WHERE task_id = ?1 AND depends_on_id = ?3 AND account_id = ?2)`,
    binds: [c.taskId, c.accountId, c.dependsOnId],
  };
}

/** An activity summary naming the other task of a link (WAITS_ON or NO_LONGER_WAITS_ON). */
export function linkSummary(accountId: string, dependsOnId: string, template: typeof WAITS_ON): { sql: string; binds: unknown[] } {
  const e = template.sql({ task: { sql: "id" }, title: { sql: "title" } });
  return { sql: `SELECT ${e.sql} FROM tasks WHERE id = ? AND account_id = ?`, binds: [...e.binds, dependsOnId, accountId] };
}

const LIVE_SUBTREE_COUNT = `(${liveSubtree("?1", "?2")} SELECT count(*) FROM sub)`;

/** delete_task's summary, from the live task and its subtree before they are marked. */
export function deletedTaskSummary(accountId: string, taskId: string, trashId: string): { sql: string; binds: unknown[] } {
  return {
    sql: `SELECT ${DELETED_TASK.sql({ title: { sql: "title" }, subtasks: { sql: DELETED_SUBTASKS.sql("(n - 1)") }, trash: { sql: "?3" } }).sql}
            FROM (SELECT title, ${LIVE_SUBTREE_COUNT} AS n FROM tasks WHERE id = ?1 AND account_id = ?2)`,
    binds: [taskId, accountId, trashId],
  };
}

const SUBTREE_OUTSIDE = `(${SUBTREE_OUTSIDE_PROJECT})`;

/**
 * move_task's usual case: a live top-level task whose subtree has a task
 * outside the project (a live one, when given).
 */
export function movable(c: { taskId: string; accountId: string; projectId: string | null }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL AND parent_id IS NULL)
  AND (?3 IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = ?3 AND account_id = ?2 AND trash_id IS NULL))
  AND ${SUBTREE_OUTSIDE} > 0`,
    binds: [c.taskId, c.accountId, c.projectId],
  };
}

/** move_task's summary from the rows before, naming the project it goes to (or none). */
export const movedTaskSummary = (c: { taskId: string; accountId: string; projectId: string | null }): Condition => ({
  sql: MOVED_TEXT_QUERY,
  binds: [c.taskId, c.accountId, c.projectId, c.projectId ?? NO_PROJECT],
});
const MOVED_FROM = `coalesce(project_id, ${sqlLiteral(NO_PROJECT).sql})`;
const MOVED_TEXT_QUERY = `SELECT ${MOVED_TASK.sql({ project: { sql: "?4" }, from: { sql: MOVED_FROM }, subtasks: { sql: MOVED_SUBTASKS.sql("n") } }).sql}
  FROM (SELECT project_id, ${SUBTREE_OUTSIDE} - (project_id IS NOT ?3) AS n FROM tasks WHERE id = ?1 AND account_id = ?2)`;

/** The live task as it is at this point of the batch. */
export function selectTaskNow(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${TASK_RETURNING} FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL`).bind(id, accountId);
}
