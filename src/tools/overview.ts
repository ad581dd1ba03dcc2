import { z } from "zod";
import { defineTool } from "../mcp/tool.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { withClient } from "../db/task-search.ts";
import { cursor, isoTime, limit, toUtc } from "./schemas.ts";
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
});

const whoami = defineTool({
  name: "whoami",
  description: "The account, this token's kind, scope and agent name, whether the agent is paused, and the limits that apply.",
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
  }),
  async handler(ctx) {
    const p = ctx.principal;
    const account = await ctx.db
      .prepare("SELECT id, name, time_zone FROM accounts WHERE id = ?")
      .bind(p.accountId)
      .first<{ id: string; name: string; time_zone: string }>();
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
    };
  },
});

const listActivity = defineTool({
  name: "list_activity",
  description: "The account's audit feed, newest first: who called which write tool on what, and when. Cursor pages.",
  input: z.strictObject({
    target_id: z.string().min(1).max(40).optional().describe("only entries about this record"),
    since: isoTime.optional(),
    limit,
    cursor,
  }),
  output: z.object({ items: z.array(activityEntry), next_cursor: z.string().nullable() }),
  async handler(ctx, args) {
    const where = ["account_id = ?"];
    const binds: unknown[] = [ctx.principal.accountId];
    if (args.target_id) (where.push("target_id = ?"), binds.push(args.target_id));
    if (args.since) (where.push("created_at >= ?"), binds.push(toUtc(args.since)));
    const after = decodeCursor(args.cursor);
    if (after) (where.push("(created_at < ? OR (created_at = ? AND id < ?))"), binds.push(after.k, after.k, after.id));
    const { results } = await ctx.db
      .prepare(withClient(`SELECT id, actor, token_id, tool, target_id, summary, created_at FROM activity
          WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`))
      .bind(...binds, args.limit + 1, ctx.principal.accountId)
      .all<z.infer<typeof activityEntry>>();
    return page(results, args.limit, (r) => ({ k: r.created_at, id: r.id }));
  },
});

export const overviewTools = [whoami, listActivity];
