import type { Condition } from "../catalog/tool.ts";
import { notFound } from "../domain/errors.ts";
import { readBatch } from "./batch.ts";
import { ARCHIVED_PROJECT, DELETED_PROJECT, listWhereSql, sqlLiteral, UNARCHIVED_PROJECT, UPDATED_PROJECT } from "./summaries.ts";
import { TASK_COLUMNS, type TaskRow } from "./tasks.ts";
import type { StepStatus } from "../domain/vocabulary.ts";

export interface ProjectRow {
  id: string;
  name: string;
  description: string;
  default_auto_ok: number | null;
  archived_at: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export const PROJECT_COLUMNS = "p.id, p.name, p.description, p.default_auto_ok, p.archived_at, p.version, p.created_at, p.updated_at";

export async function findProject(db: D1Database, accountId: string, id: string): Promise<ProjectRow | null> {
  return selectProject(db, accountId, id).first<ProjectRow>();
}

/** The statement of findProject, to ride in a caller's batch. */
export function selectProject(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.id = ? AND p.account_id = ? AND p.trash_id IS NULL`).bind(id, accountId);
}

/** A live project of this account, or a not-found error that says how to find ids. */
export async function requireProject(db: D1Database, accountId: string, id: string): Promise<ProjectRow> {
  const row = await findProject(db, accountId, id);
  if (!row) throw notFound("project", id, "list_projects finds project ids");
  return row;
}

export const PROJECT_NOT_FOUND_HINT = "list_projects finds project ids (include_archived: true shows archived ones)";

/** The name of the project check among a caller's named reads; no caller's name starts with a NUL. */
const PROJECT_FOUND = "\0project";

/**
 * Named reads in one round trip, as readBatch, and when the call filters by a
 * project, the check that it is a live project of this account in the same
 * batch: a project of another account, or none, is refused as not found
 * rather than answered with an empty list.
 */
export async function readBatchInProject<K extends string>(
  db: D1Database,
  accountId: string,
  projectId: string | undefined,
  statements: Record<K, D1PreparedStatement>,
): Promise<Record<K, unknown[]>> {
  if (!projectId) return readBatch(db, statements);
  const found = db.prepare("SELECT 1 AS ok FROM projects WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(projectId, accountId);
  const rows = await readBatch(db, { ...statements, [PROJECT_FOUND]: found });
  if (rows[PROJECT_FOUND as K].length === 0) throw notFound("project", projectId, PROJECT_NOT_FOUND_HINT);
  return rows;
}

/** Live task counts per status, as columns of a project row. */
export interface TaskCountColumns {
  n_total: number;
  n_open: number;
  n_in_progress: number;
  n_blocked: number;
  n_awaiting_approval: number;
  n_done: number;
  n_cancelled: number;
}

export type CountedProjectRow = ProjectRow & TaskCountColumns;

const COUNT_COLUMNS = `count(t.id) AS n_total,
  coalesce(sum(t.status = 'open'), 0) AS n_open,
  coalesce(sum(t.status = 'in_progress'), 0) AS n_in_progress,
  coalesce(sum(t.status = 'blocked'), 0) AS n_blocked,
  coalesce(sum(t.status = 'awaiting_approval'), 0) AS n_awaiting_approval,
  coalesce(sum(t.status = 'done'), 0) AS n_done,
  coalesce(sum(t.status = 'cancelled'), 0) AS n_cancelled`;

const LIVE_TASKS_JOIN = "LEFT JOIN tasks t ON t.account_id = p.account_id AND t.project_id = p.id AND t.trash_id IS NULL";

/**
 * One live project with its live task counts, the auto-OK new tasks in it
 * start with, and the account's trash retention (for delete_project's result).
 */
export async function findProjectWithCounts(
  db: D1Database,
  accountId: string,
  id: string,
): Promise<(CountedProjectRow & { new_tasks_auto_ok: number; trash_retention_days: number }) | null> {
  return selectProjectWithCounts(db, accountId, id).first();
}

/** The statement of findProjectWithCounts, to ride in a caller's batch. */
export function selectProjectWithCounts(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${PROJECT_COLUMNS}, ${COUNT_COLUMNS}, a.trash_retention_days, a.activity_retention_days,
              coalesce(p.default_auto_ok, a.default_auto_ok, 0) AS new_tasks_auto_ok
         FROM projects p JOIN accounts a ON a.id = p.account_id ${LIVE_TASKS_JOIN}
        WHERE p.id = ? AND p.account_id = ? AND p.trash_id IS NULL
        GROUP BY p.id`,
    )
    .bind(id, accountId);
}

