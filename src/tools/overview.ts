import { z } from "zod";
import { notFound } from "../domain/errors.ts";
import { accountSummary, selectActivityRetention } from "../db/account.ts";
import { readBatch } from "../db/batch.ts";
import { ACTIVITY_RETENTION, keptSince } from "../domain/retention.ts";
import { defineTool, type ToolContext } from "../catalog/tool.ts";
import { decideAll, policyOf, POLICY_DECISIONS, POLICY_EFFECTS, presetOf, ruleWords, type Policy } from "../catalog/policy.ts";
import { refusal } from "../catalog/permissions.ts";
import { TOOL_NAMES } from "../catalog/effects.ts";
import { notListed } from "../catalog/not-listed.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { selectActivity, selectTargetKnown, withPerson, type ActivityRow } from "../db/activity.ts";
import { personShape } from "./shapes.ts";
import { assigneeName, cursor, isoTime, limit, toUtc } from "./schemas.ts";
import { LIMITS } from "./schemas.ts";
import { reachedRow } from "./shapes.ts";

const activityEntry = z.object({
  id: z.string(),
  actor: z.string().describe("`human` or the agent's name"),
  token_id: z.string(),
  client: z.string().nullable().describe("the app connected through OAuth that made the call; null for a tg_ token"),
  tool: z.string(),
  target_id: z.string().nullable(),
  summary: z.string(),
  created_at: z.string(),
  person: personShape.nullable().describe("which person, when the actor is `human`"),
});

const policyRule = z.object({
  source: z.enum(["agent", "connection"]),
  decision: z.enum(POLICY_DECISIONS),
  effect: z.enum(POLICY_EFFECTS).nullable(),
  toolset: z.string().nullable(),
  tool: z.string().nullable(),
  project: z.string().nullable(),
  outside_project: z.string().nullable(),
  words: z.string(),
});


const decidedTool = z.object({ tool: z.string(), rule: z.string() });

const whoami = defineTool({
  name: "whoami",
  description:
    "The caller: account, token, limits, the agent's policy (allow, ask, deny) and which tools this connection lacks and why. " +
    "With dry_run, says whether a call would be allowed, by which rule, and what it would touch, without running it.",
  input: z.strictObject({
    dry_run: z
      .strictObject({
        tool: z.string().regex(/^[a-z_]{1,40}$/, "expected a tool name like delete_task"),
        arguments: z.record(z.string(), z.unknown()).optional().meta({ detail: "the arguments the call would pass" }),
      })
      .optional()
      .meta({ detail: "a call to judge, not run" }),
  }),
  output: z.object({
    account: z.object({ id: z.string(), name: z.string(), time_zone: z.string() }),
    token: z.object({
      id: z.string(),
      label: z.string(),
      kind: z.enum(["human", "agent"]),
      scope: z.enum(["read", "write"]),
      agent: z.string().nullable(),
      paused: z.boolean(),
      expires_at: z.string().nullable(),
    }),
    limits: z.object({
      page_size_default: z.number(),
      page_size_max: z.number(),
      title_chars: z.number(),
      text_chars: z.number(),
      batch_items: z.number(),
      body_bytes: z.number(),
    }),
    not_listed: z.string().describe("which tools this connection's tools/list leaves out and why, as the server's instructions say"),
    policy: z
      .object({
        preset: z.enum(["trusted", "careful", "read_only"]).nullable(),
        in_words: z.string(),
        rules: z.array(policyRule).describe("evaluated deny, then ask, then allow"),
        ask: z.array(decidedTool).describe("tools that wait for the person's approval"),
        deny: z.array(decidedTool).describe("tools denied (not listed)"),
        by_project: z.array(decidedTool.extend({ decision: z.enum(POLICY_DECISIONS), project: z.string(), outside: z.boolean() })),
      })
      .nullable()
      .describe("null for a person"),
    dry_run: z
      .object({
        tool: z.string(),
        decision: z.enum(POLICY_DECISIONS),
        rule: z.string(),
        reason: z.string(),
        would_change: z.string(),
        arguments_valid: z.boolean(),
        problem: z.string().nullable(),
        writes: z.boolean(),
        touches: z.array(reachedRow),
      })
      .nullable(),
  }),
  async handler(ctx, args) {
    const p = ctx.principal;
    const [account, dryRun] = await Promise.all([accountSummary(ctx.db, p.accountId), args.dry_run ? ctx.dryRun(args.dry_run.tool, args.dry_run.arguments ?? {}) : null]);
    return {
      account: account ?? { id: p.accountId, name: "", time_zone: "UTC" },
      token: { id: p.tokenId, label: p.label, kind: p.kind, scope: p.scope, agent: p.agentName, paused: p.paused, expires_at: p.expiresAt },
      limits: {
        page_size_default: LIMITS.pageDefault,
        page_size_max: LIMITS.pageMax,
        title_chars: LIMITS.title,
        text_chars: LIMITS.text,
        batch_items: LIMITS.batch,
        body_bytes: 1024 * 1024,
      },
      not_listed: notListed(p, ctx.selection).line,
      policy: p.kind === "agent" ? policyInWords(policyOf(p), ctx) : null,
      dry_run: dryRun,
    };
  },
});

