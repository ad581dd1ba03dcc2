/**
 * Calendar links: records of the account that tie an event of a calendar
 * (provider + event id) to a task. A link of a task in the trash hangs off the
 * hidden task and vanishes from every read with it.
 */
import { UNLINKED_EVENT } from "./summaries.ts";
import type { Condition } from "../catalog/tool.ts";
import type { TaskStatus } from "../domain/vocabulary.ts";

export interface LinkRow {
  id: string;
  task_id: string;
  task_title: string;
  provider: string;
  event_id: string;
  title: string;
  starts_at: string;
  ends_at: string;
  url: string | null;
  created_at: string;
}

const LINK_COLUMNS = "c.id, c.task_id, t.title AS task_title, c.provider, c.event_id, c.title, c.starts_at, c.ends_at, c.url, c.created_at";
const LIVE_TASK = "JOIN tasks t ON t.id = c.task_id AND t.account_id = c.account_id AND t.trash_id IS NULL";

export interface NewLink {
  id: string;
  accountId: string;
  taskId: string;
  provider: string;
  eventId: string;
  title: string;
  startsAt: string;
  endsAt: string;
  url: string | null;
  now: string;
}

/** Insert, or bring the existing link of that event on that task up to date; returns the row's id. */
/** A new link; the caller has made sure the task has none for this event (a second one would break the unique key). */
export function insertLink(db: D1Database, l: NewLink): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO calendar_links (id, account_id, task_id, provider, event_id, title, starts_at, ends_at, url, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(l.id, l.accountId, l.taskId, l.provider, l.eventId, l.title, l.startsAt, l.endsAt, l.url, l.now);
}

/** An event overlaps [from, to) when it starts before `to` and ends after `from` (an instant event at `from` counts). */
const OVERLAPS = "c.starts_at < ? AND (c.ends_at > ? OR c.starts_at >= ?)";

/**
 * Links of live tasks, by start time: of one task, or whose event overlaps
 * [from, to), or both. A page of limit + 1 rows.
 */
export function selectLinks(
  db: D1Database,
  accountId: string,
  filter: { taskId?: string; from?: string; to?: string },
  after: { k: string | number | null; id: string } | null,
  limit: number,
): D1PreparedStatement {
  const where = ["c.account_id = ?"];
  const binds: unknown[] = [accountId];
  if (filter.taskId) (where.push("c.task_id = ?"), binds.push(filter.taskId));
  if (filter.from && filter.to) (where.push(OVERLAPS), binds.push(filter.to, filter.from, filter.from));
  if (after) (where.push("(c.starts_at > ? OR (c.starts_at = ? AND c.id > ?))"), binds.push(after.k, after.k, after.id));
  return db
    .prepare(`SELECT ${LINK_COLUMNS} FROM calendar_links c ${LIVE_TASK} WHERE ${where.join(" AND ")} ORDER BY c.starts_at, c.id LIMIT ?`)
    .bind(...binds, limit + 1);
}

export interface AgendaTaskRow {
  id: string;
  title: string;
  status: TaskStatus;
  priority: number;
  due_at: string;
  assignee: string | null;
  project_id: string | null;
}

/** Open live tasks due in [from, to), by due time (snoozed ones only when asked). */
export function tasksDueIn(
  db: D1Database,
  accountId: string,
  from: string,
  to: string,
  opts: { includeSnoozed: boolean; now: string; limit: number },
): D1PreparedStatement {
  return db
    .prepare(
      `SELECT t.id, t.title, t.status, t.priority, t.due_at, t.assignee, t.project_id FROM tasks t
        WHERE t.account_id = ?1 AND t.due_at >= ?2 AND t.due_at < ?3 AND t.trash_id IS NULL
          AND t.status NOT IN ('done', 'cancelled')
          AND (?4 OR t.snoozed_until IS NULL OR t.snoozed_until <= ?5)
        ORDER BY t.due_at, t.id LIMIT ?6`,
    )
    .bind(accountId, from, to, opts.includeSnoozed ? 1 : 0, opts.now, opts.limit);
}

/** Which link a write names: by id, or by provider and event id; both on the task. */
export type LinkKey = { id: string } | { provider: string; eventId: string };

