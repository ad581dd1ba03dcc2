/**
 * The one-batch forms of label writes: the state their usual case assumes (a
 * guard condition), and statements that act on and read the rows as they
 * are. Names travel as one JSON array (`?names`), matched without regard to
 * case like the column (NOCASE).
 */
import { DELETED_LABEL, LABELLED, LABELLED_NEW, listSql, QUOTED_NAME, RENAMED_LABEL, UNLABELLED } from "./summaries.ts";
import type { Condition } from "../catalog/tool.ts";

const LABEL_WITH_COUNT = `l.id, l.name, l.color, l.created_at,
  (SELECT count(*) FROM task_labels tl JOIN tasks t ON t.id = tl.task_id AND t.account_id = tl.account_id AND t.trash_id IS NULL
    WHERE tl.label_id = l.id AND tl.account_id = l.account_id) AS task_count`;

/** The label with its live usage count, at this point of the batch. */
export function selectLabel(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${LABEL_WITH_COUNT} FROM labels l WHERE l.id = ? AND l.account_id = ?`).bind(id, accountId);
}

/** Guard: the label exists and is not spelled `name` exactly. */
export function labelSpelledOtherwise(c: { accountId: string; labelId: string; name: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM labels WHERE account_id = ?1 AND id = ?2 AND name COLLATE BINARY <> ?3)", binds: [c.accountId, c.labelId, c.name] };
}

/** Guard: the label exists. */
export function labelExists(c: { accountId: string; labelId: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM labels WHERE account_id = ?1 AND id = ?2)", binds: [c.accountId, c.labelId] };
}

/** A summary from the label row before the change: a template rendered over l.name and the count. */
export function labelSummary(accountId: string, id: string, e: Condition): { sql: string; binds: unknown[] } {
  return { sql: `SELECT ${e.sql} FROM (SELECT ${LABEL_WITH_COUNT} FROM labels l WHERE l.id = ? AND l.account_id = ?)`, binds: [...e.binds, id, accountId] };
}

/** The names of the task's labels that are among ?names. Binds: task, account, names. */
const ON_TASK = `SELECT l.id, l.name FROM task_labels tl JOIN labels l ON l.id = tl.label_id AND l.account_id = tl.account_id
  WHERE tl.task_id = ?1 AND tl.account_id = ?2 AND l.name IN (SELECT value FROM json_each(?3))`;

/** Guard: the task is live and lacks at least one of the (distinct) names. */
export function liveTaskLacksSome(c: { taskId: string; accountId: string; names: string[] }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL)
  AND (SELECT count(*) FROM (${ON_TASK})) < ?4`,
    binds: [c.taskId, c.accountId, JSON.stringify(c.names), c.names.length],
  };
}

/** Guard: the task is live, every one of the (distinct) names is a label of the account, and the task carries at least one. */
export function liveTaskCarriesSome(c: { taskId: string; accountId: string; names: string[] }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL)
  AND (SELECT count(*) FROM labels WHERE account_id = ?2 AND name IN (SELECT value FROM json_each(?3))) = ?4
  AND EXISTS (${ON_TASK})`,
    binds: [c.taskId, c.accountId, JSON.stringify(c.names), c.names.length],
  };
}

/**
 * The names the task does not carry yet, each as the account spells it (its
 * own spelling when no label has it), in the given order. Binds: account, names, task.
 */
const TO_ADD = `SELECT coalesce((SELECT l.name FROM labels l WHERE l.account_id = ?1 AND l.name = j.value), j.value) AS name
  FROM json_each(?2) j
 WHERE NOT EXISTS (SELECT 1 FROM task_labels tl JOIN labels l ON l.id = tl.label_id AND l.account_id = tl.account_id
                    WHERE tl.task_id = ?3 AND tl.account_id = ?1 AND l.name = j.value)
 ORDER BY j.key`;

/** The names label_task adds to the task (run before it does): `{ name }` rows. */
export function selectToAdd(db: D1Database, accountId: string, taskId: string, names: string[]): D1PreparedStatement {
  return db.prepare(TO_ADD).bind(accountId, JSON.stringify(names), taskId);
}

/** Names as a summary lists them: quoted, comma-separated. */
const QUOTED_NAMES = listSql(QUOTED_NAME.sql({ name: { sql: "name" } }));
const NEW_NAMES = `SELECT ${listSql({ sql: "j.value", binds: [] })} FROM json_each(?2) j
    WHERE NOT EXISTS (SELECT 1 FROM labels l WHERE l.account_id = ?1 AND l.name = j.value)`;

/** label_task's summary, before the change: the names it adds, and those no label has yet. */
export const labelledSummary = (c: { accountId: string; taskId: string; names: string[] }): Condition => ({
  sql: LABELLED_TEXT_QUERY,
  binds: [c.accountId, JSON.stringify(c.names), c.taskId],
});
const LABELLED_TEXT_QUERY = `SELECT ${LABELLED.sql({
  names: { sql: `(SELECT ${QUOTED_NAMES} FROM (${TO_ADD}))` },
  new: { sql: `coalesce(${LABELLED_NEW.sql({ names: { sql: `(${NEW_NAMES})` } }).sql}, '')` },
}).sql}`;

/** The task's labels among the names, in the task's order (name, id). Binds: task, account, names. */
export function selectOnTask(db: D1Database, accountId: string, taskId: string, names: string[]): D1PreparedStatement {
  return db.prepare(`${ON_TASK} ORDER BY l.name, l.id`).bind(taskId, accountId, JSON.stringify(names));
}

/** unlabel_task's summary, before the change. */
export const unlabelledSummary = (c: { accountId: string; taskId: string; names: string[] }): Condition => ({
  sql: UNLABELLED_TEXT_QUERY,
  binds: [c.taskId, c.accountId, JSON.stringify(c.names)],
});
const UNLABELLED_TEXT_QUERY = `SELECT ${UNLABELLED.sql({ names: { sql: QUOTED_NAMES } }).sql} FROM (${ON_TASK} ORDER BY l.name, l.id)`;

/** Takes the labels of these names off the task. */
export function detachByNames(db: D1Database, accountId: string, taskId: string, names: string[]): D1PreparedStatement {
  return db
    .prepare(
      `DELETE FROM task_labels WHERE task_id = ?1 AND account_id = ?2
          AND label_id IN (SELECT id FROM labels WHERE account_id = ?2 AND name IN (SELECT value FROM json_each(?3)))`,
    )
    .bind(taskId, accountId, JSON.stringify(names));
}

/** rename_label's summary over the label before. */
export const renamedLabelSummary = (name: string): Condition => RENAMED_LABEL.sql({ old: { sql: "name" } }, { name });

/** delete_label's summary over the label before. */
export const deletedLabelSummary = (): Condition => DELETED_LABEL.sql({ name: { sql: "name" }, count: { sql: "task_count" } });
