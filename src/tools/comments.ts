import { z } from "zod";
import { forbidden, notFound } from "../domain/errors.ts";
import { actorName, type Principal } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { indexComment } from "../db/search-index.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { requireTask, throwTaskMissing } from "../db/tasks.ts";
import { renewLease } from "../db/claims.ts";
import { moveToTrash } from "../db/trash.ts";
import {
  insertComment, liveComment, requireComment, taskIsLive, taskWithComments, toComment, type Comment, type CommentLookup,
} from "../db/comments.ts";
import { AGAIN, defineTool, named, type AnyTool, type ToolContext } from "../catalog/tool.ts";
import { COMMENTED, DELETED_COMMENT, EDITED_COMMENT } from "../db/summaries.ts";
import {
  bodyIsTitle, commentTask, commentTitle, isOwnTitle, ownLiveComment, ownLiveCommentIs, ownLiveCommentNot, selectCommentTask,
  setCommentBodyReturning,
} from "../db/comment-writes.ts";
import { commentId, cursor, idempotencyKey, limit, longText, nextCursor, taskId } from "./schemas.ts";
import { trashedShape } from "./shapes.ts";

const body = longText.min(1, "must not be empty").refine((s) => s.trim().length > 0, "must not be blank");

const commentShape = z.object({
  id: z.string(),
  task_id: z.string(),
  author: z.string().describe("`human` or the agent's name"),
  body: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const TASK_HINT = "list_tasks or search_tasks finds task ids";

/** Only a comment's author may change it: the same agent, or any of the person's tokens for `human`. */
function requireAuthor(p: Principal, row: CommentLookup): void {
  const me = actorName(p);
  if (row.author !== me) {
    throw forbidden(
      `Comment ${row.id} was written by ${row.author}; only its author may edit or delete it (you are ${me}). comment_on_task adds a comment of your own.`,
    );
  }
}

const listComments = defineTool({
  name: "list_comments",
  description: "A task's comments, oldest first unless newest_first.",
  input: z.strictObject({
    task_id: taskId,
    newest_first: z.boolean().default(false),
    limit,
    cursor,
  }),
  output: z.object({ task_id: z.string(), items: z.array(commentShape), next_cursor: nextCursor }),
  async handler(ctx, args) {
    const after = decodeCursor(args.cursor);
    const { task, comments } = await taskWithComments(ctx.db, ctx.principal.accountId, args.task_id, {
      newestFirst: args.newest_first,
      after,
      limit: args.limit,
    });
    if (!task) return throwTaskMissing(ctx.db, ctx.principal.accountId, args.task_id, TASK_HINT);
    const { items, next_cursor } = page(comments, args.limit, (c) => ({ k: c.created_at, id: c.id }));
    return { task_id: args.task_id, items, next_cursor };
  },
});

const commentOnTask = defineTool({
  name: "comment_on_task",
  description: "Comment on a task, signed with the caller's name. Returns comment.",
  input: z.strictObject({ task_id: taskId, body, idempotency_key: idempotencyKey }),
  output: z.object({ comment: commentShape }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const comment: Comment = {
      id: newId(ID_PREFIX.comment),
      task_id: args.task_id,
      author: actorName(p),
      body: args.body,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(taskIsLive({ taskId: args.task_id, accountId: p.accountId }), miss),
              insertComment(db, p.accountId, p.tokenId, comment),
              indexComment(db, p.accountId, comment.id, comment.body),
              renewLease(db, p.accountId, args.task_id, comment.author, ctx.now),
            ],
            activity: { target: args.task_id, summary: COMMENTED.text({ comment: comment.id }) },
          },
          { comment },
        ),
      // Missed: the task is missing or in the trash (requireTask says which), or live again meanwhile.
      async diagnose() {
        await requireTask(db, p.accountId, args.task_id);
        return AGAIN;
      },
    });
  },
});

