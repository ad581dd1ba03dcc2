import { notFound } from "../domain/errors.ts";
import { PRIORITIES, TASK_STATUSES } from "../tools/schemas.ts";

export type Priority = (typeof PRIORITIES)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];

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
  auto_ok: boolean;
  blocked_reason: string | null;
  snoozed_until: string | null;
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

/** Columns of a task as the tools show it; `t` is the tasks alias. */
export const TASK_COLUMNS =
  "t.id, t.account_id, t.project_id, t.parent_id, t.title, t.notes, t.status, t.priority, t.due_at, t.estimate_minutes, " +
  "t.assignee, t.auto_ok, t.blocked_reason, t.snoozed_until, t.version, t.created_by, t.created_at, t.updated_at, t.completed_at";

/** The same columns for `RETURNING`, which takes no table alias. */
export const TASK_RETURNING = TASK_COLUMNS.replace(/t\./g, "");

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
    auto_ok: r.auto_ok === 1,
    blocked_reason: r.blocked_reason,
    snoozed_until: r.snoozed_until,
    version: r.version,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
    completed_at: r.completed_at,
  };
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
  if (!row) throw notFound("task", id, "list_tasks or search_tasks finds task ids");
  return row;
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
  autoOk: boolean;
  createdBy: string;
  now: string;
}

export function insertTask(db: D1Database, t: NewTask): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO tasks (id, account_id, project_id, parent_id, title, notes, status, priority, due_at, estimate_minutes,
                          assignee, auto_ok, version, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
    )
    .bind(
      t.id, t.accountId, t.projectId, t.parentId, t.title, t.notes, t.priority, t.dueAt, t.estimateMinutes,
      t.assignee, t.autoOk ? 1 : 0, t.createdBy, t.now, t.now,
    );
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
    auto_ok: t.autoOk,
    blocked_reason: null,
    snoozed_until: null,
    version: 1,
    created_by: t.createdBy,
    created_at: t.now,
    updated_at: t.now,
    completed_at: null,
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

/** Does this name an assignee of the account: `human`, or one of its agents? */
export async function assigneeExists(db: D1Database, accountId: string, name: string): Promise<boolean> {
  if (name === "human") return true;
  const row = await db.prepare("SELECT 1 AS ok FROM agents WHERE account_id = ? AND name = ?").bind(accountId, name).first();
  return row !== null;
}