export async function requireProjectWithCounts(db: D1Database, accountId: string, id: string) {
  const row = await findProjectWithCounts(db, accountId, id);
  if (!row) throw notFound("project", id, PROJECT_NOT_FOUND_HINT);
  return row;
}

/** A page of live projects in creation order, with counts; fetches limit + 1 rows. */
export async function listProjectRows(
  db: D1Database,
  accountId: string,
  opts: { includeArchived: boolean; after: { k: string; id: string } | null; limit: number },
): Promise<CountedProjectRow[]> {
  const { results } = await selectProjectRows(db, accountId, opts).all<CountedProjectRow>();
  return results;
}

/** The statement of listProjectRows, to ride in a caller's batch. */
export function selectProjectRows(
  db: D1Database,
  accountId: string,
  opts: { includeArchived: boolean; onlyArchived?: boolean; after: { k: string; id: string } | null; limit: number },
): D1PreparedStatement {
  const where = ["account_id = ?", "trash_id IS NULL"];
  const binds: unknown[] = [accountId];
  if (opts.onlyArchived) where.push("archived_at IS NOT NULL");
  else if (!opts.includeArchived) where.push("archived_at IS NULL");
  if (opts.after) (where.push("(created_at > ? OR (created_at = ? AND id > ?))"), binds.push(opts.after.k, opts.after.k, opts.after.id));
  return db
    .prepare(
      `WITH pg AS (SELECT * FROM projects WHERE ${where.join(" AND ")} ORDER BY created_at, id LIMIT ?)
       SELECT ${PROJECT_COLUMNS}, ${COUNT_COLUMNS}
         FROM pg p ${LIVE_TASKS_JOIN}
        GROUP BY p.id
        ORDER BY p.created_at, p.id`,
    )
    .bind(...binds, opts.limit + 1);
}

export interface NewProject {
  id: string;
  accountId: string;
  name: string;
  description: string;
  defaultAutoOk: boolean | null;
  now: string;
}

