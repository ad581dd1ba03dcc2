import { z } from "zod";
import { conflict, forbidden, invalid, notFound } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import {
  appendEvent, endRun, insertRun, ownRunIsRunning, requireRun, RUN_EVENT_KINDS, RUN_STATUSES, runTask, runWithEvents,
  selectAgentExists, selectLiveTaskExists, selectRun, selectRuns, startedRunSummary,
  startTask, taskIsWorkable, toRun, type Run, type RunRow, type RunStatus,
} from "../db/runs.ts";
import { readTaskState } from "../db/lifecycle.ts";
import { throwTaskMissing } from "../db/tasks.ts";
import { reasonText, RUN_ENDED, RUN_EVENT } from "../db/summaries.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { AGAIN, defineTool, named, type ToolContext } from "../catalog/tool.ts";
import { readBatch } from "../db/batch.ts";
import { actorNameArg, cursor, idempotencyKey, limit, nextCursor, runId, taskId, TASK_STATUSES } from "./schemas.ts";
import { renewLeaseOfRun } from "../db/claims.ts";

export const RUN_LIMITS = { message: 4000, url: 2000, summary: 4000, eventsShown: 200 } as const;

export const runShape = z.object({
  id: z.string(),
  task_id: z.string(),
  task_title: z.string(),
  agent: z.string().describe("the agent whose run it is"),
  status: z.enum(RUN_STATUSES),
  summary: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  last_event_at: z.string(),
});

const eventShape = z.object({
  id: z.string(),
  kind: z.enum(RUN_EVENT_KINDS),
  message: z.string(),
  url: z.string().nullable(),
  created_at: z.string(),
});

const summaryText = z.string().trim().min(1, "must not be empty").max(RUN_LIMITS.summary);

/** The run, when it is the caller's: only the agent whose run it is may change it. */
async function requireOwnRun(ctx: ToolContext, id: string): Promise<RunRow> {
  const run = await requireRun(ctx.db, ctx.principal.accountId, id);
  if (ctx.principal.agentId !== run.agent_id) {
    throw forbidden(`run ${run.id} belongs to agent ${run.agent}; only that agent's token may log to, finish or cancel it.`);
  }
  return run;
}

const listRuns = defineTool({
  name: "list_runs",
  description: "Runs of the account, newest first, filtered by task, agent or status.",
  input: z.strictObject({
    task_id: taskId.optional(),
    agent: actorNameArg.optional(),
    status: z.array(z.enum(RUN_STATUSES)).min(1).max(4).optional().meta({ detail: "any of these statuses (default: all)" }),
    limit,
    cursor,
  }),
  output: z.object({ items: z.array(runShape), next_cursor: nextCursor }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const { runs, task, agent } = await readBatch(db, {
      runs: selectRuns(db, a, { taskId: args.task_id, agent: args.agent, statuses: args.status, after: decodeCursor(args.cursor), limit: args.limit }),
      task: selectLiveTaskExists(db, a, args.task_id ?? null),
      agent: selectAgentExists(db, a, args.agent ?? null),
    });
    if (args.task_id && task.length === 0) return throwTaskMissing(db, a, args.task_id);
    if (args.agent && agent.length === 0) throw notFound("agent", args.agent, "list_agents names the agents");
    const { items, next_cursor } = page(runs as Run[], args.limit, (r) => ({ k: r.started_at, id: r.id }));
    return { items: items.map(toRun), next_cursor };
  },
});

const getRun = defineTool({
  name: "get_run",
  description: "One run with its latest 200 events, oldest first, and event_count.",
  input: z.strictObject({ run_id: runId }),
  output: z.object({
    run: runShape,
    events: z.array(eventShape),
    event_count: z.number().describe("all events of the run; more than shown when the log was cut to the latest"),
  }),
  async handler(ctx, args) {
    const { run, events, count } = await runWithEvents(ctx.db, ctx.principal.accountId, args.run_id, RUN_LIMITS.eventsShown);
    return { run, events, event_count: count };
  },
});

const startRun = defineTool({
  name: "start_run",
  description: "Start a run of the calling agent (agent tokens only) on a task, which moves to in_progress. Returns run.",
  input: z.strictObject({ task_id: taskId, idempotency_key: idempotencyKey }),
  output: z.object({ run: runShape, task_status: z.enum(TASK_STATUSES) }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    if (p.kind !== "agent" || !p.agentId) {
      throw forbidden("start_run records an agent's work, so it needs the agent's own token; a person uses claim_task and complete_task instead.");
    }
    const agentId = p.agentId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      // A workable task (an open one starts); the run is read back with the task's status.
      apply: (miss) => {
        const run = { id: newId(ID_PREFIX.run), accountId: a, taskId: args.task_id, agentId, now };
        return ctx.commit(
          {
            statements: [
              ctx.guard(taskIsWorkable({ taskId: args.task_id, accountId: a }), miss),
              startTask(db, a, args.task_id, now),
              insertRun(db, run),
              named("run", selectRun(db, a, run.id)),
            ],
            activity: { target: args.task_id, summarySql: startedRunSummary(a, args.task_id, run.id) },
          },
          (rows) => {
            const row = rows.run[0] as Run & { task_status: (typeof TASK_STATUSES)[number] };
            return { run: toRun(row), task_status: row.task_status };
          },
        );
      },
      // Missed: the task is missing or in the trash (readTaskState says which), finished, or workable again meanwhile.
      async diagnose() {
        const { task: t } = await readTaskState(db, a, args.task_id);
        if (t.status === "done" || t.status === "cancelled") {
          throw conflict(`task ${t.id} is ${t.status}; a run needs an unfinished task. reopen_task brings it back first.`);
        }
        return AGAIN;
      },
    });
  },
});

