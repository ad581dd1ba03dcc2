/**
 * Web Push from the queue consumer: an event a device chose is sent to it as
 * one encrypted message (RFC 8291 aes128gcm, signed with VAPID, RFC 8292, by
 * `@block65/webcrypto-web-push`). The push service sees the endpoint, the
 * VAPID signature, a TTL and the ciphertext: no topic, no urgency, nothing of
 * the message in clear. A 2xx answer is a delivery (recorded, so a retried
 * message never reaches that device twice); 404 and 410 mean the browser
 * dropped the subscription, and the device is removed; anything else is
 * retried with the webhook queue's backoff until 24 hours after the event.
 * Before any of it, each stored endpoint is checked again by the rule that
 * admitted it (a browser push service, and the outbound rule): one it refuses
 * (an older database may hold one) is never fetched nor retried, and the
 * device keeps the reason as its last failure.
 */
import { buildPushPayload } from "@block65/webcrypto-web-push";
import { pushTargetsOf, recordPushOutcomes, type PushOutcome, type PushTarget } from "../db/push.ts";
import type { TaskgateEvent } from "../domain/events.ts";
import { isPushEvent, parseVapidKey, pushDeliveryProblem, pushPayload, VapidKeyError, type PushPayload, type VapidKeys } from "../domain/push.ts";
import { localDevelopment, type Env } from "../env.ts";

export const PUSH_TIMEOUT_MS = 10_000;
/** Seconds the push service keeps a message for a device that is offline. */
export const PUSH_TTL_SECONDS = 24 * 3600;

async function sendOne(target: PushTarget, payload: PushPayload, vapid: VapidKeys): Promise<PushOutcome> {
  const fail = (error: string): PushOutcome => ({ target, result: "failed", error });
  try {
    const { actions, ...shown } = payload;
    const built = await buildPushPayload(
      { data: actions ? { ...shown, actions: actions.map((a) => ({ ...a })) } : shown, options: { ttl: PUSH_TTL_SECONDS } },
      { endpoint: target.endpoint, expirationTime: null, keys: { p256dh: target.p256dh, auth: target.auth } },
      { subject: target.origin, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
    );
    const res = await fetch(target.endpoint, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
      headers: built.headers,
      body: built.body,
    });
    await res.body?.cancel();
    if (res.status >= 200 && res.status < 300) return { target, result: "delivered", error: null };
    if (res.status === 404 || res.status === 410) return { target, result: "gone", error: `the push service answered HTTP ${res.status}` };
    return fail(`the push service answered HTTP ${res.status}`);
  } catch (e) {
    const name = (e as Error)?.name;
    if (name === "TimeoutError" || name === "AbortError") return fail(`no answer within ${PUSH_TIMEOUT_MS / 1000} s`);
    return fail(`the push could not be sent: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
  }
}

export interface PushResult {
  /** Some device failed and the message should come back. */
  retry: boolean;
  outcomes: { device: string; result: PushOutcome["result"]; error: string | null }[];
}

/** Sends the event to the account's devices that chose it and have not had it; `lastChance`: no retry follows. */
export async function deliverPushes(env: Env, event: TaskgateEvent, nowMs: number, lastChance: boolean): Promise<PushResult> {
  const none: PushResult = { retry: false, outcomes: [] };
  if (!isPushEvent(event.type)) return none;
  const payload = pushPayload(event);
  if (!payload) return none;
  const targets = await pushTargetsOf(env.DB, event.account_id, event.type, event.id);
  if (targets.length === 0) return none;
  let vapid: VapidKeys | null = null;
  let keyError: string | null = null;
  try {
    vapid = parseVapidKey(env.VAPID_KEY);
  } catch (e) {
    if (!(e instanceof VapidKeyError)) throw e;
    keyError = e.message;
  }
  const local = localDevelopment(env);
  const outcomes = await Promise.all(targets.map((target): PushOutcome | Promise<PushOutcome> => {
    const refused = pushDeliveryProblem(target.endpoint, local);
    if (refused) return { target, result: "refused", error: refused };
    return vapid ? sendOne(target, payload, vapid) : { target, result: "failed", error: keyError };
  }));
  await recordPushOutcomes(env.DB, event.id, outcomes, new Date(nowMs).toISOString());
  for (const o of outcomes.filter((x) => x.result !== "delivered")) {
    console.warn(JSON.stringify({ level: "warn", where: "push", msg: o.result === "gone" ? "removed an expired device" : o.result === "refused" ? "refused a device's push endpoint" : "a push failed", device: o.target.id, event: event.id, error: o.error }));
  }
  const retry = !!vapid && !lastChance && outcomes.some((o) => o.result === "failed");
  return { retry, outcomes: outcomes.map((o) => ({ device: o.target.id, result: o.result, error: o.error })) };
}
