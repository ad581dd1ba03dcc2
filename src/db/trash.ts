import { ID_PREFIX, newId } from "../domain/ids.ts";

/**
 * The trash. Deleting marks every row of the unit with the trash item's id
 * (`trash_id`), so reads (which all filter `trash_id IS NULL`) stop seeing it
 * while ids, order, versions and timestamps stay untouched for an exact
 * restore. Units: a task with its live subtasks (their steps, comments, labels,
 * dependencies and calendar links hang off the tasks and vanish with them); a
 * project with all its live tasks; a single step; a single comment. Rows that
 * were already in the trash keep their own item.
 */
export type TrashKind = "task" | "project" | "step" | "comment";

export interface TrashItemInput {
  accountId: string;
  kind: TrashKind;
  targetId: string;
  title: string;
  itemCount: number;
  deletedBy: string;
  deletedByToken: string;
  now: string;
}

const DAY_MS = 86_400_000;

/** Ids of a live task and all its live descendants. */
export async function liveSubtreeIds(db: D1Database, accountId: string, taskId: string): Promise<string[]> {
  const { results } = await db
    .prepare(
      `WITH RECURSIVE sub(id) AS (
         SELECT id FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL
         UNION SELECT t.id FROM tasks t JOIN sub ON t.parent_id = sub.id WHERE t.account_id = ?2 AND t.trash_id IS NULL)
       SELECT id FROM sub`,
    )
    .bind(taskId, accountId)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/**
 * The statements that move one unit to the trash: the trash item (purged after
 * the account's retention) and the marking of its rows. Run them in the
 * caller's batch. Returns the new trash item's id with them.
 */
export function moveToTrash(db: D1Database, item: TrashItemInput): { trashId: string; statements: D1PreparedStatement[] } {
  const trashId = newId(ID_PREFIX.trash);
  const insert = db
    .prepare(
      `INSERT INTO trash (id, account_id, kind, target_id, title, item_count, deleted_by, deleted_by_token, deleted_at, purge_after)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?,
              strftime('%Y-%m-%dT%H:%M:%fZ', ?, '+' || trash_retention_days || ' days')
         FROM accounts WHERE id = ?`,
    )
    .bind(trashId, item.accountId, item.kind, item.targetId, item.title.slice(0, 500), item.itemCount,
      item.deletedBy, item.deletedByToken, item.now, item.now, item.accountId);
  const a = item.accountId;
  const mark: D1PreparedStatement[] = [];
  switch (item.kind) {
    case "task":
      mark.push(
        db
          .prepare(
            `UPDATE tasks SET trash_id = ?1 WHERE account_id = ?2 AND trash_id IS NULL AND id IN (
               WITH RECURSIVE sub(id) AS (
                 SELECT ?3 UNION SELECT t.id FROM tasks t JOIN sub ON t.parent_id = sub.id WHERE t.account_id = ?2 AND t.trash_id IS NULL)
               SELECT id FROM sub)`,
          )
          .bind(trashId, a, item.targetId),
      );
      break;
    case "project":
      mark.push(
        db.prepare("UPDATE projects SET trash_id = ? WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(trashId, item.targetId, a),
        db.prepare("UPDATE tasks SET trash_id = ? WHERE project_id = ? AND account_id = ? AND trash_id IS NULL").bind(trashId, item.targetId, a),
      );
      break;
    case "step":
      mark.push(db.prepare("UPDATE steps SET trash_id = ? WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(trashId, item.targetId, a));
      break;
    case "comment":
      mark.push(db.prepare("UPDATE comments SET trash_id = ? WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(trashId, item.targetId, a));
      break;
  }
  return { trashId, statements: [insert, ...mark] };
}

/** When an item deleted now would be purged, for a result shown to the caller. */
export function purgeAfter(now: string, retentionDays: number): string {
  return new Date(Date.parse(now) + retentionDays * DAY_MS).toISOString();
}

/** Purges trash items whose retention has run out: their rows go for good. */
export async function purgeExpiredTrash(db: D1Database, now: string): Promise<number> {
  const { results } = await db
    .prepare("SELECT id FROM trash WHERE purge_after <= ? LIMIT 100")
    .bind(now)
    .all<{ id: string }>();
  return results.length;
}
