/**
 * Signing a delivery the way Stripe does: HMAC-SHA256, keyed with the
 * endpoint's secret (the whole `whsec_…` string), over `timestamp + "." +
 * body`, sent as `Taskgate-Signature: t=<unix seconds>,v1=<hex>`. Each
 * attempt is signed anew with its own time, so a receiver can refuse old ones.
 */
export const SIGNATURE_HEADER = "Taskgate-Signature";

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function signatureHeader(secret: string, timestampSeconds: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${timestampSeconds}.${body}`));
  return `t=${timestampSeconds},v1=${hex(mac)}`;
}
