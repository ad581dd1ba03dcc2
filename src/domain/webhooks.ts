/**
 * What a webhook endpoint may be: the checks shared by the admin CLI, the
 * web console and the Worker. Messages name the field and never repeat a secret.
 */
import { EVENT_TYPES, isEventType, type EventType } from "./events.ts";
import { outboundProblem, outboundTextProblem } from "./outbound-url.ts";

export class WebhookInputError extends Error {}

export const URL_MAX = 2000;

/** Endpoints an account may have: each event is one delivery to every subscribed endpoint. */
export const WEBHOOKS_PER_ACCOUNT = 20;

export const WEBHOOK_LIMIT_REACHED = `an account has at most ${WEBHOOKS_PER_ACCOUNT} webhooks; remove one before adding another`;

/**
 * An endpoint URL, normalized: `https://` to a public host only (the
 * outbound rule, src/domain/outbound-url.ts), unless `allowHttp` (a local
 * database in development: `npm start`, the tests, `ALLOW_HTTP_WEBHOOKS`),
 * where `http://` and loopback receivers are accepted too.
 */
export function checkWebhookUrl(text: string, allowHttp: boolean): string {
  const value = text.trim();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new WebhookInputError(`url: "${value.slice(0, 100)}" is not a URL; give the full address, e.g. https://example.com/hooks/taskgate`);
  }
  if (value.length > URL_MAX) throw new WebhookInputError(`url: at most ${URL_MAX} characters`);
  const problem = outboundProblem(url, { webhook: true, local: allowHttp });
  if (problem) throw new WebhookInputError(`url: ${problem}`);
  if (url.username || url.password) throw new WebhookInputError("url: must not carry a user name or password; a receiver checks the Taskgate-Signature header instead");
  if (url.hash) throw new WebhookInputError("url: must not have a #fragment");
  return url.toString();
}

/** Why the Worker may not deliver to this stored URL now (the same rule, checked again at each delivery), or null. */
export function deliveryProblem(url: string, allowHttp: boolean): string | null {
  const problem = outboundTextProblem(url, { webhook: true, local: allowHttp });
  return problem && `url: ${problem}; register another endpoint`;
}

/** A comma-separated list of event types, or `all`. */
export function parseEventTypes(text: string): EventType[] {
  const items = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (items.length === 1 && items[0] === "all") return [...EVENT_TYPES];
  if (items.length === 0) throw new WebhookInputError(`events: name at least one of ${EVENT_TYPES.join(", ")} (or all)`);
  const unknown = items.filter((s) => !isEventType(s));
  if (unknown.length) throw new WebhookInputError(`events: ${unknown.join(", ")} ${unknown.length === 1 ? "is not an event" : "are not events"}; the events are ${EVENT_TYPES.join(", ")} (or all)`);
  return EVENT_TYPES.filter((t) => items.includes(t));
}

function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A signing secret: `whsec_` and 32 random bytes, base64url. */
export function newWebhookSecret(): string {
  return `whsec_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** What a list may show of a secret. */
export function secretPrefix(secret: string): string {
  return `${secret.slice(0, 10)}…`;
}
