import { indexText } from "../domain/search-terms.ts";

/**
 * Writes to the full-text index (task_search, comment_search in schema.sql):
 * each rides in the batch of the write it follows, after it. Rows leave the
 * index by the delete triggers; rows in the trash stay indexed and the search
 * leaves them out.
 */

/** Indexes a task inserted earlier in the batch. */
export function indexNewTask(db: D1Database, accountId: string, t: { id: string; title: string; notes: string }): D1PreparedStatement {
  return db
    .prepare("INSERT INTO task_search (rowid, title, notes) SELECT rid, ?, ? FROM tasks WHERE id = ? AND account_id = ?")
    .bind(indexText(accountId, t.title), indexText(accountId, t.notes), t.id, accountId);
}

/**
 * Reindexes the title and/or notes an update earlier in the batch set: only
 * when the task now holds these values, so an update that matched no row leaves the index as it was.
 */
export function reindexTask(db: D1Database, accountId: string, id: string, changes: { title?: unknown; notes?: unknown }): D1PreparedStatement[] {
  const fields = (["title", "notes"] as const).filter((f) => typeof changes[f] === "string");
  if (fields.length === 0) return [];
  const values = fields.map((f) => changes[f] as string);
  return [
    db
      .prepare(
        `UPDATE task_search SET ${fields.map((f) => `${f} = ?`).join(", ")}
          WHERE rowid = (SELECT rid FROM tasks WHERE id = ? AND account_id = ? ${fields.map((f) => `AND ${f} = ?`).join(" ")})`,
      )
      .bind(...values.map((v) => indexText(accountId, v)), id, accountId, ...values),
  ];
}

/**
 * Indexes a comment inserted or edited earlier in the batch, when it now holds
 * this body (an edit that matched no row leaves the index as it was).
 */
export function indexComment(db: D1Database, accountId: string, commentId: string, body: string): D1PreparedStatement {
  return db
    .prepare("INSERT OR REPLACE INTO comment_search (rowid, body) SELECT rowid, ? FROM comments WHERE id = ? AND account_id = ? AND body = ?")
    .bind(indexText(accountId, body), commentId, accountId, body);
}
