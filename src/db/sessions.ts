/** Signed-in browsers (sessions, by the hash of their id) and failed sign-ins (throttling). */
import { notMoving } from "./move-account.ts";

export interface SessionRow {
  person_id: string;
  account_id: string;
  email: string;
  expires_at: string;
  /** Set while the account moves to another database: its writes are refused until it has moved. */
  moving_to: string | null;
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
      `SELECT s.person_id, s.account_id, p.email, s.expires_at, m.moving_to
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

export interface ThrottleKey {
  key: string;
  /** Failures allowed within the window before the key must wait. */
  limit: number;
}

/**
 * For each key: the `limit`-th most recent failure inside the window, if there
 * is one (the key is blocked until it leaves the window). One statement a key.
 */
export function selectThrottle(db: D1Database, k: ThrottleKey, since: string): D1PreparedStatement {
  return db
    .prepare("SELECT failed_at FROM signin_failures WHERE key = ? AND failed_at > ? ORDER BY failed_at DESC LIMIT 1 OFFSET ?")
    .bind(k.key, since, k.limit - 1);
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
