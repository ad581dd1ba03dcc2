import type { CursorKey } from "./cursor.ts";
import { withClient } from "./task-search.ts";

export interface ActivityRow {
  id: string;
  actor: string;
  token_id: string;
  tool: string;
  target_id: string | null;
  summary: string;
  created_at: string;
  /** The app connected through OAuth that made the call; null for a tg_ token or the web console. */
  client: string | null;
}

export interface ActivityFilter {
  targetId?: string;
  since?: string;
  actor?: string;
  tool?: string;
  after: CursorKey | null;
  limit: number;
}

/** The account's audit feed, newest first, filtered, with the OAuth app of each call; fetches limit + 1 rows. */
export function selectActivity(db: D1Database, accountId: string, f: ActivityFilter): D1PreparedStatement {
  const where = ["account_id = ?"];
  const binds: unknown[] = [accountId];
  if (f.targetId) (where.push("target_id = ?"), binds.push(f.targetId));
  if (f.since) (where.push("created_at >= ?"), binds.push(f.since));
  if (f.actor) (where.push("actor = ?"), binds.push(f.actor));
  if (f.tool) (where.push("tool = ?"), binds.push(f.tool));
  if (f.after) (where.push("(created_at < ? OR (created_at = ? AND id < ?))"), binds.push(f.after.k, f.after.k, f.after.id));
  return db
    .prepare(
      withClient(`SELECT id, actor, token_id, tool, target_id, summary, created_at FROM activity
        WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`),
    )
    .bind(...binds, f.limit + 1, accountId);
}

export interface NewActivity {
  id: string;
  accountId: string;
  tokenId: string;
  actor: string;
  tool: string;
  targetId: string | null;
  summary: string;
  now: string;
}

/** One row of the audit feed; it rides in the same batch as the change it records. */
export function insertActivity(db: D1Database, a: NewActivity): D1PreparedStatement {
  return db
    .prepare("INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    .bind(a.id, a.accountId, a.tokenId, a.actor, a.tool, a.targetId, a.summary.slice(0, 500), a.now);
}

/**
 * The same row with its summary computed in SQL (an expression over the rows
 * as they are before the change; its parameters, `?` or `?N`, bind `binds`).
 */
export function insertActivityFrom(db: D1Database, a: NewActivity, summary: { sql: string; binds: unknown[] }): D1PreparedStatement {
  // The row's own eight parameters come first: the summary's are renumbered after them.
  let next = 0;
  const sql = /\?\d/.test(summary.sql)
    ? summary.sql.replace(/\?(\d+)/g, (_, n: string) => `?${Number(n) + 8}`)
    : summary.sql.replace(/\?/g, () => `?${9 + next++}`);
  return db
    .prepare(
      `INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, substr(coalesce((${sql}), ?7), 1, 500), ?8`,
    )
    .bind(a.id, a.accountId, a.tokenId, a.actor, a.tool, a.targetId, a.summary.slice(0, 500), a.now, ...summary.binds);
}
