import { ID_PREFIX, newId } from "../domain/ids.ts";
import type { TokenKind, TokenScope } from "../domain/principal.ts";
import { displayPrefix, hashToken, newTokenSecret } from "../domain/tokens.ts";

/**
 * Accounts and tokens are made outside MCP (the admin CLI, `npm start`, the
 * tests). These plans are plain SQL with parameters so that the Worker binds
 * them and the CLI renders them for `wrangler d1 execute`, from one source.
 */
export interface Sql {
  sql: string;
  params: (string | number | null)[];
}

export const AGENT_NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

/** How many accounts the database has (`npm run deploy -- --email` invites a first person only into an empty one). */
export const COUNT_ACCOUNTS_SQL: Sql = { sql: "SELECT count(*) AS n FROM accounts", params: [] };

export function planAccount(name: string, now: string): { id: string; name: string; statements: Sql[] } {
  const id = newId(ID_PREFIX.account);
  return {
    id,
    name,
    statements: [{ sql: "INSERT INTO accounts (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)", params: [id, name, now, now] }],
  };
}

export interface TokenRequest {
  accountId: string;
  kind: TokenKind;
  scope: TokenScope;
  agent?: string;
  label?: string;
  expiresAt?: string | null;
}

export interface PlannedToken {
  id: string;
  secret: string;
  statements: Sql[];
}

/** A new token (and its agent, the first time that name is used). The secret exists only in the return value. */
export async function planToken(req: TokenRequest, now: string): Promise<PlannedToken> {
  if (req.kind === "agent" && (!req.agent || !AGENT_NAME.test(req.agent) || req.agent === "human")) {
    throw new Error("an agent token needs --agent NAME: lowercase letters, digits, _ . - (not `human`)");
  }
  if (req.kind === "human" && req.agent) throw new Error("--agent is only for --kind agent");
  const id = newId(ID_PREFIX.token);
  const secret = newTokenSecret();
  const hash = await hashToken(secret);
  const label = req.label ?? (req.kind === "agent" ? `${req.agent} (${req.scope})` : `human (${req.scope})`);
  const statements: Sql[] = [];
  if (req.kind === "agent") {
    statements.push({
      sql: "INSERT INTO agents (id, account_id, name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id, name) DO NOTHING",
      params: [newId(ID_PREFIX.agent), req.accountId, req.agent as string, now],
    });
  }
  statements.push({
    sql: `INSERT INTO tokens (id, account_id, kind, scope, agent_id, label, hash, prefix, created_at, expires_at)
          VALUES (?, ?, ?, ?, (SELECT id FROM agents WHERE account_id = ? AND name = ?), ?, ?, ?, ?, ?)`,
    params: [id, req.accountId, req.kind, req.scope, req.accountId, req.agent ?? null, label, hash, displayPrefix(secret), now, req.expiresAt ?? null],
  });
  return { id, secret, statements };
}
