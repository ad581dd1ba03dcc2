/**
 * The agents toolset (src/catalog/toolsets.ts): the fleet at a glance
 * (fleet_status), each agent and its workload, and pausing and resuming one.
 */
import { scopeShown } from "../domain/scopes.ts";
import { z } from "zod";
import { staleRunMinutes } from "../domain/stale-runs.ts";
import { actorName } from "../domain/principal.ts";
import { notFound } from "../domain/errors.ts";
import {
  agentIdByName, agentNamedIs, setPausedByName, agentDetail, fleetSnapshot, listAgents, requireAgentByName, workload,
  type AgentRow,
} from "../db/agents.ts";
import { toRun } from "../db/runs.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { forgetResolvedTokens } from "../db/principals.ts";
import { AGAIN, defineTool, named, type ToolContext } from "../catalog/tool.ts";
import { actorNameArg, cursor, limit, nextCursor, projectId } from "./schemas.ts";
import { REASON_MAX } from "./lifecycle.ts";
import { runShape } from "./runs.ts";
import { CLAIM_EXPIRES, taskStatus } from "./shapes.ts";
import { claimExpiry } from "../domain/claims.ts";
import { AGENT_REASON, PAUSED_AGENT, RESUMED_AGENT } from "../db/summaries.ts";

const PER_AGENT = 20;
const RECENT_RUNS = 10;

/** Minutes without a run event after which a running run counts as stale (STALE_RUN_MINUTES, default 15). */

const agentName = actorNameArg.meta({ detail: "the agent's name (list_agents)" });

const agentShape = z.object({
  id: z.string(),
  name: z.string(),
  state: z.enum(["active", "paused"]).describe("a paused agent's tokens may only read"),
  paused_at: z.string().nullable(),
  paused_by: z.string().nullable(),
  last_seen_at: z.string().nullable().describe("last request by any of its tokens (to the minute)"),
  created_at: z.string(),
});

function toAgent(r: AgentRow): z.infer<typeof agentShape> {
  return {
    id: r.id, name: r.name, state: r.paused_at ? "paused" : "active", paused_at: r.paused_at, paused_by: r.paused_by,
    last_seen_at: r.last_seen_at, created_at: r.created_at,
  };
}

const fleetRun = z.object({
  id: z.string(),
  task_id: z.string(),
  task_title: z.string(),
  started_at: z.string(),
  last_event_at: z.string(),
  minutes_since_event: z.number(),
});

const heldTask = z.object({ id: z.string(), title: z.string(), status: taskStatus, claim_expires_at: CLAIM_EXPIRES });

