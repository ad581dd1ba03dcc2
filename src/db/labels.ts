import type { Condition } from "../catalog/tool.ts";
import { selectTask, throwTaskMissing, type TaskRow } from "./tasks.ts";
import { readBatch } from "./batch.ts";
import { selectLabel } from "./label-writes.ts";

/**
 * Labels: names unique per account without regard to case (the column is
 * COLLATE NOCASE, so `name = ?` and ORDER BY name compare case-insensitively;
 * NOCASE folds ASCII letters only, and `foldName` mirrors it).
 * A label's uses are task_labels rows; only live tasks count.
 */
export interface LabelRow {
  id: string;
  name: string;
  color: string | null;
  created_at: string;
  task_count: number;
}

export interface TaskLabel {
  id: string;
  name: string;
}

/** The key SQLite's NOCASE compares by: ASCII letters folded, everything else as is. */
export const foldName = (name: string): string => name.replace(/[A-Z]/g, (c) => c.toLowerCase());

const LABEL_WITH_COUNT = `l.id, l.name, l.color, l.created_at,
  (SELECT count(*) FROM task_labels tl JOIN tasks t ON t.id = tl.task_id AND t.account_id = tl.account_id AND t.trash_id IS NULL
    WHERE tl.label_id = l.id AND tl.account_id = l.account_id) AS task_count`;

export const LABEL_NOT_FOUND_HINT = "list_labels finds label ids";

/** A page of labels by name (case-insensitive), with live usage counts; fetches limit + 1 rows. */
export async function listLabelRows(db: D1Database, accountId: string, afterName: string | null, limit: number): Promise<LabelRow[]> {
  const { results } = await selectLabelRows(db, accountId, afterName, limit).all<LabelRow>();
  return results;
}

