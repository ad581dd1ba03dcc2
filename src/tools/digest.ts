import { z } from "zod";
import { invalid } from "../domain/errors.ts";
import { readDigest, type DigestSection } from "../db/digest.ts";
import { defineTool, type AnyTool } from "../catalog/tool.ts";
import { isoTime, PRIORITIES, toUtc } from "./schemas.ts";
import { taskStatus } from "./shapes.ts";

const SECTION_MAX = 20;
const DUE_SOON_HOURS = 48;
const DAY_MS = 86_400_000;

const section = <T extends z.ZodObject>(item: T, what: string) =>
  z.object({
    count: z.number().describe(`how many ${what} in all`),
    items: z.array(item).describe(`the first ${SECTION_MAX}`),
  });

const completed = z.object({
  id: z.string(),
  title: z.string(),
  assignee: z.string().nullable(),
  project_id: z.string().nullable(),
  completed_at: z.string(),
});
const awaiting = z.object({
  task_id: z.string(),
  task_title: z.string(),
  status: taskStatus,
  approval_id: z.string().nullable().describe("the pending approval, if one was requested"),
  question: z.string().nullable(),
  requested_by: z.string().nullable(),
  waiting_since: z.string(),
});
const blocked = z.object({
  id: z.string(),
  title: z.string(),
  blocked_reason: z.string().nullable(),
  assignee: z.string().nullable(),
  blocked_at: z.string(),
});
const failedRun = z.object({
  run_id: z.string(),
  task_id: z.string(),
  task_title: z.string(),
  agent: z.string().nullable(),
  summary: z.string().nullable(),
  finished_at: z.string(),
});
const dueSoon = z.object({
  id: z.string(),
  title: z.string(),
  status: taskStatus,
  priority: z.enum(PRIORITIES),
  assignee: z.string().nullable(),
  due_at: z.string(),
});

function take<T>(rows: Record<string, unknown>[], map: (r: Record<string, unknown>) => T): { count: number; items: T[] } {
  return { count: rows.length ? Number(rows[0].total) : 0, items: rows.map(map) };
}

const withoutTotal = ({ total: _, ...rest }: Record<string, unknown>) => rest;

const getDigest = defineTool({
  name: "get_digest",
  description: "What happened since a time (default 24 h ago): completed, awaiting_approval, newly_blocked, failed_runs, due_soon.",
  input: z.strictObject({ since: isoTime.optional().meta({ detail: "start of the period (default: 24 hours ago)" }) }),
  output: z.object({
    since: z.string(),
    until: z.string(),
    completed: section(completed, "tasks completed since then"),
    awaiting_approval: section(awaiting, "tasks waiting for a person's approval now"),
    newly_blocked: section(blocked, "tasks blocked since then and still blocked"),
    failed_runs: section(failedRun, "runs failed since then"),
    due_soon: section(dueSoon, `open tasks due in the next ${DUE_SOON_HOURS} hours`),
  }),
  async handler(ctx, args) {
    const since = args.since ? toUtc(args.since) : new Date(ctx.nowMs - DAY_MS).toISOString();
    if (since > ctx.now) throw invalid(`since: ${args.since} is in the future; pass a past time (now is ${ctx.now}).`);
    const dueUntil = new Date(ctx.nowMs + DUE_SOON_HOURS * 3_600_000).toISOString();
    const rows = await readDigest(ctx.db, { accountId: ctx.principal.accountId, since, now: ctx.now, dueUntil, limit: SECTION_MAX });
    const r = (s: DigestSection) => rows[s];
    return {
      since,
      until: ctx.now,
      completed: take(r("completed"), (x) => withoutTotal(x) as z.infer<typeof completed>),
      awaiting_approval: take(r("awaiting_approval"), (x) => withoutTotal(x) as z.infer<typeof awaiting>),
      newly_blocked: take(r("newly_blocked"), (x) => withoutTotal(x) as z.infer<typeof blocked>),
      failed_runs: take(r("failed_runs"), (x) => withoutTotal(x) as z.infer<typeof failedRun>),
      due_soon: take(r("due_soon"), (x) => {
        const row = withoutTotal(x) as Omit<z.infer<typeof dueSoon>, "priority"> & { priority: number };
        return { ...row, priority: PRIORITIES[row.priority] ?? "normal" };
      }),
    };
  },
});

export const digestTools: AnyTool[] = [getDigest];
