import { notMoving } from "./move-account.ts";
import { serverBatch } from "./consent.ts";
import { SERVER_WRITERS } from "./server-caller.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { endTrashedRuns } from "./runs.ts";
import { LIST_SEPARATOR, PURGED_SCHEDULED } from "./summaries.ts";
import { inLiveSubtree, liveSubtree } from "./tasks.ts";

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
  /** The item's title; none: the unit's own words (a task's title, a project's name, a step's text, a comment's body). */
  title?: string | null;
  deletedBy: string;
  deletedByToken: string;
  now: string;
}

const DAY_MS = 86_400_000;

/** The tables whose rows go to the trash, in the order a restore of any kind unmarks them. */
export const TRASHED_TABLES = ["projects", "tasks", "steps", "comments"] as const;
type TrashedTable = (typeof TRASHED_TABLES)[number];

/** Live rows of the account (?2) among `rows`. */
const live = (rows: string) => `${rows} AND account_id = ?2 AND trash_id IS NULL`;

/**
 * The live rows of each kind's unit, per table in marking order, as an
 * optional WITH clause and a condition over ?3 (the unit's task, project,
 * step or comment) and ?2 (the account). A task's are its live subtree, found
 * by the walk and looked up by id (the statement costs the rows it marks).
 */
const UNIT_ROWS: Record<TrashKind, [table: TrashedTable, rows: { with?: string; where: string }][]> = {
  task: [["tasks", { with: liveSubtree("?3", "?2"), where: inLiveSubtree("?2") }]],
  project: [["projects", { where: live("id = ?3") }], ["tasks", { where: live("project_id = ?3") }]],
  step: [["steps", { where: live("id = ?3") }]],
  comment: [["comments", { where: live("id = ?3") }]],
};

/** Marks a table's live rows of a unit with the trash item. Binds: item, account, target. */
function markTrashed(
  db: D1Database, table: TrashedTable, rows: { with?: string; where: string }, trashId: string, accountId: string, targetId: string,
): D1PreparedStatement {
  return db.prepare(`${rows.with ?? ""} UPDATE ${table} SET trash_id = ?1 WHERE ${rows.where}`.trim()).bind(trashId, accountId, targetId);
}

/** Takes the trash item's mark off a table's rows. Binds: account, item. */
export function unmarkTrashed(db: D1Database, table: TrashedTable, accountId: string, itemId: string): D1PreparedStatement {
  return db.prepare(`UPDATE ${table} SET trash_id = NULL WHERE account_id = ?1 AND trash_id = ?2`).bind(accountId, itemId);
}

/** Where each kind's root row is, its words, and how many items its unit holds (`?1` the root, `?2` the account). */
const UNIT_ITEM: Record<TrashKind, { table: TrashedTable; words: string; count: string }> = {
  task: { table: "tasks", words: "title", count: `(${liveSubtree("?1", "?2")} SELECT count(*) FROM sub)` },
  project: { table: "projects", words: "name", count: "1 + (SELECT count(*) FROM tasks WHERE project_id = ?1 AND account_id = ?2 AND trash_id IS NULL)" },
  step: { table: "steps", words: "text", count: "1" },
  comment: { table: "comments", words: "body", count: "1" },
};

/**
 * A live unit to the trash: `item` inserts its trash item, titled and counted
 * from the rows as they are (RETURNING id, purge_after, item_count; nothing
 * when the root is not live), and `marks` mark every row of the unit with it
 * (a task or project also ends its running runs). In one batch, item first.
 */