export function insertProject(db: D1Database, p: NewProject): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO projects (id, account_id, name, description, default_auto_ok, archived_at, version, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, NULL, 1, ?, ?)`,
    )
    .bind(p.id, p.accountId, p.name, p.description, p.defaultAutoOk === null ? null : p.defaultAutoOk ? 1 : 0, p.now, p.now);
}

export type ProjectChanges = Partial<Pick<ProjectRow, "name" | "description" | "default_auto_ok" | "archived_at">>;

/** Where a project of this account is: live (no trash_id), or in the trash with the item's purge time and size; null when it is neither. */
export async function locateProject(
  db: D1Database,
  accountId: string,
  id: string,
): Promise<{ trash_id: null } | { trash_id: string; purge_after: string; item_count: number } | null> {
  return db
    .prepare(
      `SELECT p.trash_id, tr.purge_after, tr.item_count
         FROM projects p LEFT JOIN trash tr ON tr.id = p.trash_id AND tr.account_id = p.account_id
        WHERE p.id = ? AND p.account_id = ?`,
    )
    .bind(id, accountId)
    .first();
}

export interface ExportStepRow { task_id: string; id: string; position: number; text: string; status: StepStatus; created_at: string; updated_at: string }
export interface ExportCommentRow { task_id: string; id: string; author: string; body: string; created_at: string; updated_at: string }
export interface ExportLabelRow { task_id: string; name: string }
export interface ExportDependencyRow { task_id: string; depends_on_id: string }
export interface ExportLinkRow {
  task_id: string; provider: string; event_id: string; title: string; starts_at: string; ends_at: string; url: string | null;
}

/**
 * Everything hanging off a project's live tasks, in one batch, each list in a
 * deterministic order: tasks by (created_at, id), and within a task steps by
 * position, comments oldest first, labels by name, dependencies and links by
 * (created_at, id).
 */
export async function projectExportRows(db: D1Database, accountId: string, projectId: string, maxTasks: number) {
  // The project with its counts rides along; no rows come back for a project over maxTasks (or not live).
  const fits = "(SELECT count(*) FROM tasks WHERE account_id = ?1 AND project_id = ?2 AND trash_id IS NULL) <= ?3";
  // The project's tasks first, then each task's rows by its task_id index (CROSS JOIN keeps that order): never a walk over a table's other rows.
  const tasksOf = (table: string) => `FROM tasks t CROSS JOIN ${table} x ON x.task_id = t.id AND x.account_id = ?1`;
  const inProject = `t.account_id = ?1 AND t.project_id = ?2 AND t.trash_id IS NULL AND ${fits}`;
  const byTask = "t.created_at, t.id";
  const { project, tasks, steps, comments, labels, deps, links } = await readBatch(db, {
    project: selectProjectWithCounts(db, accountId, projectId),
    tasks: db
      .prepare(
        `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.account_id = ?1 AND t.project_id = ?2 AND t.trash_id IS NULL AND ${fits} ORDER BY ${byTask}`,
      )
      .bind(accountId, projectId, maxTasks),
    steps: db
      .prepare(
        `SELECT x.task_id, x.id, x.position, x.text, x.status, x.created_at, x.updated_at ${tasksOf("steps")}
          WHERE ${inProject} AND x.trash_id IS NULL ORDER BY ${byTask}, x.position, x.id`,
      )
      .bind(accountId, projectId, maxTasks),
    comments: db
      .prepare(
        `SELECT x.task_id, x.id, x.author, x.body, x.created_at, x.updated_at ${tasksOf("comments")}
          WHERE ${inProject} AND x.trash_id IS NULL ORDER BY ${byTask}, x.created_at, x.id`,
      )
      .bind(accountId, projectId, maxTasks),
    labels: db
      .prepare(
        `SELECT x.task_id, l.name ${tasksOf("task_labels")} CROSS JOIN labels l ON l.id = x.label_id AND l.account_id = ?1
          WHERE ${inProject} ORDER BY ${byTask}, l.name, l.id`,
      )
      .bind(accountId, projectId, maxTasks),
    deps: db
      .prepare(
        `SELECT x.task_id, x.depends_on_id ${tasksOf("task_dependencies")}
           CROSS JOIN tasks w ON w.id = x.depends_on_id AND w.account_id = ?1 AND w.trash_id IS NULL
          WHERE ${inProject} ORDER BY ${byTask}, w.created_at, w.id`,
      )
      .bind(accountId, projectId, maxTasks),
    links: db
      .prepare(
        `SELECT x.task_id, x.provider, x.event_id, x.title, x.starts_at, x.ends_at, x.url ${tasksOf("calendar_links")}
          WHERE ${inProject} ORDER BY ${byTask}, x.created_at, x.id`,
      )
      .bind(accountId, projectId, maxTasks),
  });
  return {
    project:
      (project[0] as (CountedProjectRow & { new_tasks_auto_ok: number; trash_retention_days: number; activity_retention_days: number }) | undefined) ?? null,
    tasks: tasks as unknown as TaskRow[],
    steps: steps as unknown as ExportStepRow[],
    comments: comments as unknown as ExportCommentRow[],
    labels: labels as unknown as ExportLabelRow[],
    dependencies: deps as unknown as ExportDependencyRow[],
    links: links as unknown as ExportLinkRow[],
  };
}

export { projectIsLive } from "./tasks.ts";

/** Guard condition: the live project matches `where` (SQL over its columns, taking `binds`). */
export function liveProjectIs(c: { projectId: string; accountId: string; where: Condition }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM projects WHERE id = ? AND account_id = ? AND trash_id IS NULL AND (${c.where.sql}))`,
    binds: [c.projectId, c.accountId, ...c.where.binds],
  };
}

