/**
 * claim_task without a task: the most urgent ready task, picked and claimed in
 * one batch. D1 runs a batch as one transaction, one batch at a time, so the
 * pick (the activity row's target, read first in the batch) and the claim (an
 * UPDATE of that row, still open) see the same rows: of N agents asking at
 * once, each ready task goes to exactly one, and no call loses a race.
 */

import type { Condition } from "../catalog/tool.ts";
import { PERSON_ASSIGNEE } from "../domain/claims.ts";
import { readBatch } from "./batch.ts";
import { UNFINISHED } from "./dependencies.ts";
import { TASK_COLUMNS } from "./tasks.ts";
import { overlapSql } from "./scopes-sql.ts";

/** Who asks, and what it narrows the choice to. */
export interface NextFilter {
  accountId: string;
  caller: string;
  /** Whether the scopes others hold skip a task (an agent's claim; a person is never refused for a scope). */
  agent: boolean;
  now: string;
  projectId?: string;
  label?: string;
}

/** A task (alias `t`) that waits on unfinished work. */
const WAITS = `EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks w ON w.id = d.depends_on_id
  WHERE d.task_id = t.id AND d.account_id = t.account_id AND ${UNFINISHED("w")})`;

/** Held by someone other than the caller (binds: caller, now): the view `holds` of schema.sql, for a read outside a batch too. */
export const HELD_BY_OTHER = (h: string) =>
  `${h}.assignee IS NOT NULL AND ${h}.assignee <> ? AND (${h}.status IN ('blocked', 'awaiting_approval')
    OR (${h}.status = 'in_progress' AND (${h}.claim_expires_at IS NULL OR ${h}.claim_expires_at > ?)))`;

/** The filters every count shares: the account's live tasks in no project or a live one, narrowed by project and label. */
function narrowed(f: NextFilter): Condition {
  const binds: unknown[] = [f.accountId];
  let sql = `t.account_id = ? AND t.trash_id IS NULL
    AND (t.project_id IS NULL OR EXISTS (SELECT 1 FROM projects p WHERE p.id = t.project_id AND p.account_id = t.account_id
      AND p.trash_id IS NULL AND p.archived_at IS NULL))`;
  if (f.projectId !== undefined) {
    sql += " AND t.project_id = ?";
    binds.push(f.projectId);
  }
  if (f.label !== undefined) {
    sql += " AND EXISTS (SELECT 1 FROM task_labels tl JOIN labels l ON l.id = tl.label_id WHERE tl.task_id = t.id AND l.account_id = t.account_id AND l.name = ?)";
    binds.push(f.label);
  }
  return { sql, binds };
}

/** Open, and the caller's to take: unassigned or assigned to it. */
const OPEN_FOR = "t.status = 'open' AND (t.assignee IS NULL OR t.assignee = ?)";

/**
 * The task (alias `t`) overlaps the scope of a live task another holds (binds:
 * caller, now); the holding task is `h`. Open statuses never hold, so the index
 * on (account_id, status) finds the held ones.
 */
export const SCOPED_OUT = `t.scope IS NOT NULL AND EXISTS (SELECT 1 FROM tasks h
  WHERE h.account_id = t.account_id AND h.status IN ('in_progress', 'blocked', 'awaiting_approval') AND h.trash_id IS NULL
    AND h.id <> t.id AND h.scope IS NOT NULL AND ${HELD_BY_OTHER("h")} AND ${overlapSql("t.scope", "h.scope")})`;

/** Open for the caller, not snoozed, waiting on nothing unfinished, scopes aside (binds: narrowed's, caller, now). */
function readyButScopes(f: NextFilter): Condition {
  const n = narrowed(f);
  return {
    sql: `${n.sql} AND ${OPEN_FOR} AND (t.snoozed_until IS NULL OR t.snoozed_until <= ?) AND NOT ${WAITS}`,
    binds: [...n.binds, f.caller, f.now],
  };
}

/** Ready: and, for an agent, overlapping no scope another holds. */
function ready(f: NextFilter): Condition {
  const r = readyButScopes(f);
  return f.agent ? { sql: `${r.sql} AND NOT (${SCOPED_OUT})`, binds: [...r.binds, f.caller, f.now] } : r;
}

/** Most urgent first: priority, then the earliest due (none last), then the oldest; the id breaks ties so the pick is one row. */
const URGENCY = "t.priority DESC, t.due_at IS NULL, t.due_at, t.created_at, t.id";

/** The id of the most urgent ready task (NULL: none), an SQL expression. */
export function pickNext(f: NextFilter): Condition {
  const r = ready(f);
  return { sql: `SELECT t.id FROM tasks t WHERE ${r.sql} ORDER BY ${URGENCY} LIMIT 1`, binds: r.binds };
}

/** Some task is ready for the caller (a guard). */
export function someReady(f: NextFilter): Condition {
  const r = ready(f);
  return { sql: `EXISTS (SELECT 1 FROM tasks t WHERE ${r.sql})`, binds: r.binds };
}

/** The task the activity row `activityId` names (the one the batch picked). */
const PICKED = "(SELECT target_id FROM activity WHERE id = ?)";

/**
 * Claims the task the batch picked (the target of its activity row), while it is
 * still open for the caller: `set` as claim_task sets it (claimSet).
 */
