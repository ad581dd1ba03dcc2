/** add_dependency and remove_dependency: one task waits on another, in the same account, without cycles. */
import { z } from "zod";
import type { TaskStatus } from "../domain/vocabulary.ts";
import { invalid } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { deleteLink, dependencyPath, insertLink, noDependencyPath, type ReachRow, selectLink, selectReachable } from "../db/dependencies.ts";
import { selectTask, type TaskRow, throwTaskMissing } from "../db/tasks.ts";
import { AGAIN, defineTool, named, type BatchStep, type ToolContext } from "../catalog/tool.ts";
import { readBatch } from "../db/batch.ts";
import { dependencyIs, linkSummary, selectTaskRef } from "../db/task-writes.ts";
import { NO_LONGER_WAITS_ON, WAITS_ON } from "../db/summaries.ts";
import { taskId } from "./schemas.ts";
import { taskRef } from "./shapes.ts";

const notFoundHint = "list_tasks or search_tasks finds task ids";

const dependencyArgs = z.strictObject({
  task_id: taskId.meta({ detail: "the task that waits" }),
  depends_on_id: taskId.meta({ detail: "the task it waits on" }),
});
const dependencyResult = z.object({ task: taskRef, depends_on: taskRef, changed: z.boolean() });

/**
 * Both tasks (live, or the error that says where they went), whether the link
 * is there, and for add_dependency (`add`) the chain by which depends_on_id
 * already waits on task_id, if it does: one read.
 */
async function readPair(ctx: ToolContext, taskIdValue: string, dependsOnId: string, add: boolean) {
  const { db, principal: p } = ctx;
  const reads: Record<string, D1PreparedStatement> = {
    task: selectTask(db, p.accountId, taskIdValue),
    dep: selectTask(db, p.accountId, dependsOnId),
    link: selectLink(db, p.accountId, taskIdValue, dependsOnId),
  };
  if (add) reads.reach = selectReachable(db, p.accountId, dependsOnId);
  const rows = await readBatch(db, reads);
  const t = rows.task[0] as TaskRow | undefined;
  const d = rows.dep[0] as TaskRow | undefined;
  if (!t) return throwTaskMissing(db, p.accountId, taskIdValue, notFoundHint);
  if (!d) return throwTaskMissing(db, p.accountId, dependsOnId, notFoundHint);
  const ref = (r: TaskRow) => ({ id: r.id, title: r.title, status: r.status });
  const cycle = add ? dependencyPath(rows.reach as ReachRow[], dependsOnId, taskIdValue) : null;
  return { task: ref(t), depends_on: ref(d), linked: rows.link.length > 0, cycle };
}

/** add_dependency (add) or remove_dependency in one batch, when both tasks are live and the link is absent (present). */
function dependencyAtOnce(ctx: ToolContext, miss: Error, taskIdValue: string, dependsOnId: string, add: boolean) {
  const { db, principal: p } = ctx;
  const a = p.accountId;
  const statements: BatchStep<"task" | "dependsOn">[] = [ctx.guard(dependencyIs({ taskId: taskIdValue, accountId: a, dependsOnId, present: !add }), miss)];
  if (add) statements.push(ctx.guard(noDependencyPath({ from: dependsOnId, accountId: a, to: taskIdValue }), miss), insertLink(db, a, taskIdValue, dependsOnId, actorName(p), ctx.now));
  else statements.push(deleteLink(db, a, taskIdValue, dependsOnId));
  statements.push(named("task", selectTaskRef(db, a, taskIdValue)), named("dependsOn", selectTaskRef(db, a, dependsOnId)));
  return ctx.commit(
    {
      statements,
      activity: { target: taskIdValue, summarySql: linkSummary(a, dependsOnId, add ? WAITS_ON : NO_LONGER_WAITS_ON) },
    },
    (rows) => ({
      task: rows.task[0] as { id: string; title: string; status: TaskStatus },
      depends_on: rows.dependsOn[0] as { id: string; title: string; status: TaskStatus },
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
    if (args.task_id === args.depends_on_id) throw invalid("depends_on_id: a task cannot wait on itself; give another task's id.");
    return ctx.write({
      subject: `task ${args.task_id}`,
      // Both tasks live, not linked yet, no cycle; the refs are read after the insert.
      apply: (miss) => dependencyAtOnce(ctx, miss, args.task_id, args.depends_on_id, true),
      // Missed: a task is missing or in the trash, the link is there (a no-op), or it would close a cycle.
      async diagnose() {
        const pair = await readPair(ctx, args.task_id, args.depends_on_id, true);
        if (pair.linked) return { task: pair.task, depends_on: pair.depends_on, changed: false };
        if (!pair.cycle) return AGAIN;
        throw invalid(
          `refused: ${args.task_id} cannot wait on ${args.depends_on_id}, because ${args.depends_on_id} already waits on ${args.task_id} (${describePath(pair.cycle)}); ` +
            "that would be a cycle. remove_dependency one of those links first, or link them the other way round.",
        );
      },
    });
  },
});

const removeDependency = defineTool({
  name: "remove_dependency",
  description: "Drop the link that makes task_id wait on depends_on_id. Returns task and depends_on.",
  input: dependencyArgs,
  output: dependencyResult,
  async handler(ctx, args) {
    return ctx.write({
      subject: `task ${args.task_id}`,
      // Both tasks live and linked; the refs are read after the delete.
      apply: (miss) => dependencyAtOnce(ctx, miss, args.task_id, args.depends_on_id, false),
      // Missed: a task is missing or in the trash, or the link is not there (a no-op).
      async diagnose() {
        const pair = await readPair(ctx, args.task_id, args.depends_on_id, false);
        return pair.linked ? AGAIN : { task: pair.task, depends_on: pair.depends_on, changed: false };
      },
    });
  },
});

export const taskDependencyTools = [addDependency, removeDependency];