function linkWhere(key: LinkKey): { where: string; binds: unknown[] } {
  return "id" in key
    ? { where: "c.id = ?", binds: [key.id] }
    : { where: "c.provider = ? AND c.event_id = ?", binds: [key.provider, key.eventId] };
}

/** The link of a live task, at this point of the batch. */
export function selectLinkOf(db: D1Database, accountId: string, taskId: string, key: LinkKey): D1PreparedStatement {
  const { where, binds } = linkWhere(key);
  return db
    .prepare(`SELECT ${LINK_COLUMNS} FROM calendar_links c ${LIVE_TASK} WHERE ${where} AND c.task_id = ? AND c.account_id = ?`)
    .bind(...binds, taskId, accountId);
}

/** Guard: the task is live and has this link (`present`), or has no link for it at all. Binds as given. */
export function linkCondition(accountId: string, taskId: string, key: LinkKey, present: boolean): Condition {
  const { where, binds } = linkWhere(key);
  const live = "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL)";
  const link = `EXISTS (SELECT 1 FROM calendar_links c WHERE ${where} AND c.task_id = ? AND c.account_id = ?)`;
  return { sql: `${live} AND ${present ? "" : "NOT "}${link}`, binds: [taskId, accountId, ...binds, taskId, accountId] };
}

/** A summary over the link before the change (`expr` over c.*; its binds first). */
export function linkSummary(accountId: string, taskId: string, key: LinkKey, expr: string, binds: unknown[] = []): { sql: string; binds: unknown[] } {
  const { where, binds: keyBinds } = linkWhere(key);
  return {
    sql: `SELECT ${expr} FROM (SELECT 1) LEFT JOIN calendar_links c ON ${where} AND c.task_id = ? AND c.account_id = ?`,
    binds: [...binds, ...keyBinds, taskId, accountId],
  };
}

/** Deletes the task's link named by the key. */
export function deleteLinkOf(db: D1Database, accountId: string, taskId: string, key: LinkKey): D1PreparedStatement {
  const { where, binds } = linkWhere(key);
  return db.prepare(`DELETE FROM calendar_links AS c WHERE ${where} AND c.task_id = ? AND c.account_id = ?`).bind(...binds, taskId, accountId);
}

/** unlink_calendar_event's summary over the link before (no binds): everything the link was, so a repeat can answer with it (unlinkedLinkIn). */
export const unlinkedSummarySql = UNLINKED_EVENT.sql({
  provider: { sql: "c.provider" }, event: { sql: "c.event_id" }, title: { sql: "c.title" }, id: { sql: "c.id" },
  starts: { sql: "c.starts_at" }, ends: { sql: "c.ends_at" }, url: { sql: "coalesce(c.url, '')" }, created: { sql: "c.created_at" },
}).sql;

/** A link as its unlink's history line recorded it: the row, without its task's title. */
export type UnlinkedLink = Omit<LinkRow, "task_title">;

/** The task's unlink history lines (`{ summary }`, oldest first), for unlinkedLinkIn, to ride in a caller's batch. */
export function selectUnlinkEntries(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db.prepare("SELECT summary FROM activity WHERE target_id = ? AND account_id = ? AND tool = 'unlink_calendar_event' ORDER BY created_at").bind(taskId, accountId);
}

/** The link a repeat of an unlink answers with: as the first unlink of that key recorded it, from selectUnlinkEntries's rows; null when none did. */
export function unlinkedLinkIn(taskId: string, key: LinkKey, rows: unknown[]): UnlinkedLink | null {
  for (const { summary } of rows as { summary: string }[]) {
    const m = /^unlinked (\S+) event (\S+) "(.*)" \((\S+); (\S+) – (\S+); (\S*); linked (\S+)\)$/s.exec(summary);
    if (!m) continue;
    const [, provider, eventId, title, id, startsAt, endsAt, url, createdAt] = m;
    if ("id" in key ? key.id !== id : key.provider !== provider || key.eventId !== eventId) continue;
    return { id, task_id: taskId, provider, event_id: eventId, title, starts_at: startsAt, ends_at: endsAt, url: url || null, created_at: createdAt };
  }
  return null;
}