export function moveToTrash(db: D1Database, unit: TrashItemInput): { trashId: string; item: D1PreparedStatement; marks: D1PreparedStatement[] } {
  const trashId = newId(ID_PREFIX.trash);
  const a = unit.accountId;
  const { table, words, count } = UNIT_ITEM[unit.kind];
  const item = db
    .prepare(
      `INSERT INTO trash (id, account_id, kind, target_id, title, item_count, deleted_by, deleted_by_token, deleted_at, purge_after)
       SELECT ?3, ?2, ?4, ?1, coalesce(?8, substr(r.${words}, 1, 500)), ${count}, ?5, ?6, ?7,
              strftime('%Y-%m-%dT%H:%M:%fZ', ?7, '+' || a.trash_retention_days || ' days')
         FROM ${table} r JOIN accounts a ON a.id = r.account_id
        WHERE r.id = ?1 AND r.account_id = ?2 AND r.trash_id IS NULL
       RETURNING id, purge_after, item_count`,
    )
    .bind(unit.targetId, a, trashId, unit.kind, unit.deletedBy, unit.deletedByToken, unit.now, unit.title?.slice(0, 500) ?? null);
  const marks = UNIT_ROWS[unit.kind].map(([t, rows]) => markTrashed(db, t, rows, trashId, a, unit.targetId));
  // Work on a deleted task is over: its running runs end with it.
  if (unit.kind === "task" || unit.kind === "project") {
    marks.push(endTrashedRuns(db, a, trashId, `the ${unit.kind} was deleted by ${unit.deletedBy} (trash item ${trashId})`, unit.now));
  }
  return { trashId, item, marks };
}

/** When an item deleted now would be purged, for a result shown to the caller. */
export function purgeAfter(now: string, retentionDays: number): string {
  return new Date(Date.parse(now) + retentionDays * DAY_MS).toISOString();
}

export interface TrashRow {
  id: string;
  account_id: string;
  kind: TrashKind;
  target_id: string;
  title: string;
  item_count: number;
  deleted_by: string;
  deleted_by_token: string;
  deleted_at: string;
  purge_after: string;
}

export const TRASH_COLUMNS = "id, account_id, kind, target_id, title, item_count, deleted_by, deleted_by_token, deleted_at, purge_after";

/** A page of the account's trash, newest first; fetches limit + 1 rows. */
export async function listTrashRows(
  db: D1Database,
  accountId: string,
  opts: { kind?: TrashKind; after: { k: string | number | null; id: string } | null; limit: number },
): Promise<TrashRow[]> {
  const { results } = await selectTrashRows(db, accountId, opts).all<TrashRow>();
  return results;
}

/** The statement of listTrashRows, to ride in a caller's batch. */
export function selectTrashRows(
  db: D1Database,
  accountId: string,
  opts: { kind?: TrashKind; after: { k: string | number | null; id: string } | null; limit: number },
): D1PreparedStatement {
  const where = ["account_id = ?"];
  const binds: unknown[] = [accountId];
  if (opts.kind) (where.push("kind = ?"), binds.push(opts.kind));
  if (opts.after) (where.push("(deleted_at < ? OR (deleted_at = ? AND id < ?))"), binds.push(opts.after.k, opts.after.k, opts.after.id));
  return db
    .prepare(`SELECT ${TRASH_COLUMNS} FROM trash WHERE ${where.join(" AND ")} ORDER BY deleted_at DESC, id DESC LIMIT ?`)
    .bind(...binds, opts.limit + 1);
}

/** Up to `limit` items of the account's trash, oldest first. */
export async function allTrashItems(db: D1Database, accountId: string, limit: number): Promise<TrashRow[]> {
  const { results } = await db
    .prepare(`SELECT ${TRASH_COLUMNS} FROM trash WHERE account_id = ? ORDER BY deleted_at, id LIMIT ?`)
    .bind(accountId, limit)
    .all<TrashRow>();
  return results;
}

/** What the first restore_from_trash of a trash item (or of the record it held) answered. */
export interface Restoration {
  trash_id: string;
  kind: TrashKind;
  target_id: string;
  item_count: number;
  detached: string[];
}

const RECORD_TABLES = { tsk: "tasks", prj: "projects", stp: "steps", cmt: "comments" } as const;
export type RecordPrefix = keyof typeof RECORD_TABLES;

