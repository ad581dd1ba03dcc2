/**
 * Refresh tokens are single-use (OAuth 2.1, RFC 9700 §4.14.2). The provider
 * rotates a grant's refresh token at every refresh but keeps the one before
 * valid until its successor is first used, so that a client whose response
 * was lost can retry; a thief holding that token could use it too, get the
 * grant's next tokens and lock the real client out. Taskgate keeps no such
 * allowance: a refresh token that has been replaced is never accepted again,
 * and presenting one ends the grant, because the server cannot tell which of
 * the two holders is the thief. Every access and refresh token of the grant
 * stops working, the token endpoint answers `invalid_grant`, and the person's
 * audit feed says why. (A client that loses a refresh response connects again.)
 *
 * The check runs on Taskgate's side of the token endpoint, before the
 * provider sees the request, against the provider's grant record in OAUTH_KV
 * (`grant:<user>:<grant>`, holding the SHA-256 hex of the current and of the
 * previous refresh token). The tokens replaced before those are remembered
 * under `refresh-retired:<user>:<grant>:<hash>` until the grant expires, so
 * an older token that comes back ends the grant too.
 */
import { shardsOf } from "../db/shards.ts";
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env.ts";
import { GRANT_SECONDS } from "../domain/grants.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { hashToken } from "../domain/tokens.ts";
import { endGrantStatements } from "../db/grants.ts";
import { forgetResolvedTokens } from "../db/principals.ts";

/** What Taskgate reads of the provider's grant record. */
interface StoredGrant {
  refreshTokenId?: string;
  previousRefreshTokenId?: string;
  /** Unix seconds. */
  expiresAt?: number;
}

export interface GrantRef {
  userId: string;
  grantId: string;
}

export const REPLAY_TOOL = "refresh_token_replay";

const REPLAY_WHY =
  "a refresh token it had already replaced was used again, so a copy of it may be in other hands; every token of the connection stopped working. Connect the app again.";

const retiredKey = (g: GrantRef, hash: string) => `refresh-retired:${g.userId}:${g.grantId}:${hash}`;

/**
 * The grant to end when `refreshToken` is one its grant has already
 * replaced, or null (the current token, or one the provider refuses anyway).
 * Presenting the current token retires the one before it for good.
 */
export async function replayedGrant(kv: KVNamespace, refreshToken: string, nowMs = Date.now()): Promise<GrantRef | null> {
  const [userId, grantId, secret, ...more] = refreshToken.split(":");
  if (!userId || !grantId || !secret || more.length) return null;
  const ref = { userId, grantId };
  const grant = await kv.get<StoredGrant>(`grant:${userId}:${grantId}`, "json");
  if (!grant?.refreshTokenId) return null;
  const hash = await hashToken(refreshToken);
  if (hash === grant.refreshTokenId) {
    if (grant.previousRefreshTokenId) {
      const left = grant.expiresAt ? grant.expiresAt - Math.floor(nowMs / 1000) : GRANT_SECONDS;
      await kv.put(retiredKey(ref, grant.previousRefreshTokenId), "1", { expirationTtl: Math.max(60, left) });
    }
    return null;
  }
  if (hash === grant.previousRefreshTokenId) return ref;
  return (await kv.get(retiredKey(ref, hash))) === null ? null : ref;
}

/** Ends the grant in the provider (all its tokens) and in D1, with the audit entry; the token endpoint's answer. */
export async function endReplayedGrant(env: Env, oauth: OAuthHelpers, g: GrantRef): Promise<Response> {
  await oauth.revokeGrant(g.grantId, g.userId);
  // The grant's account is not known here: its rows are ended wherever they are (the other databases have none).
  const now = new Date().toISOString();
  await Promise.all(
    shardsOf(env).map(({ db }) => db.batch(endGrantStatements(db, g.userId, g.grantId, { activityId: newId(ID_PREFIX.activity), tool: REPLAY_TOOL, why: REPLAY_WHY, now }))),
  );
  forgetResolvedTokens();
  console.warn(JSON.stringify({ level: "warn", where: "oauth", code: "invalid_grant", reason: "refresh_token_replayed" }));
  return new Response(
    JSON.stringify({ error: "invalid_grant", error_description: "This refresh token was already used; the authorization is ended for safety. Connect the app again." }),
    { status: 400, headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" } },
  );
}
