/**
 * The occurrences of a recurring task. Completing (or approving) the live
 * occurrence hands its schedule on, in the same batch, to a new task with the
 * same title, notes, priority, estimate, project, parent, assignee, auto-OK,
 * labels and steps (all pending again); tasks.series_id ties them together.
 */
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { indexNewTask } from "./search-index.ts";
import { insertTask, TASK_COLUMNS, type NewTask } from "./tasks.ts";
import type { TaskStatus } from "../domain/vocabulary.ts";

/** The statements that create the next occurrence `next` as a copy of `fromId`: the task, its labels, its steps (reset). */
export function insertOccurrence(db: D1Database, next: NewTask, fromId: string): D1PreparedStatement[] {
  return [
    insertTask(db, next, { unlessPaused: true }),
    indexNewTask(db, next.accountId, next),
    db
      .prepare(
        `INSERT INTO task_labels (account_id, task_id, label_id, created_at)
         SELECT account_id, ?, label_id, ? FROM task_labels WHERE task_id = ? AND account_id = ?`,
      )
      .bind(next.id, next.now, fromId, next.accountId),
    db
      .prepare(
        `INSERT INTO steps (id, account_id, task_id, position, text, status, created_at, updated_at)
         SELECT 'stp_' || lower(hex(randomblob(8))), account_id, ?, position, text, 'pending', ?, ?
           FROM steps WHERE task_id = ? AND account_id = ? AND trash_id IS NULL`,
      )
      .bind(next.id, next.now, next.now, fromId, next.accountId),
  ];
}

/** The history entry of a task created as the next occurrence (the call's own entry is about the one completed). */
export function occurrenceActivity(
  db: D1Database,
  a: { accountId: string; tokenId: string; actor: string; tool: string; taskId: string; summary: string; now: string; personId: string | null },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at, person_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    .bind(newId(ID_PREFIX.activity), a.accountId, a.tokenId, a.actor, a.tool, a.taskId, a.summary.slice(0, 500), a.now, a.personId);
}

export const SERIES_SHOWN = 10;

/** The latest occurrences of the task's series (live ones), newest first, and how many there are. */
export function selectSeries(db: D1Database, accountId: string, taskId: string): D1PreparedStatement[] {
  const series = "(SELECT series_id FROM tasks WHERE id = ?1 AND account_id = ?2)";
  return [
    db
      .prepare(
        // INDEXED BY: the planner would otherwise walk the account's tasks in created_at order to skip the sort.
        `SELECT id, status, due_at, completed_at FROM tasks INDEXED BY tasks_series
          WHERE series_id = ${series} AND account_id = ?2 AND trash_id IS NULL ORDER BY created_at DESC, id DESC LIMIT ${SERIES_SHOWN}`,
      )
      .bind(taskId, accountId),
    db.prepare(`SELECT count(*) AS n FROM tasks WHERE series_id = ${series} AND account_id = ?2 AND trash_id IS NULL`).bind(taskId, accountId),
  ];
}

export interface OccurrenceRow {
  id: string;
  status: TaskStatus;
  due_at: string | null;
  completed_at: string | null;
}

/** The account's time zone. */
export function selectTimeZone(db: D1Database, accountId: string): D1PreparedStatement {
  return db.prepare("SELECT time_zone FROM accounts WHERE id = ?").bind(accountId);
}

/**
 * The occurrence created when task `taskId` was completed (the same series,
 * created at its completion), if it is live: a statement for a read batch, so
 * a repeated completion answers with it in the same round trip as the task.
 */
export function selectOccurrenceAfter(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${TASK_COLUMNS} FROM tasks d JOIN tasks t INDEXED BY tasks_series
          ON t.series_id = d.series_id AND t.created_at = d.completed_at
        WHERE d.id = ?1 AND d.account_id = ?2 AND t.account_id = ?2 AND t.id <> d.id AND t.trash_id IS NULL
        ORDER BY t.id LIMIT 1`,
    )
    .bind(taskId, accountId);
}
