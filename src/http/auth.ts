import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.ts";
import type { Principal } from "../domain/principal.ts";
import { hashToken } from "../domain/tokens.ts";
import { findByHash, touch, TOUCH_INTERVAL_MS, type ResolvedToken } from "../db/tokens.ts";

const CACHE_LIMIT = 2000;

interface CacheEntry {
  token: ResolvedToken | null;
  fetchedAt: number;
}

/**
 * Resolved tokens, per isolate, for AUTH_CACHE_SECONDS (default 5). Safe to
 * lose. A revocation or pause made through this isolate clears it at once;
 * other isolates see it within the window.
 */
const cache = new Map<string, CacheEntry>();

export function forgetResolvedTokens(): void {
  cache.clear();
}

function challenge(status: 401 | 400, error: string | null, description: string): Response {
  const params = [`realm="taskgate"`];
  if (error) params.push(`error="${error}"`, `error_description="${description}"`);
  return new Response(JSON.stringify({ error: error ?? "unauthorized", error_description: description }), {
    status,
    headers: { "content-type": "application/json", "www-authenticate": `Bearer ${params.join(", ")}` },
  });
}

async function resolve(db: D1Database, secret: string, ttlMs: number, nowMs: number): Promise<ResolvedToken | null> {
  const hash = await hashToken(secret);
  const hit = cache.get(hash);
  if (hit && nowMs - hit.fetchedAt < ttlMs) return hit.token;
  const token = await findByHash(db, hash, nowMs);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(hash, { token, fetchedAt: nowMs });
  return token;
}

/** Bearer token → principal on the context; anything else → 401 with WWW-Authenticate. */
export function bearerAuth(): MiddlewareHandler<AppEnv> {
  return async function bearerAuth(c, next) {
    const url = new URL(c.req.url);
    for (const name of ["token", "access_token", "api_key", "key"]) {
      if (url.searchParams.has(name)) {
        return challenge(401, "invalid_request", "Tokens are not accepted in the query string; send them as an Authorization: Bearer header.");
      }
    }
    const header = c.req.header("authorization");
    if (!header) return challenge(401, null, "Send a Taskgate token as Authorization: Bearer tg_...");
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return challenge(401, "invalid_request", "The Authorization header must be: Bearer <token>.");

    const nowMs = Date.now();
    const ttlMs = Number(c.env.AUTH_CACHE_SECONDS ?? "5") * 1000;
    const resolved = await resolve(c.env.DB, match[1], ttlMs, nowMs);
    if (!resolved || resolved.revoked) return challenge(401, "invalid_token", "The token is unknown or revoked.");
    const p: Principal = resolved.principal;
    if (p.expiresAt && Date.parse(p.expiresAt) <= nowMs) return challenge(401, "invalid_token", "The token has expired.");

    if (!resolved.lastUsedAt || nowMs - Date.parse(resolved.lastUsedAt) >= TOUCH_INTERVAL_MS) {
      const now = new Date(nowMs).toISOString();
      resolved.lastUsedAt = now;
      c.executionCtx.waitUntil(
        touch(c.env.DB, p, now).catch((e) => console.error(JSON.stringify({ level: "warn", where: "touch", error: String(e) }))),
      );
    }
    c.set("principal", p);
    await next();
  };
}
