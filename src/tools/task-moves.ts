/**
 * The tasks toolset's moves on one task beyond editing its fields: to the
 * trash (delete_task), blocked and unblocked, to another assignee or
 * project, snoozed, and split into subtasks (decompose_task).
 */
import { z } from "zod";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { actorName } from "../domain/principal.ts";
import { indexNewTask } from "../db/search-index.ts";
import { requireProject } from "../db/projects.ts";
import {
  agentIsUnpaused, readAssignee, insertTask, insertTaskFrom, moveSubtree, newTaskValue, priorityIndex, projectIsLive, requireTask,
  requireTaskForWrite, rootTaskOf, selectAccountPrefs, selectTaskWithTrash, subtreeOutsideProject, taskAtVersion, taskIsLive, toTask,
  updateTaskFields, type AccountPrefs, type TaskField, type TaskRow, type TaskWithTrash, type TaskWriteRow,
} from "../db/tasks.ts";
import { liveSubtreeIds, moveToTrash } from "../db/trash.ts";
import { endTaskRuns } from "../db/runs.ts";
import { NO_LEASE, renewLease } from "../db/claims.ts";
import { LEASE_MINUTES, leaseEnd, PERSON_ASSIGNEE } from "../domain/claims.ts";
import { AGAIN, defineTool, named, type ToolContext } from "../catalog/tool.ts";
import { readBatch } from "../db/batch.ts";
import {
  BLOCK_SET, blockedSummary, BLOCKABLE, BLOCKED, deletedTaskSummary, insertTaskTrashItem, movable, movedTaskSummary, selectTaskNow, differs, setColumn,
  taskSummary, UNBLOCK_SET_RENEWING, unblockedSummary, ASSIGN_SET,
} from "../db/task-writes.ts";
import {
  ADDED_SUBTASKS, ASSIGNED, BLOCKED_TASK, SNOOZED, UNASSIGNED, UNSNOOZED, DELETED_SUBTASKS, DELETED_TASK, MOVED_SUBTASKS, MOVED_TASK, NO_PROJECT, plural, SUBTASK_ITEM, UNBLOCKED_TASK, LIST_SEPARATOR,
} from "../db/summaries.ts";
import { fastOr, writeTaskAtOnce } from "./fast.ts";
import { assigneeName, idempotencyKey, isoTime, LIMITS, longText, projectId, taskId, title, toUtc } from "./schemas.ts";
import { taskShape, trashedShape } from "./shapes.ts";

const notFoundHint = "list_tasks or search_tasks finds task ids";
const taskResult = z.object({ task: taskShape, changed: z.boolean().describe("false when the task already was in that state") });
const taskRef = z.object({ id: z.string(), title: z.string(), status: z.string() });

const raced = (id: string) =>
  conflict(`task ${id} was changed by another call while this one ran; nothing was written. get_task shows it now; call again.`);

/** Sets fields of one task atomically (only if nobody changed it meanwhile), with the activity row. */
function writeTask(
  ctx: ToolContext,
  row: TaskWriteRow,
  changes: Partial<Record<TaskField, string | number | null>>,
  summary: string,
  then: D1PreparedStatement[] = [],
) {
  const a = ctx.principal.accountId;
  const next = { ...row, ...changes, version: row.version + 1, updated_at: ctx.now } as TaskRow;
  return ctx.commit(
    {
      statements: [ctx.guard(taskAtVersion({ taskId: row.id, accountId: a, version: row.version }), raced(row.id)), updateTaskFields(ctx.db, a, row.id, changes, ctx.now), ...then],
      activity: { target: row.id, summary },
    },
    { task: toTask(next), changed: true },
  );
}

const unchanged = (row: TaskRow) => ({ task: toTask(row), changed: false });