const fleetStatus = defineTool({
  name: "fleet_status",
  description:
    "Every agent: state, last seen, current and stale runs (no event for stale_after_minutes), and the unfinished tasks it holds with claim_expires_at (20 each).",
  input: z.strictObject({}),
  output: z.object({
    stale_after_minutes: z.number(),
    agents: z.array(
      agentShape.extend({
        current_runs: z.array(fleetRun),
        current_run_count: z.number(),
        stale_runs: z.array(fleetRun),
        stale_run_count: z.number(),
        claimed_tasks: z.array(heldTask.extend({ scope: z.array(z.string()) })),
        claimed_task_count: z.number(),
      }),
    ),
    totals: z.object({ agents: z.number(), paused: z.number(), current_runs: z.number(), stale_runs: z.number(), claimed_tasks: z.number() }),
  }),
  async handler(ctx) {
    const minutes = staleRunMinutes(ctx.env);
    const staleBefore = new Date(ctx.nowMs - minutes * 60_000).toISOString();
    const snap = await fleetSnapshot(ctx.db, ctx.principal.accountId, staleBefore, PER_AGENT);
    const agents = snap.agents.map((g) => {
      const runs = snap.runs.filter((r) => r.agent_id === g.id);
      const show = (stale: boolean) =>
        runs
          .filter((r) => (r.stale === 1) === stale)
          .map((r) => ({
            id: r.id, task_id: r.task_id, task_title: r.task_title, started_at: r.started_at, last_event_at: r.last_event_at,
            minutes_since_event: Math.max(0, Math.floor((ctx.nowMs - Date.parse(r.last_event_at)) / 60_000)),
          }));
      const count = (stale: boolean) => runs.find((r) => (r.stale === 1) === stale)?.total ?? 0;
      const tasks = snap.tasks.filter((t) => t.assignee === g.name);
      return {
        ...toAgent(g),
        current_runs: show(false),
        current_run_count: count(false),
        stale_runs: show(true),
        stale_run_count: count(true),
        claimed_tasks: tasks.map((t) => ({ id: t.id, title: t.title, status: t.status, claim_expires_at: claimExpiry(t), scope: scopeShown(t.scope) })),
        claimed_task_count: tasks[0]?.total ?? 0,
      };
    });
    const sum = (f: (a: (typeof agents)[number]) => number) => agents.reduce((n, a) => n + f(a), 0);
    return {
      stale_after_minutes: minutes,
      agents,
      totals: {
        agents: agents.length,
        paused: agents.filter((a) => a.state === "paused").length,
        current_runs: sum((a) => a.current_run_count),
        stale_runs: sum((a) => a.stale_run_count),
        claimed_tasks: sum((a) => a.claimed_task_count),
      },
    };
  },
});

const listAgentsTool = defineTool({
  name: "list_agents",
  description: "The account's agents by name: state (active or paused), last seen, working token count.",
  input: z.strictObject({ limit, cursor }),
  output: z.object({ items: z.array(agentShape.extend({ active_tokens: z.number() })), next_cursor: nextCursor }),
  async handler(ctx, args) {
    const rows = await listAgents(ctx.db, ctx.principal.accountId, ctx.now, decodeCursor(args.cursor), args.limit);
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.name, id: r.id }));
    return { items: items.map((r) => ({ ...toAgent(r), active_tokens: r.active_tokens })), next_cursor };
  },
});

const getAgent = defineTool({
  name: "get_agent",
  description: "One agent: state, last seen, its 10 latest runs, running_runs and claimed_tasks.",
  input: z.strictObject({ agent: agentName }),
  output: z.object({
    agent: agentShape.extend({ active_tokens: z.number() }),
    recent_runs: z.array(runShape),
    running_runs: z.number(),
    claimed_tasks: z.number().describe("unfinished tasks assigned to it"),
  }),
  async handler(ctx, args) {
    const d = await agentDetail(ctx.db, ctx.principal.accountId, args.agent, ctx.now, RECENT_RUNS);
    return {
      agent: { ...toAgent(d.agent), active_tokens: d.agent.active_tokens },
      recent_runs: d.recentRuns.map(toRun),
      running_runs: d.running,
      claimed_tasks: d.claimed,
    };
  },
});

const STATUS_KEYS = ["open", "in_progress", "blocked", "awaiting_approval"] as const;
const byStatus = z.object({ open: z.number(), in_progress: z.number(), blocked: z.number(), awaiting_approval: z.number() });

