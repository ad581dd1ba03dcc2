import type { Principal, TokenKind, TokenScope } from "../domain/principal.ts";

interface PrincipalRow {
  id: string;
  account_id: string;
  kind: TokenKind;
  scope: TokenScope;
  agent_id: string | null;
  agent_name: string | null;
  paused_at: string | null;
  label: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface ResolvedToken {
  principal: Principal;
  revoked: boolean;
  lastUsedAt: string | null;
}

/** One indexed lookup (tokens.hash is unique) joined with the agent's pause state. */
export async function findByHash(db: D1Database, hash: string): Promise<ResolvedToken | null> {
  const row = await db
    .prepare(
      `SELECT t.id, t.account_id, t.kind, t.scope, t.agent_id, a.name AS agent_name, a.paused_at,
              t.label, t.expires_at, t.revoked_at, t.last_used_at
         FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id
        WHERE t.hash = ?`,
    )
    .bind(hash)
    .first<PrincipalRow>();
  if (!row) return null;
  return {
    principal: {
      tokenId: row.id,
      accountId: row.account_id,
      kind: row.kind,
      scope: row.scope,
      agentId: row.agent_id,
      agentName: row.agent_name,
      paused: row.paused_at !== null,
      label: row.label,
      expiresAt: row.expires_at,
    },
    revoked: row.revoked_at !== null,
    lastUsedAt: row.last_used_at,
  };
}

/** Bookkeeping, not data: when a token (and its agent) was last seen. */
export function touch(db: D1Database, p: Principal, now: string): Promise<unknown> {
  const statements = [
    db.prepare("UPDATE tokens SET last_used_at = ? WHERE id = ?").bind(now, p.tokenId),
  ];
  if (p.agentId) statements.push(db.prepare("UPDATE agents SET last_seen_at = ? WHERE id = ?").bind(now, p.agentId));
  return db.batch(statements);
}
