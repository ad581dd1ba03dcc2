/**
 * Passwords of people who sign in: PBKDF2-SHA256 through Web Crypto (100,000
 * iterations, the most the Workers runtime allows), a random 16-byte salt per
 * person, compared in constant time. Pure Web Crypto, so the Worker and the
 * admin CLI (Node) hash the same way. Stored as
 * `pbkdf2-sha256$<iterations>$<salt, base64url>$<hash, base64url>`.
 */
import { base64url } from "./tokens.ts";

export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

function fromBase64url(s: string): Uint8Array<ArrayBuffer> {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (s.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
}

async function derive(password: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password.normalize("NFC")), "PBKDF2", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, HASH_BITS);
  return new Uint8Array(bits);
}

/** Equal length and equal bytes, in time that depends only on the length. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ (b[i % (b.length || 1)] ?? 0);
  return diff === 0;
}

/** Constant-time comparison of two strings (for CSRF tokens and the like). */
export function constantTimeEqualText(a: string, b: string): boolean {
  const enc = new TextEncoder();
  return constantTimeEqual(enc.encode(a), enc.encode(b));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return `pbkdf2-sha256$${PBKDF2_ITERATIONS}$${base64url(salt)}$${base64url(hash)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 4 || parts[0] !== "pbkdf2-sha256") return false;
  const iterations = Number(parts[1]);
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > PBKDF2_ITERATIONS) return false;
  const expected = fromBase64url(parts[3]);
  const actual = await derive(password, fromBase64url(parts[2]), iterations);
  return constantTimeEqual(actual, expected);
}

/** The hash of a random password nobody knows, in the stored format. */
const NOBODY = "pbkdf2-sha256$100000$tUP-VDiY_-sctpk2IHj_BA$PBM0GtCPNTrOzF5W_CQGjjsyF8OXguKbpH22xyAzjHU";

/**
 * Spends the same work as a real check for someone without a password (an
 * unknown email), so the answer's timing does not tell whether the email exists.
 */
export async function verifyAgainstNothing(password: string): Promise<false> {
  await verifyPassword(password, NOBODY);
  return false;
}

/** What is wrong with a new password, in words for the form; null when it is fine. */
export function passwordProblem(password: string, confirm: string): string | null {
  if (password.length < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  if (password.trim() === "") return "The password must not be only spaces.";
  if (password !== confirm) return "The two passwords are not the same; type the same password twice.";
  return null;
}