/** The statement of listLabelRows, to ride in a caller's batch. */
export function selectLabelRows(db: D1Database, accountId: string, afterName: string | null, limit: number): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${LABEL_WITH_COUNT} FROM labels l
        WHERE l.account_id = ? ${afterName === null ? "" : "AND l.name > ?"} ORDER BY l.name LIMIT ?`,
    )
    .bind(...(afterName === null ? [accountId, limit + 1] : [accountId, afterName, limit + 1]));
}

function selectLabelByName(db: D1Database, accountId: string, name: string): D1PreparedStatement {
  return db.prepare(`SELECT ${LABEL_WITH_COUNT} FROM labels l WHERE l.account_id = ? AND l.name = ?`).bind(accountId, name);
}

export async function findLabelByName(db: D1Database, accountId: string, name: string): Promise<LabelRow | null> {
  return selectLabelByName(db, accountId, name).first<LabelRow>();
}

/** In one round trip: the label, and the label (this one or another) that has the name; either may be null. */
export async function readRenaming(db: D1Database, accountId: string, id: string, name: string): Promise<{ label: LabelRow | null; named: LabelRow | null }> {
  const { label, named } = await readBatch(db, { label: selectLabel(db, accountId, id), named: selectLabelByName(db, accountId, name) });
  return { label: (label[0] as LabelRow | undefined) ?? null, named: (named[0] as LabelRow | undefined) ?? null };
}

/**
 * One round trip: the live task, its labels, and the account's labels with any
 * of these names (1 to 50, matched without regard to case).
 */
export async function readTaskLabelling(db: D1Database, accountId: string, taskId: string, names: string[]) {
  const { task, current, known } = await readBatch(db, {
    task: selectTask(db, accountId, taskId),
    current: selectTaskLabels(db, accountId, taskId),
    known: db
      .prepare(`SELECT id, name FROM labels WHERE account_id = ? AND name IN (${names.map(() => "?").join(", ")})`)
      .bind(accountId, ...names),
  });
  const row = task[0] as TaskRow | undefined;
  if (!row) return throwTaskMissing(db, accountId, taskId);
  return { task: row, current: current as unknown as TaskLabel[], known: known as unknown as TaskLabel[] };
}

/**
 * In one round trip: the label, or else what the first delete_label of it
 * answered (from its activity entry); both null when there never was one.
 */
export async function readLabelOrDeletion(
  db: D1Database, accountId: string, id: string,
): Promise<{ label: LabelRow | null; deletion: { name: string; removed_from_tasks: number } | null }> {
  const { label, deleted } = await readBatch(db, {
    label: selectLabel(db, accountId, id),
    deleted: db
      .prepare("SELECT summary FROM activity WHERE target_id = ? AND account_id = ? AND tool = 'delete_label' ORDER BY created_at LIMIT 1")
      .bind(id, accountId),
  });
  const row = deleted[0] as { summary: string } | undefined;
  const m = row && /^deleted label "(.*)" \(on (\d+) task\(s\)\)$/s.exec(row.summary);
  const deletion = row ? (m ? { name: m[1], removed_from_tasks: Number(m[2]) } : { name: "", removed_from_tasks: 0 }) : null;
  return { label: (label[0] as LabelRow | undefined) ?? null, deletion };
}

export function insertLabel(
  db: D1Database,
  l: { id: string; accountId: string; name: string; color: string | null; now: string },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO labels (id, account_id, name, color, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(l.id, l.accountId, l.name, l.color, l.now);
}

/** Creates the label unless one of that name exists already (a concurrent call may have made it). */
export function insertLabelIfMissing(
  db: D1Database,
  l: { id: string; accountId: string; name: string; now: string },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO labels (id, account_id, name, color, created_at) VALUES (?, ?, ?, NULL, ?) ON CONFLICT (account_id, name) DO NOTHING")
    .bind(l.id, l.accountId, l.name, l.now);
}

export function renameLabel(db: D1Database, accountId: string, id: string, name: string): D1PreparedStatement {
  return db.prepare("UPDATE labels SET name = ? WHERE id = ? AND account_id = ?").bind(name, id, accountId);
}

/**
 * The rename's entry in the history of each live task that carries the label:
 * the batch's own activity row about the label (written first, so the latest
 * about it), once more for each such task, with the same words and time.
 */
export function renameInTaskHistories(db: D1Database, accountId: string, labelId: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at, person_id)
       SELECT 'act_' || lower(hex(randomblob(8))), a.account_id, a.token_id, a.actor, a.tool, tl.task_id, a.summary, a.created_at, a.person_id
         FROM (SELECT * FROM activity WHERE target_id = ?2 AND account_id = ?1 ORDER BY rowid DESC LIMIT 1) a
         CROSS JOIN task_labels tl ON tl.label_id = ?2 AND tl.account_id = ?1
         CROSS JOIN tasks t ON t.id = tl.task_id AND t.account_id = ?1 AND t.trash_id IS NULL`,
    )
    .bind(accountId, labelId);
}

/** The label and all its uses, on live and trashed tasks alike. */
export function deleteLabel(db: D1Database, accountId: string, id: string): D1PreparedStatement[] {
  return [
    db.prepare("DELETE FROM task_labels WHERE label_id = ? AND account_id = ?").bind(id, accountId),
    db.prepare("DELETE FROM labels WHERE id = ? AND account_id = ?").bind(id, accountId),
  ];
}

/** Guard condition: no label of the account other than this one has the name. */
export function nameFree(c: { accountId: string; labelId: string; name: string }): Condition {
  return { sql: "NOT EXISTS (SELECT 1 FROM labels WHERE account_id = ?1 AND name = ?3 AND id <> ?2)", binds: [c.accountId, c.labelId, c.name] };
}

export function selectTaskLabels(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT l.id, l.name FROM task_labels tl JOIN labels l ON l.id = tl.label_id AND l.account_id = tl.account_id
        WHERE tl.task_id = ? AND tl.account_id = ? ORDER BY l.name, l.id`,
    )
    .bind(taskId, accountId);
}

/** Puts the label of this name on the task, unless it is there already. */
export function attachLabelByName(
  db: D1Database,
  accountId: string,
  taskId: string,
  name: string,
  now: string,
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO task_labels (account_id, task_id, label_id, created_at)
       SELECT ?1, ?2, id, ?4 FROM labels WHERE account_id = ?1 AND name = ?3
       ON CONFLICT (task_id, label_id) DO NOTHING`,
    )
    .bind(accountId, taskId, name, now);
}
