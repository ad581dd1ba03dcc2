/**
 * The provider can end a grant by itself: an app revokes its own refresh
 * token (RFC 7009), or a code is replayed (the grant it made is revoked). It
 * does that in KV; this keeps the grant's tokens row, which list_tokens and
 * the admin CLI read, in step. Provider codes and tokens read
 * `<user id>:<grant id>:<secret>`.
 */
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { grantRowIsLive, markGrantRevoked } from "../db/grants.ts";
import { forgetResolvedTokens } from "../db/principals.ts";

export interface TokenEndpointCredential {
  value: string;
  /** A revocation request, or a code exchange or refresh that the provider may answer by ending the grant. */
  kind: "revoke" | "exchange";
}

/** The provider credential a token-endpoint request carries, if any. */
export function credentialOf(form: FormData | null): TokenEndpointCredential | null {
  if (!form) return null;
  const grantType = form.get("grant_type");
  const value = !grantType ? form.get("token") : grantType === "authorization_code" ? form.get("code") : grantType === "refresh_token" ? form.get("refresh_token") : null;
  if (typeof value !== "string" || value.split(":").length !== 3) return null;
  return { value, kind: grantType ? "exchange" : "revoke" };
}

/** Whether the provider's answer may have ended the grant: a revocation it accepted, or a refused exchange. */
export function mayHaveEnded(c: TokenEndpointCredential, status: number): boolean {
  return c.kind === "revoke" ? status === 200 : status === 400;
}

export async function reflectEndedGrant(db: D1Database, oauth: OAuthHelpers, credential: string): Promise<void> {
  const [userId, grantId] = credential.split(":");
  if (!userId || !grantId || !(await grantRowIsLive(db, userId, grantId))) return; // no live row of ours: nothing to keep in step
  let cursor: string | undefined;
  do {
    const page = await oauth.listUserGrants(userId, { cursor });
    if (page.items.some((g) => g.id === grantId)) return; // the grant lives on (only an access token was revoked)
    cursor = page.cursor;
  } while (cursor);
  if ((await markGrantRevoked(db, userId, grantId, new Date().toISOString())) > 0) forgetResolvedTokens();
}