const deleteTask = defineTool({
  name: "delete_task",
  description: "Move a task and its subtasks to the trash as one restorable item. Returns trash_id and purge_after.",
  input: z.strictObject({ task_id: taskId }),
  output: trashedShape,
  async handler(ctx, { task_id }) {
    const { db, principal: p } = ctx;
    const slowly = async () => {
      const read = await readBatch(db, { task: selectTaskWithTrash(db, p.accountId, task_id), prefs: selectAccountPrefs(db, p.accountId) });
      const task = read.task[0] as TaskWithTrash | undefined;
      if (!task) throw notFound("task", task_id, notFoundHint);
      if (task.trash_id) {
        if (!task.purge_after) throw notFound("task", task_id, notFoundHint);
        return { trash_id: task.trash_id, purge_after: task.purge_after, item_count: task.item_count ?? 1, already_in_trash: true };
      }
      const retention = (read.prefs[0] as AccountPrefs | undefined)?.trash_retention_days ?? 30;
      const ids = await liveSubtreeIds(db, p.accountId, task_id);
      const trash = moveToTrash(db, {
        accountId: p.accountId,
        kind: "task",
        targetId: task_id,
        title: task.title,
        itemCount: ids.length,
        deletedBy: actorName(p),
        deletedByToken: p.tokenId,
        now: ctx.now,
      });
      const subtasks = ids.length - 1;
      const guard = ctx.guard(taskIsLive({ taskId: task_id, accountId: p.accountId }), conflict(`task ${task_id} was deleted by another call meanwhile; delete_task again names its trash item.`));
      return ctx.commit(
        {
          statements: [guard, ...trash.statements],
          activity: {
            target: task_id,
            summary: DELETED_TASK.text({ title: task.title, subtasks: DELETED_SUBTASKS.text(subtasks), trash: trash.trashId }),
          },
        },
        {
          trash_id: trash.trashId,
          purge_after: new Date(ctx.nowMs + retention * 86_400_000).toISOString(),
          item_count: ids.length,
          already_in_trash: false,
        },
      );
    };
    // The usual case in one batch: a live task; the trash item takes its title and count from the rows.
    return fastOr(async (miss) => {
      const { db, principal: p } = ctx;
      const a = p.accountId;
      const marks = moveToTrash(db, { accountId: a, kind: "task", targetId: task_id, title: "", itemCount: 0, deletedBy: actorName(p), deletedByToken: p.tokenId, now: ctx.now });
      const item = insertTaskTrashItem(db, { trashId: marks.trashId, accountId: a, taskId: task_id, deletedBy: actorName(p), deletedByToken: p.tokenId, now: ctx.now });
      return ctx.commit(
        {
          statements: [ctx.guard(taskIsLive({ taskId: task_id, accountId: a }), miss), named("item", item), ...marks.statements.slice(1)],
          activity: { target: task_id, summarySql: deletedTaskSummary(a, task_id, marks.trashId) },
        },
        (rows) => {
          const row = rows.item[0] as { id: string; purge_after: string; item_count: number };
          return { trash_id: row.id, purge_after: row.purge_after, item_count: row.item_count, already_in_trash: false };
        },
      );
    }, slowly);
  },
});

const blockTask = defineTool({
  name: "block_task",
  description: "Mark a task blocked, with what it waits for (blocked for another reason: refused); unblock_task restores its status. Returns task.",
  input: z.strictObject({
    task_id: taskId,
    reason: z.string().trim().min(1, "must not be empty").max(2000).meta({ detail: "what it is waiting for" }),
  }),
  output: taskResult,
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        writeTaskAtOnce(ctx, miss, {
          taskId: args.task_id,
          where: BLOCKABLE,
          set: BLOCK_SET,
          setBinds: [args.reason],
          summary: taskSummary(a, args.task_id, blockedSummary(args.reason)),
        }),
      async diagnose() {
        const row = await requireTaskForWrite(ctx.db, a, args.task_id);
        if (row.status === "done" || row.status === "cancelled") {
          throw conflict(`task ${row.id} is ${row.status}, so there is nothing to block; reopen_task first if work on it has to continue.`);
        }
        if (row.status !== "blocked") return AGAIN;
        if (row.blocked_reason === args.reason) return unchanged(row);
        throw conflict(
          `task ${row.id} is already blocked for "${row.blocked_reason ?? "no reason given"}"; unblock_task clears that block first, or comment_on_task adds what else it waits for.`,
        );
      },
    });
  },
});

const unblockTask = defineTool({
  name: "unblock_task",
  description: "Clear a task's block: it returns to its earlier status (or open). Returns task.",
  input: z.strictObject({ task_id: taskId }),
  output: taskResult,
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        writeTaskAtOnce(ctx, miss, { taskId: args.task_id, where: BLOCKED, set: UNBLOCK_SET_RENEWING, setBinds: [ctx.now], summary: taskSummary(a, args.task_id, unblockedSummary()) }),
      async diagnose() {
        const row = await requireTaskForWrite(ctx.db, a, args.task_id);
        return row.status === "blocked" ? AGAIN : unchanged(row);
      },
    });
  },
});

/** Who holds a task an agent assigned to an agent: a claim with claim_task's lease; a person's assignment has none. */
function assignedLease(ctx: ToolContext, assignee: string | null) {
  if (ctx.principal.kind !== "agent" || assignee === null || assignee === PERSON_ASSIGNEE) return NO_LEASE;
  return { claim_expires_at: leaseEnd(ctx.nowMs, LEASE_MINUTES.default), claim_lease_minutes: LEASE_MINUTES.default };
}