/**
 * The activity entry of the first restore_from_trash of a trash item, or the
 * last one that restored this record (read only while the record is live:
 * before, there is none to find and the account's entries are not walked).
 * `{ target_id, summary }` rows; restorationOf reads them.
 */
export function selectRestoration(db: D1Database, accountId: string, by: { trashId: string } | { prefix: RecordPrefix; targetId: string }): D1PreparedStatement {
  if ("trashId" in by) {
    return db
      .prepare("SELECT target_id, summary FROM activity WHERE target_id = ? AND account_id = ? AND tool = 'restore_from_trash' ORDER BY created_at LIMIT 1")
      .bind(by.trashId, accountId);
  }
  return db
    .prepare(
      `SELECT target_id, summary FROM activity WHERE account_id = ?1 AND tool = 'restore_from_trash' AND summary LIKE 'restored % ' || ?2 || ' %'
          AND EXISTS (SELECT 1 FROM ${RECORD_TABLES[by.prefix]} WHERE id = ?2 AND account_id = ?1 AND trash_id IS NULL)
        ORDER BY created_at DESC LIMIT 1`,
    )
    .bind(accountId, by.targetId);
}

/** What the first restore answered, from the rows of selectRestoration; null when none did. */
export function restorationOf(rows: unknown[]): Restoration | null {
  const row = rows[0] as { target_id: string; summary: string } | undefined;
  if (!row) return null;
  const m = /^restored (\w+) (\S+) ".*" \((\d+) row\(s\)\)(?:; detached from purged project\/parent: (.*))?$/s.exec(row.summary);
  if (!m) return null;
  return { trash_id: row.target_id, kind: m[1] as TrashKind, target_id: m[2], item_count: Number(m[3]), detached: m[4] ? m[4].split(", ") : [] };
}

/** The trash item whose unit is rooted at this task, project, step or comment, as a statement to ride in a read batch. */
export function selectTrashItemByTarget(db: D1Database, accountId: string, targetId: string): D1PreparedStatement {
  return db.prepare(`SELECT ${TRASH_COLUMNS} FROM trash WHERE target_id = ? AND account_id = ?`).bind(targetId, accountId);
}

/**
 * Where a task, project, step or comment is: a `{ trash_id }` row, null when
 * live, else the item it is in the trash under; no row when it is nowhere in
 * this account.
 */
export function selectRecordPlace(db: D1Database, accountId: string, prefix: RecordPrefix, id: string): D1PreparedStatement {
  return db.prepare(`SELECT trash_id FROM ${RECORD_TABLES[prefix]} WHERE id = ? AND account_id = ?`).bind(id, accountId);
}

/**
 * What still in the trash keeps an item from being restored: the project or
 * parent task of its tasks, or the task of its step or comment. `?1` is the
 * account, `item` the item's id (a bound parameter or a subquery over ?1).
 */
export const blockersOf = (item: string): Record<TrashKind, string> => ({
  task: `SELECT 'project' AS what, p.id, p.trash_id FROM tasks t JOIN projects p ON p.id = t.project_id AND p.account_id = ?1
          WHERE t.account_id = ?1 AND t.trash_id = ${item} AND p.trash_id IS NOT NULL AND p.trash_id <> ${item}
         UNION
         SELECT 'parent task' AS what, x.id, x.trash_id FROM tasks t JOIN tasks x ON x.id = t.parent_id AND x.account_id = ?1
          WHERE t.account_id = ?1 AND t.trash_id = ${item} AND x.trash_id IS NOT NULL AND x.trash_id <> ${item}`,
  project: `SELECT 'parent task' AS what, x.id, x.trash_id FROM tasks t JOIN tasks x ON x.id = t.parent_id AND x.account_id = ?1
             WHERE t.account_id = ?1 AND t.trash_id = ${item} AND x.trash_id IS NOT NULL AND x.trash_id <> ${item}`,
  step: `SELECT 'task' AS what, t.id, t.trash_id FROM steps s JOIN tasks t ON t.id = s.task_id AND t.account_id = ?1
          WHERE s.account_id = ?1 AND s.trash_id = ${item} AND t.trash_id IS NOT NULL`,
  comment: `SELECT 'task' AS what, t.id, t.trash_id FROM comments c JOIN tasks t ON t.id = c.task_id AND t.account_id = ?1
             WHERE c.account_id = ?1 AND c.trash_id = ${item} AND t.trash_id IS NOT NULL`,
});

