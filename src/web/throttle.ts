/**
 * Failed sign-ins slow the one who fails, not the account's owner: growing
 * delays instead of a lockout (OWASP's Authentication Cheat Sheet). Three
 * keys count the failures of the last 15 minutes:
 *
 * - the email from this address (`pair`): a few free tries, then a delay that
 *   doubles with each further failure (2 s, 4 s, 8 s, … at most 15 minutes);
 * - the address, whatever the email (`address`): a spray over many emails;
 * - the email from any address (`email`): a guess spread over many addresses.
 *   Its free tries are more than one address can spend in the window with its
 *   own delays (about 12), so a flood from one address never delays the owner
 *   signing in from another, and its delay stops at 5 minutes.
 *
 * A key that must wait refuses without checking the password and records
 * nothing, so the number of recorded failures (and of activity rows, see
 * signin.tsx) stays bounded however fast the requests come. Every key is a
 * hash, counted whether or not an account has the email, so the answer never
 * tells.
 */
import { hashToken } from "../domain/tokens.ts";
import { clearFailures, recordFailure, selectThrottle } from "../db/sessions.ts";

export const THROTTLE_WINDOW_MS = 15 * 60_000;

export interface ThrottleRule {
  /** Failures within the window that cost nothing. */
  free: number;
  /** The wait after the first failure past the free ones; each further one doubles it. */
  baseMs: number;
  /** The longest wait. */
  capMs: number;
}

export const RULES = {
  pair: { free: 3, baseMs: 2_000, capMs: THROTTLE_WINDOW_MS },
  address: { free: 10, baseMs: 2_000, capMs: THROTTLE_WINDOW_MS },
  email: { free: 30, baseMs: 2_000, capMs: 5 * 60_000 },
} as const satisfies Record<string, ThrottleRule>;

export type KeyName = keyof typeof RULES;
export type SignInKeys = Record<KeyName, string>;
const NAMES = Object.keys(RULES) as KeyName[];

export async function signInKeys(email: string, address: string): Promise<SignInKeys> {
  return {
    pair: await hashToken(`pair:${email}\n${address}`),
    address: await hashToken(`ip:${address}`),
    email: await hashToken(`email:${email}`),
  };
}

/** One read per key, by the key's name (`blockedUntil` reads their rows). */
export function throttleStatements(db: D1Database, keys: SignInKeys, nowMs: number): Record<KeyName, D1PreparedStatement> {
  const since = new Date(nowMs - THROTTLE_WINDOW_MS).toISOString();
  return { pair: selectThrottle(db, keys.pair, since), address: selectThrottle(db, keys.address, since), email: selectThrottle(db, keys.email, since) };
}

/** The wait after `failures` failures within the window. */
export function delayAfter(rule: ThrottleRule, failures: number): number {
  if (failures < rule.free) return 0;
  return Math.min(rule.capMs, rule.baseMs * 2 ** Math.min(failures - rule.free, 30));
}

export interface Block {
  until: Date;
  /** Which key waits (the longest wait when several do). */
  key: KeyName;
  /** The latest failure that key counts. */
  lastFailure: string;
}

/** From the rows `throttleStatements` read, by key: the wait in force at `nowMs`, or null. */
export function blockedUntil(rows: Record<KeyName, unknown[]>, nowMs: number): Block | null {
  let block: Block | null = null;
  NAMES.forEach((name) => {
    const row = rows[name][0] as { n: number; last: string | null } | undefined;
    if (!row?.last) return;
    const until = Date.parse(row.last) + delayAfter(RULES[name], row.n);
    if (until > nowMs && (!block || until > block.until.getTime())) block = { until: new Date(until), key: name, lastFailure: row.last };
  });
  return block;
}

export function failureStatements(db: D1Database, keys: SignInKeys, now: string): D1PreparedStatement[] {
  return NAMES.map((name) => recordFailure(db, keys[name], now));
}

/** A correct password clears this email's counts (from this address and from any); the address keeps its own. */
export function successStatements(db: D1Database, keys: SignInKeys): D1PreparedStatement[] {
  return [clearFailures(db, keys.pair), clearFailures(db, keys.email)];
}

/** "in 8 seconds (at 14:05:12 UTC)", "in 3 minutes (at 14:08 UTC)" */
export function whenAgain(until: Date, nowMs: number): string {
  const seconds = Math.max(1, Math.ceil((until.getTime() - nowMs) / 1000));
  if (seconds < 60) return `in ${seconds} second${seconds === 1 ? "" : "s"} (at ${until.toISOString().slice(11, 19)} UTC)`;
  const minutes = Math.ceil(seconds / 60);
  return `in ${minutes} minute${minutes === 1 ? "" : "s"} (at ${until.toISOString().slice(11, 16)} UTC)`;
}

/** Why a refused attempt was refused, as the account's activity feed says it. */
export function refusalSummary(email: string, address: string, reason: "wrong" | Block, nowMs: number): string {
  const from = `from ${address}`;
  if (reason === "wrong") return `Sign-in refused for ${email} ${from}: wrong password.`;
  const which = reason.key === "pair" ? "from this address" : reason.key === "address" ? "from this address, for any email" : "from any address";
  return `Sign-in refused for ${email} ${from}: too many failed sign-ins ${which}; the next try is allowed ${whenAgain(reason.until, nowMs)}.`;
}
