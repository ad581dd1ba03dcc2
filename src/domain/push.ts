/**
 * Web Push, the parts every layer shares: the VAPID key (one Worker secret,
 * `VAPID_KEY`, made once by `npm start` and `npm run deploy`), the events a
 * device may choose, the rule for a push service's endpoint, and the payload a
 * notification carries. Pure Web Crypto: the scripts use it in Node too.
 */
import type { EventType, TaskgateEvent } from "./events.ts";

/** The events a device can be notified of; approval.requested is on unless turned off. */
export const PUSH_EVENTS = ["approval.requested", "claim.lapsed", "run.stale"] as const satisfies readonly EventType[];
export type PushEvent = (typeof PUSH_EVENTS)[number];
export const DEFAULT_PUSH_EVENTS: readonly PushEvent[] = ["approval.requested"];
export const PUSH_EVENT_LABELS: Record<PushEvent, string> = {
  "approval.requested": "An approval is requested",
  "claim.lapsed": "An agent's claim lapses",
  "run.stale": "A run goes stale",
};
export const DEVICES_PER_PERSON = 20;

export function isPushEvent(s: string): s is PushEvent {
  return (PUSH_EVENTS as readonly string[]).includes(s);
}

const B64URL = /^[A-Za-z0-9_-]+$/;

export function toBase64Url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64Url(text: string): Uint8Array {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

export class VapidKeyError extends Error {}

/** The VAPID key pair: `publicKey` (base64url of the 65-byte uncompressed P-256 point, the browser's applicationServerKey) and `privateKey` (base64url of d). */
export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/**
 * `VAPID_KEY` is `<public key>.<private key>`, both base64url. Throws
 * VapidKeyError, saying what to do, when it is missing or not such a pair.
 */
export function parseVapidKey(raw: string | undefined): VapidKeys {
  const text = raw?.trim() ?? "";
  if (!text) throw new VapidKeyError("the Worker has no VAPID_KEY: run npm start (locally) or npm run deploy once to make one");
  const [publicKey, privateKey, more] = text.split(".");
  const ok = more === undefined && !!publicKey && !!privateKey && B64URL.test(publicKey) && B64URL.test(privateKey) &&
    fromBase64Url(publicKey).length === 65 && fromBase64Url(publicKey)[0] === 4 && fromBase64Url(privateKey).length === 32;
  if (!ok) throw new VapidKeyError("the Worker's VAPID_KEY is not a P-256 key pair (<public>.<private>, base64url); remove it and run npm run deploy to make a new one");
  return { publicKey, privateKey };
}

/** A new VAPID key pair, as the `VAPID_KEY` value. */
export async function newVapidKey(): Promise<string> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const point = new Uint8Array(65);
  point[0] = 4;
  point.set(fromBase64Url(jwk.x as string), 1);
  point.set(fromBase64Url(jwk.y as string), 33);
  return `${toBase64Url(point)}.${jwk.d}`;
}

/**
 * A push service's endpoint: https, a public host name, at most 1,000
 * characters. Returns the URL or a sentence saying what is wrong.
 */
export function checkPushEndpoint(raw: string): { url: string } | { error: string } {
  if (raw.length > 1000) return { error: "the push endpoint is longer than 1,000 characters" };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { error: "the push endpoint is not a URL" };
  }
  if (u.protocol !== "https:") return { error: "the push endpoint must use https" };
  if (u.username || u.password) return { error: "the push endpoint must not carry a user name or password" };
  const host = u.hostname;
  if (host === "localhost" || host.endsWith(".localhost") || /^[\d.]+$/.test(host) || host.startsWith("[") || !host.includes(".")) {
    return { error: "the push endpoint must be on a push service's public host name" };
  }
  return { url: u.toString() };
}

/** What the service worker shows: the title, the body, and the page to open (a path of this origin). */
export interface PushPayload {
  title: string;
  body: string;
  /** The decide page: /tasks/<id>. */
  url: string;
  /** Replaces an earlier notification about the same thing. */
  tag: string;
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The notification of an event a device chose; null for an event no device is told of. */
export function pushPayload(event: TaskgateEvent): PushPayload | null {
  if (event.type === "approval.requested") {
    const d = event.data as TaskgateEvent<"approval.requested">["data"];
    const asks = d.approval.kind === "question" ? `${d.approval.requested_by} asks` : `${d.approval.requested_by} asks for sign-off`;
    return { title: cut(`${asks}: ${d.task.title}`, 120), body: cut(d.approval.question, 500), url: `/tasks/${d.task.id}`, tag: d.approval.id };
  }
  if (event.type === "claim.lapsed") {
    const d = event.data as TaskgateEvent<"claim.lapsed">["data"];
    return { title: cut(`Claim lapsed: ${d.task.title}`, 120), body: cut(`${d.holder}'s claim ran out with nobody taking the task over.`, 500), url: `/tasks/${d.task.id}`, tag: event.id };
  }
  if (event.type === "run.stale") {
    const d = event.data as TaskgateEvent<"run.stale">["data"];
    return { title: cut(`Run stale: ${d.task.title}`, 120), body: cut(`${d.run.agent} has logged nothing for ${d.stale_after_minutes} minutes.`, 500), url: `/tasks/${d.task.id}`, tag: event.id };
  }
  return null;
}
