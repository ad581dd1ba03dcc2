import { notMoving } from "./move-account.ts";
import { PERSON_ASSIGNEE } from "../domain/claims.ts";

/** The lease columns of a claim without a lease (a person's assignment: it never lapses). */
export const NO_LEASE = { claim_expires_at: null, claim_lease_minutes: null } as const;

import type { Condition } from "../catalog/tool.ts";
import { readBatch } from "./batch.ts";
import { selectTask, selectTaskWithTrash, taskMissing, type TaskRow, type TaskWithTrash } from "./tasks.ts";
export type { Condition };

/** A lease's new end: now (`now`, an SQL placeholder) plus its length. */
const LEASE_FROM_NOW = (now: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${now}, '+' || claim_lease_minutes || ' minutes')`;

/**
 * Renews the lease of `holder`'s claim on the task `taskSql` names (binds: now,
 * the id `taskSql` reads as ?2, account id, holder): now plus the lease's
 * length, in the same batch as the holder's run event, step status or
 * comment. Nothing for anyone else, for a task not in progress, or for a
 * claim without a lease. Not a change of the task: no version, no updated_at.
 */
function renewal(taskSql: string): string {
  return `UPDATE tasks SET claim_expires_at = ${LEASE_FROM_NOW("?1")}
    WHERE id = ${taskSql} AND account_id = ?3 AND assignee = ?4 AND status = 'in_progress' AND trash_id IS NULL
      AND claim_expires_at IS NOT NULL AND claim_lease_minutes IS NOT NULL`;
}

/** Renews `holder`'s lease on the task. */
export function renewLease(db: D1Database, accountId: string, taskId: string, holder: string, now: string): D1PreparedStatement {
  return db.prepare(renewal("?2")).bind(now, taskId, accountId, holder);
}

/** renewLease for the task of a run: for a batch that knows the run, not its task. */
export function renewLeaseOfRun(db: D1Database, accountId: string, runId: string, holder: string, now: string): D1PreparedStatement {
  return db.prepare(renewal("(SELECT task_id FROM runs WHERE id = ?2 AND account_id = ?3)")).bind(now, runId, accountId, holder);
}

/** renewLease for the task of a step: for a batch that knows the step, not its task. */
export function renewLeaseOfStep(db: D1Database, accountId: string, stepId: string, holder: string, now: string): D1PreparedStatement {
  return db.prepare(renewal("(SELECT task_id FROM steps WHERE id = ?2 AND account_id = ?3)")).bind(now, stepId, accountId, holder);
}

/**
 * An UPDATE's SET term: an agent's lease starts over (bind: now, one `?`) when
 * `backInProgress` (an SQL condition over the row before the update) holds,
 * as when reject_task or unblock_task puts the task back to work.
 */
export function leaseRestartIf(backInProgress: string): string {
  return `claim_expires_at = CASE
    WHEN ${backInProgress} AND assignee IS NOT NULL AND claim_expires_at IS NOT NULL AND claim_lease_minutes IS NOT NULL
    THEN ${LEASE_FROM_NOW("?")} ELSE claim_expires_at END`;
}

/** The holder's claim_task again: the lease starts over with the given length (no version, no history entry). */
export function restartLease(db: D1Database, accountId: string, taskId: string, holder: string, expiresAt: string, minutes: number): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE tasks SET claim_expires_at = ?1, claim_lease_minutes = ?2
        WHERE id = ?3 AND account_id = ?4 AND assignee = ?5 AND status IN ('in_progress', 'blocked') AND trash_id IS NULL`,
    )
    .bind(expiresAt, minutes, taskId, accountId, holder);
}

/**
 * A live task as claim_task reads it, with what a take-over of its lapsed
 * claim names: the holder's latest running run on it. One round trip; not
 * found (or in the trash, saying so) if the task isn't live.
 */
