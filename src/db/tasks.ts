import type { Condition } from "../catalog/tool.ts";
import { notFound, ToolError } from "../domain/errors.ts";
import type { Schedule } from "../domain/recurrence.ts";
import { PRIORITIES, type Priority, type TaskStatus } from "../domain/vocabulary.ts";
import { personRef, type PersonRef } from "../domain/principal.ts";
import { personNameOf } from "./people.ts";

export type { Priority, TaskStatus };

export interface TaskRow {
  id: string;
  account_id: string;
  project_id: string | null;
  parent_id: string | null;
  title: string;
  notes: string;
  status: TaskStatus;
  priority: number;
  due_at: string | null;
  estimate_minutes: number | null;
  assignee: string | null;
  auto_ok: number | null;
  blocked_reason: string | null;
  snoozed_until: string | null;
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  /** JSON of the series' Schedule, on its live occurrence only. */
  recurrence: string | null;
  series_id: string | null;
  /** When an agent's claim lease runs out; null: no lease. */
  claim_expires_at: string | null;
  /** While the assignee is `human`: the person who claimed it or was assigned it, and their shown name now. */
  assignee_person_id: string | null;
  assignee_person_name: string | null;
  /** The areas it works in (src/domain/scopes.ts); null: none. */
  scope: string | null;
}

export interface Task {
  id: string;
  project_id: string | null;
  parent_id: string | null;
  title: string;
  notes: string;
  status: TaskStatus;
  priority: Priority;
  due_at: string | null;
  estimate_minutes: number | null;
  assignee: string | null;
  /** Which person a `human` assignee is; null for an agent's or nobody's task, or when no person is known. */
  assignee_person: PersonRef | null;
  auto_ok: boolean;
  blocked_reason: string | null;
  snoozed_until: string | null;
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  recurrence: string | null;
  series_id: string | null;
}

/** Columns of a task as the tools show it; `t` is the tasks alias. */
export const TASK_COLUMNS =
  "t.id, t.account_id, t.project_id, t.parent_id, t.title, t.notes, t.status, t.priority, t.due_at, t.estimate_minutes, " +
  "t.assignee, t.auto_ok, t.blocked_reason, t.snoozed_until, t.version, t.created_by, t.created_at, t.updated_at, t.completed_at, t.recurrence, t.series_id, t.claim_expires_at" +
  `, t.assignee_person_id, ${personNameOf("t.assignee_person_id")} AS assignee_person_name, t.scope`;

/** The same columns for `RETURNING`, which takes no table alias. */
export const TASK_RETURNING = TASK_COLUMNS.replace(/t\./g, "");

/** The assignee that is a person (src/domain/claims.ts PERSON_ASSIGNEE). */
const PERSON = "human";

export function toTask(r: TaskRow): Task {
  return {
    id: r.id,
    project_id: r.project_id,
    parent_id: r.parent_id,
    title: r.title,
    notes: r.notes,
    status: r.status,
    priority: PRIORITIES[r.priority] ?? "normal",
    due_at: r.due_at,
    estimate_minutes: r.estimate_minutes,
    assignee: r.assignee,
    assignee_person: r.assignee === PERSON ? personRef(r.assignee_person_id, r.assignee_person_name) : null,
    auto_ok: r.auto_ok === 1,
    blocked_reason: r.blocked_reason,
    snoozed_until: r.snoozed_until,
    version: r.version,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
    completed_at: r.completed_at,
    recurrence: r.recurrence ? scheduleOf(r.recurrence).rule : null,
    series_id: r.series_id,
  };
}

/** The person id a task with this assignee records: the person's, when the assignee is `human`; else none. */
export function assigneePersonId(assignee: string | null, person: PersonRef | null | undefined): string | null {
  return assignee === PERSON ? person?.id ?? null : null;
}

/** A stored schedule (tasks.recurrence). */
export function scheduleOf(json: string): Schedule {
  return JSON.parse(json) as Schedule;
}

export const priorityIndex = (p: Priority): number => PRIORITIES.indexOf(p);

