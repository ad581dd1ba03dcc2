/**
 * Connector credentials (and webhook signing secrets) at rest: AES-256-GCM
 * under CONNECTOR_KEY (base64 of 32 bytes, a Worker secret). The envelope is
 * `v1:<iv>:<ciphertext+tag>` (base64), and the owner (account and provider, or
 * account and webhook) is bound in as additional data, so a stored value
 * cannot be moved to another row. Web Crypto only:
 * the Worker and the admin CLI (Node) share this module.
 */
import type { Provider } from "./providers.ts";

const VERSION = "v1";
const IV_BYTES = 12;

/** The operator has not set a usable CONNECTOR_KEY. */
export class ConnectorKeyError extends Error {}

/** A stored value that this key cannot open (a different key, or tampering). */
export class DecryptError extends Error {}

function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A fresh key for `.dev.vars` or `wrangler secret put CONNECTOR_KEY`. */
export function newConnectorKey(): string {
  return toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

const KEY_HELP =
  "the operator must set CONNECTOR_KEY to the base64 of 32 random bytes (`openssl rand -base64 32`): `wrangler secret put CONNECTOR_KEY` in production, a CONNECTOR_KEY=… line in .dev.vars locally";

const keys = new Map<string, Promise<CryptoKey>>();

/** Imports (once per isolate) the AES-GCM key; a missing or malformed value is a ConnectorKeyError. */
export function importConnectorKey(raw: string | undefined): Promise<CryptoKey> {
  const text = (raw ?? "").trim();
  if (!text) return Promise.reject(new ConnectorKeyError(`Connectors are not configured: ${KEY_HELP}.`));
  let cached = keys.get(text);
  if (!cached) {
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = fromBase64(text);
    } catch {
      return Promise.reject(new ConnectorKeyError(`CONNECTOR_KEY is not valid base64: ${KEY_HELP}.`));
    }
    if (bytes.length !== 32) {
      return Promise.reject(new ConnectorKeyError(`CONNECTOR_KEY decodes to ${bytes.length} bytes, not 32: ${KEY_HELP}.`));
    }
    cached = crypto.subtle.importKey("raw", bytes, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
    keys.set(text, cached);
  }
  return cached;
}

function connectorContext(accountId: string, provider: Provider): string {
  return `taskgate/connector/${VERSION}/${accountId}/${provider}`;
}

/**
 * Seals any stored secret under the key, bound to `context` (additional data
 * naming its owner), so that an envelope only opens for the row it was made for.
 */
export async function sealText(key: CryptoKey, context: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new Uint8Array(new TextEncoder().encode(context)) },
    key,
    new TextEncoder().encode(plaintext),
  );
  return `${VERSION}:${toBase64(iv)}:${toBase64(new Uint8Array(sealed))}`;
}

export async function openText(key: CryptoKey, context: string, envelope: string): Promise<string> {
  const [version, iv, sealed, ...rest] = envelope.split(":");
  if (version !== VERSION || !iv || !sealed || rest.length) throw new DecryptError("not an envelope");
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(iv), additionalData: new Uint8Array(new TextEncoder().encode(context)) },
      key,
      fromBase64(sealed),
    );
    return new TextDecoder().decode(plain);
  } catch {
    throw new DecryptError("the envelope does not open with this key");
  }
}

export function encryptCredentials(key: CryptoKey, accountId: string, provider: Provider, plaintext: string): Promise<string> {
  return sealText(key, connectorContext(accountId, provider), plaintext);
}

export function decryptCredentials(key: CryptoKey, accountId: string, provider: Provider, envelope: string): Promise<string> {
  return openText(key, connectorContext(accountId, provider), envelope);
}

/** CONNECTOR_KEY from the text of a dotenv file such as `.dev.vars`, if it has one. */
export function keyFromDotenv(text: string): string | undefined {
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?CONNECTOR_KEY\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const value = m[1].replace(/^(["'])(.*)\1$/, "$2").trim();
    return value || undefined;
  }
  return undefined;
}
