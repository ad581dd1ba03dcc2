import { z } from "zod";
import { addDays, canonicalTimeZone, dayStartMs, localDate } from "../domain/zoned-time.ts";
import { invalid } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { SEARCH_FIELDS, searchHit, searchWords } from "../domain/search-terms.ts";
import { decodeCursor, encodeCursor, page } from "../db/cursor.ts";
import { selectWaitedOnBy, selectWaitsOn, type DependencyRef, type WaitsOnRef } from "../db/dependencies.ts";
import {
  listAssignedTasks, listBlockedRows, searchTaskRows, selectDueRows, selectSubtaskRows,
  selectTaskHistory, type HistoryRow, type SubtaskRow,
} from "../db/task-search.ts";
import { throwTaskMissing, selectAccountPrefs, selectTask, toTask, type AccountPrefs, type TaskRow } from "../db/tasks.ts";
import { defineTool } from "../catalog/tool.ts";
import { readBatch } from "../db/batch.ts";
import { readBatchInProject } from "../db/projects.ts";
import { assigneeName, cursor, limit, projectId, taskId } from "./schemas.ts";
import { personShape, taskRef, taskShape, waitsOnRef } from "./shapes.ts";
import { withPerson } from "../db/activity.ts";

const OPEN_STATUSES = ["open", "in_progress", "blocked", "awaiting_approval"] as const;
const notFoundHint = "list_tasks or search_tasks finds task ids";

const listMyTasks = defineTool({
  name: "list_my_tasks",
  description: "Open tasks assigned to the caller (its agent, or `human` for a person), newest first.",
  input: z.strictObject({
    project_id: projectId.optional(),
    status: z.array(z.enum(OPEN_STATUSES)).min(1).max(4).optional().meta({ detail: "any of these open statuses (default: all open)" }),
    include_snoozed: z.boolean().default(false),
    limit,
    cursor,
  }),
  output: z.object({ assignee: z.string(), items: z.array(taskShape), next_cursor: z.string().nullable() }),
  async handler(ctx, args) {
    const assignee = actorName(ctx.principal);
    const rows = await listAssignedTasks(ctx.db, {
      accountId: ctx.principal.accountId,
      assignee,
      statuses: args.status,
      projectId: args.project_id,
      includeSnoozed: args.include_snoozed,
      now: ctx.now,
      after: decodeCursor(args.cursor),
      limit: args.limit,
    });
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.created_at, id: r.id }));
    return { assignee, items: items.map(toTask), next_cursor };
  },
});

const searchTasks = defineTool({
  name: "search_tasks",
  description: "Full-text search: every word must occur in a task's title and notes or in one comment, the last may be a prefix. Best first, with matched_in and a snippet.",
  input: z.strictObject({
    query: z.string().trim().min(1, "must not be empty").max(500).meta({ detail: "words to find; punctuation and search operators are treated as plain text" }),
    project_id: projectId.optional(),
    status: z.array(z.enum(["open", "in_progress", "blocked", "awaiting_approval", "done", "cancelled"])).min(1).max(6).optional(),
    limit,
    cursor,
  }),
  output: z.object({
    items: z.array(
      z.object({
        task: taskShape,
        matched_in: z.array(z.enum(SEARCH_FIELDS)).describe("fields that contain the words"),
        snippet: z.string(),
      }),
    ),
    next_cursor: z.string().nullable(),
  }),
  async handler(ctx, args) {
    const words = searchWords(args.query);
    const after = decodeCursor(args.cursor);
    const offset = after ? Number(after.k) : 0;
    if (after && (after.id !== "search" || !Number.isInteger(offset) || offset < 0)) {
      throw invalid("cursor: not a search_tasks cursor. Pass next_cursor from the previous page unchanged, or omit it.");
    }
    const rows = await searchTaskRows(ctx.db, {
      accountId: ctx.principal.accountId,
      words,
      projectId: args.project_id,
      statuses: args.status,
      offset,
      limit: args.limit,
    });
    const more = rows.length > args.limit;
    return {
      items: rows.slice(0, args.limit).map((r) => ({ task: toTask(r), ...searchHit(r, words) })),
      next_cursor: more ? encodeCursor({ k: offset + args.limit, id: "search" }) : null,
    };
  },
});

const listSubtasks = defineTool({
  name: "list_subtasks",
  description: "A task's subtasks in creation order; recursive: the whole subtree depth-first, each with its depth.",
  input: z.strictObject({
    task_id: taskId,
    recursive: z.boolean().default(false).meta({ detail: "include subtasks of subtasks" }),
    limit,
    cursor,
  }),
  output: z.object({ items: z.array(taskShape.extend({ depth: z.number() })), next_cursor: z.string().nullable() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const after = decodeCursor(args.cursor);
    if (after && typeof after.k !== "string") throw invalid("cursor: not a list_subtasks cursor; pass next_cursor unchanged.");
    const { task, subtasks } = await readBatch(db, {
      task: selectTask(db, p.accountId, args.task_id),
      subtasks: selectSubtaskRows(db, p.accountId, args.task_id, args.recursive ? 50 : 1, (after?.k as string) ?? null, args.limit),
    });
    if (task.length === 0) await throwTaskMissing(db, p.accountId, args.task_id);
    const rows = subtasks as SubtaskRow[];
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.sort_path, id: r.id }));
    return { items: items.map((r) => ({ ...toTask(r), depth: r.depth })), next_cursor };
  },
});

