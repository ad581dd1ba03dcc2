/**
 * Refresh tokens are single-use (OAuth 2.1, RFC 9700 §4.14.2). The provider
 * rotates a grant's refresh token at every refresh but keeps the one before
 * valid until its successor is first used, so that a client whose response
 * was lost can retry; a thief holding that token could use it too, get the
 * grant's next tokens and lock the real client out. Taskgate keeps no such
 * allowance: a refresh token is exchanged once, and presenting it again ends
 * the grant, because the server cannot tell which of the two holders is the
 * thief. Every access and refresh token of the grant stops working, the token
 * endpoint answers `invalid_grant`, and the person's audit feed says why. (A
 * client that loses a refresh response connects again.)
 *
 * The check runs on Taskgate's side of the token endpoint, before the
 * provider sees the request. The provider's grant record in OAUTH_KV
 * (`grant:<user>:<grant>`, holding the SHA-256 hex of the current and of the
 * previous refresh token) says only which tokens the grant issued; it cannot
 * decide a use, since reading and then writing it is not atomic and KV is
 * not immediately consistent across locations. The use is decided in D1
 * (src/db/refresh-tokens.ts, in the first database):
 *
 * - the previous token was replaced: presenting it is a replay;
 * - the current token is spent by one conditional INSERT of its hash: of
 *   concurrent requests with it, exactly one adds the row and goes on to the
 *   provider; every other one finds the row there and is a replay;
 * - any other token is a replay when D1 holds it as spent (an older token of
 *   the grant; for a grant from before D1 recorded spends, KV's
 *   `refresh-retired:` key of it), else it is the provider's to refuse (a
 *   token the grant never issued is refused, and the grant lives on).
 *
 * A replay ends the grant: the 'replayed' mark in D1, the grant's tokens row
 * and audit entry, then the provider's grant with all its tokens. The one
 * request of a race that won the spend goes on to the provider while the
 * others end the grant. Most often the grant's tokens row is revoked before
 * the provider's refresh callback reads it (src/oauth/grants.ts), and the
 * winner gets `invalid_grant` too. When the provider answers it 200 all the
 * same, its new tokens may have been written after the provider's grant was
 * revoked; so before that 200 goes out the winner asks D1 for the mark, and
 * when the grant was ended meanwhile it ends it again (its new tokens with
 * it) and answers `invalid_grant` like the others. Either way at most one
 * request of a race gets tokens, and the grant is ended, those tokens with
 * it, by the time every answer is out. A refresh the provider refuses did not use its
 * token: the spend is taken back, so a corrected retry is not taken for a
 * replay.
 */
import { directoryOf, shardsOf } from "../db/shards.ts";
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env.ts";
import { GRANT_SECONDS } from "../domain/grants.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { hashToken } from "../domain/tokens.ts";
import { endGrantStatements } from "../db/grants.ts";
import { forgetResolvedTokens } from "../db/principals.ts";
import { endedForReplay, markEndedForReplayStatements, refreshTokenWasSpent, spendRefreshToken, unspendRefreshToken, type GrantKey } from "../db/refresh-tokens.ts";

/** What Taskgate reads of the provider's grant record. */
interface StoredGrant {
  refreshTokenId?: string;
  previousRefreshTokenId?: string;
  /** Unix seconds. */
  expiresAt?: number;
}

export interface GrantRef extends GrantKey {
  /** When the grant expires (ISO): its rows in D1 are kept until then. */
  expiresAt: string;
}

/** This request holds the one use of the token with this hash. */
export interface SpentToken extends GrantRef {
  hash: string;
}

/** A grant to end (a used token came back), a token this request spent, or neither (the provider decides). */
export type RefreshCheck = { replayed: GrantRef } | { spent: SpentToken } | null;

export const REPLAY_TOOL = "refresh_token_replay";

const REPLAY_WHY =
  "a refresh token it had already replaced was used again, so a copy of it may be in other hands; every token of the connection stopped working. Connect the app again.";

