import { named, type Condition, type ToolContext } from "../catalog/tool.ts";
import { liveTaskIs, setTask } from "../db/task-writes.ts";
import { toTask, type TaskRow } from "../db/tasks.ts";

/**
 * A write outcome that sets columns of one live task: one batch, guarded by
 * `where` (the state the outcome assumes, failing with `miss`), set by `set`
 * over the row as it is, summarised from the row before, and answered with the
 * row as written.
 */
export function setLiveTask(
  ctx: ToolContext,
  miss: Error,
  o: {
    taskId: string;
    where: Condition;
    set: Condition;
    summary: string | Condition;
    before?: D1PreparedStatement[];
  },
) {
  const a = ctx.principal.accountId;
  const g = liveTaskIs(a, o.taskId, o.where);
  return ctx.commit(
    {
      statements: [...(o.before ?? []), ctx.guard(g, miss), named("task", setTask(ctx.db, a, o.taskId, o.set, ctx.now))],
      activity: typeof o.summary === "string" ? { target: o.taskId, summary: o.summary } : { target: o.taskId, summarySql: o.summary },
    },
    (rows) => ({ task: toTask(rows.task[0] as TaskRow), changed: true }),
  );
}
