/**
 * A request's fingerprint: the same arguments give the same hash whatever the
 * order of their keys, so a retry can be told from a different call that
 * reuses its idempotency key.
 */

/** JSON with object keys sorted at every level and undefined members left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** Two hex digits for each byte value, so that a digest becomes text by 32 lookups (this runs for every request's token). */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
const utf8 = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(text)));
  let hex = "";
  for (let i = 0; i < digest.length; i++) hex += HEX[digest[i]];
  return hex;
}

/** SHA-256 (hex) of a call's canonical arguments, without its idempotency key. */
export function requestHash(args: Record<string, unknown>): Promise<string> {
  const { idempotency_key: _key, ...rest } = args;
  return sha256Hex(canonicalJson(rest));
}
