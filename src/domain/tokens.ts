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

export function newTokenSecret(): string {
  return TOKEN_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
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