/** blockersOf the item bound as `?2`. */
export const BLOCKERS = blockersOf("?2");

/** Tasks of the item whose project or parent was purged meanwhile: a restore detaches them from it. */
export const ORPHANS = `SELECT t.id FROM tasks t WHERE t.account_id = ?1 AND t.trash_id = ?2 AND (
    (t.project_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = t.project_id))
 OR (t.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tasks x WHERE x.id = t.parent_id)))`;

/** Items purged per batch: the ids are bound once each, under D1's 100 parameters per statement. */
export const PURGE_CHUNK = 50;

/**
 * The statements that purge trash items for good (at most PURGE_CHUNK): their
 * rows, every row hanging off their tasks (runs and their events, approvals,
 * calendar links, labels, dependencies both ways, steps and comments, with the
 * trash items of such steps and comments), and the items. `?1` is the account.
 */
export function purgeStatements(db: D1Database, accountId: string, ids: string[]): D1PreparedStatement[] {
  if (ids.length === 0 || ids.length > PURGE_CHUNK) throw new Error(`purgeStatements takes 1–${PURGE_CHUNK} ids`);
  const sel = `SELECT id FROM trash WHERE account_id = ?1 AND id IN (${ids.map((_, i) => `?${i + 2}`).join(", ")})`;
  const tasks = `SELECT id FROM tasks WHERE account_id = ?1 AND trash_id IN (${sel})`;
  const sql = [
    `DELETE FROM run_events WHERE account_id = ?1 AND run_id IN (SELECT id FROM runs WHERE account_id = ?1 AND task_id IN (${tasks}))`,
    `DELETE FROM runs WHERE account_id = ?1 AND task_id IN (${tasks})`,
    `DELETE FROM approvals WHERE account_id = ?1 AND task_id IN (${tasks})`,
    `DELETE FROM calendar_links WHERE account_id = ?1 AND task_id IN (${tasks})`,
    `DELETE FROM task_labels WHERE account_id = ?1 AND task_id IN (${tasks})`,
    `DELETE FROM task_dependencies WHERE account_id = ?1 AND (task_id IN (${tasks}) OR depends_on_id IN (${tasks}))`,
    `DELETE FROM trash WHERE account_id = ?1 AND (
       (kind = 'step' AND target_id IN (SELECT id FROM steps WHERE account_id = ?1 AND task_id IN (${tasks})))
       OR (kind = 'comment' AND target_id IN (SELECT id FROM comments WHERE account_id = ?1 AND task_id IN (${tasks}))))`,
    `DELETE FROM steps WHERE account_id = ?1 AND (task_id IN (${tasks}) OR trash_id IN (${sel}))`,
    `DELETE FROM comments WHERE account_id = ?1 AND (task_id IN (${tasks}) OR trash_id IN (${sel}))`,
    `DELETE FROM tasks WHERE account_id = ?1 AND trash_id IN (${sel})`,
    `DELETE FROM projects WHERE account_id = ?1 AND trash_id IN (${sel})`,
    `DELETE FROM trash WHERE account_id = ?1 AND id IN (${ids.map((_, i) => `?${i + 2}`).join(", ")})`,
  ];
  return sql.map((q) => db.prepare(q).bind(accountId, ...ids));
}

