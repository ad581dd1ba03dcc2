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
import { selectProject } from "../db/projects.ts";
import { readBatch } from "../db/batch.ts";
import {
  agentIsUnpaused, assigneeIn, insertTaskFrom, moveSubtree, priorityIndex, requireTask, rootTaskOf, selectAssignee, selectSubtreeOutsideProject, selectTask,
  selectTaskWithTrash, taskIsLive, throwTaskMissing, toTask, type TaskRow, type TaskWithTrash,
} from "../db/tasks.ts";
import { moveToTrash } from "../db/trash.ts";
import { NO_LEASE } from "../db/claims.ts";
import { ANY_HOLDER, endRunsOfReassigned, holderIn, reassignedSummary, reassignSet, selectHolder } from "../db/releases.ts";
import { LEASE_MINUTES, leaseEnd, PERSON_ASSIGNEE } from "../domain/claims.ts";
import { eventTask, newEvent } from "../domain/events.ts";
import { AGAIN, defineTool, named, type ToolContext } from "../catalog/tool.ts";
import {
  blockSet, blockedSummary, BLOCKABLE, BLOCKED, deletedTaskSummary, liveTaskIs, movable, movedTaskSummary, selectTaskNow, differs, setColumn,
  setTask, taskSummary, unblockSet, unblockedSummary,
} from "../db/task-writes.ts";
import { ADDED_SUBTASKS, SNOOZED, UNSNOOZED, plural, SUBTASK_ITEM, LIST_SEPARATOR } from "../db/summaries.ts";
import { setLiveTask } from "./live-task.ts";
import { actorNameArg, idempotencyKey, isoTime, LIMITS, longText, projectId, scopeArg, scopeValue, taskId, title, toUtc } from "./schemas.ts";
import { taskShape, trashedShape } from "./shapes.ts";

const notFoundHint = "list_tasks or search_tasks finds task ids";
const taskResult = z.object({ task: taskShape, changed: z.boolean() });

const unchanged = (row: TaskRow) => ({ task: toTask(row), changed: false });

