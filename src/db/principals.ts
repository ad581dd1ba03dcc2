/**
 * One resolution path for both kinds of credential: a `tg_` token (found by the
 * hash of its secret) and an OAuth grant (found by the id of its tokens row,
 * from the access token's props) resolve through the same lookup to the same
 * Principal, with the same checks (revoked, expired, the agent's pause) and the
 * same isolate cache.
 *
 * The cache keeps a resolution for AUTH_CACHE_SECONDS (default 5). It is safe
 * to lose. A revocation or pause made through this isolate clears it at once;
 * other isolates see it within the window.
 */
import type { Principal } from "../domain/principal.ts";
import { findToken, touch, TOUCH_INTERVAL_MS, type ResolvedToken, type TokenKey } from "./tokens.ts";

const CACHE_LIMIT = 2000;

interface CacheEntry {
  token: ResolvedToken | null;
  fetchedAt: number;
}

const cache = new Map<string, CacheEntry>();

export function forgetResolvedTokens(): void {
  cache.clear();
}

export type Resolution =
  | { ok: true; principal: Principal; resolved: ResolvedToken }
  | { ok: false; reason: "unknown" | "revoked" | "expired"; resolved: ResolvedToken | null };

export async function resolveCredential(db: D1Database, key: TokenKey, ttlMs: number, nowMs = Date.now()): Promise<Resolution> {
  const cacheKey = "hash" in key ? `h:${key.hash}` : `i:${key.id}`;
  const hit = cache.get(cacheKey);
  let resolved: ResolvedToken | null;
  if (hit && nowMs - hit.fetchedAt < ttlMs) {
    resolved = hit.token;
  } else {
    resolved = await findToken(db, key, nowMs);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(cacheKey, { token: resolved, fetchedAt: nowMs });
  }
  if (!resolved) return { ok: false, reason: "unknown", resolved: null };
  if (resolved.revoked) return { ok: false, reason: "revoked", resolved };
  const p = resolved.principal;
  if (p.expiresAt && Date.parse(p.expiresAt) <= nowMs) return { ok: false, reason: "expired", resolved };
  return { ok: true, principal: p, resolved };
}

/**
 * The last-used bookkeeping for a resolution served from the cache: written at
 * most once a minute, after the response (the cold lookup already did it in its batch).
 */
export function touchIfDue(db: D1Database, resolved: ResolvedToken, nowMs: number, waitUntil: (p: Promise<unknown>) => void): void {
  if (resolved.lastUsedAt && nowMs - Date.parse(resolved.lastUsedAt) < TOUCH_INTERVAL_MS) return;
  const now = new Date(nowMs).toISOString();
  resolved.lastUsedAt = now;
  waitUntil(touch(db, resolved.principal, now).catch((e) => console.error(JSON.stringify({ level: "warn", where: "touch", error: String(e) }))));
}
