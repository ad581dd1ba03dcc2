import { z } from "zod";
import { forbidden, invalid, notFound } from "../domain/errors.ts";
import { canonicalTimeZone } from "../domain/zoned-time.ts";
import { ACTIVITY_RETENTION } from "../domain/retention.ts";
import { LIST_SEPARATOR, REVOKED, TOKEN_AGENT, SETTING_CHANGE, UPDATED_SETTINGS } from "../db/summaries.ts";
import {
  findTokenRow, getAccountSettings, listTokenRows, revokedSummary, revokeTokenStatement, selectAccountSettings, selectTokenRow, settingsDiffer,
  tokenNotRevoked, updateAccountSettings,
  type AccountSettingsRow, type SettingsChange, type TokenRow,
} from "../db/account.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { recomputePurgeAfter } from "../db/trash.ts";
import { forgetResolvedTokens } from "../db/principals.ts";
import { defineTool, named, type AnyTool, type BatchStep } from "../catalog/tool.ts";
import { fastOr } from "./fast.ts";
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

/** update_settings' summary: each setting changed with its new value. */
function settingsSummary(change: SettingsChange, fields: (keyof SettingsChange)[]): string {
  return UPDATED_SETTINGS.text({ changes: fields.map((f) => SETTING_CHANGE.text({ field: f, value: String(change[f]) })).join(LIST_SEPARATOR) });
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
    const slowly = async () => {
      if (args.time_zone === undefined && args.default_auto_ok === undefined && args.trash_retention_days === undefined && args.activity_retention_days === undefined) {
        throw invalid("Pass at least one of time_zone, default_auto_ok, trash_retention_days, activity_retention_days.");
      }
      let zone: string | undefined;
      if (args.time_zone !== undefined) {
        zone = canonicalTimeZone(args.time_zone) as string;
      }
      const row = await getAccountSettings(db, p.accountId);
      const change: SettingsChange = {};
      if (zone !== undefined && zone !== row.time_zone) change.time_zone = zone;
      if (args.default_auto_ok !== undefined && (args.default_auto_ok ? 1 : 0) !== row.default_auto_ok) change.default_auto_ok = args.default_auto_ok ? 1 : 0;
      if (args.trash_retention_days !== undefined && args.trash_retention_days !== row.trash_retention_days) {
        change.trash_retention_days = args.trash_retention_days;
      }
      if (args.activity_retention_days !== undefined && args.activity_retention_days !== row.activity_retention_days) {
        change.activity_retention_days = args.activity_retention_days;
      }
      const fields = Object.keys(change);
      if (fields.length === 0) return { settings: toSettings(row), changed: false };
      const statements = [updateAccountSettings(db, p.accountId, change, ctx.now)];
      if (change.trash_retention_days !== undefined) statements.push(recomputePurgeAfter(db, p.accountId, change.trash_retention_days));
      const updated: AccountSettingsRow = { ...row, ...change, updated_at: ctx.now };
      return ctx.commit(
        {
          statements,
          activity: { target: p.accountId, summary: settingsSummary(change, fields as (keyof SettingsChange)[]) },
        },
        { settings: toSettings(updated), changed: true },
      );
    };
    const change: SettingsChange = {};
    if (args.time_zone !== undefined) change.time_zone = canonicalTimeZone(args.time_zone) as string;
    if (args.default_auto_ok !== undefined) change.default_auto_ok = args.default_auto_ok ? 1 : 0;
    if (args.trash_retention_days !== undefined) change.trash_retention_days = args.trash_retention_days;
    if (args.activity_retention_days !== undefined) change.activity_retention_days = args.activity_retention_days;
    const fields = Object.keys(change) as (keyof SettingsChange)[];
    if (fields.length === 0) return slowly();
    // The usual case in one batch: every setting given changes; the settings are read back after.
    return fastOr(async (miss) => {
      const statements: BatchStep<"settings">[] = [ctx.guard(settingsDiffer({ accountId: p.accountId, change }), miss), updateAccountSettings(db, p.accountId, change, ctx.now)];
      if (change.trash_retention_days !== undefined) statements.push(recomputePurgeAfter(db, p.accountId, change.trash_retention_days));
      statements.push(named("settings", selectAccountSettings(db, p.accountId)));
      return ctx.commit(
        {
          statements,
          activity: { target: p.accountId, summary: settingsSummary(change, fields) },
        },
        (rows) => ({ settings: toSettings(rows.settings[0] as AccountSettingsRow), changed: true }),
      );
    }, slowly);
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
    // The usual case in one batch: a token not yet revoked (the caller's own only with confirm); the slow path finds the rest.
    const atOnce = async (miss: Error) => {
      const { rows } = await ctx.commitWithResults({
        statements: [ctx.guard(tokenNotRevoked({ tokenId: token_id, accountId: p.accountId }), miss), revokeTokenStatement(db, p.accountId, token_id, ctx.now), named("token", selectTokenRow(db, p.accountId, token_id))],
        activity: { target: token_id, summarySql: { sql: revokedSummary, binds: [token_id, p.accountId] } },
      });
      return rows.token[0] as TokenRow;
    };
    const ownWithoutConfirm = token_id === p.tokenId && confirm !== true;
    const revoked = ownWithoutConfirm ? null : await fastOr<TokenRow | null>(atOnce, async () => null);
    if (revoked) {
      forgetResolvedTokens();
      if (revoked.grant_id && revoked.person_id && ctx.env.OAUTH_PROVIDER) {
        await ctx.env.OAUTH_PROVIDER.revokeGrant(revoked.grant_id, revoked.person_id).catch((e) =>
          console.error(JSON.stringify({ level: "warn", where: "revokeGrant", token: token_id, error: String(e) })),
        );
      }
      return { token: toToken(revoked, p.tokenId, ctx.nowMs), revoked: true };
    }
    const row = await findTokenRow(db, p.accountId, token_id);
    if (!row) throw notFound("token", token_id, "list_tokens lists the account's tokens");
    if (row.revoked_at) return { token: toToken(row, p.tokenId, ctx.nowMs), revoked: false };
    if (token_id === p.tokenId && confirm !== true) {
      throw forbidden(`Token ${token_id} is the token making this call; revoking it ends this connection. Call again with confirm: true if that is what you want.`);
    }
    const what = row.client_id ? "app" : "token";
    const result = await ctx.commit(
      {
        statements: [revokeTokenStatement(db, p.accountId, token_id, ctx.now)],
        activity: { target: token_id, summary: REVOKED.text({
          what, id: token_id, label: row.label, kind: row.kind, agent: row.agent ? TOKEN_AGENT.text({ agent: row.agent }) : "", scope: row.scope,
        }) },
      },
      { token: toToken({ ...row, revoked_at: ctx.now }, p.tokenId, ctx.nowMs), revoked: true },
    );
    forgetResolvedTokens();
    // The grant's access and refresh tokens end in the provider too (D1 already refuses them).
    if (row.grant_id && row.person_id && ctx.env.OAUTH_PROVIDER) {
      await ctx.env.OAUTH_PROVIDER.revokeGrant(row.grant_id, row.person_id).catch((e) =>
        console.error(JSON.stringify({ level: "warn", where: "revokeGrant", token: token_id, error: String(e) })),
      );
    }
    return result;
  },
});

export const accountTools: AnyTool[] = [getSettings, listTokens, updateSettings, revokeToken];