/** Sets purge_after of every item of the account from its deletion time and a new retention. */
export function recomputePurgeAfter(db: D1Database, accountId: string, retentionDays: number): D1PreparedStatement {
  return db
    .prepare("UPDATE trash SET purge_after = strftime('%Y-%m-%dT%H:%M:%fZ', deleted_at, '+' || ? || ' days') WHERE account_id = ?")
    .bind(retentionDays, accountId);
}

/** Items the scheduled purge handles per run; the rest waits for the next run. */
const SCHEDULED_PURGE_MAX = 1000;

/**
 * Purges trash items whose retention has run out: their rows go for good. One
 * batch per account and chunk (each a batch of the server's writer
 * `server:purge`, with an activity entry naming it),
 * so an account's purge is all or nothing. Returns how many items went.
 */
export async function purgeExpiredTrash(db: D1Database, now: string): Promise<number> {
  const { results } = await db
    .prepare(`SELECT id, account_id FROM trash WHERE purge_after <= ? AND ${notMoving()} ORDER BY purge_after, id LIMIT ?`)
    .bind(now, SCHEDULED_PURGE_MAX)
    .all<{ id: string; account_id: string }>();
  const byAccount = new Map<string, string[]>();
  for (const r of results) {
    const list = byAccount.get(r.account_id);
    if (list) list.push(r.id);
    else byAccount.set(r.account_id, [r.id]);
  }
  let purged = 0;
  for (const [accountId, ids] of byAccount) {
    for (let i = 0; i < ids.length; i += PURGE_CHUNK) {
      const chunk = ids.slice(i, i + PURGE_CHUNK);
      // The activity names the purge as the server's writer, as its batch records it for the consent rules.
      const activity = db
        .prepare(
          "INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) VALUES (?, ?, 'system', ?, 'scheduled_purge', ?, ?, ?)",
        )
        .bind(newId(ID_PREFIX.activity), accountId, SERVER_WRITERS.purge, chunk.length === 1 ? chunk[0] : null,
          PURGED_SCHEDULED.text({ count: chunk.length, ids: chunk.join(LIST_SEPARATOR) }).slice(0, 500), now);
      try {
        await serverBatch(db, SERVER_WRITERS.purge, [...purgeStatements(db, accountId, chunk), activity], now);
        purged += chunk.length;
      } catch (e) {
        console.error(JSON.stringify({ level: "error", where: "purgeExpiredTrash", accountId, error: String(e) }));
      }
    }
  }
  return purged;
}

/** The SQL that finds the trash id of a record of each kind that is not live (its own, or its task's). ?1 id, ?2 account. */
const TRASH_OF: Record<string, string> = {
  project: "SELECT trash_id FROM projects WHERE id = ?1 AND account_id = ?2",
  step: "SELECT coalesce(s.trash_id, t.trash_id) FROM steps s JOIN tasks t ON t.id = s.task_id WHERE s.id = ?1 AND s.account_id = ?2",
  comment: "SELECT coalesce(c.trash_id, t.trash_id) FROM comments c JOIN tasks t ON t.id = c.task_id WHERE c.id = ?1 AND c.account_id = ?2",
  run: "SELECT t.trash_id FROM runs r JOIN tasks t ON t.id = r.task_id WHERE r.id = ?1 AND r.account_id = ?2",
  approval: "SELECT t.trash_id FROM approvals a JOIN tasks t ON t.id = a.task_id WHERE a.id = ?1 AND a.account_id = ?2",
};

/** The trash item that holds a record a call named (a project, or a step, comment, run or approval of a trashed task), or null. */
export async function trashHolding(
  db: D1Database,
  accountId: string,
  kind: string,
  id: string,
): Promise<{ trash_id: string; target_kind: string; target_id: string; title: string; purge_after: string } | null> {
  const sql = TRASH_OF[kind];
  if (!sql) return null;
  return db
    .prepare(`SELECT id AS trash_id, kind AS target_kind, target_id, title, purge_after FROM trash WHERE account_id = ?2 AND id = (${sql})`)
    .bind(id, accountId)
    .first();
}