/** Checks a refresh request's token and, when it is its grant's current one, spends it (see above). */
export async function spendOrReplay(env: Env, refreshToken: string, nowMs = Date.now()): Promise<RefreshCheck> {
  const [userId, grantId, secret, ...more] = refreshToken.split(":");
  if (!userId || !grantId || !secret || more.length) return null;
  const grant = await env.OAUTH_KV.get<StoredGrant>(`grant:${userId}:${grantId}`, "json");
  if (!grant?.refreshTokenId) return null;
  const expiresSeconds = grant.expiresAt ?? Math.floor(nowMs / 1000) + GRANT_SECONDS;
  const ref: GrantRef = { userId, grantId, expiresAt: new Date(expiresSeconds * 1000).toISOString() };
  const hash = await hashToken(refreshToken);
  if (hash === grant.previousRefreshTokenId) return { replayed: ref };
  const db = directoryOf(env);
  if (hash === grant.refreshTokenId) {
    const won = await spendRefreshToken(db, ref, hash, new Date(nowMs).toISOString(), ref.expiresAt);
    return won ? { spent: { ...ref, hash } } : { replayed: ref };
  }
  if (await refreshTokenWasSpent(db, ref, hash)) return { replayed: ref };
  // A token retired before D1 recorded spends (a grant from before migration 0021) is remembered in KV until its grant expires.
  return (await env.OAUTH_KV.get(legacyRetiredKey(ref, hash))) === null ? null : { replayed: ref };
}

/** Where the tokens a grant replaced were remembered before migration 0021 (written no more; they expire with their grant). */
const legacyRetiredKey = (g: GrantKey, hash: string) => `refresh-retired:${g.userId}:${g.grantId}:${hash}`;

/**
 * The provider's exchange of a request that spent its token. A refusal (or a
 * failure) takes the spend back; tokens go out only when the grant was not
 * ended for a replay meanwhile (else it is ended again, the provider's
 * writes for this exchange included).
 */
export async function exchangeSpent(env: Env, oauth: OAuthHelpers, spent: SpentToken, exchange: () => Promise<Response>): Promise<Response> {
  const db = directoryOf(env);
  let res: Response;
  try {
    res = await exchange();
  } catch (e) {
    await unspendRefreshToken(db, spent, spent.hash);
    throw e;
  }
  if (res.status !== 200) {
    await unspendRefreshToken(db, spent, spent.hash);
    return res;
  }
  if (!(await endedForReplay(db, spent))) return res;
  await res.body?.cancel();
  return endReplayedGrant(env, oauth, spent);
}

/**
 * Ends the grant, with the audit entry; the token endpoint's answer. D1 first:
 * the mark (alone, in the first database: it holds no account, so no move
 * fences it), then the grant's rows wherever they are (the grant's account
 * is not known here; the other databases have none), then the provider's
 * grant, after the mark, so that a racing winner either sees the mark or
 * wrote its tokens before they are revoked here.
 */
export async function endReplayedGrant(env: Env, oauth: OAuthHelpers, g: GrantRef): Promise<Response> {
  const now = new Date().toISOString();
  const first = directoryOf(env);
  await first.batch(markEndedForReplayStatements(first, g, now, g.expiresAt));
  const ended = await Promise.allSettled(
    shardsOf(env).map(({ db }) => db.batch(endGrantStatements(db, g.userId, g.grantId, { activityId: newId(ID_PREFIX.activity), tool: REPLAY_TOOL, why: REPLAY_WHY, now }))),
  );
  await oauth.revokeGrant(g.grantId, g.userId);
  forgetResolvedTokens();
  for (const r of ended) if (r.status === "rejected") throw r.reason;
  console.warn(JSON.stringify({ level: "warn", where: "oauth", code: "invalid_grant", reason: "refresh_token_replayed" }));
  return new Response(
    JSON.stringify({ error: "invalid_grant", error_description: "This refresh token was already used; the authorization is ended for safety. Connect the app again." }),
    { status: 400, headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" } },
  );
}
