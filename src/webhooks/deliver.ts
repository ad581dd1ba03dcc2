/**
 * The webhook queue's consumer. One message is one event; it goes to every
 * endpoint of the account subscribed to its type (and registered by the time
 * it happened), each attempt signed, with 10 s to answer. A 2xx answer is a
 * delivery, recorded so that a redelivered message never reaches that
 * endpoint twice; anything else is retried with exponential backoff (30 s,
 * 1 min, 2 min … at most 1 h apart) until 24 hours after the event, when the
 * delivery is given up and recorded as failed with its last error. The same
 * message goes to the person's devices by Web Push (./push.ts), with the same retries.
 */
import { envOfAccount } from "../db/shards.ts";
import { EVENT_TYPES, type TaskgateEvent } from "../domain/events.ts";
import { deliveryProblem } from "../domain/webhooks.ts";
import { ConnectorKeyError, importConnectorKey } from "../domain/crypto.ts";
import { openSecret, recordDeliveries, subscribersOf, type DeliveryStatus, type WebhookTarget } from "../db/webhooks-d1.ts";
import { localDevelopment, VERSION, type Env } from "../env.ts";
import { deliveryHeaders } from "./signature.ts";
import { deliverPushes, type PushResult } from "./push.ts";

export const DELIVERY_TIMEOUT_MS = 10_000;
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;

/** Seconds before the retry after attempt `attempt` (1 = the first) failed. */
export function retryDelaySeconds(attempt: number): number {
  return Math.min(30 * 2 ** Math.max(0, attempt - 1), 3600);
}

function asEvent(body: unknown): TaskgateEvent | null {
  const e = body as Partial<TaskgateEvent> | null;
  if (!e || typeof e !== "object") return null;
  if (typeof e.id !== "string" || typeof e.account_id !== "string" || typeof e.created_at !== "string") return null;
  if (!(EVENT_TYPES as readonly string[]).includes(e.type as string) || Number.isNaN(Date.parse(e.created_at))) return null;
  return e as TaskgateEvent;
}

interface Attempt {
  target: WebhookTarget;
  ok: boolean;
  /** No retry can help (the URL is not allowed, the secret cannot be opened). */
  final: boolean;
  httpStatus: number | null;
  error: string | null;
}