/** An agent's policy as whoami tells it: its rules, and what they decide for the tools this connection may call. */
function policyInWords(policy: Policy, ctx: ToolContext) {
  const rules = [
    ...policy.agent.map((r) => ({ source: "agent" as const, r })),
    ...policy.connection.map((r) => ({ source: "connection" as const, r })),
  ].map(({ source, r }) => ({
    source, decision: r.decision, effect: r.effect ?? null, toolset: r.toolset ?? null, tool: r.tool ?? null,
    project: r.project ?? null, outside_project: r.outside_project ?? null, words: ruleWords(r),
  }));
  const callable = TOOL_NAMES.filter((t) => ctx.selection.tools.has(t) && refusal(ctx.principal, t) === null);
  const decided = [...decideAll(policy, callable)];
  const ask = decided.filter(([, d]) => d.decision === "ask").map(([tool, d]) => ({ tool, rule: d.rule }));
  const deny = decided.filter(([, d]) => d.decision === "deny").map(([tool, d]) => ({ tool, rule: d.rule }));
  const byProject = decided.flatMap(([tool, d]) => (d.where ?? []).map((w) => ({ tool, decision: w.decision, rule: w.rule, project: w.project, outside: w.outside })));
  const preset = presetOf([...policy.agent, ...policy.connection]);
  const parts = rules.length === 0 ? ["No rules: every tool this token's scope allows runs without asking."] : [`${rules.length} rule${rules.length === 1 ? "" : "s"}: ${rules.map((r) => `${r.source} ${r.words}`).join("; ")}.`];
  if (ask.length) parts.push(`Waits for the person's approval: ${ask.map((a) => a.tool).join(", ")}.`);
  if (deny.length) parts.push(`Denied (not listed): ${deny.map((a) => a.tool).join(", ")}.`);
  if (byProject.length) parts.push(`Decided by project: ${byProject.map((b) => `${b.tool} ${b.decision} ${b.outside ? "outside" : "in"} ${b.project}`).join(", ")}.`);
  return { preset, in_words: parts.join(" "), rules, ask, deny, by_project: byProject };
}

const listActivity = defineTool({
  name: "list_activity",
  description: "The account's audit feed, newest first: who called which write tool on what; filter by target_id, actor, tool.",
  input: z.strictObject({
    target_id: z.string().min(1).max(40).optional().meta({ detail: "only entries about this record" }),
    actor: assigneeName.optional().meta({ detail: "only entries by `human` or this agent" }),
    tool: z.string().regex(/^[a-z_]{1,40}$/, "expected a tool name like approve_task").optional().meta({ detail: "only entries of this write tool" }),
    since: isoTime.optional(),
    limit,
    cursor,
  }),
  output: z.object({
    items: z.array(activityEntry),
    next_cursor: z.string().nullable(),
    kept_since: z.string().describe("how far back the feed reaches: older entries are removed daily (activity_retention_days)"),
  }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const { entries, retention, known } = await readBatch<"entries" | "retention" | "known">(db, {
      retention: selectActivityRetention(db, p.accountId),
      entries: selectActivity(db, p.accountId, {
      targetId: args.target_id,
      since: args.since ? toUtc(args.since) : undefined,
      actor: args.actor,
      tool: args.tool,
      after: decodeCursor(args.cursor),
      limit: args.limit,
      }),
      // A target is checked in the same round trip: an id this account knows nothing of is refused, not answered with no entries.
      ...((args.target_id ? { known: selectTargetKnown(db, p.accountId, args.target_id) } : {}) as { known: D1PreparedStatement }),
    });
    if (args.target_id && (known ?? []).length === 0) {
      throw notFound("record", args.target_id, "list_activity without target_id shows the ids its entries are about");
    }
    const days = (retention[0] as { activity_retention_days: number } | undefined)?.activity_retention_days ?? ACTIVITY_RETENTION.default;
    const rows = (entries as ActivityRow[]).map(withPerson);
    return { ...page(rows, args.limit, (r) => ({ k: r.created_at, id: r.id })), kept_since: keptSince(ctx.nowMs, days) };
  },
});

export const overviewTools = [whoami, listActivity];
