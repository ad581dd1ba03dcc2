// Verifies a Taskgate webhook delivery (Node 18+, Deno, Bun, Workers: Web Crypto only).
// `secret` is the endpoint's whsec_… secret, `header` the Taskgate-Signature
// header, `body` the raw request body as text (verify before parsing it).
export async function verifyTaskgateSignature(secret, header, body, toleranceSeconds = 300) {
  const fields = new Map(String(header ?? "").split(",").map((kv) => kv.trim().split("=")));
  const t = Number(fields.get("t"));
  const v1 = fields.get("v1") ?? "";
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(Date.now() / 1000 - t) > toleranceSeconds) return false; // too old (or from the future): a replay
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const mac = new Uint8Array(v1.match(/../g).map((h) => parseInt(h, 16)));
  return crypto.subtle.verify("HMAC", key, mac, enc.encode(`${t}.${body}`)); // constant-time comparison
}
