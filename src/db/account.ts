import type { Condition } from "../catalog/tool.ts";
import { notFound } from "../domain/errors.ts";
import { listWhereSql, REVOKED, SETTING_CHANGE, TOKEN_AGENT, UPDATED_SETTINGS } from "./summaries.ts";
import type { Principal } from "../domain/principal.ts";

export interface AccountSettingsRow {
  id: string;
  name: string;
  time_zone: string;
  default_auto_ok: number;
  trash_retention_days: number;
  activity_retention_days: number;
  updated_at: string;
}

export function selectAccountSettings(db: D1Database, accountId: string): D1PreparedStatement {
  return db.prepare("SELECT id, name, time_zone, default_auto_ok, trash_retention_days, activity_retention_days, updated_at FROM accounts WHERE id = ?").bind(accountId);
}

/** The account's activity retention in days (a row with activity_retention_days). */
export function selectActivityRetention(db: D1Database, accountId: string): D1PreparedStatement {
  return db.prepare("SELECT activity_retention_days FROM accounts WHERE id = ?").bind(accountId);
}

export async function getAccountSettings(db: D1Database, accountId: string): Promise<AccountSettingsRow> {
  const row = await selectAccountSettings(db, accountId).first<AccountSettingsRow>();
  if (!row) throw notFound("account", accountId, "the token's account no longer exists");
  return row;
}

/** The account's IANA time zone (UTC when unset). */
/** The account's id, name and time zone (whoami). */
export function accountSummary(db: D1Database, accountId: string): Promise<{ id: string; name: string; time_zone: string } | null> {
  return db.prepare("SELECT id, name, time_zone FROM accounts WHERE id = ?").bind(accountId).first<{ id: string; name: string; time_zone: string }>();
}

export async function accountTimeZone(db: D1Database, accountId: string): Promise<string> {
  const row = await db.prepare("SELECT time_zone FROM accounts WHERE id = ?").bind(accountId).first<{ time_zone: string }>();
  return row?.time_zone ?? "UTC";
}

export interface SettingsChange {
  time_zone?: string;
  default_auto_ok?: number;
  trash_retention_days?: number;
  activity_retention_days?: number;
}

export function updateAccountSettings(db: D1Database, accountId: string, change: SettingsChange, now: string): D1PreparedStatement {
  const fields = Object.keys(change) as (keyof SettingsChange)[];
  return db
    .prepare(`UPDATE accounts SET ${fields.map((f) => `${f} = ?`).join(", ")}, updated_at = ? WHERE id = ?`)
    .bind(...fields.map((f) => change[f]), now, accountId);
}

export interface TokenRow {
  id: string;
  label: string;
  kind: "human" | "agent";
  scope: "read" | "write";
  agent: string | null;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** Set for an app connected through OAuth. */
  client_id: string | null;
  client_name: string | null;
  /** The provider's grant and the person who consented: what revoking it in KV needs. Never shown. */
  grant_id: string | null;
  person_id: string | null;
}

const TOKEN_COLUMNS =
  "t.id, t.label, t.kind, t.scope, a.name AS agent, t.prefix, t.created_at, t.expires_at, t.revoked_at, t.last_used_at, t.client_id, t.client_name, t.grant_id, t.person_id";

/**
 * A page of tokens, oldest first: every token of the account for a human, the
 * tokens of its own agent for an agent. Never the hash. Fetches limit + 1 rows.
 */
export async function listTokenRows(
  db: D1Database,
  p: Principal,
  opts: { includeRevoked: boolean; after: { k: string | number | null; id: string } | null; limit: number },
): Promise<TokenRow[]> {
  const where = ["t.account_id = ?"];
  const binds: unknown[] = [p.accountId];
  if (p.kind === "agent") (where.push("t.agent_id = ?"), binds.push(p.agentId));
  if (!opts.includeRevoked) where.push("t.revoked_at IS NULL");
  if (opts.after) (where.push("(t.created_at > ? OR (t.created_at = ? AND t.id > ?))"), binds.push(opts.after.k, opts.after.k, opts.after.id));
  const { results } = await db
    .prepare(
      `SELECT ${TOKEN_COLUMNS} FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id
        WHERE ${where.join(" AND ")} ORDER BY t.created_at, t.id LIMIT ?`,
    )
    .bind(...binds, opts.limit + 1)
    .all<TokenRow>();
  return results;
}

export async function findTokenRow(db: D1Database, accountId: string, id: string): Promise<TokenRow | null> {
  return db
    .prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = ? AND t.account_id = ?`)
    .bind(id, accountId)
    .first<TokenRow>();
}

export function revokeTokenStatement(db: D1Database, accountId: string, id: string, now: string): D1PreparedStatement {
  return db.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ? AND account_id = ? AND revoked_at IS NULL").bind(now, id, accountId);
}

const settingDiffers = (change: SettingsChange, f: keyof SettingsChange): Condition => ({ sql: `${f} IS NOT ?`, binds: [change[f]] });

/** Guard: one of the account's settings in `change` differs from the value given. */
export function settingsDiffer(c: { accountId: string; change: SettingsChange }): Condition {
  const fields = Object.keys(c.change) as (keyof SettingsChange)[];
  const differ = fields.map((f) => settingDiffers(c.change, f));
  return {
    sql: `EXISTS (SELECT 1 FROM accounts WHERE id = ? AND (${differ.map((d) => d.sql).join(" OR ")}))`,
    binds: [c.accountId, ...differ.flatMap((d) => d.binds)],
  };
}

/** update_account_settings' summary over the account before: each setting that differs, with its new value. */
export function updatedSettingsSummary(accountId: string, change: SettingsChange): Condition {
  const fields = Object.keys(change) as (keyof SettingsChange)[];
  const changes = listWhereSql(fields.map((f) => ({ when: settingDiffers(change, f), item: SETTING_CHANGE.sql({}, { field: f, value: String(change[f]) }) })));
  const e = UPDATED_SETTINGS.sql({ changes });
  return { sql: `SELECT ${e.sql} FROM accounts WHERE id = ?`, binds: [...e.binds, accountId] };
}

/** Guard: the token of the account is there and not revoked. */
export function tokenNotRevoked(c: { tokenId: string; accountId: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM tokens WHERE id = ?1 AND account_id = ?2 AND revoked_at IS NULL)", binds: [c.tokenId, c.accountId] };
}

/** The token row as list_tokens shows it, at this point of the batch. */
export function selectTokenRow(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${TOKEN_COLUMNS} FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = ? AND t.account_id = ?`).bind(id, accountId);
}

/** revoke_token's summary from the token before. */
export const revokedSummary = (c: { tokenId: string; accountId: string }): Condition => ({ sql: REVOKED_TEXT_QUERY, binds: [c.tokenId, c.accountId] });
const REVOKED_TEXT_QUERY = `SELECT ${REVOKED.sql({
  what: { sql: "CASE WHEN t.client_id IS NULL THEN 'token' ELSE 'app' END" }, id: { sql: "t.id" }, label: { sql: "t.label" }, kind: { sql: "t.kind" },
  agent: { sql: `coalesce(${TOKEN_AGENT.sql({ agent: { sql: "a.name" } }).sql}, '')` }, scope: { sql: "t.scope" },
}).sql}
  FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = ?1 AND t.account_id = ?2`;

/** The readiness probe's trivial query: D1 answers. */
export async function pingDatabase(db: D1Database): Promise<void> {
  await db.prepare("SELECT 1").first();
}