export async function readClaimState(
  db: D1Database,
  accountId: string,
  taskId: string,
): Promise<{ task: TaskRow; staleRunId: string | null }> {
  return claimStateIn(taskId, await readBatch(db, claimStateStatements(db, accountId, taskId)));
}

/** The reads of readClaimState, to ride in a caller's batch (claimStateIn makes its answer of their rows). */
export function claimStateStatements(db: D1Database, accountId: string, taskId: string): Record<"task" | "trashed" | "run", D1PreparedStatement> {
  return {
    task: selectTask(db, accountId, taskId),
    trashed: selectTaskWithTrash(db, accountId, taskId),
    run: db
      .prepare(
        `SELECT r.id FROM runs r JOIN agents g ON g.id = r.agent_id AND g.account_id = r.account_id
                 JOIN tasks t ON t.id = r.task_id AND t.account_id = r.account_id AND g.name = t.assignee
          WHERE r.account_id = ? AND r.task_id = ? AND r.status = 'running' ORDER BY r.started_at DESC, r.id DESC LIMIT 1`,
      )
      .bind(accountId, taskId),
  };
}

/** readClaimState's answer from the rows of claimStateStatements. */
export function claimStateIn(taskId: string, rows: Record<"task" | "trashed" | "run", unknown[]>): { task: TaskRow; staleRunId: string | null } {
  const row = rows.task[0] as TaskRow | undefined;
  if (!row) throw taskMissing(taskId, rows.trashed[0] as TaskWithTrash | undefined);
  return { task: row, staleRunId: (rows.run[0] as { id: string } | undefined)?.id ?? null };
}

/** Guard: the task is live at the version read, and its claim's lease still ends when it did (a renewal moves it on without a new version). */
export function leaseStillEnds(c: { taskId: string; accountId: string; version: number; expiredAt: string }): Condition {
  return {
    sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL AND version = ? AND claim_expires_at = ?)",
    binds: [c.taskId, c.accountId, c.version, c.expiredAt],
  };
}

/**
 * Records that a lapse was announced; RETURNING yields a row only for the
 * call that recorded it (a later lapse of the same task replaces the notice).
 */
export function noticeLapse(
  db: D1Database,
  n: { taskId: string; accountId: string; expiredAt: string; eventId: string; now: string },
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO claim_lapse_notices (task_id, account_id, expired_at, event_id, notified_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (task_id) DO UPDATE SET expired_at = excluded.expired_at, event_id = excluded.event_id, notified_at = excluded.notified_at
        WHERE claim_lapse_notices.expired_at <> excluded.expired_at
       RETURNING task_id`,
    )
    .bind(n.taskId, n.accountId, n.expiredAt, n.eventId, n.now);
}

export interface LapsedClaim {
  id: string;
  account_id: string;
  title: string;
  status: string;
  project_id: string | null;
  assignee: string;
  due_at: string | null;
  claim_expires_at: string;
}

/** Live tasks whose agent's lease ran out by `now` and whose lapse has not been announced, oldest lapse first. */
export async function unannouncedLapses(db: D1Database, now: string, limit: number): Promise<LapsedClaim[]> {
  const { results } = await db
    .prepare(
      `SELECT t.id, t.account_id, t.title, t.status, t.project_id, t.assignee, t.due_at, t.claim_expires_at
         FROM tasks t LEFT JOIN claim_lapse_notices n ON n.task_id = t.id
        WHERE t.claim_expires_at IS NOT NULL AND t.claim_expires_at <= ?1 AND t.status = 'in_progress' AND t.trash_id IS NULL
          AND t.assignee IS NOT NULL AND t.assignee <> '${PERSON_ASSIGNEE}'
          AND (n.task_id IS NULL OR n.expired_at <> t.claim_expires_at) AND ${notMoving("t.account_id")}
        ORDER BY t.claim_expires_at LIMIT ?2`,
    )
    .bind(now, limit)
    .all<LapsedClaim>();
  return results;
}