const assignTask = defineTool({
  name: "assign_task",
  description: "Set a task's assignee (`human` or an agent); null unassigns. An agent's assignment is a claim with a lease. Returns task.",
  input: z.strictObject({ task_id: taskId, assignee: assigneeName.nullable() }),
  output: taskResult,
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const lease = assignedLease(ctx, args.assignee);
    const summary = args.assignee ? ASSIGNED.text({ assignee: args.assignee }) : UNASSIGNED.text();
    // The work is someone else's now: other agents' running runs on it end in the same batch.
    const endOthersRuns = () =>
      endTaskRuns(db, p.accountId, args.task_id, `the task was reassigned to ${args.assignee ?? "nobody"} by ${actorName(p)}`, ctx.now, { keep: args.assignee });
    const slowly = async () => {
      const row = await requireTaskForWrite(db, p.accountId, args.task_id);
      if (args.assignee !== null) {
        const who = await readAssignee(db, p.accountId, args.assignee);
        if (!who.exists) throw notFound("agent", args.assignee, "list_agents names the agents; `human` is the account's person");
        if (who.paused_at) {
          throw conflict(
            `agent ${args.assignee} is paused (since ${who.paused_at}), so no task can be assigned to it. A person's resume_agent lifts the pause; or assign another agent (list_agents).`,
          );
        }
      }
      if (row.assignee === args.assignee) return unchanged(row);
      return writeTask(ctx, row, { assignee: args.assignee, ...lease }, summary, [endOthersRuns()]);
    };
    const a = ctx.principal.accountId;
    return fastOr((miss) => {
      const known = args.assignee !== null && args.assignee !== PERSON_ASSIGNEE ? [ctx.guard(agentIsUnpaused({ accountId: a, name: args.assignee }), miss)] : [];
      return writeTaskAtOnce(ctx, miss, {
        taskId: args.task_id,
        where: differs("assignee"),
        whereBinds: [args.assignee],
        set: ASSIGN_SET,
        setBinds: [args.assignee, lease.claim_expires_at, lease.claim_lease_minutes],
        summary,
        before: [...known, endOthersRuns()],
      });
    }, slowly);
  },
});

const moveTask = defineTool({
  name: "move_task",
  description: "Move a top-level task and its subtasks to another project, or out of any (null). Returns task and moved.",
  input: z.strictObject({ task_id: taskId, project_id: projectId.nullable() }),
  output: taskResult.extend({ moved: z.number().describe("tasks whose project changed, subtasks included") }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const slowly = async () => {
      const row = await requireTaskForWrite(db, a, args.task_id);
      if (row.parent_id) {
        const root = await rootTaskOf(db, a, row.id);
        throw invalid(
          `task_id: ${row.id} is a subtask and lives in its parent's project; move its top-level parent ${root.id} ("${root.title}") instead, and its subtasks move with it.`,
        );
      }
      if (args.project_id) await requireProject(db, a, args.project_id);
      const outside = await subtreeOutsideProject(db, a, row.id, args.project_id);
      if (outside === 0) return { ...unchanged(row), moved: 0 };
      const statements = [ctx.guard(taskAtVersion({ taskId: row.id, accountId: a, version: row.version }), raced(row.id))];
      if (args.project_id) {
        statements.push(ctx.guard(projectIsLive({ projectId: args.project_id, accountId: a }), notFound("project", args.project_id, "list_projects finds project ids")));
      }
      statements.push(moveSubtree(db, a, row.id, args.project_id, ctx.now));
      const rootMoves = row.project_id !== args.project_id;
      const next = rootMoves ? { ...row, project_id: args.project_id, version: row.version + 1, updated_at: ctx.now } : row;
      const others = outside - (rootMoves ? 1 : 0);
      return ctx.commit(
        {
          statements,
          activity: {
            target: row.id,
            summary: MOVED_TASK.text({ project: args.project_id ?? NO_PROJECT, from: row.project_id ?? NO_PROJECT, subtasks: MOVED_SUBTASKS.text(others) }),
          },
        },
        { task: toTask(next), changed: true, moved: outside },
      );
    };
    return fastOr(async (miss) => {
      const binds = [args.task_id, a, args.project_id];
      return ctx.commit(
        {
          statements: [
            ctx.guard(movable({ taskId: args.task_id, accountId: a, projectId: args.project_id }), miss),
            named("moved", moveSubtree(db, a, args.task_id, args.project_id, ctx.now)),
            named("task", selectTaskNow(db, a, args.task_id)),
          ],
          activity: { target: args.task_id, summarySql: { sql: movedTaskSummary, binds: [...binds, args.project_id ?? NO_PROJECT] } },
        },
        (rows, changes) => ({ task: toTask(rows.task[0] as TaskRow), changed: true, moved: changes.moved }),
      );
    }, slowly);
  },
});

