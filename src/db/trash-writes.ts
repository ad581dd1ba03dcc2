/**
 * The one-batch forms of restore_from_trash and empty_trash: the state their
 * usual case assumes (a guard condition), and statements over the items as
 * they are. `?1` is the account throughout.
 */
import type { Condition } from "../catalog/tool.ts";
import { BLOCKERS, ORPHANS, purgeStatements, TRASH_COLUMNS, TRASHED_TABLES, unmarkTrashed } from "./trash.ts";
import { listSql, PURGED, PURGED_ITEM, RESTORED, sqlLiteral } from "./summaries.ts";

/**
 * Guard: trash item ?2 is there, nothing of it waits on another item, and
 * none of its tasks lost a project or parent to a purge (whatever its kind:
 * each kind's blockers only find rows of items of that kind).
 */
export function restorableAsIs(c: { accountId: string; itemId: string }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM trash WHERE id = ?2 AND account_id = ?1)
  AND NOT EXISTS (${Object.values(BLOCKERS).join(" UNION ")}) AND NOT EXISTS (${ORPHANS})`,
    binds: [c.accountId, c.itemId],
  };
}

/** The trash item, at this point of the batch. */
export function selectTrashItem(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${TRASH_COLUMNS} FROM trash WHERE id = ? AND account_id = ?`).bind(id, accountId);
}

/** restore_from_trash's summary from the item before. Binds: account, item. */
export const restoredSummary = `SELECT ${RESTORED.sql({
  kind: { sql: "kind" }, id: { sql: "target_id" }, title: { sql: "title" }, count: { sql: "item_count" }, detached: sqlLiteral(""),
}).sql}
  FROM trash WHERE id = ?2 AND account_id = ?1`;

/** Puts an item's rows back, whatever its kind, and drops the item (nothing detached: see RESTORABLE_AS_IS). */
export function restoreAnyStatements(db: D1Database, accountId: string, id: string): D1PreparedStatement[] {
  const s = (sql: string) => db.prepare(sql).bind(accountId, id);
  return [
    ...TRASHED_TABLES.map((table) => unmarkTrashed(db, table, accountId, id)),
    s("DELETE FROM trash WHERE id = ?2 AND account_id = ?1"),
  ];
}

const list = (ids: string[]) => ids.map((_, i) => `?${i + 2}`).join(", ");

/** Guard: every one of these (distinct) ids is an item in the trash. */
export function allInTrash(c: { accountId: string; itemIds: string[] }): Condition {
  return { sql: `(SELECT count(*) FROM trash WHERE account_id = ?1 AND id IN (${list(c.itemIds)})) = ${c.itemIds.length}`, binds: [c.accountId, ...c.itemIds] };
}

/**
 * The items and, after them, the step and comment items purging them takes
 * along (their task goes for good), as empty_trash reports them.
 */
function purgedSql(ids: string[]): string {
  const tasks = `SELECT id FROM tasks WHERE account_id = ?1 AND trash_id IN (${list(ids)})`;
  return `SELECT ${TRASH_COLUMNS}, 0 AS part FROM trash WHERE account_id = ?1 AND id IN (${list(ids)})
    UNION ALL
    SELECT ${TRASH_COLUMNS}, 1 AS part FROM trash WHERE account_id = ?1 AND id NOT IN (${list(ids)}) AND (
      (kind = 'step' AND target_id IN (SELECT id FROM steps WHERE account_id = ?1 AND task_id IN (${tasks})))
      OR (kind = 'comment' AND target_id IN (SELECT id FROM comments WHERE account_id = ?1 AND task_id IN (${tasks}))))
    ORDER BY part, deleted_at, id`;
}

export function selectPurged(db: D1Database, accountId: string, ids: string[]): D1PreparedStatement {
  return db.prepare(purgedSql(ids)).bind(accountId, ...ids);
}

/** empty_trash's summary from the items before. Binds: account, ids. */
export const purgedSummary = (ids: string[]) =>
  `SELECT ${PURGED.sql({ count: { sql: "count(*)" }, items: { sql: listSql(PURGED_ITEM.sql({ id: { sql: "id" }, kind: { sql: "kind" }, title: { sql: "title" } })) } }).sql}
     FROM (${purgedSql(ids)})`;

export { purgeStatements };

/** Items left in the account's trash: `{ n }`. */
export function selectTrashCount(db: D1Database, accountId: string): D1PreparedStatement {
  return db.prepare("SELECT count(*) AS n FROM trash WHERE account_id = ?").bind(accountId);
}