const deleteTask = defineTool({
  name: "delete_task",
  description: "Move a task and its subtasks to the trash as one restorable item. Returns trash_id and purge_after.",
  input: z.strictObject({ task_id: taskId }),
  output: trashedShape,
  async handler(ctx, { task_id }) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    return ctx.write({
      subject: `task ${task_id}`,
      // A live task: the trash item takes its title and count from the rows.
      apply(miss) {
        const trash = moveToTrash(db, { accountId: a, kind: "task", targetId: task_id, deletedBy: actorName(p), deletedByToken: p.tokenId, now: ctx.now });
        return ctx.commit(
          {
            statements: [ctx.guard(taskIsLive({ taskId: task_id, accountId: a }), miss), named("item", trash.item), ...trash.marks],
            activity: { target: task_id, summarySql: deletedTaskSummary(a, task_id, trash.trashId) },
          },
          (rows) => {
            const row = rows.item[0] as { id: string; purge_after: string; item_count: number };
            return { trash_id: row.id, purge_after: row.purge_after, item_count: row.item_count, already_in_trash: false };
          },
        );
      },
      // Missed: no such task, or it is in the trash already (its item is the answer, as the first call gave it).
      async diagnose() {
        const task = await selectTaskWithTrash(db, a, task_id).first<TaskWithTrash>();
        if (!task) throw notFound("task", task_id, notFoundHint);
        if (!task.trash_id) return AGAIN;
        if (!task.purge_after) throw notFound("task", task_id, notFoundHint);
        return { trash_id: task.trash_id, purge_after: task.purge_after, item_count: task.item_count ?? 1, already_in_trash: true };
      },
    });
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
        setLiveTask(ctx, miss, {
          taskId: args.task_id,
          where: BLOCKABLE,
          set: blockSet(args.reason),
          summary: taskSummary(a, args.task_id, blockedSummary(args.reason)),
        }),
      async diagnose() {
        const row = await requireTask(ctx.db, a, args.task_id);
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
        setLiveTask(ctx, miss, { taskId: args.task_id, where: BLOCKED, set: unblockSet(ctx.now), summary: taskSummary(a, args.task_id, unblockedSummary()) }),
      async diagnose() {
        const row = await requireTask(ctx.db, a, args.task_id);
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
  description: "Set a task's assignee; an agent's is a claim with a lease. The holder's null releases it, an agent's name hands it off. Returns task, released (whose hold ended).",
  input: z.strictObject({ task_id: taskId, assignee: actorNameArg.nullable().describe("`human` or an agent's name; null unassigns") }),
  output: taskResult.extend({ released: z.string().nullable(), runs_ended: z.array(z.string()) }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const me = actorName(p);
    const lease = assignedLease(ctx, args.assignee);
    // A hand-off: the agent that holds the task gives it to another agent (the batch reads whether it holds it).
    const giver = p.kind === "agent" && args.assignee !== null && args.assignee !== PERSON_ASSIGNEE && args.assignee !== me ? me : null;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply(miss) {
        const known = args.assignee !== null && args.assignee !== PERSON_ASSIGNEE ? [ctx.guard(agentIsUnpaused({ accountId: a, name: args.assignee }), miss)] : [];
        // The work is someone else's now, or nobody's: the other running runs on it end in the same batch, a holder's
        // as released or handed off.
        const reassigned = `the task was reassigned to ${args.assignee} by ${me}`;
        const endRuns = endRunsOfReassigned(db, a, args.task_id, {
          keep: args.assignee,
          holder: args.assignee === null ? ANY_HOLDER : giver,
          held: args.assignee === null ? `released: ${me} released the task` : giver ? `handed off: ${me} handed the task to ${args.assignee}` : reassigned,
          otherwise: args.assignee === null ? `released: ${me} unassigned the task` : reassigned,
          now,
        });
        return ctx.commit(
          {
            statements: [
              ...known,
              ctx.guard(liveTaskIs(a, args.task_id, differs("assignee", args.assignee)), miss),
              named("held", selectHolder(db, a, args.task_id)),
              named("runs", endRuns),
              named("task", setTask(db, a, args.task_id, reassignSet(args.assignee, lease, p.person), now)),
            ],
            activity: {
              target: args.task_id,
              summarySql: taskSummary(a, args.task_id, reassignedSummary({ by: me, assignee: args.assignee, giver, until: lease.claim_expires_at })),
            },
            events: (rows) => {
              const from = holderIn(rows.held);
              if (giver === null || from !== giver || args.assignee === null) return [];
              const data = {
                task: eventTask(toTask(rows.task[0] as TaskRow)),
                from,
                to: args.assignee,
                claim_expires_at: lease.claim_expires_at,
                runs_ended: rows.runs.map((r) => (r as { id: string }).id),
              };
              return [newEvent("task.handed_off", a, now, data)];
            },
          },
          (rows) => {
            const from = holderIn(rows.held);
            const row = rows.task[0] as TaskRow;
            return { task: toTask(row), changed: true, released: from, runs_ended: rows.runs.map((r) => (r as { id: string }).id) };
          },
        );
      },
      // Missed: the task or the agent is missing, the agent is paused, or the task has this assignee already (a no-op).
      async diagnose() {
        // The task and the assignee, in one round trip.
        const read = await readBatch(db, { task: selectTask(db, a, args.task_id), agent: selectAssignee(db, a, args.assignee) });
        const row = (read.task[0] as TaskRow | undefined) ?? (await throwTaskMissing(db, a, args.task_id));
        if (args.assignee !== null) {
          const who = assigneeIn(args.assignee, read.agent);
          if (!who.exists) throw notFound("agent", args.assignee, "list_agents names the agents; `human` is the account's person");
          if (who.paused_at) {
            throw conflict(
              `agent ${args.assignee} is paused (since ${who.paused_at}), so no task can be assigned to it. A person's resume_agent lifts the pause; or assign another agent (list_agents). ` +
                "A paused agent is given nothing, a hand-off included.",
            );
          }
        }
        return row.assignee === args.assignee ? { ...unchanged(row), released: null, runs_ended: [] } : AGAIN;
      },
    });
  },
});