const snoozeTask = defineTool({
  name: "snooze_task",
  description: "Hide a task from open lists until a future time; null wakes it. Returns task.",
  input: z.strictObject({ task_id: taskId, until: isoTime.nullable().meta({ detail: "a future time, or null to wake it now" }) }),
  output: taskResult,
  async handler(ctx, args) {
    const slowly = async () => {
      const row = await requireTaskForWrite(ctx.db, ctx.principal.accountId, args.task_id);
      const until = args.until === null ? null : toUtc(args.until);
      if (until !== null && until <= ctx.now) {
        throw invalid(`until: ${args.until} is not in the future (now is ${ctx.now}); give a later time, or null to end a snooze.`);
      }
      if (row.snoozed_until === until) return unchanged(row);
      return writeTask(ctx, row, { snoozed_until: until }, until ? SNOOZED.text({ until }) : UNSNOOZED.text());
    };
    const until = args.until === null ? null : toUtc(args.until);
    if (until !== null && until <= ctx.now) return slowly();
    return fastOr(
      (miss) =>
        writeTaskAtOnce(ctx, miss, {
          taskId: args.task_id,
          where: differs("snoozed_until"),
          whereBinds: [until],
          set: setColumn("snoozed_until"),
          setBinds: [until],
          summary: until ? SNOOZED.text({ until }) : UNSNOOZED.text(),
        }),
      slowly,
    );
  },
});

/** decompose_task's new subtasks of `parentId`, with what they take from the parent (or null: the insert reads it). */
function subtasksOf<AutoOk extends boolean | null>(
  ctx: ToolContext,
  subtasks: { title: string; notes?: string }[],
  parentId: string,
  from: { projectId: string | null; autoOk: AutoOk },
) {
  return subtasks.map((s) => ({
    id: newId(ID_PREFIX.task),
    accountId: ctx.principal.accountId,
    projectId: from.projectId,
    parentId,
    title: s.title,
    notes: s.notes ?? "",
    priority: priorityIndex("normal"),
    dueAt: null,
    estimateMinutes: null,
    assignee: null,
    autoOk: from.autoOk,
    createdBy: actorName(ctx.principal),
    now: ctx.now,
  }));
}

const decomposeTask = defineTool({
  name: "decompose_task",
  description: "Create subtasks under a task at once; they inherit its project and auto-OK. Returns tasks.",
  input: z.strictObject({
    task_id: taskId,
    subtasks: z
      .array(z.strictObject({ title, notes: longText.optional() }))
      .min(1, "give at least one subtask")
      .max(LIMITS.batch, `at most ${LIMITS.batch} subtasks per call`),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({ parent_id: z.string(), tasks: z.array(taskShape) }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const slowly = async () => {
      const parent = await requireTask(db, p.accountId, args.task_id);
      const created = subtasksOf(ctx, args.subtasks, parent.id, { projectId: parent.project_id, autoOk: parent.auto_ok === 1 });
      const n = created.length;
      return ctx.commit(
        {
          statements: [
            ctx.guard(taskIsLive({ taskId: parent.id, accountId: p.accountId }), notFound("task", parent.id, notFoundHint)),
            ...created.map((t) => insertTask(db, t)),
            ...created.map((t) => indexNewTask(db, p.accountId, t)),
          ],
          activity: {
            target: parent.id,
            summary: ADDED_SUBTASKS.text({ count: n, s: plural(n), items: created.map((t) => SUBTASK_ITEM.text({ id: t.id, title: t.title })).join(LIST_SEPARATOR) }),
          },
        },
        { parent_id: parent.id, tasks: created.map(newTaskValue) },
      );
    };
    // The usual case in one batch: the parent is a guard; the subtasks take its project and auto-OK in their inserts.
    return fastOr(async (miss) => {
      const { db, principal: p } = ctx;
      // Project and auto-OK come from the parent inside the inserts.
      const created = subtasksOf(ctx, args.subtasks, args.task_id, { projectId: null, autoOk: null });
      const n = created.length;
      return ctx.commit(
        {
          statements: [
            ctx.guard(taskIsLive({ taskId: args.task_id, accountId: p.accountId }), miss),
            ...created.map((t) => named(t.id, insertTaskFrom(db, t, "parent"))),
            ...created.map((t) => indexNewTask(db, p.accountId, t)),
          ],
          activity: {
            target: args.task_id,
            summary: ADDED_SUBTASKS.text({ count: n, s: plural(n), items: created.map((t) => SUBTASK_ITEM.text({ id: t.id, title: t.title })).join(LIST_SEPARATOR) }),
          },
        },
        (rows) => ({ parent_id: args.task_id, tasks: created.map((t) => toTask(rows[t.id][0] as TaskRow)) }),
      );
    }, slowly);
  },
});

export const taskMoveTools = [
  deleteTask, blockTask, unblockTask, assignTask, moveTask, snoozeTask, decomposeTask,
];