export function selectTask(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db
    .prepare(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = ? AND t.account_id = ? AND t.trash_id IS NULL`)
    .bind(id, accountId);
}

export async function findTask(db: D1Database, accountId: string, id: string): Promise<TaskRow | null> {
  return selectTask(db, accountId, id).first<TaskRow>();
}

/** A live task of this account, or a not-found error that says how to find ids. */
export async function requireTask(db: D1Database, accountId: string, id: string): Promise<TaskRow> {
  const row = await findTask(db, accountId, id);
  return row ?? throwTaskMissing(db, accountId, id);
}

export interface NewTask {
  id: string;
  accountId: string;
  projectId: string | null;
  parentId: string | null;
  title: string;
  notes: string;
  priority: number;
  dueAt: string | null;
  estimateMinutes: number | null;
  assignee: string | null;
  /** Which person a `human` assignee is (ignored for any other assignee). */
  assigneePerson?: PersonRef | null;
  autoOk: boolean;
  createdBy: string;
  now: string;
  /** A recurring task's schedule and series. */
  schedule?: Schedule | null;
  seriesId?: string | null;
  /** The scope column (src/domain/scopes.ts), null: none. */
  scope?: string | null;
}

/**
 * A new task. `unlessPaused`: its assignee only while that agent is not
 * paused, else none (a recurring task's next occurrence: a paused agent is
 * given nothing, C5).
 */
export function insertTask(db: D1Database, t: NewTask, o: { unlessPaused?: boolean } = {}): D1PreparedStatement {
  const assignee = o.unlessPaused
    ? "CASE WHEN EXISTS (SELECT 1 FROM agents WHERE account_id = ?2 AND name = ?10 AND paused_at IS NOT NULL) THEN NULL ELSE ?10 END"
    : "?10";
  return db
    .prepare(
      `INSERT INTO tasks (id, account_id, project_id, parent_id, title, notes, status, priority, due_at, estimate_minutes,
                          assignee, auto_ok, version, created_by, created_at, updated_at, recurrence, series_id, assignee_person_id)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'open', ?7, ?8, ?9, ${assignee}, ?11, 1, ?12, ?13, ?14, ?15, ?16, ?17)`,
    )
    .bind(
      t.id, t.accountId, t.projectId, t.parentId, t.title, t.notes, t.priority, t.dueAt, t.estimateMinutes,
      t.assignee, t.autoOk ? 1 : 0, t.createdBy, t.now, t.now, t.schedule ? JSON.stringify(t.schedule) : null, t.seriesId ?? null,
      assigneePersonId(t.assignee, t.assigneePerson),
    );
}

/**
 * insertTask with what it would have read computed in the statement: a
 * subtask's project is its parent's, and auto-OK (null) defaults from the
 * project, then the account, then off (or is the parent's). Returns the row as written.
 */
export function insertTaskFrom(
  db: D1Database,
  t: Omit<NewTask, "autoOk"> & { autoOk: boolean | null },
  autoOkFrom: "defaults" | "parent" = "defaults",
): D1PreparedStatement {
  const project = t.parentId ? "(SELECT project_id FROM tasks WHERE id = ?4 AND account_id = ?2)" : "?3";
  const defaults = autoOkFrom === "parent"
    ? "(SELECT auto_ok FROM tasks WHERE id = ?4 AND account_id = ?2)"
    : `(SELECT default_auto_ok FROM projects WHERE id = ${project} AND account_id = ?2),
                       (SELECT default_auto_ok FROM accounts WHERE id = ?2)`;
  return db
    .prepare(
      `INSERT INTO tasks (id, account_id, project_id, parent_id, title, notes, status, priority, due_at, estimate_minutes,
                          assignee, auto_ok, version, created_by, created_at, updated_at, recurrence, series_id, assignee_person_id, scope)
       SELECT ?1, ?2, ${project}, ?4, ?5, ?6, 'open', ?7, ?8, ?9, ?10,
              coalesce(?11, ${defaults}, 0),
              1, ?12, ?13, ?13, ?14, ?15, ?16, ?17
       RETURNING ${TASK_RETURNING}`,
    )
    .bind(
      t.id, t.accountId, t.projectId, t.parentId, t.title, t.notes, t.priority, t.dueAt, t.estimateMinutes,
      t.assignee, t.autoOk === null ? null : t.autoOk ? 1 : 0, t.createdBy, t.now, t.schedule ? JSON.stringify(t.schedule) : null, t.seriesId ?? null,
      assigneePersonId(t.assignee, t.assigneePerson), t.scope ?? null,
    );
}

/** Guard condition: the task is in the project (null: in none). */
export function taskInProject(c: { taskId: string; accountId: string; projectId: string | null }): Condition {
  return { sql: "(SELECT project_id FROM tasks WHERE id = ? AND account_id = ?) IS ?", binds: [c.taskId, c.accountId, c.projectId] };
}

/** Guard condition: the account has an agent of this name. */
export function agentExists(c: { accountId: string; name: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM agents WHERE account_id = ? AND name = ?)", binds: [c.accountId, c.name] };
}

/** The task as `insertTask` wrote it, without reading it back. */
export function newTaskValue(t: NewTask): Task {
  return {
    id: t.id,
    project_id: t.projectId,
    parent_id: t.parentId,
    title: t.title,
    notes: t.notes,
    status: "open",
    priority: PRIORITIES[t.priority],
    due_at: t.dueAt,
    estimate_minutes: t.estimateMinutes,
    assignee: t.assignee,
    assignee_person: t.assignee === PERSON ? t.assigneePerson ?? null : null,
    auto_ok: t.autoOk,
    blocked_reason: null,
    snoozed_until: null,
    version: 1,
    created_by: t.createdBy,
    created_at: t.now,
    updated_at: t.now,
    completed_at: null,
    recurrence: t.schedule?.rule ?? null,
    series_id: t.seriesId ?? null,
  };
}

/**
 * The auto-OK a new task starts with: the project's default, else the
 * account's, else off. One statement, so it can ride in the caller's read.
 */
export async function defaultAutoOk(db: D1Database, accountId: string, projectId: string | null): Promise<boolean> {
  const row = await db
    .prepare(
      `SELECT coalesce((SELECT default_auto_ok FROM projects WHERE id = ? AND account_id = ?),
                       (SELECT default_auto_ok FROM accounts WHERE id = ?), 0) AS auto_ok`,
    )
    .bind(projectId, accountId, accountId)
    .first<{ auto_ok: number }>();
  return row?.auto_ok === 1;
}

/** Guard: the account has an agent of this name that no person paused. */
export function agentIsUnpaused(c: { accountId: string; name: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM agents WHERE account_id = ? AND name = ? AND paused_at IS NULL)", binds: [c.accountId, c.name] };
}

/** Whether the name is an assignee of the account (`human` or one of its agents), and when that agent was paused. */
export async function readAssignee(db: D1Database, accountId: string, name: string): Promise<{ exists: boolean; paused_at: string | null }> {
  return assigneeIn(name, name === "human" ? [] : (await selectAssignee(db, accountId, name).all()).results);
}

/** The agent row readAssignee reads (`{ paused_at }`; none for `human` or no assignee), to ride in a caller's batch. */
export function selectAssignee(db: D1Database, accountId: string, name: string | null): D1PreparedStatement {
  return db.prepare("SELECT paused_at FROM agents WHERE account_id = ? AND name = ? AND name <> 'human'").bind(accountId, name ?? "");
}

/** readAssignee's answer from selectAssignee's rows. */
export function assigneeIn(name: string, rows: unknown[]): { exists: boolean; paused_at: string | null } {
  if (name === "human") return { exists: true, paused_at: null };
  const row = rows[0] as { paused_at: string | null } | undefined;
  return { exists: row !== undefined, paused_at: row?.paused_at ?? null };
}

/** Does this name an assignee of the account: `human`, or one of its agents? */
export async function assigneeExists(db: D1Database, accountId: string, name: string): Promise<boolean> {
  if (name === "human") return true;
  const row = await db.prepare("SELECT 1 AS ok FROM agents WHERE account_id = ? AND name = ?").bind(accountId, name).first();
  return row !== null;
}

/** A task of the account whether live or in the trash, with its trash item if it has one. */
export function selectTaskWithTrash(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT t.id, t.title, t.trash_id, tr.purge_after, tr.item_count, tr.kind AS trash_kind, tr.target_id AS trash_target
         FROM tasks t LEFT JOIN trash tr ON tr.id = t.trash_id AND tr.account_id = t.account_id
        WHERE t.id = ? AND t.account_id = ?`,
    )
    .bind(id, accountId);
}

