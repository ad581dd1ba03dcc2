import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { vi } from "vitest";
import worker from "../src/index.ts";
import { createWebhook } from "../src/db/webhooks-d1.ts";
import type { Env } from "../src/env.ts";

/** One delivery as a receiver saw it. */
export interface Received {
  url: string;
  headers: Record<string, string>;
  body: string;
  event: { id: string; type: string; created_at: string; account_id: string; data: Record<string, any> };
  signal: AbortSignal | null;
}

export type Receiver = (r: Received) => Response | Promise<Response>;

/**
 * Every outbound request of the Worker (the queue consumer runs in this
 * isolate) lands in `receiver`; nothing reaches the network. The MCP test
 * client does not use the global fetch, so it is unaffected.
 */
export function fakeReceivers(receiver: Receiver = () => new Response("ok")): Received[] {
  const seen: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const body = await req.text();
    const r: Received = { url: req.url, headers: Object.fromEntries(req.headers), body, event: JSON.parse(body), signal: init?.signal ?? null };
    seen.push(r);
    return receiver(r);
  });
  return seen;
}

export const workerEnv = env as unknown as Env;

/** Registers an endpoint the way the web console does. */
export async function addHook(accountId: string, url: string, events = "all") {
  return createWebhook(env.DB, { accountId, url, events, key: env.CONNECTOR_KEY, allowHttp: true });
}

/**
 * Runs the Worker's queue handler on one message, as the queue would deliver
 * it for the `attempts`th time; the result has each retry's delay (which
 * getQueueResult does not report).
 */
export async function consume(body: unknown, attempts: number, id = `msg-${attempts}`, e: Env = workerEnv) {
  const batch = createMessageBatch("taskgate-webhooks", [{ id, timestamp: new Date(), attempts, body }]);
  const delays = new Map<string, number | undefined>();
  for (const m of batch.messages) {
    const retry = m.retry.bind(m);
    m.retry = (options?: QueueRetryOptions) => {
      delays.set(m.id, options?.delaySeconds);
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await worker.queue!(batch as MessageBatch<unknown>, e, ctx);
  const result = await getQueueResult(batch, ctx);
  return { ...result, retryMessages: result.retryMessages.map((r) => ({ msgId: r.msgId, delaySeconds: delays.get(r.msgId) })) };
}

/** Runs the Worker's queue handler on one batch of first attempts, in the order given. */
export async function consumeBatch(bodies: unknown[], e: Env = workerEnv) {
  const batch = createMessageBatch("taskgate-webhooks", bodies.map((body, i) => ({ id: `msg-${i}`, timestamp: new Date(), attempts: 1, body })));
  const ctx = createExecutionContext();
  await worker.queue!(batch as MessageBatch<unknown>, e, ctx);
  return getQueueResult(batch, ctx);
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function deliveryRows(webhookId: string) {
  return (
    await env.DB.prepare("SELECT event_id, event_type, status, attempts, last_status, last_error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY created_at, rowid")
      .bind(webhookId)
      .all<{ event_id: string; event_type: string; status: string; attempts: number; last_status: number | null; last_error: string | null }>()
  ).results;
}

/**
 * Verifies a delivery as a receiver does with the `standardwebhooks` library:
 * the raw body and the request's headers; returns the parsed event or throws.
 */
export function verifyStandard(secret: string, r: Pick<Received, "headers" | "body">): unknown {
  return new Webhook(secret).verify(r.body, r.headers);
}
