/**
 * The one-batch forms of comment writes: the state their usual case assumes
 * (a guard condition), and statements that act on and return the rows as they are.
 */
import type { Condition } from "../catalog/tool.ts";
import { commentIsLive } from "./comments.ts";

/** Guard: the comment (and its task) is live and written by this author. */
export function ownLiveComment(c: { commentId: string; accountId: string; author: string }): Condition {
  const live = commentIsLive(c);
  return { sql: `${live.sql} AND EXISTS (SELECT 1 FROM comments WHERE id = ?1 AND account_id = ?2 AND author = ?3)`, binds: [...live.binds, c.author] };
}

/** Guard: the same, with a body other than this one. */
export function ownLiveCommentNot(c: { commentId: string; accountId: string; author: string; body: string }): Condition {
  const own = ownLiveComment(c);
  return { sql: `${own.sql} AND EXISTS (SELECT 1 FROM comments WHERE id = ?1 AND account_id = ?2 AND body IS NOT ?4)`, binds: [...own.binds, c.body] };
}

/** Guard: the same, with this very body (what a title made from it assumes). */
export function ownLiveCommentIs(c: { commentId: string; accountId: string; author: string; body: string }): Condition {
  const own = ownLiveComment(c);
  return { sql: `${own.sql} AND EXISTS (SELECT 1 FROM comments WHERE id = ?1 AND account_id = ?2 AND body IS ?4)`, binds: [...own.binds, c.body] };
}

/** Overwrites a live comment's body; returns the comment. */
export function setCommentBodyReturning(db: D1Database, accountId: string, commentId: string, body: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE comments SET body = ?, updated_at = ? WHERE id = ? AND account_id = ? AND trash_id IS NULL
       RETURNING id, task_id, author, body, created_at, updated_at`,
    )
    .bind(body, now, commentId, accountId);
}

/** The task of a comment, for the activity row. */
export function commentTask(accountId: string, commentId: string): { sql: string; binds: unknown[] } {
  return { sql: "SELECT task_id FROM comments WHERE id = ? AND account_id = ?", binds: [commentId, accountId] };
}

/** The task a comment (live or trashed) is on: `{ task_id }`. */
export function selectCommentTask(db: D1Database, accountId: string, commentId: string): D1PreparedStatement {
  const { sql, binds } = commentTask(accountId, commentId);
  return db.prepare(sql).bind(...binds);
}

/** Whitespace as a JavaScript `\s` knows it, other than the plain space. */
const OTHER_SPACES = ["\t", "\n", "\v", "\f", "\r", "\u00a0", "\u1680", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
  ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i))];

/**
 * Guard: the comment's body is its own trash title — at most 100 bytes, single
 * spaces between words and none around them — so the title needs no reading
 * first.
 */
export function bodyIsTitle(c: { commentId: string; accountId: string }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM comments WHERE id = ?1 AND account_id = ?2
    AND length(CAST(body AS BLOB)) <= 100 AND body = trim(body, ' ') AND instr(body, '  ') = 0
    AND ${OTHER_SPACES.map((ch) => `instr(body, char(${ch.charCodeAt(0)})) = 0`).join(" AND ")})`,
    binds: [c.commentId, c.accountId],
  };
}

/** A comment's trash title: its body's words, single-spaced, cut to 100 characters. */
export function commentTitle(body: string): string {
  const excerpt = body.replace(/\s+/g, " ").trim();
  return excerpt.length > 100 ? `${excerpt.slice(0, 99)}…` : excerpt;
}

/** Whether a body is its own trash title, as bodyIsTitle tests it in SQL. */
export function isOwnTitle(body: string): boolean {
  return commentTitle(body) === body && new TextEncoder().encode(body).length <= 100;
}