async function attempt(env: Env, key: CryptoKey | Error, target: WebhookTarget, event: TaskgateEvent, body: string, nowMs: number): Promise<Attempt> {
  const fail = (error: string, final = false, httpStatus: number | null = null): Attempt => ({ target, ok: false, final, httpStatus, error });
  const refused = deliveryProblem(target.url, localDevelopment(env));
  if (refused) return fail(refused, true);
  if (key instanceof Error) return fail(key.message);
  let secret: string;
  try {
    secret = await openSecret(key, target);
  } catch {
    return fail("the signing secret does not open with the current CONNECTOR_KEY; remove the webhook and add it again", true);
  }
  try {
    const res = await fetch(target.url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        "content-type": "application/json",
        "user-agent": `Taskgate-Webhooks/${VERSION}`,
        "taskgate-event": event.type,
        "taskgate-event-id": event.id,
        ...(await deliveryHeaders(secret, event.id, Math.floor(nowMs / 1000), body)),
      },
      body,
    });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return { target, ok: true, final: false, httpStatus: res.status, error: null };
    return fail(`the endpoint answered HTTP ${res.status}${res.status >= 300 && res.status < 400 ? " (redirects are not followed)" : ""}`, false, res.status);
  } catch (e) {
    const name = (e as Error)?.name;
    if (name === "TimeoutError" || name === "AbortError") return fail(`no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`);
    return fail(`the request failed: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  }
}

export interface DeliveryOutcome {
  /** Seconds until the message should come back, or null when it is done (delivered, failed for good, or nobody to tell). */
  retryAfterSeconds: number | null;
  results: { webhook_id: string; status: DeliveryStatus; error: string | null }[];
  /** Each device's outcome (src/webhooks/push.ts). */
  pushes?: PushResult["outcomes"];
}

/** How long a delivery of an account that is moving waits before it is tried again (a move takes a minute or two). */
export const MOVING_RETRY_SECONDS = 60;

/** Delivers one event to the endpoints that still wait for it; `attemptNo` is the queue's attempt count (1 = first). */
export async function deliverEvent(deployment: Env, body: unknown, attemptNo: number, nowMs: number): Promise<DeliveryOutcome> {
  const event = asEvent(body);
  if (!event) {
    console.error(JSON.stringify({ level: "error", where: "webhook consumer", msg: "dropped a message that is not a Taskgate event" }));
    return { retryAfterSeconds: null, results: [] };
  }
  const env = await envOfAccount(deployment, event.account_id);
  const { targets, deliveries, moving } = await subscribersOf(env.DB, event.account_id, event.type, event.created_at, event.id);
  // Its delivery records could not be written while it moves: delivered after the move, not twice.
  if (moving) return { retryAfterSeconds: MOVING_RETRY_SECONDS, results: [] };
  const age = nowMs - Date.parse(event.created_at);
  const lastChance = age >= GIVE_UP_AFTER_MS;
  const retryAfter = () => Math.max(1, Math.min(retryDelaySeconds(attemptNo), Math.ceil((GIVE_UP_AFTER_MS - age) / 1000)));
  // The person's devices (src/webhooks/push.ts) first: a failed push comes back with the message, like a webhook.
  const pushed = await deliverPushes(env, event, nowMs, lastChance);
  const settled = new Set(deliveries.filter((d) => d.status !== "pending").map((d) => d.webhook_id));
  const waiting = targets.filter((t) => !settled.has(t.id));
  if (waiting.length === 0) return { retryAfterSeconds: pushed.retry ? retryAfter() : null, results: [], pushes: pushed.outcomes };

  const json = JSON.stringify(event);
  let key: CryptoKey | Error;
  try {
    key = await importConnectorKey(env.CONNECTOR_KEY);
  } catch (e) {
    key = e instanceof ConnectorKeyError ? new Error("the Worker has no usable CONNECTOR_KEY to open the signing secret") : (e as Error);
  }
  const attempts = await Promise.all(waiting.map((t) => attempt(env, key, t, event, json, nowMs)));
  const now = new Date(nowMs).toISOString();
  const results = attempts.map((a) => ({
    webhook_id: a.target.id,
    status: (a.ok ? "delivered" : a.final || lastChance ? "failed" : "pending") as DeliveryStatus,
    error: a.error,
    httpStatus: a.httpStatus,
  }));
  await recordDeliveries(
    env.DB,
    results.map((r) => ({
      accountId: event.account_id, webhookId: r.webhook_id, eventId: event.id, eventType: event.type, status: r.status,
      httpStatus: r.httpStatus, error: r.error, now,
    })),
  );
  for (const r of results.filter((x) => x.status === "failed")) {
    console.warn(JSON.stringify({ level: "warn", where: "webhook consumer", msg: "gave up a delivery", webhook: r.webhook_id, event: event.id, error: r.error }));
  }
  const out = results.map(({ webhook_id, status, error }) => ({ webhook_id, status, error }));
  const again = pushed.retry || results.some((r) => r.status === "pending");
  return { retryAfterSeconds: again ? retryAfter() : null, results: out, pushes: pushed.outcomes };
}

/**
 * The Worker's `queue` handler: each message acked when done, retried with its
 * delay otherwise. One account's events go out one after another in the order
 * they were sent (approval.requested before the task.completed that follows
 * its approval); accounts run side by side.
 */
export async function handleWebhookBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byAccount = new Map<string, Message<unknown>[]>();
  for (const message of batch.messages) {
    const account = asEvent(message.body)?.account_id ?? "";
    byAccount.set(account, [...(byAccount.get(account) ?? []), message]);
  }
  await Promise.all(
    [...byAccount.values()].map(async (messages) => {
      for (const message of messages) await handleMessage(message, env);
    }),
  );
}

async function handleMessage(message: Message<unknown>, env: Env): Promise<void> {
  try {
    const outcome = await deliverEvent(env, message.body, message.attempts, Date.now());
    if (outcome.retryAfterSeconds === null) message.ack();
    else message.retry({ delaySeconds: outcome.retryAfterSeconds });
  } catch (e) {
    console.error(JSON.stringify({ level: "error", where: "webhook consumer", message: message.id, error: e instanceof Error ? e.stack ?? e.message : String(e) }));
    message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
  }
}