const getWorkload = defineTool({
  name: "get_workload",
  description: "Open tasks per assignee by status: the person, every agent (idle too) and unassigned.",
  input: z.strictObject({
    project_id: projectId.optional(),
    include_snoozed: z.boolean().default(false),
  }),
  output: z.object({
    assignees: z.array(
      z.object({
        assignee: z.string().nullable().describe("`human`, an agent's name, or null for unassigned"),
        kind: z.enum(["human", "agent", "unassigned"]),
        paused: z.boolean(),
        total: z.number(),
        by_status: byStatus,
      }),
    ),
    total: z.number(),
  }),
  async handler(ctx, args) {
    const w = await workload(ctx.db, ctx.principal.accountId, {
      projectId: args.project_id,
      hideSnoozedAt: args.include_snoozed ? undefined : ctx.now,
    });
    if (args.project_id && !w.projectFound) throw notFound("project", args.project_id, "list_projects finds project ids");
    const paused = new Map(w.agents.map((g) => [g.name, g.paused_at !== null]));
    const entries = new Map<string | null, { assignee: string | null; kind: "human" | "agent" | "unassigned"; paused: boolean; total: number; by_status: z.infer<typeof byStatus> }>();
    const entry = (name: string | null) => {
      let e = entries.get(name);
      if (!e) {
        const kind = name === null ? "unassigned" : name === "human" ? "human" : "agent";
        e = { assignee: name, kind, paused: paused.get(name ?? "") ?? false, total: 0, by_status: { open: 0, in_progress: 0, blocked: 0, awaiting_approval: 0 } };
        entries.set(name, e);
      }
      return e;
    };
    entry("human");
    for (const g of w.agents) entry(g.name);
    entry(null);
    for (const r of w.rows) {
      const e = entry(r.assignee);
      if ((STATUS_KEYS as readonly string[]).includes(r.status)) e.by_status[r.status as (typeof STATUS_KEYS)[number]] += r.n;
      e.total += r.n;
    }
    const assignees = [...entries.values()];
    return { assignees, total: assignees.reduce((n, e) => n + e.total, 0) };
  },
});

/** Pauses or resumes an agent; the same state again is a no-op. Clears this isolate's token cache after the change. */
async function setAgentPause(ctx: ToolContext, name: string, pause: boolean, reason: string | undefined) {
  const a = ctx.principal.accountId;
  const result = await ctx.write({
    subject: `agent ${name}`,
    // The agent of this name, in the other state, changes state.
    apply(miss) {
      const pausedAt = pause ? ctx.now : null;
      const pausedBy = pause ? actorName(ctx.principal) : null;
      const summary = (pause ? PAUSED_AGENT : RESUMED_AGENT).text({ agent: name, reason: reason ? AGENT_REASON.text({ reason }) : "" });
      return ctx.commit(
        {
          statements: [ctx.guard(agentNamedIs({ accountId: a, name, paused: !pause }), miss), named("agent", setPausedByName(ctx.db, a, name, pausedAt, pausedBy))],
          activity: { target: null, targetSql: agentIdByName(a, name), summary },
        },
        (rows) => ({ agent: toAgent(rows.agent[0] as AgentRow), changed: true }),
      );
    },
    // Missed: no such agent (not found), or it is in that state already (a no-op).
    async diagnose() {
      const g = await requireAgentByName(ctx.db, a, name);
      return (g.paused_at !== null) === pause ? { agent: toAgent(g), changed: false } : AGAIN;
    },
  });
  // Its tokens resolve again, with the new state; the caller's and every other token's stand.
  if (result.changed) forgetResolvedTokens((q) => q.accountId === a && q.agentName === name);
  return result;
}

const pauseInput = z.strictObject({
  agent: agentName,
  reason: z.string().trim().min(1).max(REASON_MAX).optional().meta({ detail: "recorded in the activity log" }),
});
const pauseOutput = z.object({ agent: agentShape, changed: z.boolean() });

const pauseAgent = defineTool({
  name: "pause_agent",
  description: "Pause an agent: its tokens may only read until resume_agent. Returns agent.",
  input: pauseInput,
  output: pauseOutput,
  handler: (ctx, args) => setAgentPause(ctx, args.agent, true, args.reason),
});

const resumeAgent = defineTool({
  name: "resume_agent",
  description: "Lift an agent's pause: its write tokens may write again. Returns agent.",
  input: pauseInput,
  output: pauseOutput,
  handler: (ctx, args) => setAgentPause(ctx, args.agent, false, args.reason),
});

export const agentTools = [fleetStatus, listAgentsTool, getAgent, getWorkload, pauseAgent, resumeAgent];
