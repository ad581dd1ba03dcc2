/**
 * Failed sign-ins are throttled per email (whether or not an account has it,
 * so the answer never tells) and per client address: after `limit` failures in
 * 15 minutes the key waits until the oldest of them leaves the window. While a
 * key waits no password is checked and nothing is recorded, so the table stays
 * small.
 */
import { hashToken } from "../domain/tokens.ts";
import { clearFailures, recordFailure, selectThrottle, type ThrottleKey } from "../db/sessions.ts";

export const THROTTLE_WINDOW_MS = 15 * 60_000;
export const FAILURES_PER_EMAIL = 5;
export const FAILURES_PER_ADDRESS = 20;

export interface SignInKeys {
  email: ThrottleKey;
  address: ThrottleKey;
}

export async function signInKeys(email: string, address: string): Promise<SignInKeys> {
  return {
    email: { key: await hashToken(`email:${email}`), limit: FAILURES_PER_EMAIL },
    address: { key: await hashToken(`ip:${address}`), limit: FAILURES_PER_ADDRESS },
  };
}

export function throttleStatements(db: D1Database, keys: SignInKeys, nowMs: number): D1PreparedStatement[] {
  const since = new Date(nowMs - THROTTLE_WINDOW_MS).toISOString();
  return [selectThrottle(db, keys.email, since), selectThrottle(db, keys.address, since)];
}

/** From the results of `throttleStatements`: when the caller may try again, or null. */
export function blockedUntil(results: D1Result[]): Date | null {
  let until: number | null = null;
  for (const r of results) {
    const row = r.results[0] as { failed_at: string } | undefined;
    if (row) until = Math.max(until ?? 0, Date.parse(row.failed_at) + THROTTLE_WINDOW_MS);
  }
  return until === null ? null : new Date(until);
}

export function failureStatements(db: D1Database, keys: SignInKeys, now: string): D1PreparedStatement[] {
  return [recordFailure(db, keys.email.key, now), recordFailure(db, keys.address.key, now)];
}

/** A correct password clears the email's count (the address keeps its own). */
export function successStatement(db: D1Database, keys: SignInKeys): D1PreparedStatement {
  return clearFailures(db, keys.email.key);
}

/** "in 12 minutes (at 14:05 UTC)" */
export function whenAgain(until: Date, nowMs: number): string {
  const minutes = Math.max(1, Math.ceil((until.getTime() - nowMs) / 60_000));
  const clock = until.toISOString().slice(11, 16);
  return `in ${minutes} minute${minutes === 1 ? "" : "s"} (at ${clock} UTC)`;
}
