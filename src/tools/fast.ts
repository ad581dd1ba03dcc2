import { named, type ToolContext } from "../catalog/tool.ts";
import { liveTaskIs, setTask } from "../db/task-writes.ts";
import { toTask, type TaskRow } from "../db/tasks.ts";

/**
 * One round trip for the usual case of a write: `fast` builds a single batch
 * whose guards (each failing with `miss`) state what the usual case assumes,
 * and reads what the result needs at its end. When a guard fails the batch
 * has rolled back, and `slow` — the read → decide → commit path — finds the
 * exact answer: a no-op, the precise error, or the write on what it read.
 */
export async function fastOr<R>(fast: (miss: Error) => Promise<R>, slow: () => Promise<R>): Promise<R> {
  const miss = new Error("the usual case does not hold");
  try {
    return await fast(miss);
  } catch (e) {
    if (e !== miss) throw e;
    return slow();
  }
}

/**
 * One live task's usual write in one batch: guarded by `where` (its state the
 * usual case assumes), set by `set` over the row as it is, summarised from the
 * row before, and answered with the row as written.
 */
export function writeTaskAtOnce(
  ctx: ToolContext,
  miss: Error,
  o: {
    taskId: string;
    where: string;
    whereBinds?: unknown[];
    set: string;
    setBinds: unknown[];
    summary: string | { sql: string; binds: unknown[] };
    before?: D1PreparedStatement[];
  },
) {
  const a = ctx.principal.accountId;
  const g = liveTaskIs(a, o.taskId, o.where, o.whereBinds);
  return ctx.commit(
    {
      statements: [...(o.before ?? []), ctx.guard(g, miss), named("task", setTask(ctx.db, a, o.taskId, o.set, o.setBinds, ctx.now))],
      activity: typeof o.summary === "string" ? { target: o.taskId, summary: o.summary } : { target: o.taskId, summarySql: o.summary },
    },
    (rows) => ({ task: toTask(rows.task[0] as TaskRow), changed: true }),
  );
}
