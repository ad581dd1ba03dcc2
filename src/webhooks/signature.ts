/**
 * Signing a delivery, two ways at once:
 * - Standard Webhooks (standardwebhooks.com): `webhook-id` (the event id, the
 *   same on every attempt), `webhook-timestamp` (unix seconds) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256>` over `id.timestamp.body`,
 *   keyed with the secret's 32 bytes (the base64 after `whsec_`). Receivers
 *   verify it with a maintained library (`standardwebhooks` on npm and others).
 * - The older `Taskgate-Signature: t=<unix seconds>,v1=<hex>`, Stripe's
 *   scheme: HMAC-SHA256 keyed with the whole `whsec_…` string over
 *   `timestamp + "." + body`; sent alongside until 2027-06-30 for receivers
 *   that verify with examples/verify-webhook.mjs.
 * Each attempt is signed anew with its own time, so a receiver can refuse old ones.
 */
import { toBase64, webhookKeyBytes } from "../domain/webhooks.ts";

export const SIGNATURE_HEADER = "Taskgate-Signature";

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function hmac(key: Uint8Array, text: string): Promise<ArrayBuffer> {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", k, new TextEncoder().encode(text));
}

export async function signatureHeader(secret: string, timestampSeconds: number, body: string): Promise<string> {
  const mac = await hmac(new TextEncoder().encode(secret), `${timestampSeconds}.${body}`);
  return `t=${timestampSeconds},v1=${hex(mac)}`;
}

/** The Standard Webhooks headers of one attempt, and the older Taskgate-Signature beside them. */
export async function deliveryHeaders(secret: string, messageId: string, timestampSeconds: number, body: string): Promise<Record<string, string>> {
  const mac = await hmac(webhookKeyBytes(secret), `${messageId}.${timestampSeconds}.${body}`);
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": `v1,${toBase64(new Uint8Array(mac))}`,
    [SIGNATURE_HEADER]: await signatureHeader(secret, timestampSeconds, body),
  };
}
