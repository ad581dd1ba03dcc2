import { searchSql, type SearchQuery } from "./search-sql.ts";

export { SEARCH_RANKED, type SearchQuery } from "./search-sql.ts";
import type { CursorKey } from "./cursor.ts";
import { readBatchInProject } from "./projects.ts";
import { TASK_COLUMNS, type TaskRow } from "./tasks.ts";
import { UNFINISHED, type DependencyRef } from "./dependencies.ts";
import { personNameSql } from "./people.ts";

/**
 * The task reads beyond list_tasks/get_task: the caller's tasks, full-text
 * search, subtrees, blocked and due tasks, and a task's history. Every query
 * filters by account and leaves out rows in the trash.
 */

const OPEN = "t.status NOT IN ('done', 'cancelled')";
const NOT_SNOOZED = "(t.snoozed_until IS NULL OR t.snoozed_until <= ?)";

function inList(values: readonly unknown[]): string {
  return values.map(() => "?").join(", ");
}

export interface MyTasksQuery {
  accountId: string;
  assignee: string;
  statuses?: readonly string[];
  projectId?: string;
  includeSnoozed: boolean;
  now: string;
  after: CursorKey | null;
  limit: number;
}

/** Open tasks assigned to one name, newest first; fetches limit + 1 rows. A project filter must name a live project of the account. */
export async function listAssignedTasks(db: D1Database, q: MyTasksQuery): Promise<TaskRow[]> {
  const where = ["t.account_id = ?", "t.assignee = ?", "t.trash_id IS NULL", OPEN];
  const binds: unknown[] = [q.accountId, q.assignee];
  if (q.statuses) (where.push(`t.status IN (${inList(q.statuses)})`), binds.push(...q.statuses));
  if (q.projectId) (where.push("t.project_id = ?"), binds.push(q.projectId));
  if (!q.includeSnoozed) (where.push(NOT_SNOOZED), binds.push(q.now));
  if (q.after) (where.push("(t.created_at < ? OR (t.created_at = ? AND t.id < ?))"), binds.push(q.after.k, q.after.k, q.after.id));
  const { rows } = await readBatchInProject(db, q.accountId, q.projectId, {
    rows: db.prepare(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY t.created_at DESC, t.id DESC LIMIT ?`).bind(...binds, q.limit + 1),
  });
  return rows as TaskRow[];
}

export interface SearchRow extends TaskRow {
  score: number;
  /** The body of the best matching comment, or null when no comment holds every word. */
  comment_body: string | null;
}

/**
 * Ranked matches among the account's SEARCH_RANKED newest live tasks whose
 * title and notes hold every word, and as many newest live comments that hold
 * every word: bm25 with title above notes above comments, a task's score the
 * sum of its own and its best comment's. Best first; fetches limit + 1 rows
 * from `offset`. The MATCH reads the account's own terms only
 * (src/domain/search-terms.ts); CROSS JOIN keeps the planner from starting at
 * tasks. A project filter must name a live project of the account.
 */
export async function searchTaskRows(db: D1Database, q: SearchQuery): Promise<SearchRow[]> {
  const { rows } = await readBatchInProject(db, q.accountId, q.projectId, { rows: selectSearchRows(db, q) });
  return rows as SearchRow[];
}

/** The statement of searchTaskRows, to ride in a caller's batch. */
export function selectSearchRows(db: D1Database, q: SearchQuery): D1PreparedStatement {
  const { sql, binds } = searchSql(q, TASK_COLUMNS);
  return db.prepare(sql).bind(...binds);
}

export interface SubtaskRow extends TaskRow {
  depth: number;
  sort_path: string;
}

/**
 * Children of a task (or its whole live subtree), depth-first in creation
 * order: each row carries a sort path for keyset pages. Fetches limit + 1 rows.
 */
export function selectSubtaskRows(
  db: D1Database,
  accountId: string,
  parentId: string,
  maxDepth: number,
  afterPath: string | null,
  limit: number,
): D1PreparedStatement {
  return db
    .prepare(
      `WITH RECURSIVE sub(id, depth, sort_path) AS (
         SELECT id, 1, printf('%012d', rid) FROM tasks WHERE parent_id = ?1 AND account_id = ?2 AND trash_id IS NULL
         UNION ALL
         SELECT t.id, sub.depth + 1, sub.sort_path || '/' || printf('%012d', t.rid)
           FROM sub CROSS JOIN tasks t ON t.parent_id = sub.id
          WHERE t.account_id = ?2 AND t.trash_id IS NULL AND sub.depth < ?3)
       SELECT ${TASK_COLUMNS}, sub.depth, sub.sort_path FROM sub CROSS JOIN tasks t ON t.id = sub.id
        WHERE sub.sort_path > ?4 ORDER BY sub.sort_path LIMIT ?5`,
    )
    .bind(parentId, accountId, maxDepth, afterPath ?? "", limit + 1);
}

/**
 * Tasks that are blocked, or open and waiting on an unfinished live task;
 * newest first; limit + 1 rows — and, in the same batch, the unfinished live
 * tasks each of those rows waits on. A project filter must name a live project
 * of the account.
 */
export async function listBlockedRows(
  db: D1Database,
  accountId: string,
  projectId: string | undefined,
  after: CursorKey | null,
  limit: number,
): Promise<{ rows: TaskRow[]; waitsOn: Map<string, DependencyRef[]> }> {
  const where = [
    "t.account_id = ?",
    "t.trash_id IS NULL",
    `(t.status = 'blocked' OR (${OPEN} AND EXISTS (
        SELECT 1 FROM task_dependencies d CROSS JOIN tasks b ON b.id = d.depends_on_id
         WHERE d.task_id = t.id AND d.account_id = t.account_id AND b.account_id = t.account_id
           AND ${UNFINISHED("b")})))`,
  ];
  const binds: unknown[] = [accountId];
  if (projectId) (where.push("t.project_id = ?"), binds.push(projectId));
  if (after) (where.push("(t.created_at < ? OR (t.created_at = ? AND t.id < ?))"), binds.push(after.k, after.k, after.id));
  const pageSql = `SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY t.created_at DESC, t.id DESC LIMIT ?`;
  const { rows, deps } = await readBatchInProject(db, accountId, projectId, {
    rows: db.prepare(pageSql).bind(...binds, limit + 1),
    deps: db
      .prepare(
        `WITH pg AS (${pageSql})
         SELECT d.task_id AS waiting_id, t.id, t.title, t.status
           FROM pg CROSS JOIN task_dependencies d ON d.task_id = pg.id CROSS JOIN tasks t ON t.id = d.depends_on_id
          WHERE d.account_id = ? AND t.account_id = d.account_id
            AND ${UNFINISHED("t")}
          ORDER BY t.created_at, t.rid`,
      )
      .bind(...binds, limit + 1, accountId),
  });
  const waitsOn = new Map<string, DependencyRef[]>();
  for (const r of deps as (DependencyRef & { waiting_id: string })[]) {
    const list = waitsOn.get(r.waiting_id) ?? [];
    list.push({ id: r.id, title: r.title, status: r.status });
    waitsOn.set(r.waiting_id, list);
  }
  return { rows: rows as TaskRow[], waitsOn };
}

export interface DueQuery {
  accountId: string;
  until: string;
  now: string;
  includeSnoozed: boolean;
  projectId?: string;
  assignee?: string;
  after: CursorKey | null;
  limit: number;
}

/** Open tasks due before `until` (overdue ones included), soonest first; limit + 1 rows. */
export function selectDueRows(db: D1Database, q: DueQuery): D1PreparedStatement {
  const where = ["t.account_id = ?", "t.due_at IS NOT NULL", "t.due_at < ?", "t.trash_id IS NULL", OPEN];
  const binds: unknown[] = [q.accountId, q.until];
  if (!q.includeSnoozed) (where.push(NOT_SNOOZED), binds.push(q.now));
  if (q.projectId) (where.push("t.project_id = ?"), binds.push(q.projectId));
  if (q.assignee) (where.push("t.assignee = ?"), binds.push(q.assignee));
  if (q.after) (where.push("(t.due_at > ? OR (t.due_at = ? AND t.id > ?))"), binds.push(q.after.k, q.after.k, q.after.id));
  return db
    .prepare(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(" AND ")} ORDER BY t.due_at, t.id LIMIT ?`)
    .bind(...binds, q.limit + 1);
}

export interface HistoryRow {
  id: string;
  actor: string;
  token_id: string;
  client: string | null;
  tool: string;
  summary: string;
  created_at: string;
  /** The person who made the call, and their shown name now (src/db/activity.ts withPerson). */
  person_id: string | null;
  person_name: string | null;
}

/**
 * Activity entries (a query over `activity` that selects its token_id and is
 * ordered newest first) with the name of the OAuth app that made each call,
 * or null for a tg_ token, and the person's shown name where the query selects
 * its person_id. Binds one more parameter: the account id.
 */
export function withClient(activityQuery: string): string {
  return `SELECT e.*, t.client_name AS client, ${personNameSql("pp")} AS person_name FROM (${activityQuery}) e
            LEFT JOIN tokens t ON t.id = e.token_id AND t.account_id = ?
            LEFT JOIN people pp ON pp.id = e.person_id
           ORDER BY e.created_at DESC, e.id DESC`;
}

/** Activity entries about one task, newest first; limit + 1 rows. */
export function selectTaskHistory(
  db: D1Database,
  accountId: string,
  taskId: string,
  after: CursorKey | null,
  limit: number,
): D1PreparedStatement {
  const where = ["target_id = ?", "account_id = ?"];
  const binds: unknown[] = [taskId, accountId];
  if (after) (where.push("(created_at < ? OR (created_at = ? AND id < ?))"), binds.push(after.k, after.k, after.id));
  return db
    .prepare(withClient(`SELECT id, actor, token_id, tool, summary, created_at, person_id FROM activity
        WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`))
    .bind(...binds, limit + 1, accountId);
}
