/**
 * The one-batch writes of restore_from_trash and empty_trash: the state they
 * assume (a guard condition), statements over the items as they are, and the
 * read that diagnoses a miss. `?1` is the account throughout.
 */
import type { Condition } from "../catalog/tool.ts";
import {
  BLOCKERS, blockersOf, ORPHANS, purgeStatements, restorationOf, selectRecordPlace, selectRestoration, selectTrashItemByTarget, TRASH_COLUMNS, TRASHED_TABLES,
  unmarkTrashed, type RecordPrefix, type Restoration, type TrashRow,
} from "./trash.ts";
import { listSql, PURGED, PURGED_ITEM, RESTORED, RESTORED_DETACHED } from "./summaries.ts";
import { readBatch } from "./batch.ts";

const BLOCKED_BY = Object.values(BLOCKERS).join(" UNION ");

/**
 * Guard: trash item ?2 is there and nothing of it waits on another item
 * (whatever its kind: each kind's blockers only find rows of items of that kind).
 */
export function restorable(c: { accountId: string; itemId: string }): Condition {
  return { sql: `EXISTS (SELECT 1 FROM trash WHERE id = ?2 AND account_id = ?1) AND NOT EXISTS (${BLOCKED_BY})`, binds: [c.accountId, c.itemId] };
}

