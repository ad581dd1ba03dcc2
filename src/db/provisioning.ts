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

/** The first database of a deployment (binding DB): it keeps the directory (src/db/shards.ts). */
export const FIRST_SHARD = "DB";

/** The directory's record of a new account, and of a person's sign-in email: statements for the first database. */
export function placeAccountSql(accountId: string, shard: string, now: string): Sql {
  return {
    sql: "INSERT INTO directory_accounts (account_id, shard, updated_at) VALUES (?, ?, ?) ON CONFLICT (account_id) DO UPDATE SET shard = excluded.shard, updated_at = excluded.updated_at",
    params: [accountId, shard, now],
  };
}

export function placeEmailSql(accountId: string, email: string): Sql {
  return { sql: "INSERT INTO directory_keys (kind, key, account_id) VALUES ('email', ?, ?) ON CONFLICT DO NOTHING", params: [email, accountId] };
}

/** The shard with the most room: the smallest database (ties: the first). */
export function roomiest(sizes: { name: string; bytes: number }[]): string {
  return sizes.reduce((best, s) => (s.bytes < best.bytes ? s : best)).name;
}

/**
 * The rows that fill a database, in one statement: its accounts' tasks and
 * what hangs off them, activity and run events (most of the bytes, see
 * docs/benchmark.md). A measure of room where D1 reports no size (a local
 * `wrangler d1 execute`, whose meta has no size_after).
 */
export const FILLING_ROWS_SQL: Sql = {
  sql: `SELECT (SELECT count(*) FROM accounts) + (SELECT count(*) FROM tasks) + (SELECT count(*) FROM steps) + (SELECT count(*) FROM comments)
             + (SELECT count(*) FROM activity) + (SELECT count(*) FROM run_events) + (SELECT count(*) FROM runs) AS rows`,
  params: [],
};

/** A database's use: its size in bytes when D1 reports one, and its filling rows. */
export interface DatabaseUse {
  name: string;
  bytes: number | null;
  rows: number;
}

/** The database with the most room: by size when every database reports one (D1 in production), else by rows (ties: the first). */
export function roomiestOf(uses: DatabaseUse[]): string {
  const bySize = uses.every((u) => u.bytes !== null && u.bytes > 0);
  return roomiest(uses.map((u) => ({ name: u.name, bytes: bySize ? (u.bytes as number) : u.rows })));
}

/** DB → 0, DB_n → n. */
export function shardIndex(name: string): number {
  return name === FIRST_SHARD ? 0 : Number(/^DB_([1-9][0-9]*)$/.exec(name)?.[1] ?? -1);
}

export function shardName(index: number): string {
  return index === 0 ? FIRST_SHARD : `DB_${index}`;
}

export const AGENT_NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;

/** How many accounts the database has (`npm run deploy -- --email` invites a first person only into an empty one). */
export const COUNT_ACCOUNTS_SQL: Sql = { sql: "SELECT count(*) AS n FROM accounts", params: [] };

/**
 * A new account in database `shard` (statements, run there) and its place in
 * the directory (run in the first database; the same batch when it is the first).
 */
export function planAccount(
  name: string,
  now: string,
  shard: string = FIRST_SHARD,
): { id: string; name: string; shard: string; statements: Sql[]; directory: Sql[] } {
  const id = newId(ID_PREFIX.account);
  return {
    id,
    name,
    shard,
    statements: [{ sql: "INSERT INTO accounts (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)", params: [id, name, now, now] }],
    directory: [placeAccountSql(id, shard, now)],
  };
}

export interface TokenRequest {
  accountId: string;
  kind: TokenKind;
  scope: TokenScope;
  agent?: string;
  label?: string;
  expiresAt?: string | null;
  /** The database the account lives in (DB, DB_1, …), when the caller knows it: the token carries it. */
  shard?: string;
  /** An agent token's own policy rules as stored (src/catalog/policy.ts rulesText); absent or null: none. */
  policy?: string | null;
  /** For a person's token made by that person (the console): who it acts for, so its decisions name them. */
  personId?: string | null;
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
  const secret = newTokenSecret(req.accountId, req.shard === undefined ? undefined : shardIndex(req.shard));
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
    sql: `INSERT INTO tokens (id, account_id, kind, scope, agent_id, label, hash, prefix, created_at, expires_at, policy, person_id)
          VALUES (?, ?, ?, ?, (SELECT id FROM agents WHERE account_id = ? AND name = ?), ?, ?, ?, ?, ?, ?, ?)`,
    params: [
      id, req.accountId, req.kind, req.scope, req.accountId, req.agent ?? null, label, hash, displayPrefix(secret), now, req.expiresAt ?? null,
      req.kind === "agent" ? (req.policy ?? null) : null, req.kind === "human" ? (req.personId ?? null) : null,
    ],
  });
  return { id, secret, statements };
}
