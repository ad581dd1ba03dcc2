/**
 * Task dependencies: `task_id` waits on `depends_on_id`. Links to a task in the
 * trash stay in the table (a restore brings them back); what a task waits on
 * in the trash is still unfinished (the gate stays closed) and is shown with
 * its trash item. A link records who added it: a person's is removed only by a person.
 * Cycle checks follow every link of the account, trashed ones included, so a
 * restore can never bring back a cycle.
 */
import type { Condition } from "../catalog/tool.ts";
import type { TaskStatus } from "../domain/vocabulary.ts";

export interface DependencyRef {
  id: string;
  title: string;
  status: TaskStatus;
}

/** What a task waits on: a ref, with the trash item holding it (null: live). */
export interface WaitsOnRef extends DependencyRef {
  trash_id: string | null;
}

/**
 * The dependency gate, in one place: a task waited on (row alias `w`) is
 * unfinished until it is done or cancelled, in the trash or not. The trigger
 * consent_waits of schema.sql states the same (test/consent-coverage.test.ts holds them together).
 */
export const UNFINISHED = (w: string) => `${w}.status NOT IN ('done', 'cancelled')`;

/** The tasks one task waits on, those in the trash with their item (WaitsOnRef). CROSS JOIN: start at the links, never at the account's tasks (whose index also gives the order). */
export function selectWaitsOn(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT t.id, t.title, t.status, t.trash_id FROM task_dependencies d CROSS JOIN tasks t ON t.id = d.depends_on_id
        WHERE d.task_id = ?1 AND d.account_id = ?2 AND t.account_id = ?2
        ORDER BY t.created_at, t.rid`,
    )
    .bind(taskId, accountId);
}

/** The live tasks that wait on this one. */
export function selectWaitedOnBy(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT t.id, t.title, t.status FROM task_dependencies d CROSS JOIN tasks t ON t.id = d.task_id
        WHERE d.depends_on_id = ?1 AND d.account_id = ?2 AND t.account_id = ?2 AND t.trash_id IS NULL
        ORDER BY t.created_at, t.rid`,
    )
    .bind(taskId, accountId);
}

/** Unfinished tasks (UNFINISHED, in the trash or not) that any of `taskIds` waits on. */
export async function unfinishedDependenciesOf(
  db: D1Database,
  accountId: string,
  taskIds: string[],
): Promise<Map<string, DependencyRef[]>> {
  const out = new Map<string, DependencyRef[]>();
  if (taskIds.length === 0) return out;
  const { results } = await db
    .prepare(
      `SELECT d.task_id AS waiting_id, t.id, t.title, t.status FROM task_dependencies d JOIN tasks t ON t.id = d.depends_on_id
        WHERE d.task_id IN (${taskIds.map(() => "?").join(", ")}) AND d.account_id = ? AND t.account_id = d.account_id
          AND ${UNFINISHED("t")}
        ORDER BY t.created_at, t.rid`,
    )
    .bind(...taskIds, accountId)
    .all<DependencyRef & { waiting_id: string }>();
  for (const r of results) {
    const list = out.get(r.waiting_id) ?? [];
    list.push({ id: r.id, title: r.title, status: r.status });
    out.set(r.waiting_id, list);
  }
  return out;
}

export function selectLink(db: D1Database, accountId: string, taskId: string, dependsOnId: string): D1PreparedStatement {
  return db
    .prepare("SELECT 1 AS present FROM task_dependencies WHERE task_id = ? AND depends_on_id = ? AND account_id = ?")
    .bind(taskId, dependsOnId, accountId);
}

/**
 * Everything reachable from `start` along "waits on" links, each with the task
 * it was reached from. Rows are (id, via) pairs, so the walk is bounded by the
 * number of links however the graph branches.
 */
const REACH = `WITH RECURSIVE reach(id, via) AS (
    SELECT ?1, NULL
    UNION
    SELECT d.depends_on_id, d.task_id FROM task_dependencies d JOIN reach r ON d.task_id = r.id WHERE d.account_id = ?2)`;

/** A task reachable from where a walk started (REACH), the task it was reached from, and its title. */
export interface ReachRow {
  id: string;
  via: string | null;
  title: string | null;
}

/** Everything reachable from `from` (itself included), as ReachRows for dependencyPath. */
export function selectReachable(db: D1Database, accountId: string, from: string): D1PreparedStatement {
  return db
    .prepare(`${REACH} SELECT r.id, r.via, t.title FROM reach r LEFT JOIN tasks t ON t.id = r.id AND t.account_id = ?2`)
    .bind(from, accountId);
}

/**
 * A chain of links from `from` to `to` (both included) among what
 * selectReachable read from `from`, if `from` already waits on `to` directly
 * or through others; null if there is none.
 */
export function dependencyPath(rows: ReachRow[], from: string, to: string): { id: string; title: string | null }[] | null {
  const via = new Map<string, string | null>();
  const titles = new Map<string, string | null>();
  for (const r of rows) {
    if (!via.has(r.id)) via.set(r.id, r.id === from ? null : r.via);
    titles.set(r.id, r.title);
  }
  if (!via.has(to)) return null;
  const path: string[] = [to];
  const seen = new Set(path);
  let cur = to;
  while (cur !== from) {
    const prev = via.get(cur);
    if (!prev || seen.has(prev)) break;
    path.unshift(prev);
    seen.add(prev);
    cur = prev;
  }
  return path.map((id) => ({ id, title: titles.get(id) ?? null }));
}

/** Guard condition: `to` is not reachable from `from` (following what each task waits on). */
export function noDependencyPath(c: { from: string; accountId: string; to: string }): Condition {
  return { sql: `NOT EXISTS (${REACH} SELECT 1 FROM reach WHERE id = ?3)`, binds: [c.from, c.accountId, c.to] };
}

/** A link, recording who added it (`human` or the agent's name). */
export function insertLink(db: D1Database, accountId: string, taskId: string, dependsOnId: string, addedBy: string, now: string): D1PreparedStatement {
  return db
    .prepare("INSERT OR IGNORE INTO task_dependencies (account_id, task_id, depends_on_id, created_at, added_by) VALUES (?, ?, ?, ?, ?)")
    .bind(accountId, taskId, dependsOnId, now, addedBy);
}

export function deleteLink(db: D1Database, accountId: string, taskId: string, dependsOnId: string): D1PreparedStatement {
  return db
    .prepare("DELETE FROM task_dependencies WHERE task_id = ? AND depends_on_id = ? AND account_id = ?")
    .bind(taskId, dependsOnId, accountId);
}
