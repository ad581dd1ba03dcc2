/**
 * An app may end its own grant at the token endpoint (RFC 7009: revoking its
 * refresh token revokes the grant). The provider does that in KV; this keeps
 * the grant's tokens row, which list_tokens and the admin CLI read, in step.
 * Provider tokens read `<user id>:<grant id>:<secret>`.
 */
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { markGrantRevoked } from "../db/grants.ts";
import { forgetResolvedTokens } from "../db/principals.ts";

/** The form of a token-endpoint request that asks to revoke a token (a `token` and no `grant_type`). */
export function revokedTokenOf(form: FormData | null): string | null {
  if (!form || form.get("grant_type")) return null;
  const token = form.get("token");
  return typeof token === "string" && token.split(":").length === 3 ? token : null;
}

export async function reflectRevocation(db: D1Database, oauth: OAuthHelpers, token: string): Promise<void> {
  const [userId, grantId] = token.split(":");
  if (!userId || !grantId) return;
  let cursor: string | undefined;
  do {
    const page = await oauth.listUserGrants(userId, { cursor });
    if (page.items.some((g) => g.id === grantId)) return; // only an access token was revoked: the grant lives on
    cursor = page.cursor;
  } while (cursor);
  if ((await markGrantRevoked(db, userId, grantId, new Date().toISOString())) > 0) forgetResolvedTokens();
}
