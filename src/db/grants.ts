/**
 * An app connected through OAuth is a tokens row too (kind, scope, agent,
 * label = the app's name, last use, revocation), with the person who
 * consented, the client, its redirect URI and the provider's grant id. So
 * list_tokens, revoke_token, the admin CLI, an agent's pause and the audit
 * feed treat it like a `tg_` token. Its `hash` holds `oauth:<token id>`, which
 * no SHA-256 hex digest can equal.
 */
import { ID_PREFIX, newId } from "../domain/ids.ts";
import type { TokenKind, TokenScope } from "../domain/principal.ts";
import { ENDED_APP_CONNECTION } from "./summaries.ts";

export interface GrantRecord {
  tokenId: string;
  accountId: string;
  personId: string;
  kind: TokenKind;
  scope: TokenScope;
  agent: string | null;
  clientId: string;
  clientName: string;
  redirectUri: string;
  /** An agent connection's own policy rules as stored (src/catalog/policy.ts), or null: none. */
  policy?: string | null;
  now: string;
  /** Until the code is exchanged, the row expires with it. */
  pendingUntil: string;
}

/** The person's live grants for this client and redirect URI: a new consent replaces them. */
export async function grantsToReplace(
  db: D1Database,
  accountId: string,
  personId: string,
  clientId: string,
  redirectUri: string,
): Promise<{ id: string; grant_id: string | null }[]> {
  const { results } = await db
    .prepare(
      `SELECT id, grant_id FROM tokens
        WHERE person_id = ? AND client_id = ? AND account_id = ? AND redirect_uri = ? AND revoked_at IS NULL`,
    )
    .bind(personId, clientId, accountId, redirectUri)
    .all<{ id: string; grant_id: string | null }>();
  return results;
}

/** One batch: the agent (the first time its name is used), the grant's row, and the end of the rows it replaces. */
export function recordGrantStatements(db: D1Database, g: GrantRecord, replaced: string[]): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  if (g.kind === "agent") {
    statements.push(
      db
        .prepare("INSERT INTO agents (id, account_id, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id, name) DO NOTHING")
        .bind(newId(ID_PREFIX.agent), g.accountId, g.agent, g.now),
    );
  }
  statements.push(
    db
      .prepare(
        `INSERT INTO tokens (id, account_id, kind, scope, agent_id, label, hash, prefix, created_at, expires_at,
                             person_id, client_id, client_name, redirect_uri, policy)
         VALUES (?, ?, ?, ?, (SELECT id FROM agents WHERE account_id = ? AND name = ?), ?, ?, '', ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        g.tokenId, g.accountId, g.kind, g.scope, g.accountId, g.agent, g.clientName.slice(0, 200), `oauth:${g.tokenId}`,
        g.now, g.pendingUntil, g.personId, g.clientId, g.clientName.slice(0, 200), g.redirectUri, g.kind === "agent" ? (g.policy ?? null) : null,
      ),
  );
  for (const id of replaced) {
    statements.push(db.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ? AND account_id = ? AND revoked_at IS NULL").bind(g.now, id, g.accountId));
  }
  return statements;
}

/**
 * The code was exchanged: the row learns its grant id and lives as long as the
 * grant. False when the row was revoked (or expired) meanwhile.
 */
export async function activateGrant(db: D1Database, tokenId: string, grantId: string, now: string, expiresAt: string): Promise<boolean> {
  const r = await db
    .prepare(
      `UPDATE tokens SET grant_id = ?, expires_at = ?
        WHERE id = ? AND client_id IS NOT NULL AND revoked_at IS NULL AND expires_at > ? AND (grant_id IS NULL OR grant_id = ?)`,
    )
    .bind(grantId, expiresAt, tokenId, now, grantId)
    .run();
  return (r.meta.changes ?? 0) === 1;
}

/** Whether a grant's row still allows a refresh: live, and of this grant. */
export async function grantIsLive(db: D1Database, tokenId: string, grantId: string, now: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT 1 AS ok FROM tokens WHERE id = ? AND grant_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)")
    .bind(tokenId, grantId, now)
    .first<{ ok: number }>();
  return !!row;
}

/** The account's agents by name, for the consent page's suggestions. */
export async function agentNames(db: D1Database, accountId: string): Promise<{ name: string; paused: boolean }[]> {
  const { results } = await db
    .prepare("SELECT name, paused_at IS NOT NULL AS paused FROM agents WHERE account_id = ? ORDER BY name LIMIT 200")
    .bind(accountId)
    .all<{ name: string; paused: number }>();
  return results.map((r) => ({ name: r.name, paused: r.paused === 1 }));
}

/** The provider no longer holds this grant (the app revoked its own refresh token): the row says so too. */
export async function markGrantRevoked(db: D1Database, personId: string, grantId: string, now: string): Promise<number> {
  const r = await db
    .prepare("UPDATE tokens SET revoked_at = ? WHERE person_id = ? AND grant_id = ? AND revoked_at IS NULL")
    .bind(now, personId, grantId)
    .run();
  return r.meta.changes ?? 0;
}

/** Whether a live row of this grant exists (the edge checks before it asks the provider about the grant). */
export async function grantRowIsLive(db: D1Database, personId: string, grantId: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT 1 AS ok FROM tokens WHERE person_id = ? AND grant_id = ? AND revoked_at IS NULL")
    .bind(personId, grantId)
    .first<{ ok: number }>();
  return !!row;
}

/**
 * The grant ended at the token endpoint (a refresh token it had replaced came
 * back): its row revoked and the audit feed told why, naming the app, in one
 * batch; nothing when the row was already ended.
 */
export function endGrantStatements(db: D1Database, personId: string, grantId: string, e: { activityId: string; tool: string; why: string; now: string }): D1PreparedStatement[] {
  const ended = ENDED_APP_CONNECTION.sql({ token: { sql: "id" }, label: { sql: "label" } }, { why: e.why });
  return [
    db
      .prepare(
        `INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at)
         SELECT ?, account_id, id, 'taskgate', ?, id, substr(${ended.sql}, 1, 500), ?
           FROM tokens WHERE person_id = ? AND grant_id = ? AND revoked_at IS NULL`,
      )
      .bind(e.activityId, e.tool, ...ended.binds, e.now, personId, grantId),
    db.prepare("UPDATE tokens SET revoked_at = ? WHERE person_id = ? AND grant_id = ? AND revoked_at IS NULL").bind(e.now, personId, grantId),
  ];
}

/** Which of these OAuth client ids ever led to a grant (a tokens row, live or ended). One statement for a page of ids. */
export async function clientsWithGrants(db: D1Database, clientIds: string[]): Promise<Set<string>> {
  if (clientIds.length === 0) return new Set();
  const { results } = await db
    .prepare("SELECT DISTINCT client_id FROM tokens WHERE client_id IN (SELECT value FROM json_each(?))")
    .bind(JSON.stringify(clientIds))
    .all<{ client_id: string }>();
  return new Set(results.map((r) => r.client_id));
}