const logRunEvent = defineTool({
  name: "log_run_event",
  description: "Add progress, a note or an artifact (needs url) to one of the caller's running runs. Returns event.",
  input: z.strictObject({
    run_id: runId,
    kind: z.enum(RUN_EVENT_KINDS).meta({ detail: "progress | note | artifact (an artifact needs a url)" }),
    message: z.string().trim().min(1, "must not be empty").max(RUN_LIMITS.message),
    url: z.url({ protocol: /^https?$/ }).max(RUN_LIMITS.url).optional().meta({ detail: "http(s) link, e.g. to the artifact" }),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({ event: eventShape.extend({ run_id: z.string() }) }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    if (args.kind === "artifact" && !args.url) throw invalid("url: an artifact event needs the artifact's http(s) url.");
    return ctx.write({
      subject: `run ${args.run_id}`,
      apply: (miss) => {
        const event = { id: newId(ID_PREFIX.runEvent), kind: args.kind, message: args.message, url: args.url ?? null, created_at: now };
        return ctx.commit(
          {
            statements: [
              ctx.guard(ownRunIsRunning({ runId: args.run_id, accountId: a, agentId: p.agentId }), miss),
              ...appendEvent(db, a, args.run_id, event),
              renewLeaseOfRun(db, a, args.run_id, actorName(p), now),
            ],
            activity: {
              target: null,
              targetSql: runTask(a, args.run_id),
              summary: RUN_EVENT.text({ run: args.run_id, kind: args.kind, message: args.message }),
            },
          },
          { event: { ...event, run_id: args.run_id } },
        );
      },
      // Missed: the run is missing, another agent's, or has ended.
      async diagnose() {
        const run = await requireOwnRun(ctx, args.run_id);
        if (run.status !== "running") {
          throw conflict(`run ${run.id} has ended (${run.status})${run.summary ? `: ${run.summary}` : ""}; events go to a running run. start_run starts a new one.`);
        }
        return AGAIN;
      },
    });
  },
});

/** Ends the caller's run as `status`; the same end twice is a no-op, a different end is a conflict. */
async function endOwnRun(
  ctx: ToolContext,
  runIdValue: string,
  status: Exclude<RunStatus, "running">,
  summary: string | null,
) {
  const { db, principal: p, now } = ctx;
  const a = p.accountId;
  return ctx.write({
    subject: `run ${runIdValue}`,
    apply: (miss) =>
      ctx.commit(
        {
          statements: [
            ctx.guard(ownRunIsRunning({ runId: runIdValue, accountId: a, agentId: p.agentId }), miss),
            endRun(db, a, runIdValue, status, summary, now),
            named("run", selectRun(db, a, runIdValue)),
          ],
          activity: {
            target: null,
            targetSql: runTask(a, runIdValue),
            summary: RUN_ENDED.text({ run: runIdValue, status, summary: reasonText(summary) }),
          },
        },
        (rows) => ({ run: toRun(rows.run[0] as Run), changed: true }),
      ),
    // Missed: the run is missing, another agent's, ended so already (a no-op), or ended otherwise.
    async diagnose() {
      const run = await requireOwnRun(ctx, runIdValue);
      if (run.status === status) return { run: toRun(run), changed: false };
      if (run.status !== "running") throw conflict(`run ${run.id} already ended as ${run.status}${run.summary ? ` (${run.summary})` : ""}; start_run starts a new one.`);
      return AGAIN;
    },
  });
}

const runResult = z.object({ run: runShape, changed: z.boolean() });

const finishRun = defineTool({
  name: "finish_run",
  description: "End one of the caller's running runs as succeeded or failed, with a summary. Returns run.",
  input: z.strictObject({ run_id: runId, outcome: z.enum(["succeeded", "failed"]), summary: summaryText }),
  output: runResult,
  handler: (ctx, args) => endOwnRun(ctx, args.run_id, args.outcome, args.summary),
});

const cancelRun = defineTool({
  name: "cancel_run",
  description: "End one of the caller's running runs as cancelled. Returns run.",
  input: z.strictObject({ run_id: runId, reason: summaryText.optional() }),
  output: runResult,
  handler: (ctx, args) => endOwnRun(ctx, args.run_id, "cancelled", args.reason ?? null),
});

export const runTools = [listRuns, getRun, startRun, logRunEvent, finishRun, cancelRun];
