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
  if (url.username || url.password) throw new WebhookInputError("url: must not carry a user name or password; a receiver checks the webhook-signature header instead");
  if (url.hash) throw new WebhookInputError("url: must not have a #fragment");
  return url.toString();
}

/** Why the Worker may not deliver to this stored URL now (the same rule, checked again at each delivery), or null. */
export function deliveryProblem(url: string, allowHttp: boolean): string | null {
  const problem = outboundTextProblem(url, { webhook: true, local: allowHttp });
  return problem && `url: ${problem}; register another endpoint`;
}

/**
 * What an endpoint receives: `all` (every event, those added in later
 * versions too), or the event types named, in EVENT_TYPES order.
 */
export type EventSelection = "all" | EventType[];

/**
 * A comma-separated list of event types, or `all`. A list that names every
 * event is `all` as well (the console's form with every box ticked): such an
 * endpoint also receives the events a later version adds.
 */
export function parseEventTypes(text: string): EventSelection {
  const items = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (items.length === 1 && items[0] === "all") return "all";
  if (items.length === 0) throw new WebhookInputError(`events: name at least one of ${EVENT_TYPES.join(", ")} (or all)`);
  const unknown = items.filter((s) => !isEventType(s));
  if (unknown.length) throw new WebhookInputError(`events: ${unknown.join(", ")} ${unknown.length === 1 ? "is not an event" : "are not events"}; the events are ${EVENT_TYPES.join(", ")} (or all)`);
  const named = EVENT_TYPES.filter((t) => items.includes(t));
  return named.length === EVENT_TYPES.length ? "all" : named;
}

/** The selection in words, for a page: "all events" or the types named. */
export function describeEvents(events: EventSelection): string {
  return events === "all" ? "all events" : events.join(", ");
}

const SECRET_PREFIX = "whsec_";

/** Standard base64 (with padding) of some bytes. */
export function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/**
 * A signing secret: `whsec_` and 32 random bytes in base64, the form the
 * Standard Webhooks libraries take as it is.
 */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/**
 * The key bytes of a secret: the base64 after `whsec_`. Secrets made by
 * earlier versions are in base64url without padding; they decode to their bytes too.
 */
export function webhookKeyBytes(secret: string): Uint8Array {
  const text = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The secret in the form Standard Webhooks libraries take (`whsec_` and base64): the same key bytes. */
export function standardWebhookSecret(secret: string): string {
  return `${SECRET_PREFIX}${toBase64(webhookKeyBytes(secret))}`;
}

/** What a list may show of a secret. */
export function secretPrefix(secret: string): string {
  return `${secret.slice(0, 10)}…`;
}
