import type { Condition } from "../catalog/tool.ts";
import { notFound, ToolError } from "../domain/errors.ts";
import type { CursorKey } from "./cursor.ts";
import { selectTask, type TaskRow } from "./tasks.ts";
import { readBatch } from "./batch.ts";

export interface Comment {
  id: string;
  task_id: string;
  author: string;
  body: string;
  created_at: string;
  updated_at: string;
}

/** A comment as found by id, live or in the trash, with what its deletion needs. */
export interface CommentLookup extends Comment {
  trash_id: string | null;
  trash_purge_after: string | null;
  retention_days: number;
}

const COMMENT_COLUMNS = "c.id, c.task_id, c.author, c.body, c.created_at, c.updated_at";

export function toComment(r: Comment): Comment {
  return { id: r.id, task_id: r.task_id, author: r.author, body: r.body, created_at: r.created_at, updated_at: r.updated_at };
}

/**
 * The task (if live) and one page of its live comments (limit + 1 rows, for
 * `page`), oldest or newest first, after the cursor's key: one round trip.
 */
export async function taskWithComments(
  db: D1Database,
  accountId: string,
  taskId: string,
  opts: { newestFirst: boolean; after: CursorKey | null; limit: number },
): Promise<{ task: TaskRow | null; comments: Comment[] }> {
  const where = ["c.task_id = ?", "c.account_id = ?", "c.trash_id IS NULL"];
  const binds: unknown[] = [taskId, accountId];
  const cmp = opts.newestFirst ? "<" : ">";
  if (opts.after) {
    where.push(`(c.created_at ${cmp} ? OR (c.created_at = ? AND c.id ${cmp} ?))`);
    binds.push(opts.after.k, opts.after.k, opts.after.id);
  }
  const dir = opts.newestFirst ? "DESC" : "ASC";
  const { task, comments } = await readBatch(db, {
    task: selectTask(db, accountId, taskId),
    comments: db
      .prepare(`SELECT ${COMMENT_COLUMNS} FROM comments c WHERE ${where.join(" AND ")} ORDER BY c.created_at ${dir}, c.id ${dir} LIMIT ?`)
      .bind(...binds, opts.limit + 1),
  });
  const row = (task[0] as TaskRow | undefined) ?? null;
  return { task: row, comments: row ? (comments as Comment[]).map(toComment) : [] };
}

export function insertComment(db: D1Database, accountId: string, authorTokenId: string, c: Comment): D1PreparedStatement {
  return db
    .prepare("INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    .bind(c.id, accountId, c.task_id, authorTokenId, c.author, c.body, c.created_at, c.updated_at);
}

export { taskIsLive } from "./tasks.ts";

/** Guard: the comment is live and its task too (the comment is ?1, the account ?2). */
export function commentIsLive(c: { commentId: string; accountId: string }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM comments c JOIN tasks t ON t.id = c.task_id AND t.account_id = c.account_id AND t.trash_id IS NULL
            WHERE c.id = ?1 AND c.account_id = ?2 AND c.trash_id IS NULL)`,
    binds: [c.commentId, c.accountId],
  };
}

/** A comment on a live task of this account, whether live or in the trash; null if there is none. */
export async function findComment(db: D1Database, accountId: string, commentId: string): Promise<CommentLookup | null> {
  return db
    .prepare(
      `SELECT ${COMMENT_COLUMNS}, c.trash_id, tr.purge_after AS trash_purge_after, a.trash_retention_days AS retention_days
         FROM comments c
         JOIN tasks t ON t.id = c.task_id AND t.account_id = c.account_id AND t.trash_id IS NULL
         JOIN accounts a ON a.id = c.account_id
         LEFT JOIN trash tr ON tr.id = c.trash_id AND tr.account_id = c.account_id
        WHERE c.id = ? AND c.account_id = ?`,
    )
    .bind(commentId, accountId)
    .first<CommentLookup>();
}

const COMMENT_HINT = "list_comments shows a task's comment ids";

/** A comment on a live task, live or trashed (for convergent deletion), or not found. */
export async function requireComment(db: D1Database, accountId: string, commentId: string): Promise<CommentLookup> {
  const row = await findComment(db, accountId, commentId);
  if (!row) throw notFound("comment", commentId, COMMENT_HINT);
  return row;
}

/** A live comment on a live task, or a not-found error that says where it went. */
export function liveComment(row: CommentLookup): CommentLookup {
  if (row.trash_id) {
    throw new ToolError("not_found", `Comment ${row.id} is in the trash (${row.trash_id}); restore_from_trash brings it back, ${COMMENT_HINT}.`);
  }
  return row;
}
