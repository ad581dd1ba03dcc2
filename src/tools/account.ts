import { z } from "zod";
import { forbidden, invalid, notFound } from "../domain/errors.ts";
import { canonicalTimeZone } from "../domain/zoned-time.ts";
import { ACTIVITY_RETENTION } from "../domain/retention.ts";
import {
  findTokenRow, getAccountSettings, listTokenRows, revokedSummary, revokeTokenStatement, selectAccountSettings, selectTokenRow, settingsDiffer,
  tokenNotRevoked, updateAccountSettings, updatedSettingsSummary,
  type AccountSettingsRow, type SettingsChange, type TokenRow,
} from "../db/account.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { recomputePurgeAfter } from "../db/trash.ts";
import { forgetResolvedTokens } from "../db/principals.ts";
import { AGAIN, defineTool, named, type AnyTool, type BatchStep } from "../catalog/tool.ts";
import { cursor, id, limit, timeZoneName } from "./schemas.ts";

const settingsShape = z.object({
  account_id: z.string(),
  name: z.string(),
  time_zone: z.string().describe("IANA time zone used for agendas and due windows"),
  default_auto_ok: z.boolean().describe("auto-OK of new tasks when their project sets none"),
  trash_retention_days: z.number().describe("days a deleted item stays restorable before it is purged"),
  activity_retention_days: z.number().describe("days activity entries and run events are kept; the daily job removes older ones"),
  updated_at: z.string(),
});

function toSettings(r: AccountSettingsRow): z.infer<typeof settingsShape> {
  return {
    account_id: r.id,
    name: r.name,
    time_zone: r.time_zone,
    default_auto_ok: r.default_auto_ok === 1,
    trash_retention_days: r.trash_retention_days,
    activity_retention_days: r.activity_retention_days,
    updated_at: r.updated_at,
  };
}

const getSettings = defineTool({
  name: "get_account_settings",
  description: "The account's settings: time zone, default auto-OK, trash and activity retention in days.",
  input: z.strictObject({}),
  output: z.object({ settings: settingsShape }),
  async handler(ctx) {
    return { settings: toSettings(await getAccountSettings(ctx.db, ctx.principal.accountId)) };
  },
});

