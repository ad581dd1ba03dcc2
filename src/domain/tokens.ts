/**
 * Bearer token secrets: `tg_` + 32 random bytes, base64url. Only the SHA-256
 * (hex) and a short display prefix are ever stored. Pure Web Crypto, so the
 * Worker and the admin CLI (Node) share this module.
 */
import { sha256Hex } from "./canonical.ts";

export const TOKEN_PREFIX = "tg_";

export function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * 43 characters: 26 random (156 bits, base64url), the database the account was
 * in when the secret was made (one base-36 digit: 0 is DB, n is DB_n; `_` when
 * not known), and the 16 characters of the account's id. A deployment with
 * several databases finds the account's without a directory lookup; the hash of
 * the whole secret is what D1 keeps, so a changed hint matches nothing. Without
 * an account: 32 random bytes.
 */
export function newSecretOf(accountId?: string, shardIndex?: number): string {
  const tail = accountId ? ACCOUNT_ID.exec(accountId)?.[1] : undefined;
  if (!tail) return base64url(crypto.getRandomValues(new Uint8Array(32)));
  const hint = shardIndex !== undefined && shardIndex >= 0 && shardIndex < 36 ? shardIndex.toString(36) : "_";
  return base64url(crypto.getRandomValues(new Uint8Array(20))).slice(0, 26) + hint + tail;
}

/** The database index a secret may name (see newSecretOf), or null. */
export function shardInSecret(secret: string): number | null {
  const c = secret.charAt(secret.length - 17);
  return /^[0-9a-z]$/.test(c) ? parseInt(c, 36) : null;
}

const ACCOUNT_ID = /^acc_([0-9a-z]{16})$/;

/** The account a secret (a token, a session id, a setup link) may carry: the last 16 characters when they can be an account's. */
export function accountInSecret(secret: string): string | null {
  const tail = secret.slice(-16);
  return /^[0-9a-z]{16}$/.test(tail) ? `acc_${tail}` : null;
}

export function newTokenSecret(accountId?: string, shardIndex?: number): string {
  return TOKEN_PREFIX + newSecretOf(accountId, shardIndex);
}

export function hashToken(secret: string): Promise<string> {
  return sha256Hex(secret);
}

/** What lists show instead of the secret: enough to recognise a token, useless to use it. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, 9) + "…";
}

export function looksLikeToken(value: string): boolean {
  return /^tg_[A-Za-z0-9_-]{43}$/.test(value);
}