const moveTask = defineTool({
  name: "move_task",
  description: "Move a top-level task and its subtasks to another project, or out of any. Returns task and moved.",
  input: z.strictObject({ task_id: taskId, project_id: projectId.nullable().describe("null: none") }),
  output: taskResult.extend({ moved: z.number().describe("tasks whose project changed, subtasks included") }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply(miss) {
        return ctx.commit(
          {
            statements: [
              ctx.guard(movable({ taskId: args.task_id, accountId: a, projectId: args.project_id }), miss),
              named("moved", moveSubtree(db, a, args.task_id, args.project_id, ctx.now)),
              named("task", selectTaskNow(db, a, args.task_id)),
            ],
            activity: { target: args.task_id, summarySql: movedTaskSummary({ taskId: args.task_id, accountId: a, projectId: args.project_id }) },
          },
          (rows, changes) => ({ task: toTask(rows.task[0] as TaskRow), changed: true, moved: changes.moved }),
        );
      },
      // Missed: the task or the project is missing, the task is a subtask, or its subtree is in the project already (a no-op).
      async diagnose() {
        // The task, the project and how much of the subtree is outside it, in one round trip.
        const read = await readBatch(db, {
          task: selectTask(db, a, args.task_id),
          project: selectProject(db, a, args.project_id ?? ""),
          outside: selectSubtreeOutsideProject(db, a, args.task_id, args.project_id),
        });
        const row = (read.task[0] as TaskRow | undefined) ?? (await throwTaskMissing(db, a, args.task_id));
        if (row.parent_id) {
          const root = await rootTaskOf(db, a, row.id);
          throw invalid(
            `task_id: ${row.id} is a subtask and lives in its parent's project; move its top-level parent ${root.id} ("${root.title}") instead, and its subtasks move with it.`,
          );
        }
        if (args.project_id && read.project.length === 0) throw notFound("project", args.project_id, "list_projects finds project ids");
        const outside = (read.outside[0] as { n: number } | undefined)?.n ?? 0;
        return outside === 0 ? { ...unchanged(row), moved: 0 } : AGAIN;
      },
    });
  },
});

const snoozeTask = defineTool({
  name: "snooze_task",
  description: "Hide a task from open lists until a future time, or wake it. Returns task.",
  input: z.strictObject({ task_id: taskId, until: isoTime.nullable().describe("null wakes it") }),
  output: taskResult,
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const until = args.until === null ? null : toUtc(args.until);
    const past = until !== null && until <= ctx.now;
    return ctx.write({
      subject: `task ${args.task_id}`,
      // A time not in the future writes nothing: diagnose refuses it, once it has named a missing task.
      apply: (miss) =>
        past
          ? Promise.reject(miss)
          : setLiveTask(ctx, miss, {
              taskId: args.task_id,
              where: differs("snoozed_until", until),
              set: setColumn("snoozed_until", until),
              summary: until ? SNOOZED.text({ until }) : UNSNOOZED.text(),
            }),
      // Missed: the task is missing, the time is past, or the task is snoozed until then already (a no-op).
      async diagnose() {
        const row = await requireTask(ctx.db, a, args.task_id);
        if (past) throw invalid(`until: ${args.until} is not in the future (now is ${ctx.now}); give a later time, or null to end a snooze.`);
        return row.snoozed_until === until ? unchanged(row) : AGAIN;
      },
    });
  },
});

/** decompose_task's new subtasks of `parentId`; their inserts take its project and auto-OK. */
function subtasksOf(ctx: ToolContext, subtasks: { title: string; notes?: string; scope?: string[] }[], parentId: string) {
  return subtasks.map((s) => ({
    id: newId(ID_PREFIX.task),
    accountId: ctx.principal.accountId,
    projectId: null,
    parentId,
    title: s.title,
    notes: s.notes ?? "",
    priority: priorityIndex("normal"),
    dueAt: null,
    estimateMinutes: null,
    assignee: null,
    autoOk: null,
    createdBy: actorName(ctx.principal),
    now: ctx.now,
    scope: s.scope ? scopeValue(s.scope) : null,
  }));
}

const decomposeTask = defineTool({
  name: "decompose_task",
  description: "Create subtasks under a task at once; they inherit its project and auto-OK. Returns tasks.",
  input: z.strictObject({
    task_id: taskId,
    subtasks: z
      .array(z.strictObject({ title, notes: longText.optional(), scope: scopeArg.optional() }))
      .min(1, "give at least one subtask")
      .max(LIMITS.batch, `at most ${LIMITS.batch} subtasks per call`),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({ parent_id: z.string(), tasks: z.array(taskShape) }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    return ctx.write({
      subject: `task ${args.task_id}`,
      // The parent is a guard; the subtasks take its project and auto-OK in their inserts.
      apply(miss) {
        const created = subtasksOf(ctx, args.subtasks, args.task_id);
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
      },
      // Missed: the parent is missing or in the trash (requireTask says which).
      async diagnose() {
        await requireTask(db, p.accountId, args.task_id);
        return AGAIN;
      },
    });
  },
});

export const taskMoveTools = [
  deleteTask, blockTask, unblockTask, assignTask, moveTask, snoozeTask, decomposeTask,
];
