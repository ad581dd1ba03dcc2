import { z } from "zod";
import { conflict, forbidden, notFound } from "../domain/errors.ts";
import { actorName, type Principal } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { indexComment } from "../db/search-index.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { requireTask, throwTaskMissing } from "../db/tasks.ts";
import { renewLease } from "../db/claims.ts";
import { moveToTrash, purgeAfter } from "../db/trash.ts";
import {
  commentIsLive, insertComment, liveComment, requireComment, setCommentBody, taskIsLive, taskWithComments, toComment,
  type Comment, type CommentLookup,
} from "../db/comments.ts";
import { defineTool, named, type AnyTool } from "../catalog/tool.ts";
import { fastOr } from "./fast.ts";
import { COMMENTED, DELETED_COMMENT, EDITED_COMMENT } from "../db/summaries.ts";
import {
  bodyIsTitle, commentTask, insertCommentTrashItem, ownLiveComment, ownLiveCommentNot, selectCommentTask, setCommentBodyReturning,
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

const commentGone = (id: string) => conflict(`comment ${id} was deleted meanwhile; list_comments shows the live comments.`);

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
    // One batch, guarded on a live task; only when that fails does a read find the precise error.
    const write = (taskGone: Error) =>
      ctx.commit(
        {
          statements: [
            ctx.guard(taskIsLive({ taskId: args.task_id, accountId: p.accountId }), taskGone), insertComment(db, p.accountId, p.tokenId, comment),
            indexComment(db, p.accountId, comment.id, comment.body),
            renewLease(db, p.accountId, args.task_id, comment.author, ctx.now),
          ],
          activity: { target: args.task_id, summary: COMMENTED.text({ comment: comment.id }) },
        },
        { comment },
      );
    return fastOr(write, async () => {
      await requireTask(db, p.accountId, args.task_id);
      return write(notFound("task", args.task_id, TASK_HINT));
    });
  },
});

const editComment = defineTool({
  name: "edit_comment",
  description: "Overwrite one of the caller's own comments. Returns comment and changed.",
  input: z.strictObject({ comment_id: commentId, body }),
  output: z.object({ comment: commentShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const slowly = async () => {
      const row = await requireComment(db, p.accountId, args.comment_id);
      requireAuthor(p, row);
      liveComment(row);
      if (row.body === args.body) return { comment: toComment(row), changed: false };
      return ctx.commit(
        {
          statements: [
            ctx.guard(commentIsLive({ commentId: row.id, accountId: p.accountId }), commentGone(row.id)),
            setCommentBody(db, p.accountId, row.id, args.body, ctx.now),
            indexComment(db, p.accountId, row.id, args.body),
          ],
          activity: { target: row.task_id, summary: EDITED_COMMENT.text({ comment: row.id }) },
        },
        { comment: { ...toComment(row), body: args.body, updated_at: ctx.now }, changed: true },
      );
    };
    return fastOr(
      (miss) =>
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
      slowly,
    );
  },
});

const deleteComment = defineTool({
  name: "delete_comment",
  description: "Move one of the caller's own comments to the trash. Returns trash_id and purge_after.",
  input: z.strictObject({ comment_id: commentId }),
  output: trashedShape.extend({ comment_id: z.string(), task_id: z.string() }),
  async handler(ctx, { comment_id }) {
    const { db, principal: p } = ctx;
    const slowly = async () => {
      const row = await requireComment(db, p.accountId, comment_id);
      requireAuthor(p, row);
      if (row.trash_id) {
        if (!row.trash_purge_after) throw notFound("comment", comment_id, "list_comments shows a task's comment ids");
        return { comment_id, task_id: row.task_id, trash_id: row.trash_id, purge_after: row.trash_purge_after, item_count: 1, already_in_trash: true };
      }
      const excerpt = row.body.replace(/\s+/g, " ").trim();
      const { trashId, statements } = moveToTrash(db, {
        accountId: p.accountId,
        kind: "comment",
        targetId: comment_id,
        title: excerpt.length > 100 ? `${excerpt.slice(0, 99)}…` : excerpt,
        itemCount: 1,
        deletedBy: actorName(p),
        deletedByToken: p.tokenId,
        now: ctx.now,
      });
      return ctx.commit(
        {
          statements: [ctx.guard(commentIsLive({ commentId: comment_id, accountId: p.accountId }), commentGone(comment_id)), ...statements],
          activity: { target: row.task_id, summary: DELETED_COMMENT.text({ comment: comment_id, trash: trashId }) },
        },
        { comment_id, task_id: row.task_id, trash_id: trashId, purge_after: purgeAfter(ctx.now, row.retention_days), item_count: 1, already_in_trash: false },
      );
    };
    return fastOr(async (miss) => {
      const marks = moveToTrash(db, { accountId: p.accountId, kind: "comment", targetId: comment_id, title: "", itemCount: 1, deletedBy: actorName(p), deletedByToken: p.tokenId, now: ctx.now });
      const item = insertCommentTrashItem(db, { trashId: marks.trashId, accountId: p.accountId, commentId: comment_id, deletedBy: actorName(p), deletedByToken: p.tokenId, now: ctx.now });
      return ctx.commit(
        {
          statements: [
            ctx.guard(ownLiveComment({ commentId: comment_id, accountId: p.accountId, author: actorName(p) }), miss),
            ctx.guard(bodyIsTitle({ commentId: comment_id, accountId: p.accountId }), miss),
            named("item", item),
            ...marks.statements.slice(1),
            named("task", selectCommentTask(db, p.accountId, comment_id)),
          ],
          activity: {
            target: null,
            targetSql: commentTask(p.accountId, comment_id),
            summary: DELETED_COMMENT.text({ comment: comment_id, trash: marks.trashId }),
          },
        },
        (rows) => {
          const row = rows.item[0] as { id: string; purge_after: string };
          return { comment_id, task_id: (rows.task[0] as { task_id: string }).task_id, trash_id: row.id, purge_after: row.purge_after, item_count: 1, already_in_trash: false };
        },
      );
    }, slowly);
  },
});

export const commentTools: AnyTool[] = [listComments, commentOnTask, editComment, deleteComment];