/** Sets a live project's columns by SQL over the row before, bumps its version. */
export function setProject(db: D1Database, accountId: string, id: string, set: Condition, now: string): D1PreparedStatement {
  return db
    .prepare(`UPDATE projects SET ${set.sql}, version = version + 1, updated_at = ? WHERE id = ? AND account_id = ? AND trash_id IS NULL`)
    .bind(...set.binds, now, id, accountId);
}

/** A summary from the project row before the change: a template rendered over its columns. */
export function projectSummary(accountId: string, id: string, e: Condition): { sql: string; binds: unknown[] } {
  return { sql: `SELECT ${e.sql} FROM projects WHERE id = ? AND account_id = ?`, binds: [...e.binds, id, accountId] };
}

/** delete_project's summary from the rows before. */
export const deletedProjectSummary = (trashId: string): Condition =>
  DELETED_PROJECT.sql(
    {
      name: { sql: "name" },
      count: { sql: "(SELECT count(*) FROM tasks t WHERE t.project_id = projects.id AND t.account_id = projects.account_id AND t.trash_id IS NULL)" },
    },
    { trash: trashId },
  );

const fieldsOf = (changes: ProjectChanges) => Object.keys(changes) as (keyof ProjectChanges)[];
const differs = (changes: ProjectChanges, f: keyof ProjectChanges): Condition => ({ sql: `${f} IS NOT ?`, binds: [changes[f]] });

/** update_project's write: at the version (when given), some field given differs from the value given; it sets them all. */
export function projectUpdate(changes: ProjectChanges, expectedVersion: number | undefined): { where: Condition; set: Condition } {
  const fields = fieldsOf(changes);
  const version = expectedVersion !== undefined ? [{ sql: "version = ?", binds: [expectedVersion] }] : [];
  const anyDiffers = fields.map((f) => differs(changes, f));
  return {
    where: {
      sql: [...version.map((v) => v.sql), `(${anyDiffers.map((d) => d.sql).join(" OR ")})`].join(" AND "),
      binds: [...version.flatMap((v) => v.binds), ...anyDiffers.flatMap((d) => d.binds)],
    },
    set: { sql: fields.map((f) => `${f} = ?`).join(", "), binds: fields.map((f) => changes[f]) },
  };
}

/** update_project's summary over the project before: the fields that differ, the name after. */
export const updatedProjectSummary = (changes: ProjectChanges): Condition =>
  UPDATED_PROJECT.sql({
    fields: listWhereSql(fieldsOf(changes).map((f) => ({ when: differs(changes, f), item: sqlLiteral(f) }))),
    name: { sql: "coalesce(?, name)", binds: [changes.name ?? null] },
  });

/** The summaries of archive and unarchive, over the project before. */
export const archivedProjectSummary = (archive: boolean): Condition => (archive ? ARCHIVED_PROJECT : UNARCHIVED_PROJECT).sql({ name: { sql: "name" } });
export const NOT_ARCHIVED: Condition = { sql: "archived_at IS NULL", binds: [] };
export const archiveSet = (now: string): Condition => ({ sql: "archived_at = ?", binds: [now] });
export const IS_ARCHIVED: Condition = { sql: "archived_at IS NOT NULL", binds: [] };
export const UNARCHIVE_SET: Condition = { sql: "archived_at = NULL", binds: [] };