/** The comment as edit_comment and delete_comment find it: one of the caller's own on a live task, live or trashed. */
async function ownComment(ctx: ToolContext, commentId: string): Promise<CommentLookup> {
  const row = await requireComment(ctx.db, ctx.principal.accountId, commentId);
  requireAuthor(ctx.principal, row);
  return row;
}

const editComment = defineTool({
  name: "edit_comment",
  description: "Overwrite one of the caller's own comments. Returns comment and changed.",
  input: z.strictObject({ comment_id: commentId, body }),
  output: z.object({ comment: commentShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    return ctx.write({
      subject: `comment ${args.comment_id}`,
      apply: (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(ownLiveCommentNot({ commentId: args.comment_id, accountId: p.accountId, author: actorName(p), body: args.body }), miss),
              named("comment", setCommentBodyReturning(db, p.accountId, args.comment_id, args.body, ctx.now)),
              indexComment(db, p.accountId, args.comment_id, args.body),
            ],
            activity: { target: null, targetSql: commentTask(p.accountId, args.comment_id), summary: EDITED_COMMENT.text({ comment: args.comment_id }) },
          },
          (rows) => ({ comment: toComment(rows.comment[0] as Comment), changed: true }),
        ),
      // Missed: not found, someone else's, in the trash, or already so (a no-op).
      async diagnose() {
        const row = liveComment(await ownComment(ctx, args.comment_id));
        return row.body === args.body ? { comment: toComment(row), changed: false } : AGAIN;
      },
    });
  },
});

const deleteComment = defineTool({
  name: "delete_comment",
  description: "Move one of the caller's own comments to the trash. Returns trash_id and purge_after.",
  input: z.strictObject({ comment_id: commentId }),
  output: trashedShape.extend({ comment_id: z.string(), task_id: z.string() }),
  async handler(ctx, { comment_id }) {
    const { db, principal: p } = ctx;
    const me = actorName(p);
    const own = { commentId: comment_id, accountId: p.accountId, author: me };
    /** The comment to the trash, titled by its body as it is (`title` null) or by the excerpt made of the body that was read. */
    const trash = (guards: D1PreparedStatement[], title: string | null) => {
      const trash = moveToTrash(db, { accountId: p.accountId, kind: "comment", targetId: comment_id, title, deletedBy: me, deletedByToken: p.tokenId, now: ctx.now });
      return ctx.commit(
        {
          statements: [...guards, named("item", trash.item), ...trash.marks, named("task", selectCommentTask(db, p.accountId, comment_id))],
          activity: { target: null, targetSql: commentTask(p.accountId, comment_id), summary: DELETED_COMMENT.text({ comment: comment_id, trash: trash.trashId }) },
        },
        (rows) => {
          const row = rows.item[0] as { id: string; purge_after: string };
          return { comment_id, task_id: (rows.task[0] as { task_id: string }).task_id, trash_id: row.id, purge_after: row.purge_after, item_count: 1, already_in_trash: false };
        },
      );
    };
    return ctx.write({
      subject: `comment ${comment_id}`,
      apply: (miss) => trash([ctx.guard(ownLiveComment(own), miss), ctx.guard(bodyIsTitle(own), miss)], null),
      // Missed: not found, someone else's, in the trash already (answered as the first call was), or a body that is
      // not its own title: then its excerpt titles the item, as long as the body is still the one read.
      async diagnose(lost) {
        const row = await ownComment(ctx, comment_id);
        if (row.trash_id) {
          if (!row.trash_purge_after) throw notFound("comment", comment_id, "list_comments shows a task's comment ids");
          return { comment_id, task_id: row.task_id, trash_id: row.trash_id, purge_after: row.trash_purge_after, item_count: 1, already_in_trash: true };
        }
        return isOwnTitle(row.body) ? AGAIN : trash([ctx.guard(ownLiveCommentIs({ ...own, body: row.body }), lost)], commentTitle(row.body));
      },
    });
  },
});

export const commentTools: AnyTool[] = [listComments, commentOnTask, editComment, deleteComment];