export interface TaskWithTrash {
  id: string;
  title: string;
  trash_id: string | null;
  purge_after: string | null;
  item_count: number | null;
  trash_kind: string | null;
  trash_target: string | null;
}

export const TASK_HINT = "list_tasks or search_tasks finds task ids";

/** The error for a task id that names no live task: in the trash (this account's only) says so and how to restore it. */
export function taskMissing(id: string, trashed: TaskWithTrash | undefined, hint = TASK_HINT): ToolError {
  if (!trashed?.trash_id || !trashed.purge_after) return notFound("task", id, hint);
  const unit = trashed.trash_target === id ? "" : ` with its ${trashed.trash_kind} ${trashed.trash_target}`;
  return new ToolError(
    "not_found",
    `Task ${id} ("${trashed.title}") is in the trash${unit} (item ${trashed.trash_id}, purged after ${trashed.purge_after}). ` +
      `restore_from_trash with item_id ${trashed.trash_id} brings it back; then call again.`,
  );
}

/** Throws the error for a task id that names no live task, after one look at the trash. */
export async function throwTaskMissing(db: D1Database, accountId: string, id: string, hint = TASK_HINT): Promise<never> {
  throw taskMissing(id, (await selectTaskWithTrash(db, accountId, id).first<TaskWithTrash>()) ?? undefined, hint);
}