const updateSettings = defineTool({
  name: "update_account_settings",
  description: "Change the account's time zone, default auto-OK, trash retention (1–365 days) or activity retention (7–3650). Returns settings.",
  input: z.strictObject({
    time_zone: timeZoneName.optional(),
    default_auto_ok: z.boolean().optional(),
    trash_retention_days: z.number().int().min(1).max(365).optional(),
    activity_retention_days: z
      .number()
      .int()
      .min(ACTIVITY_RETENTION.min)
      .max(ACTIVITY_RETENTION.max)
      .optional()
      .meta({ detail: "activity entries and run events older than this are removed daily" }),
  }),
  output: z.object({ settings: settingsShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const change: SettingsChange = {};
    if (args.time_zone !== undefined) change.time_zone = canonicalTimeZone(args.time_zone) as string;
    if (args.default_auto_ok !== undefined) change.default_auto_ok = args.default_auto_ok ? 1 : 0;
    if (args.trash_retention_days !== undefined) change.trash_retention_days = args.trash_retention_days;
    if (args.activity_retention_days !== undefined) change.activity_retention_days = args.activity_retention_days;
    const fields = Object.keys(change) as (keyof SettingsChange)[];
    if (fields.length === 0) {
      throw invalid("Pass at least one of time_zone, default_auto_ok, trash_retention_days, activity_retention_days.");
    }
    return ctx.write({
      subject: `account ${p.accountId}`,
      // Every setting given is set when one of them differs; the summary names those that differ; the settings are read back after.
      apply(miss) {
        const statements: BatchStep<"settings">[] = [ctx.guard(settingsDiffer({ accountId: p.accountId, change }), miss), updateAccountSettings(db, p.accountId, change, ctx.now)];
        if (change.trash_retention_days !== undefined) statements.push(recomputePurgeAfter(db, p.accountId, change.trash_retention_days));
        statements.push(named("settings", selectAccountSettings(db, p.accountId)));
        return ctx.commit(
          { statements, activity: { target: p.accountId, summarySql: updatedSettingsSummary(p.accountId, change) } },
          (rows) => ({ settings: toSettings(rows.settings[0] as AccountSettingsRow), changed: true }),
        );
      },
      // Missed: every setting given is so already (a no-op).
      async diagnose() {
        const row = await getAccountSettings(db, p.accountId);
        return fields.some((f) => change[f] !== row[f]) ? AGAIN : { settings: toSettings(row), changed: false };
      },
    });
  },
});

const tokenShape = z.object({
  id: z.string(),
  source: z.enum(["token", "oauth"]).describe("a tg_ token, or an app connected through OAuth (sign-in and consent)"),
  label: z.string(),
  kind: z.enum(["human", "agent"]),
  scope: z.enum(["read", "write"]),
  agent: z.string().nullable().describe("the agent's name, for an agent token"),
  prefix: z.string().nullable().describe("the first characters of a tg_ token's secret, to recognise it"),
  client: z.object({ id: z.string(), name: z.string() }).nullable().describe("the app, for an OAuth grant"),
  state: z.enum(["active", "revoked", "expired"]),
  current: z.boolean().describe("the token making this call"),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});

function toToken(r: TokenRow, currentId: string, nowMs: number): z.infer<typeof tokenShape> {
  const state = r.revoked_at ? "revoked" : r.expires_at && Date.parse(r.expires_at) <= nowMs ? "expired" : "active";
  return {
    id: r.id,
    source: r.client_id ? "oauth" : "token",
    label: r.label,
    kind: r.kind,
    scope: r.scope,
    agent: r.agent,
    prefix: r.client_id ? null : r.prefix,
    client: r.client_id ? { id: r.client_id, name: r.client_name ?? r.label } : null,
    state,
    current: r.id === currentId,
    created_at: r.created_at,
    expires_at: r.expires_at,
    revoked_at: r.revoked_at,
    last_used_at: r.last_used_at,
  };
}

const listTokens = defineTool({
  name: "list_tokens",
  description: "Tokens and OAuth apps, oldest first (an agent sees its own): kind, scope, agent, label, state, times; no secret.",
  input: z.strictObject({ include_revoked: z.boolean().default(true), limit, cursor }),
  output: z.object({ items: z.array(tokenShape), next_cursor: z.string().nullable() }),
  async handler(ctx, args) {
    const rows = await listTokenRows(ctx.db, ctx.principal, { includeRevoked: args.include_revoked, after: decodeCursor(args.cursor), limit: args.limit });
    const { items, next_cursor } = page(rows, args.limit, (r) => ({ k: r.created_at, id: r.id }));
    return { items: items.map((r) => toToken(r, ctx.principal.tokenId, ctx.nowMs)), next_cursor };
  },
});

const revokeToken = defineTool({
  name: "revoke_token",
  description: "Revoke a token or an app's grant (list_tokens); the caller's own needs confirm: true. Returns token.",
  input: z.strictObject({
    token_id: id("tok", "token"),
    confirm: z.boolean().optional().meta({ detail: "required to revoke the token making this call" }),
  }),
  output: z.object({ token: tokenShape, revoked: z.boolean().describe("false when it was already revoked") }),
  async handler(ctx, { token_id, confirm }) {
    const { db, principal: p } = ctx;
    const ownWithoutConfirm = token_id === p.tokenId && confirm !== true;
    const { row, revoked } = await ctx.write({
      subject: `token ${token_id}`,
      // A token not yet revoked is revoked (the caller's own only with confirm: without it nothing is written, and the diagnosis answers).
      async apply(miss) {
        if (ownWithoutConfirm) throw miss;
        return ctx.commit(
          {
            statements: [ctx.guard(tokenNotRevoked({ tokenId: token_id, accountId: p.accountId }), miss), revokeTokenStatement(db, p.accountId, token_id, ctx.now), named("token", selectTokenRow(db, p.accountId, token_id))],
            activity: { target: token_id, summarySql: revokedSummary({ tokenId: token_id, accountId: p.accountId }) },
          },
          (rows) => ({ row: rows.token[0] as TokenRow, revoked: true }),
        );
      },
      // Missed: not found, revoked already (a no-op), or the caller's own token without confirm (refused).
      async diagnose() {
        const row = await findTokenRow(db, p.accountId, token_id);
        if (!row) throw notFound("token", token_id, "list_tokens lists the account's tokens");
        if (row.revoked_at) return { row, revoked: false };
        if (ownWithoutConfirm) {
          throw forbidden(`Token ${token_id} is the token making this call; revoking it ends this connection. Call again with confirm: true if that is what you want.`);
        }
        return AGAIN;
      },
    });
    if (revoked) {
      // That token resolves again (refused now); every other token's resolution stands.
      forgetResolvedTokens((q) => q.accountId === p.accountId && q.tokenId === token_id);
      // The grant's access and refresh tokens end in the provider too (D1 already refuses them).
      if (row.grant_id && row.person_id && ctx.env.OAUTH_PROVIDER) {
        await ctx.env.OAUTH_PROVIDER.revokeGrant(row.grant_id, row.person_id).catch((e) =>
          console.error(JSON.stringify({ level: "warn", where: "revokeGrant", token: token_id, error: String(e) })),
        );
      }
    }
    return { token: toToken(row, p.tokenId, ctx.nowMs), revoked };
  },
});

export const accountTools: AnyTool[] = [getSettings, listTokens, updateSettings, revokeToken];
