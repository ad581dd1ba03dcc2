/**
 * The refresh tokens each OAuth grant has exchanged (`spent_refresh_tokens`),
 * so that each is exchanged once: src/oauth/refresh-replay.ts. A token is
 * recorded by the SHA-256 hex of its whole text, as the provider keeps it in
 * its grant record; the row with `hash` 'replayed' marks the grant ended
 * because a used token came back.
 *
 * Every statement here runs on the first database (`directoryOf(env)`), for
 * every grant whatever its account: the token endpoint sees only
 * `<user id>:<grant id>:<secret>`, and a grant's account is in its props,
 * which the provider decrypts only inside its own exchange. One fixed home
 * also makes the spend one statement on one database, which is what lets
 * exactly one of concurrent requests win it; the first database is the one
 * every deployment binds, and it already keeps the deployment's own records
 * (the directory). The rows carry no account, so an account's move neither
 * copies nor fences them.
 */
import { RETENTION_LIMITS, type RetentionLimits } from "./retention.ts";

export interface GrantKey {
  userId: string;
  grantId: string;
}

/** The `hash` of the row that marks a grant ended for a replay (no SHA-256 hex digest equals it). */
const REPLAYED = "replayed";

/**
 * Records this refresh token's one use, unless it was recorded before. True
 * for the one request that recorded it: concurrent requests with the same
 * token all run this one INSERT, and the primary key lets exactly one of them
 * add the row.
 */
export async function spendRefreshToken(db: D1Database, g: GrantKey, hash: string, now: string, grantExpiresAt: string): Promise<boolean> {
  const row = await db
    .prepare(
      `INSERT INTO spent_refresh_tokens (user_id, grant_id, hash, spent_at, grant_expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id, grant_id, hash) DO NOTHING
       RETURNING 1 AS spent`,
    )
    .bind(g.userId, g.grantId, hash, now, grantExpiresAt)
    .first<{ spent: number }>();
  return row !== null;
}

/** The provider refused the refresh (no new tokens came of it): the token was not used after all. */
export async function unspendRefreshToken(db: D1Database, g: GrantKey, hash: string): Promise<void> {
  await db.prepare("DELETE FROM spent_refresh_tokens WHERE user_id = ? AND grant_id = ? AND hash = ?").bind(g.userId, g.grantId, hash).run();
}

/** Whether this token was exchanged before, or its grant was ended for a replay. */
export async function refreshTokenWasSpent(db: D1Database, g: GrantKey, hash: string): Promise<boolean> {
  const row = await db
    .prepare(`SELECT 1 AS spent FROM spent_refresh_tokens WHERE user_id = ? AND grant_id = ? AND hash IN (?, '${REPLAYED}') LIMIT 1`)
    .bind(g.userId, g.grantId, hash)
    .first<{ spent: number }>();
  return row !== null;
}

/** Whether the grant was ended for a replay (asked after a refresh that won its spend, before its answer goes out). */
export async function endedForReplay(db: D1Database, g: GrantKey): Promise<boolean> {
  return refreshTokenWasSpent(db, g, REPLAYED);
}

/**
 * The grant is ended for a replay: its mark, kept until the grant would have
 * expired, and its spent tokens forgotten (the grant accepts none any more).
 * For the batch that ends the grant's rows in the first database.
 */
export function markEndedForReplayStatements(db: D1Database, g: GrantKey, now: string, grantExpiresAt: string): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `INSERT INTO spent_refresh_tokens (user_id, grant_id, hash, spent_at, grant_expires_at) VALUES (?, ?, '${REPLAYED}', ?, ?)
         ON CONFLICT (user_id, grant_id, hash) DO NOTHING`,
      )
      .bind(g.userId, g.grantId, now, grantExpiresAt),
    db.prepare(`DELETE FROM spent_refresh_tokens WHERE user_id = ? AND grant_id = ? AND hash <> '${REPLAYED}'`).bind(g.userId, g.grantId),
  ];
}

/**
 * Daily: the rows of grants that have expired, in bounded batches (the
 * activity retention's limits): at most `batchesPerRun` batches of
 * `statementsPerBatch` DELETEs of `rowsPerStatement` rows each. Returns how
 * many rows went and whether some remain for the next run.
 */
export async function purgeSpentRefreshTokens(db: D1Database, nowIso: string, limits: RetentionLimits = RETENTION_LIMITS): Promise<{ removed: number; more: boolean }> {
  const remove = () =>
    db
      .prepare(
        `DELETE FROM spent_refresh_tokens WHERE rowid IN (
           SELECT rowid FROM spent_refresh_tokens WHERE grant_expires_at <= ? ORDER BY grant_expires_at LIMIT ?)`,
      )
      .bind(nowIso, limits.rowsPerStatement);
  let removed = 0;
  for (let round = 0; round < limits.batchesPerRun; round++) {
    const done = await db.batch(Array.from({ length: limits.statementsPerBatch }, remove));
    const n = done.reduce((sum, r) => sum + (r.meta.changes ?? 0), 0);
    removed += n;
    if (n < limits.rowsPerStatement * limits.statementsPerBatch) return { removed, more: false };
  }
  const left = await db.prepare("SELECT 1 AS more FROM spent_refresh_tokens WHERE grant_expires_at <= ? LIMIT 1").bind(nowIso).first();
  return { removed, more: left !== null };
}
