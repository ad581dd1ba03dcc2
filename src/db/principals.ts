/**
 * One resolution path for both kinds of credential: a `tg_` token (found by the
 * hash of its secret) and an OAuth grant (found by the id of its tokens row,
 * from the access token's props) resolve through the same lookup to the same
 * Principal, with the same checks (revoked, expired, the agent's pause) and the
 * same isolate cache.
 *
 * The cache keeps a resolution for AUTH_CACHE_SECONDS (default 5). It is safe
 * to lose, and holds no resolution of a moving account (those ask the directory). A revocation or pause made through this isolate clears it at once;
 * other isolates see it within the window.
 */
import type { Env } from "../env.ts";
import type { Principal } from "../domain/principal.ts";
import { boundShard, directoryLookup, directoryOf, FIRST_SHARD, isSharded, locate, locateNow, placedBy, shardDb, type DirectoryRow } from "./shards.ts";
import { shardName } from "./provisioning.ts";
import { accountInSecret, shardInSecret } from "../domain/tokens.ts";
import { findToken, findTokenBeside, touch, TOUCH_INTERVAL_MS, type ResolvedToken, type TokenKey } from "./tokens.ts";

const CACHE_LIMIT = 2000;

interface CacheEntry {
  token: ResolvedToken | null;
  /** The database that holds the token's account (src/db/shards.ts). */
  shard: string;
  fetchedAt: number;
}

const cache = new Map<string, CacheEntry>();

/**
 * Forgets this isolate's resolutions: those whose principal `affected` picks
 * (a change to some tokens or agents leaves the others' standing), or all.
 */
export function forgetResolvedTokens(affected?: (principal: Principal) => boolean): void {
  if (!affected) return cache.clear();
  for (const [key, entry] of cache) if (!entry.token || affected(entry.token.principal)) cache.delete(key);
}

export type Resolution =
  | { ok: true; principal: Principal; resolved: ResolvedToken; shard: string }
  | { ok: false; reason: "unknown" | "revoked" | "expired"; resolved: ResolvedToken | null; shard: string };

/**
 * A credential and the account it belongs to, as far as it says: a grant's
 * props name the account, a new `tg_` token carries it (`account`), an older
 * token is found in the directory by its hash.
 */
export type CredentialKey = TokenKey & { account?: string | null; shard?: string | null };

/** What a `tg_` secret says about where its account lives (see newSecretOf). */
export function credentialOf(secret: string, hash: string): CredentialKey {
  // A database is named only beside an account: in a secret from before secrets carried one, that character is random.
  const account = accountInSecret(secret);
  const index = account ? shardInSecret(secret) : null;
  return { hash, account, shard: index === null ? null : shardName(index) };
}

export async function resolveCredential(env: Env, key: CredentialKey, ttlMs: number, nowMs = Date.now()): Promise<Resolution> {
  const cacheKey = "hash" in key ? `h:${key.hash}` : `i:${key.id}`;
  const hit = cache.get(cacheKey);
  let resolved: ResolvedToken | null;
  let shard: string;
  if (hit && nowMs - hit.fetchedAt < ttlMs) {
    ({ token: resolved, shard } = hit);
  } else {
    // A token that names its database is looked up there first; a miss (an older token, a moved account) asks the directory.
    const hinted = "hash" in key && key.shard ? boundShard(env, key.shard) : null;
    resolved = hinted ? await findToken(shardDb(env, hinted), key, nowMs) : null;
    if (resolved && resolved.principal.accountId === key.account) {
      shard = hinted as string;
    } else {
      // A secret without its account is from before secrets carried one: its account is in the first database,
      // unless it moved (the move writes the token's hash into the directory, which the same batch asks).
      shard = key.account ? await locate(env, { account: key.account }) : FIRST_SHARD;
      if (!key.account && "hash" in key && isSharded(env)) {
        const found = await findTokenBeside<DirectoryRow>(directoryOf(env), key, nowMs, directoryLookup(env, { kind: "token", key: key.hash }));
        resolved = found.token;
        const moved = placedBy(found.beside);
        if (!resolved && moved !== shard) [shard, resolved] = [moved, await findToken(shardDb(env, moved), key, nowMs)];
      } else {
        resolved = shard === hinted ? null : await findToken(shardDb(env, shard), key, nowMs);
      }
    }
    // A moving account's rows are in two databases, one of them perhaps half copied: the directory names the whole one.
    // Not cached: every call during the move asks, and the first after it sees the move's end.
    if (resolved?.principal.moving) {
      const whole = await locateNow(env, resolved.principal.accountId);
      if (whole !== shard) [shard, resolved] = [whole, await findToken(shardDb(env, whole), key, nowMs)];
    } else {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(cacheKey, { token: resolved, shard, fetchedAt: nowMs });
    }
  }
  if (!resolved) return { ok: false, reason: "unknown", resolved: null, shard };
  if (resolved.revoked) return { ok: false, reason: "revoked", resolved, shard };
  const p = resolved.principal;
  if (p.expiresAt && Date.parse(p.expiresAt) <= nowMs) return { ok: false, reason: "expired", resolved, shard };
  return { ok: true, principal: p, resolved, shard };
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
