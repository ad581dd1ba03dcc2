import { z } from "zod";
import { notFound } from "../domain/errors.ts";
import { accountSummary, selectActivityRetention } from "../db/account.ts";
import { readBatch } from "../db/batch.ts";
import { ACTIVITY_RETENTION, keptSince } from "../domain/retention.ts";
import { defineTool } from "../catalog/tool.ts";
import { notListed } from "../catalog/not-listed.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { selectActivity, selectTargetKnown, withPerson, type ActivityRow } from "../db/activity.ts";
import { personShape } from "./shapes.ts";
import { assigneeName, cursor, isoTime, limit, toUtc } from "./schemas.ts";
import { LIMITS } from "./schemas.ts";

const activityEntry = z.object({
  id: z.string(),
  actor: z.string().describe("`human` or the agent's name"),
  token_id: z.string(),
  client: z.string().nullable().describe("the app connected through OAuth that made the call; null for a tg_ token"),
  tool: z.string(),
  target_id: z.string().nullable(),
  summary: z.string(),
  created_at: z.string(),
  person: personShape.nullable().describe("which person made the call when the actor is `human`; null for an agent, or a person's token that names no person"),
});

const whoami = defineTool({
  name: "whoami",
  description: "The caller: account, token (kind, scope, agent name, paused), the limits that apply, and which tools this connection lacks and why.",
  input: z.strictObject({}),
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
  }),
  async handler(ctx) {
    const p = ctx.principal;
    const account = await accountSummary(ctx.db, p.accountId);
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
    };
  },
});

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
