/** add_dependency and remove_dependency: one task waits on another, in the same account, without cycles. */
import { z } from "zod";
import { conflict, invalid } from "../domain/errors.ts";
import { deleteLink, findDependencyPath, insertLink, noDependencyPath, selectLink } from "../db/dependencies.ts";
import { selectTask, taskIsLive, type TaskRow, throwTaskMissing } from "../db/tasks.ts";
import { bothHold } from "../db/guards.ts";
import { defineTool, named, type BatchStep, type ToolContext } from "../catalog/tool.ts";
import { readBatch } from "../db/batch.ts";
import { dependencyIs, linkSummary, selectTaskRef } from "../db/task-writes.ts";
import { NO_LONGER_WAITS_ON, WAITS_ON } from "../db/summaries.ts";
import { fastOr } from "./fast.ts";
import { taskId } from "./schemas.ts";

const notFoundHint = "list_tasks or search_tasks finds task ids";
const taskRef = z.object({ id: z.string(), title: z.string(), status: z.string() });

const raced = (id: string) =>
  conflict(`task ${id} was changed by another call while this one ran; nothing was written. get_task shows it now; call again.`);

const dependencyArgs = z.strictObject({
  task_id: taskId.meta({ detail: "the task that waits" }),
  depends_on_id: taskId.meta({ detail: "the task it waits on" }),
});
const dependencyResult = z.object({ task: taskRef, depends_on: taskRef, changed: z.boolean() });

async function requirePair(ctx: ToolContext, taskIdValue: string, dependsOnId: string) {
  const { db, principal: p } = ctx;
  const { task, dep, link } = await readBatch(db, {
    task: selectTask(db, p.accountId, taskIdValue),
    dep: selectTask(db, p.accountId, dependsOnId),
    link: selectLink(db, p.accountId, taskIdValue, dependsOnId),
  });
  const t = task[0] as TaskRow | undefined;
  const d = dep[0] as TaskRow | undefined;
  if (!t) return throwTaskMissing(db, p.accountId, taskIdValue, notFoundHint);
  if (!d) return throwTaskMissing(db, p.accountId, dependsOnId, notFoundHint);
  const ref = (r: TaskRow) => ({ id: r.id, title: r.title, status: r.status });
  return { task: ref(t), depends_on: ref(d), linked: link.length > 0 };
}

/** add_dependency (add) or remove_dependency in one batch, when both tasks are live and the link is absent (present). */
function dependencyAtOnce(ctx: ToolContext, miss: Error, taskIdValue: string, dependsOnId: string, add: boolean) {
  const { db, principal: p } = ctx;
  const a = p.accountId;
  const statements: BatchStep<"task" | "dependsOn">[] = [ctx.guard(dependencyIs({ taskId: taskIdValue, accountId: a, dependsOnId, present: !add }), miss)];
  if (add) statements.push(ctx.guard(noDependencyPath({ from: dependsOnId, accountId: a, to: taskIdValue }), miss), insertLink(db, a, taskIdValue, dependsOnId, ctx.now));
  else statements.push(deleteLink(db, a, taskIdValue, dependsOnId));
  statements.push(named("task", selectTaskRef(db, a, taskIdValue)), named("dependsOn", selectTaskRef(db, a, dependsOnId)));
  return ctx.commit(
    {
      statements,
      activity: { target: taskIdValue, summarySql: linkSummary(a, dependsOnId, add ? WAITS_ON : NO_LONGER_WAITS_ON) },
    },
    (rows) => ({
      task: rows.task[0] as { id: string; title: string; status: string },
      depends_on: rows.dependsOn[0] as { id: string; title: string; status: string },
      changed: true,
    }),
  );
}

const describePath = (path: { id: string; title: string | null }[]) =>
  path.map((s) => (s.title === null ? s.id : `${s.id} "${s.title}"`)).join(" waits on ");

const addDependency = defineTool({
  name: "add_dependency",
  description: "Make task_id wait on depends_on_id; a link closing a cycle is refused. Returns task and depends_on.",
  input: dependencyArgs,
  output: dependencyResult,
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const slowly = async () => {
      if (args.task_id === args.depends_on_id) throw invalid("depends_on_id: a task cannot wait on itself; give another task's id.");
      const pair = await requirePair(ctx, args.task_id, args.depends_on_id);
      if (pair.linked) return { task: pair.task, depends_on: pair.depends_on, changed: false };
      const cycleError = (path: { id: string; title: string | null }[] | null) =>
        invalid(
          `refused: ${args.task_id} cannot wait on ${args.depends_on_id}, because ${args.depends_on_id} already waits on ${args.task_id}` +
            (path ? ` (${describePath(path)})` : "") +
            `; that would be a cycle. remove_dependency one of those links first, or link them the other way round.`,
        );
      const path = await findDependencyPath(db, a, args.depends_on_id, args.task_id);
      if (path) throw cycleError(path);
      return ctx.commit(
        {
          statements: [
            ctx.guard(bothHold(taskIsLive({ taskId: args.task_id, accountId: a }), taskIsLive({ taskId: args.depends_on_id, accountId: a })), raced(args.task_id)),
            ctx.guard(noDependencyPath({ from: args.depends_on_id, accountId: a, to: args.task_id }), cycleError(null)),
            insertLink(db, a, args.task_id, args.depends_on_id, ctx.now),
          ],
          activity: { target: args.task_id, summary: WAITS_ON.text({ task: args.depends_on_id, title: pair.depends_on.title }) },
        },
        { task: pair.task, depends_on: pair.depends_on, changed: true },
      );
    };
    if (args.task_id === args.depends_on_id) return slowly();
    // The usual case in one batch: both tasks live, not linked yet, no cycle; the refs are read after the insert.
    return fastOr((miss) => dependencyAtOnce(ctx, miss, args.task_id, args.depends_on_id, true), slowly);
  },
});

const removeDependency = defineTool({
  name: "remove_dependency",
  description: "Drop the link that makes task_id wait on depends_on_id. Returns task and depends_on.",
  input: dependencyArgs,
  output: dependencyResult,
  async handler(ctx, args) {
    const slowly = async () => {
      const pair = await requirePair(ctx, args.task_id, args.depends_on_id);
      if (!pair.linked) return { task: pair.task, depends_on: pair.depends_on, changed: false };
      return ctx.commit(
        {
          statements: [deleteLink(ctx.db, ctx.principal.accountId, args.task_id, args.depends_on_id)],
          activity: { target: args.task_id, summary: NO_LONGER_WAITS_ON.text({ task: args.depends_on_id, title: pair.depends_on.title }) },
        },
        { task: pair.task, depends_on: pair.depends_on, changed: true },
      );
    };
    return fastOr((miss) => dependencyAtOnce(ctx, miss, args.task_id, args.depends_on_id, false), slowly);
  },
});

export const taskDependencyTools = [addDependency, removeDependency];
