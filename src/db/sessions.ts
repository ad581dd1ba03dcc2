import { personHolderSql, storedBookmarkSql } from "./read-sessions.ts";
/** Signed-in browsers (sessions, by the hash of their id) and failed sign-ins (throttling). */
import { notMoving } from "./move-account.ts";

export interface SessionRow {
  person_id: string;
  account_id: string;
  email: string;
  /** The person's display name ('' when they set none). */
  display_name: string;
  expires_at: string;
  /** Set while the account moves to another database: its writes are refused until it has moved. */
  moving_to: string | null;
  /** Whom the person's reads are kept for, and the bookmark stored after their latest write (src/db/read-sessions.ts), or null. */
  holder: string;
  bookmark: string | null;
}

export function insertSession(
  db: D1Database,
  s: { hash: string; personId: string; accountId: string; now: string; expiresAt: string },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO sessions (hash, person_id, account_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
    .bind(s.hash, s.personId, s.accountId, s.now, s.expiresAt);
}

/** A live session with its person (one indexed lookup); null when unknown or expired. */
export async function findSession(db: D1Database, hash: string, now: string): Promise<SessionRow | null> {
  return db
    .prepare(
      `SELECT s.person_id, s.account_id, p.email, p.display_name, s.expires_at, m.moving_to,
              ${personHolderSql("s.person_id")} AS holder, ${storedBookmarkSql("s.account_id", personHolderSql("s.person_id"))} AS bookmark
         FROM sessions s JOIN people p ON p.id = s.person_id AND p.account_id = s.account_id
              LEFT JOIN accounts m ON m.id = s.account_id
        WHERE s.hash = ? AND s.expires_at > ?`,
    )
    .bind(hash, now)
    .first<SessionRow>();
}

export function deleteSessionStatement(db: D1Database, hash: string): D1PreparedStatement {
  return db.prepare("DELETE FROM sessions WHERE hash = ?").bind(hash);
}

export async function deleteSession(db: D1Database, hash: string): Promise<void> {
  await deleteSessionStatement(db, hash).run();
}

/** The failures of one throttle key within the window: how many, and the latest. One indexed range read. */
export function selectThrottle(db: D1Database, key: string, since: string): D1PreparedStatement {
  return db.prepare("SELECT count(*) AS n, max(failed_at) AS last FROM signin_failures WHERE key = ? AND failed_at > ?").bind(key, since);
}

export function recordFailure(db: D1Database, key: string, now: string): D1PreparedStatement {
  return db.prepare("INSERT INTO signin_failures (key, failed_at) VALUES (?, ?)").bind(key, now);
}

export function clearFailures(db: D1Database, key: string): D1PreparedStatement {
  return db.prepare("DELETE FROM signin_failures WHERE key = ?").bind(key);
}

/** Daily cleanup: ended sessions and failures too old to count. */
export function purgeSignInState(db: D1Database, now: string, failuresBefore: string): D1PreparedStatement[] {
  return [
    db.prepare(`DELETE FROM sessions WHERE expires_at <= ? AND ${notMoving()}`).bind(now),
    db.prepare("DELETE FROM signin_failures WHERE failed_at <= ?").bind(failuresBefore),
  ];
}

export interface SignInRefusal {
  id: string;
  accountId: string;
  personId: string;
  /** `sign_in_failed` (a wrong password) or `sign_in_throttled` (refused while a throttle key waits). */
  tool: "sign_in_failed" | "sign_in_throttled";
  summary: string;
  now: string;
  /** For `sign_in_throttled`: the latest failure the waiting key counts; one such row per failure, however many tries are refused. */
  after?: string;
}

/** A refused sign-in in the account's activity feed (actor `human`, target the person). */
export function insertSignInRefusal(db: D1Database, r: SignInRefusal): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at)
       SELECT ?1, ?2, 'web_' || ?3, 'human', ?4, ?3, substr(?5, 1, 500), ?6
        WHERE ?7 IS NULL OR NOT EXISTS (SELECT 1 FROM activity WHERE target_id = ?3 AND created_at >= ?7 AND tool = ?4 AND account_id = ?2)`,
    )
    .bind(r.id, r.accountId, r.personId, r.tool, r.summary, r.now, r.after ?? null);
}
