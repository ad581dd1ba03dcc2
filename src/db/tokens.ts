import type { Principal, TokenKind, TokenScope } from "../domain/principal.ts";
import { isTransient } from "./transient.ts";
import { named } from "../catalog/tool.ts";
import { batchByName, type NamedResults } from "./batch.ts";
import { personNameSql } from "./people.ts";
import { holderSql, storedBookmarkSql, type ReadStart } from "./read-sessions.ts";

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
  person_id: string | null;
  grant_id: string | null;
  moving_to: string | null;
  agent_policy: string | null;
  token_policy: string | null;
  /** The person a `human` token acts for (its person_id's row), and their shown name. */
  person_ref: string | null;
  person_name: string | null;
  holder: string;
  bookmark: string | null;
}

export interface ResolvedToken {
  principal: Principal;
  revoked: boolean;
  lastUsedAt: string | null;
  /** For an app connected through OAuth: the provider's grant and the person who consented. */
  grant: { id: string | null; personId: string } | null;
  /** Whom the caller's reads are kept for, and its bookmark stored then (src/db/read-sessions.ts). */
  reads: ReadStart;
}

/** How often a token's (and its agent's) last use is written: bookkeeping, not data. */
export const TOUCH_INTERVAL_MS = 60_000;

/** A tg_ token is found by the hash of its secret, an OAuth grant's row by its id (from the grant's props). */
export type TokenKey = { hash: string } | { id: string };

/**
 * One D1 round trip: the indexed lookup (tokens.hash is unique, tokens.id the
 * key; joined with the agent's pause state) plus, in the same batch, the
 * last-used bookkeeping when it is due — so a cold token costs one call, not two.
 */
export async function findToken(db: D1Database, key: TokenKey, nowMs = Date.now()): Promise<ResolvedToken | null> {
  return (await findTokenBeside(db, key, nowMs)).token;
}

/** findToken with one more statement of the same database in its batch (the directory's, in the first): its rows beside the token. */
export async function findTokenBeside<T>(
  db: D1Database,
  key: TokenKey,
  nowMs: number,
  beside?: D1PreparedStatement,
): Promise<{ token: ResolvedToken | null; beside: T[] }> {
  const now = new Date(nowMs).toISOString();
  const due = new Date(nowMs - TOUCH_INTERVAL_MS).toISOString();
  const [column, value] = "hash" in key ? ["hash", key.hash] : ["id", key.id];
  const live = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?1)";
  const lookup = db
    .prepare(
      `SELECT t.id, t.account_id, t.kind, t.scope, t.agent_id, a.name AS agent_name, a.paused_at,
              t.label, t.expires_at, t.revoked_at, t.last_used_at, t.person_id, t.grant_id, m.moving_to, a.policy AS agent_policy, t.policy AS token_policy,
              pp.id AS person_ref, ${personNameSql("pp")} AS person_name,
              ${holderSql("t")} AS holder, ${storedBookmarkSql("t.account_id", holderSql("t"))} AS bookmark
         FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id LEFT JOIN accounts m ON m.id = t.account_id
              LEFT JOIN people pp ON pp.id = t.person_id AND pp.account_id = t.account_id AND t.kind = 'human'
        WHERE t.${column} = ?`,
    )
    .bind(value);
  const touches = [
    db
      .prepare(`UPDATE tokens SET last_used_at = ?1 WHERE ${column} = ?2 AND ${live} AND (last_used_at IS NULL OR last_used_at < ?3)`)
      .bind(now, value, due),
    db
      .prepare(
        `UPDATE agents SET last_seen_at = ?1
          WHERE id = (SELECT agent_id FROM tokens WHERE ${column} = ?2 AND ${live}) AND (last_seen_at IS NULL OR last_seen_at < ?3)`,
      )
      .bind(now, value, due),
  ];
  const besideStep = beside ? [named("beside", beside)] : [];
  let read: NamedResults<"principal" | "beside">;
  let touchedNow = true;
  try {
    read = await batchByName(db, [named("principal", lookup), ...touches, ...besideStep]);
  } catch (e) {
    // The bookkeeping is a write, and a write can meet a passing fault (a busy database) that a read does not:
    // the request goes on with the read alone, and the last use is written by a later request.
    if (!isTransient(e)) throw e;
    read = await batchByName(db, [named("principal", lookup), ...besideStep]);
    touchedNow = false;
  }
  const besideRows = (read.rows.beside ?? []) as T[];
  const row = read.rows.principal[0] as PrincipalRow | undefined;
  if (!row) return { token: null, beside: besideRows };
  const touched =
    touchedNow && row.revoked_at === null && (row.expires_at === null || row.expires_at > now) && (row.last_used_at === null || row.last_used_at < due);
  const token: ResolvedToken = {
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
      ...(row.moving_to ? { moving: true } : {}),
      ...(row.agent_policy || row.token_policy ? { policy: { agent: row.agent_policy, connection: row.token_policy } } : {}),
      person: row.person_ref ? { id: row.person_ref, name: row.person_name ?? "" } : null,
    },
    revoked: row.revoked_at !== null,
    lastUsedAt: touched ? now : row.last_used_at,
    grant: row.person_id ? { id: row.grant_id, personId: row.person_id } : null,
    reads: { accountId: row.account_id, holder: row.holder, bookmark: row.bookmark },
  };
  return { token, beside: besideRows };
}

/** The lookup of a tg_ token by the SHA-256 of its secret. */
export function findByHash(db: D1Database, hash: string, nowMs = Date.now()): Promise<ResolvedToken | null> {
  return findToken(db, { hash }, nowMs);
}

/** Bookkeeping, not data: when a token (and its agent) was last seen. */
export function touch(db: D1Database, p: Principal, now: string): Promise<unknown> {
  const statements = [
    db.prepare("UPDATE tokens SET last_used_at = ? WHERE id = ?").bind(now, p.tokenId),
  ];
  if (p.agentId) statements.push(db.prepare("UPDATE agents SET last_seen_at = ? WHERE id = ?").bind(now, p.agentId));
  return db.batch(statements);
}