export function claimPicked(db: D1Database, accountId: string, activityId: string, caller: string, set: Condition, now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE tasks SET ${set.sql}, version = version + 1, updated_at = ?
        WHERE id = ${PICKED} AND account_id = ? AND trash_id IS NULL AND status = 'open' AND (assignee IS NULL OR assignee = ?)`,
    )
    .bind(...set.binds, now, activityId, accountId, caller);
}

/** The task the batch claimed, as the tools show it. */
export function selectPicked(db: D1Database, accountId: string, activityId: string): D1PreparedStatement {
  return db.prepare(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = ${PICKED} AND t.account_id = ?`).bind(activityId, accountId);
}

/** Counted up to this many: what the answer says is left, at a bounded cost. */
export const READY_LEFT_CAP = 100;

/** How many tasks are still ready for the caller (after the claim, in the same batch), up to READY_LEFT_CAP. */
export function countReady(db: D1Database, f: NextFilter): D1PreparedStatement {
  const r = ready(f);
  return db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM tasks t WHERE ${r.sql} LIMIT ${READY_LEFT_CAP})`).bind(...r.binds);
}

/** Why nothing is ready: what waits, and the earliest time something may become ready. */
export interface NothingReady {
  waiting_on_dependencies: number;
  snoozed: number;
  held: number;
  scoped_out: number;
  earliest_ready_at: string | null;
}

/**
 * The counts behind "nothing is ready", in one round trip: open tasks that wait
 * on unfinished work, open tasks snoozed (and waiting on nothing), tasks others
 * hold, and the earliest time one of them may become ready (a snooze ending, a
 * lease running out). Also whether something is ready after all (a race).
 */
export async function readNothingReady(db: D1Database, f: NextFilter): Promise<NothingReady & { ready: number; projectFound: boolean }> {
  const n = narrowed(f);
  const r = ready(f);
  const b = readyButScopes(f);
  const rows = await readBatch(db, {
    scoped: db.prepare(`SELECT count(*) AS n FROM tasks t WHERE ${b.sql} AND ${SCOPED_OUT}`).bind(...b.binds, f.caller, f.now),
    ready: db.prepare(`SELECT count(*) AS n FROM tasks t WHERE ${r.sql}`).bind(...r.binds),
    waits: db.prepare(`SELECT count(*) AS n FROM tasks t WHERE ${n.sql} AND ${OPEN_FOR} AND ${WAITS}`).bind(...n.binds, f.caller),
    snoozed: db
      .prepare(`SELECT count(*) AS n, min(t.snoozed_until) AS at FROM tasks t WHERE ${n.sql} AND ${OPEN_FOR} AND t.snoozed_until > ? AND NOT ${WAITS}`)
      .bind(...n.binds, f.caller, f.now),
    held: db
      .prepare(
        `SELECT count(*) AS n, min(CASE WHEN t.status = 'in_progress' AND t.assignee <> '${PERSON_ASSIGNEE}' THEN t.claim_expires_at END) AS at
           FROM tasks t WHERE ${n.sql} AND ${HELD_BY_OTHER("t")}`,
      )
      .bind(...n.binds, f.caller, f.now),
    // The project it was narrowed to, in this account (live, archived or in the trash): another account's id names nothing.
    project: db.prepare("SELECT count(*) AS n FROM projects WHERE id = ? AND account_id = ?").bind(f.projectId ?? null, f.accountId),
  });
  const one = (k: keyof typeof rows) => rows[k][0] as { n: number; at?: string | null };
  const times = [one("snoozed").at, one("held").at].filter((x): x is string => typeof x === "string").sort();
  return {
    ready: one("ready").n,
    projectFound: f.projectId === undefined || one("project").n > 0,
    waiting_on_dependencies: one("waits").n,
    snoozed: one("snoozed").n,
    held: one("held").n,
    scoped_out: f.agent ? one("scoped").n : 0,
    earliest_ready_at: times[0] ?? null,
  };
}

/** Guard for an agent's claim by id: the task overlaps no scope another holds. */
export function scopeFree(c: { taskId: string; accountId: string; caller: string; now: string }): Condition {
  return { sql: `NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = ? AND t.account_id = ? AND ${SCOPED_OUT})`, binds: [c.taskId, c.accountId, c.caller, c.now] };
}

/** A held task whose scope overlaps the task's: who holds it, and both scopes (columns). */
export interface ScopeHolder {
  id: string;
  title: string;
  holder: string;
  theirs: string;
  mine: string;
}

/** The live tasks others hold whose scope overlaps the task's (`task`, an SQL expression; binds: caller, now, then its own), oldest first. */
const scopeHolders = (task: string) =>
  `SELECT h.id, h.title, h.assignee AS holder, h.scope AS theirs, t.scope AS mine
     FROM tasks t JOIN tasks h ON h.account_id = t.account_id AND h.status IN ('in_progress', 'blocked', 'awaiting_approval')
      AND h.trash_id IS NULL AND h.id <> t.id AND h.scope IS NOT NULL AND ${HELD_BY_OTHER("h")} AND ${overlapSql("t.scope", "h.scope")}
    WHERE t.id = ${task} AND t.account_id = ? AND t.scope IS NOT NULL
    ORDER BY h.created_at, h.id LIMIT 20`;

/** The live tasks others hold whose scope overlaps the task's. */
export function selectScopeHolders(db: D1Database, c: { taskId: string; accountId: string; caller: string; now: string }): D1PreparedStatement {
  return db.prepare(scopeHolders("?")).bind(c.caller, c.now, c.taskId, c.accountId);
}

/** The same for the task the batch picked (the target of its activity row `activityId`). */
export function selectPickedScopeHolders(db: D1Database, activityId: string, c: { accountId: string; caller: string; now: string }): D1PreparedStatement {
  return db.prepare(scopeHolders(PICKED)).bind(c.caller, c.now, activityId, c.accountId);
}