/** The trash item, at this point of the batch. */
export function selectTrashItem(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${TRASH_COLUMNS} FROM trash WHERE id = ? AND account_id = ?`).bind(id, accountId);
}

/** The item's tasks whose project or parent was purged meanwhile (`{ id }` rows), at this point of the batch. */
export function selectOrphans(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(ORPHANS).bind(accountId, id);
}

/** What keeps an item from being restored (up to five), for a refusal that names the first. */
export interface Blocker {
  what: string;
  id: string;
  trash_id: string;
}

/**
 * Trash item ?2 and (up to five of) what keeps it from being restored, and
 * what its first restore answered should it be gone: one round trip.
 */
export async function restoreState(db: D1Database, accountId: string, id: string): Promise<{ item: TrashRow | null; blockers: Blocker[]; first: Restoration | null }> {
  const read = await readBatch(db, {
    item: selectTrashItem(db, accountId, id),
    blockers: db.prepare(`${BLOCKED_BY} LIMIT 5`).bind(accountId, id),
    first: selectRestoration(db, accountId, { trashId: id }),
  });
  return { item: (read.item[0] as TrashRow | undefined) ?? null, blockers: read.blockers as Blocker[], first: restorationOf(read.first) };
}

/** The trash item rooted at record ?2, as a subquery. */
const ITEM_OF_TARGET = "(SELECT id FROM trash WHERE target_id = ?2 AND account_id = ?1)";
const BLOCKED_BY_TARGET = Object.values(blockersOf(ITEM_OF_TARGET)).join(" UNION ");

/**
 * What restore_from_trash of a deleted record's id finds, in one round trip:
 * the trash item rooted at it and what keeps that from being restored, where
 * the record is (`place`: null when it is nowhere in this account, else its
 * trash_id, null when live), and what its last restore answered.
 */
export async function recordRestoreState(
  db: D1Database,
  accountId: string,
  prefix: RecordPrefix,
  recordId: string,
): Promise<{ item: TrashRow | null; blockers: Blocker[]; place: { trash_id: string | null } | null; first: Restoration | null }> {
  const read = await readBatch(db, {
    item: selectTrashItemByTarget(db, accountId, recordId),
    blockers: db.prepare(`${BLOCKED_BY_TARGET} LIMIT 5`).bind(accountId, recordId),
    place: selectRecordPlace(db, accountId, prefix, recordId),
    first: selectRestoration(db, accountId, { prefix, targetId: recordId }),
  });
  return {
    item: (read.item[0] as TrashRow | undefined) ?? null,
    blockers: read.blockers as Blocker[],
    place: (read.place[0] as { trash_id: string | null } | undefined) ?? null,
    first: restorationOf(read.first),
  };
}

/** restore_from_trash's summary from the item before, naming the tasks it detaches. */
export const restoredSummary = (accountId: string, itemId: string): Condition => ({ sql: RESTORED_TEXT_QUERY, binds: [accountId, itemId] });
const RESTORED_TEXT_QUERY = `SELECT ${RESTORED.sql({
  kind: { sql: "kind" }, id: { sql: "target_id" }, title: { sql: "title" }, count: { sql: "item_count" },
  detached: { sql: `coalesce(${RESTORED_DETACHED.sql({ ids: { sql: `(SELECT ${listSql({ sql: "id", binds: [] })} FROM (${ORPHANS}))` } }).sql}, '')` },
}).sql}
  FROM trash WHERE id = ?2 AND account_id = ?1`;

/**
 * Puts an item's rows back, whatever its kind, and drops the item. Its tasks
 * whose project or parent was purged meanwhile are detached from it first (a
 * new version); for any other item that matches no row.
 */
export function restoreAnyStatements(db: D1Database, accountId: string, id: string, now: string): D1PreparedStatement[] {
  const s = (sql: string) => db.prepare(sql).bind(accountId, id);
  const d = (sql: string) => db.prepare(sql).bind(accountId, id, now);
  return [
    d(`UPDATE tasks SET project_id = NULL, version = version + 1, updated_at = ?3
        WHERE account_id = ?1 AND trash_id = ?2 AND project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = tasks.project_id)`),
    d(`UPDATE tasks SET parent_id = NULL, version = version + 1, updated_at = ?3
        WHERE account_id = ?1 AND trash_id = ?2 AND parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = tasks.parent_id)`),
    ...TRASHED_TABLES.map((table) => unmarkTrashed(db, table, accountId, id)),
    s("DELETE FROM trash WHERE id = ?2 AND account_id = ?1"),
  ];
}

const list = (ids: string[]) => ids.map((_, i) => `?${i + 2}`).join(", ");

const inTrash = (ids: string[]) => `FROM trash WHERE account_id = ?1 AND id IN (${list(ids)})`;

/** Guard: one of these (distinct) ids at least is an item in the trash. */
export function someInTrash(c: { accountId: string; itemIds: string[] }): Condition {
  return { sql: `EXISTS (SELECT 1 ${inTrash(c.itemIds)})`, binds: [c.accountId, ...c.itemIds] };
}

/**
 * empty_trash's activity target: the item, when one of the ids alone is in
 * the trash. The ids come as one JSON array, for the summary binds them too.
 */
export const purgedTarget = (accountId: string, ids: string[]): Condition => ({
  sql: "SELECT CASE WHEN count(*) = 1 THEN max(id) END FROM trash WHERE account_id = ?1 AND id IN (SELECT value FROM json_each(?2))",
  binds: [accountId, JSON.stringify(ids)],
});

/** How many of these ids are items in the trash, and how many items the trash holds: one round trip. */
export async function trashHolds(db: D1Database, accountId: string, ids: string[]): Promise<{ found: number; remaining: number }> {
  const read = await readBatch(db, {
    found: db.prepare(`SELECT count(*) AS n ${inTrash(ids)}`).bind(accountId, ...ids),
    remaining: selectTrashCount(db, accountId),
  });
  return { found: (read.found[0] as { n: number }).n, remaining: (read.remaining[0] as { n: number }).n };
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

/** empty_trash's summary from the items before. */
export const purgedSummary = (accountId: string, ids: string[]): Condition => ({
  sql: `SELECT ${PURGED.sql({ count: { sql: "count(*)" }, items: { sql: listSql(PURGED_ITEM.sql({ id: { sql: "id" }, kind: { sql: "kind" }, title: { sql: "title" } })) } }).sql}
     FROM (${purgedSql(ids)})`,
  binds: [accountId, ...ids],
});

export { purgeStatements };

/** Items left in the account's trash: `{ n }`. */
export function selectTrashCount(db: D1Database, accountId: string): D1PreparedStatement {
  return db.prepare("SELECT count(*) AS n FROM trash WHERE account_id = ?").bind(accountId);
}
