/**
 * Web Push, the parts every layer shares: the VAPID key (one Worker secret,
 * `VAPID_KEY`, made once by `npm start` and `npm run deploy`), the events a
 * device may choose, the rule for a push service's endpoint, and the payload a
 * notification carries. Pure Web Crypto: the scripts use it in Node too.
 */
import type { EventType, TaskgateEvent } from "./events.ts";
import { hostProblem, outboundProblem, PUBLIC_ONLY } from "./outbound-url.ts";
import { inWords } from "./words.ts";

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
 * The push services browsers subscribe with: an endpoint's host must be one
 * of these, exactly, or (`*.`) a name under one. Chrome, Opera, Samsung
 * Internet and other Chromium browsers use Google's; Firefox Mozilla's;
 * Safari (macOS, and iOS from the Home Screen) Apple's; Edge on Windows
 * Microsoft's. docs/push.md lists them.
 */
export const PUSH_SERVICES: readonly { host: string; service: string }[] = [
  { host: "fcm.googleapis.com", service: "Firebase Cloud Messaging (Chrome and other Chromium browsers)" },
  { host: "*.push.services.mozilla.com", service: "Mozilla autopush (Firefox: updates.push.services.mozilla.com)" },
  { host: "*.push.apple.com", service: "Apple Push Notification service (Safari: web.push.apple.com)" },
  { host: "*.notify.windows.com", service: "Windows Push Notification Services (Edge on Windows)" },
];

/**
 * The stand-in push service of the tests (`web-push-testing`, reached at this
 * host through the tests' own network): accepted only in local development
 * (`ALLOW_HTTP_WEBHOOKS`), never in production.
 */
export const STAND_IN_PUSH_HOST = "push.example.test";

const PUSH_ENDPOINT_MAX = 1000;

/** A DNS label as URL parsing leaves it (lower case, punycode): no empty label, so no trailing dot. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const SERVICE_LIST = inWords(PUSH_SERVICES.map((s) => s.host), "or");

/** Whether a parsed URL's host is a browser push service's (or, in local development, the stand-in's). */
export function onPushService(hostname: string, local: boolean): boolean {
  if (!hostname.split(".").every((label) => LABEL.test(label))) return false;
  const hosts = [...PUSH_SERVICES.map((s) => s.host), ...(local ? [STAND_IN_PUSH_HOST] : [])];
  return hosts.some((h) => (h.startsWith("*.") ? hostname.length > h.length - 1 && hostname.endsWith(h.slice(1)) : hostname === h));
}

/**
 * A push service's endpoint: https, on one of the browsers' push services
 * (PUSH_SERVICES; the tests' stand-in too when `local`), on the default port,
 * with no user name or password, at most 1,000 characters, and allowed by the
 * outbound rule (src/domain/outbound-url.ts) besides. Checked when a device is
 * added and again before every delivery. Returns the URL or a sentence saying
 * what is wrong.
 */
export function checkPushEndpoint(raw: string, local: boolean): { url: string } | { error: string } {
  if (raw.length > PUSH_ENDPOINT_MAX) return { error: "the push endpoint is longer than 1,000 characters" };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { error: "the push endpoint is not a URL" };
  }
  if (u.protocol !== "https:") return { error: "the push endpoint must use https" };
  if (u.username || u.password) return { error: "the push endpoint must not carry a user name or password" };
  const host = u.hostname;
  if (!onPushService(host, local)) {
    const internal = hostProblem(host);
    const what = internal ? `${host} is ${internal.what}, not a browser push service` : `${host} is not a browser push service`;
    const standIn = local ? ` (or the tests' stand-in, ${STAND_IN_PUSH_HOST})` : "";
    return { error: `${what}. Push endpoints must be on a browser push service: ${SERVICE_LIST}${standIn}; subscribe from a current Chrome, Edge, Firefox or Safari` };
  }
  if (u.port) return { error: `the push endpoint must not name a port (:${u.port}); push services answer on https's own port, 443` };
  const outbound = outboundProblem(u, PUBLIC_ONLY);
  if (outbound) return { error: `the push endpoint ${outbound}` };
  return { url: u.toString() };
}

/**
 * Why the Worker may not send to a stored endpoint now (the same rule,
 * checked again at each delivery, as for webhooks), or null. A database of an
 * older version may hold an endpoint the rule now refuses: it is never
 * fetched, and the device keeps the reason as its last failure.
 */
export function pushDeliveryProblem(endpoint: string, local: boolean): string | null {
  const checked = checkPushEndpoint(endpoint, local);
  return "error" in checked ? `not sent: ${checked.error}. Remove this device` : null;
}

/** A notification's button: its name, its words, and the page it opens (a path of this origin). */
export interface PushAction {
  action: string;
  title: string;
  url: string;
}

/** What the service worker shows: the title, the body, and the page to open (a path of this origin). */
export interface PushPayload {
  title: string;
  body: string;
  /** The decide page: /tasks/<id>. */
  url: string;
  /** Replaces an earlier notification about the same thing. */
  tag: string;
  /**
   * A question with choices: one button per choice, each opening the decide
   * page with that choice picked, for the person to send (the service worker
   * shows as many as the platform allows; tapping elsewhere opens `url`).
   */
  actions?: PushAction[];
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** How long a choice's button text may be (notification buttons are short). */
const ACTION_TITLE_MAX = 40;

/** The decide page with a question's choice picked (by its place, for that question only). */
export const pickedChoiceUrl = (taskId: string, approvalId: string, index: number) => `/tasks/${taskId}?approval=${approvalId}&choice=${index}`;

/** The notification of an event a device chose; null for an event no device is told of. */
export function pushPayload(event: TaskgateEvent): PushPayload | null {
  if (event.type === "approval.requested") {
    const d = event.data as TaskgateEvent<"approval.requested">["data"];
    // A pending action: the tool's title first, the arguments in words, and the page that decides it.
    if (d.action) {
      return {
        title: cut(`${d.approval.requested_by} asks to run: ${d.action.title}`, 120),
        body: cut(`${d.action.arguments_in_words}. Approve or reject before ${d.action.expires_at.slice(0, 16).replace("T", " ")} UTC.`, 500),
        url: `/approvals/${d.approval.id}`,
        tag: d.approval.id,
      };
    }
    const asks = d.approval.kind === "question" ? `${d.approval.requested_by} asks` : `${d.approval.requested_by} asks for sign-off`;
    const task = d.task ?? { id: "", title: "" };
    const payload: PushPayload = { title: cut(`${asks}: ${task.title}`, 120), body: cut(d.approval.question, 500), url: `/tasks/${task.id}`, tag: d.approval.id };
    const choices = d.approval.kind === "question" && d.task ? d.approval.choices : null;
    if (choices?.length && d.task) {
      payload.actions = choices.map((c, i) => ({ action: `choice-${i}`, title: cut(c, ACTION_TITLE_MAX), url: pickedChoiceUrl(task.id, d.approval.id, i) }));
    }
    return payload;
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