export function selectAccountPrefs(db: D1Database, accountId: string): D1PreparedStatement {
  return db.prepare("SELECT time_zone, trash_retention_days FROM accounts WHERE id = ?").bind(accountId);
}

export interface AccountPrefs {
  time_zone: string;
  trash_retention_days: number;
}

/** Guard condition: the task is live and still at this version. */
export function taskAtVersion(c: { taskId: string; accountId: string; version: number }): Condition {
  return { sql: "(SELECT version FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL) = ?", binds: [c.taskId, c.accountId, c.version] };
}

const TASK_IS_LIVE = "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL)";

/** Guard condition: the task is live. */
export function taskIsLive(c: { taskId: string; accountId: string }): Condition {
  return { sql: TASK_IS_LIVE, binds: [c.taskId, c.accountId] };
}

/**
 * Guard condition: the task is live (at `version`, when given) and each
 * column of `changes` differs from the value given for it.
 */
export function taskChangesEach(c: { taskId: string; accountId: string; version?: number; changes: Record<string, unknown> }): Condition {
  const fields = Object.keys(c.changes);
  const withVersion = c.version !== undefined;
  const differs = fields.map((f) => ` AND ${f} IS NOT ?`).join("");
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL${withVersion ? " AND version = ?" : ""}${differs})`,
    binds: [c.taskId, c.accountId, ...(withVersion ? [c.version] : []), ...fields.map((f) => c.changes[f])],
  };
}

/** Sets the given columns, bumps the version, and returns the task as written. */
export function updateTaskReturning(db: D1Database, accountId: string, id: string, changes: Record<string, unknown>, now: string): D1PreparedStatement {
  const fields = Object.keys(changes);
  return db
    .prepare(
      `UPDATE tasks SET ${fields.map((f) => `${f} = ?`).join(", ")}, version = version + 1, updated_at = ?
        WHERE id = ? AND account_id = ? RETURNING ${TASK_RETURNING}`,
    )
    .bind(...fields.map((f) => changes[f]), now, id, accountId);
}

/** The top-level ancestor of a task (the task itself when it has no parent). */
export async function rootTaskOf(db: D1Database, accountId: string, id: string): Promise<{ id: string; title: string }> {
  const row = await db
    .prepare(
      `WITH RECURSIVE up(id, parent_id, title, depth) AS (
         SELECT id, parent_id, title, 0 FROM tasks WHERE id = ?1 AND account_id = ?2
         UNION ALL
         SELECT t.id, t.parent_id, t.title, up.depth + 1 FROM tasks t JOIN up ON t.id = up.parent_id
          WHERE t.account_id = ?2 AND up.depth < 1000)
       SELECT id, title FROM up ORDER BY depth DESC LIMIT 1`,
    )
    .bind(id, accountId)
    .first<{ id: string; title: string }>();
  return row ?? { id, title: "" };
}

/**
 * The subtree of a live task: `WITH RECURSIVE sub(id)` over the task itself
 * and its live descendants (empty when the task is not live). `id` and
 * `account` are the bind placeholders of the root and the account, e.g. "?1".
 *
 * Each step goes down by the parent index, so the walk costs the rows it
 * finds. Left to itself the planner prefers `tasks_account_created` (account
 * and trash_id are two equalities to parent_id's one) and reads every live
 * task of the account once per task of the subtree: quadratic.
 */
export function liveSubtree(id: string, account: string): string {
  return `WITH RECURSIVE sub(id) AS (
    SELECT id FROM tasks WHERE id = ${id} AND account_id = ${account} AND trash_id IS NULL
    UNION SELECT t.id FROM sub JOIN tasks t INDEXED BY tasks_parent ON t.parent_id = sub.id WHERE t.account_id = ${account} AND t.trash_id IS NULL)`;
}

/**
 * The task rows of a live subtree (after `liveSubtree` under the same
 * placeholders), looked up by id from the walk. The account and trash
 * conditions are kept from the indexes (`+`): with them the planner would
 * read every live task of the account and test each against the walk.
 */
export function inLiveSubtree(account: string): string {
  return `id IN (SELECT id FROM sub) AND +account_id = ${account} AND +trash_id IS NULL`;
}

/** Live tasks of a subtree (the root included) whose project is not ?3, as `n`. Binds: root, account, project. */
export const SUBTREE_OUTSIDE_PROJECT = `${liveSubtree("?1", "?2")} SELECT count(*) AS n FROM tasks
        WHERE ${inLiveSubtree("?2")} AND project_id IS NOT ?3`;

/** Live tasks of a subtree (the root included) whose project is not `projectId`. */
export async function subtreeOutsideProject(db: D1Database, accountId: string, rootId: string, projectId: string | null): Promise<number> {
  const row = await selectSubtreeOutsideProject(db, accountId, rootId, projectId).first<{ n: number }>();
  return row?.n ?? 0;
}

/** The statement of subtreeOutsideProject (a `{ n }` row), to ride in a caller's batch. */
export function selectSubtreeOutsideProject(db: D1Database, accountId: string, rootId: string, projectId: string | null): D1PreparedStatement {
  return db.prepare(SUBTREE_OUTSIDE_PROJECT).bind(rootId, accountId, projectId);
}

/** Moves a task's whole live subtree to a project (or none), bumping each moved task's version. */
export function moveSubtree(db: D1Database, accountId: string, rootId: string, projectId: string | null, now: string): D1PreparedStatement {
  return db
    .prepare(
      `${liveSubtree("?1", "?2")} UPDATE tasks SET project_id = ?3, version = version + 1, updated_at = ?4
        WHERE ${inLiveSubtree("?2")} AND project_id IS NOT ?3`,
    )
    .bind(rootId, accountId, projectId, now);
}

/** Guard condition: the project is live. */
export function projectIsLive(c: { projectId: string; accountId: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM projects WHERE id = ? AND account_id = ? AND trash_id IS NULL)", binds: [c.projectId, c.accountId] };
}