const listBlockedTasks = defineTool({
  name: "list_blocked_tasks",
  description: "Tasks that are blocked (with the reason) or wait on unfinished tasks (named), newest first.",
  input: z.strictObject({ project_id: projectId.optional(), limit, cursor }),
  output: z.object({
    items: z.array(
      z.object({
        task: taskShape,
        reason: z.string().nullable().describe("the reason given to block_task, if blocked"),
        waits_on: z.array(taskRef).describe("unfinished tasks it waits on"),
      }),
    ),
    next_cursor: z.string().nullable(),
  }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const { rows, waitsOn: deps } = await listBlockedRows(db, p.accountId, args.project_id, decodeCursor(args.cursor), args.limit);
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.created_at, id: r.id }));
    return {
      items: items.map((r) => ({
        task: toTask(r),
        reason: r.status === "blocked" ? r.blocked_reason : null,
        waits_on: deps.get(r.id) ?? ([] as DependencyRef[]),
      })),
      next_cursor,
    };
  },
});

/** The first instant of the local day `days` after today in a time zone (a DST gap at midnight is handled). */
export function localDayStart(timeZone: string, nowMs: number, days: number): number {
  return dayStartMs(timeZone, addDays(localDate(timeZone, nowMs), days));
}

const listDueTasks = defineTool({
  name: "list_due_tasks",
  description: "Open tasks due within `days` (1–90) local days from today, soonest first, overdue ones flagged.",
  input: z.strictObject({
    days: z.number().int().min(1).max(90).default(7).meta({ detail: "window length in days, today counting as the first (1–90, default 7)" }),
    project_id: projectId.optional(),
    assignee: assigneeName.optional(),
    include_snoozed: z.boolean().default(false),
    limit,
    cursor,
  }),
  output: z.object({
    time_zone: z.string(),
    window_end: z.string().describe("local midnight ending the window, as UTC"),
    items: z.array(taskShape.extend({ overdue: z.boolean() })),
    next_cursor: z.string().nullable(),
  }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    // One batch: the account's time zone, and the rows due before the latest the window can end in any zone;
    // those are in due order, so the window's rows are their first ones.
    const widest = new Date(localDayStart("UTC", ctx.nowMs, args.days + 2)).toISOString();
    const { prefs, due } = await readBatchInProject(db, p.accountId, args.project_id, {
      prefs: selectAccountPrefs(db, p.accountId),
      due: selectDueRows(db, {
        accountId: p.accountId,
        until: widest,
        now: ctx.now,
        includeSnoozed: args.include_snoozed,
        projectId: args.project_id,
        assignee: args.assignee,
        after: decodeCursor(args.cursor),
        limit: args.limit,
      }),
    });
    const zone = (prefs[0] as AccountPrefs | undefined)?.time_zone;
    const timeZone = (zone && canonicalTimeZone(zone)) || "UTC";
    const until = new Date(localDayStart(timeZone, ctx.nowMs, args.days)).toISOString();
    const rows = (due as TaskRow[]).filter((r) => (r.due_at as string) < until);
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.due_at, id: r.id }));
    return {
      time_zone: timeZone,
      window_end: until,
      items: items.map((r) => ({ ...toTask(r), overdue: (r.due_at as string) < ctx.now })),
      next_cursor,
    };
  },
});

const getTaskHistory = defineTool({
  name: "get_task_history",
  description: "Every write to a task and its steps, comments, runs and approvals, newest first: who, which tool, what.",
  input: z.strictObject({ task_id: taskId, limit, cursor }),
  output: z.object({
    items: z.array(
      z.object({
        id: z.string(),
        actor: z.string().describe("`human` or the agent's name"),
        token_id: z.string(),
        client: z.string().nullable().describe("the app connected through OAuth that made the call; null for a tg_ token"),
        tool: z.string(),
        summary: z.string(),
        created_at: z.string(),
        person: personShape.nullable().describe("which person, when the actor is `human`"),
      }),
    ),
    next_cursor: z.string().nullable(),
  }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const { task, history } = await readBatch(db, {
      task: selectTask(db, p.accountId, args.task_id),
      history: selectTaskHistory(db, p.accountId, args.task_id, decodeCursor(args.cursor), args.limit),
    });
    if (task.length === 0) return throwTaskMissing(db, p.accountId, args.task_id, notFoundHint);
    return page((history as HistoryRow[]).map(withPerson), args.limit, (r) => ({ k: r.created_at, id: r.id }));
  },
});

const listDependencies = defineTool({
  name: "list_dependencies",
  description: "What a task waits on (waits_on) and what waits on it (blocks), and ready: all it waits on is finished.",
  input: z.strictObject({ task_id: taskId }),
  output: z.object({
    task: taskRef,
    waits_on: z.array(waitsOnRef),
    blocks: z.array(taskRef).describe("tasks that wait on this one"),
    ready: z.boolean().describe("true when every task it waits on is done or cancelled"),
  }),
  async handler(ctx, { task_id }) {
    const { db, principal: p } = ctx;
    const { task, waitsOn, blocks } = await readBatch(db, {
      task: selectTask(db, p.accountId, task_id),
      waitsOn: selectWaitsOn(db, p.accountId, task_id),
      blocks: selectWaitedOnBy(db, p.accountId, task_id),
    });
    const row = task[0] as TaskRow | undefined;
    if (!row) return throwTaskMissing(db, p.accountId, task_id, notFoundHint);
    const waits = waitsOn as WaitsOnRef[];
    return {
      task: { id: row.id, title: row.title, status: row.status },
      waits_on: waits,
      blocks: blocks as DependencyRef[],
      ready: waits.every((d) => d.status === "done" || d.status === "cancelled"),
    };
  },
});

export const taskQueryTools = [
  listMyTasks, searchTasks, listSubtasks, listBlockedTasks, listDueTasks, getTaskHistory, listDependencies,
];
