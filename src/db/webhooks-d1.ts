/**
 * Webhook endpoints over the Worker's D1: the operations the web console
 * calls (createWebhook, listWebhooks, removeWebhook; the admin CLI runs the
 * same statements through wrangler) and the reads and writes of the consumer.
 * The statements themselves, without D1 types, are src/db/webhooks.ts.
 */
import type { EventType } from "../domain/events.ts";
import {
  planWebhook, toSummary, webhookSql, type DeliveryRow, type WebhookRequest, type WebhookSummary, type WebhookTarget,
} from "./webhooks.ts";
import type { Sql } from "./provisioning.ts";
import { insertIdempotentForWebhook, type IdempotencyScope } from "./idempotency.ts";
import { WEBHOOK_LIMIT_REACHED, WebhookInputError } from "../domain/webhooks.ts";

export {
  openSecret, planWebhook, secretContext, toSummary, webhookSql,
  type DeliveryRow, type DeliveryStatus, type PlannedWebhook, type WebhookRequest, type WebhookSummary, type WebhookTarget,
} from "./webhooks.ts";
import { batchByName, readBatch } from "./batch.ts";
import { named } from "../catalog/tool.ts";

const bind = (db: D1Database, s: Sql) => db.prepare(s.sql).bind(...s.params);

/**
 * Registers an endpoint for the account; returns it and its secret (shown
 * once). With `once` (a form's one-time key), the batch records that key too
 * and fails on it when the same form was sent before.
 */
export async function createWebhook(db: D1Database, req: WebhookRequest, once?: IdempotencyScope): Promise<{ webhook: WebhookSummary; secret: string }> {
  const exists = await db.prepare("SELECT 1 AS ok FROM accounts WHERE id = ?").bind(req.accountId).first();
  if (!exists) throw new WebhookInputError(`account: no account ${req.accountId}`);
  const now = new Date().toISOString();
  const plan = await planWebhook(req, now);
  const statements = plan.statements.map((s) => bind(db, s));
  if (once) statements.push(insertIdempotentForWebhook(db, once, plan.webhook.id, now));
  const [inserted] = await db.batch(statements);
  if (!inserted.meta.changes) throw new WebhookInputError(WEBHOOK_LIMIT_REACHED);
  return { webhook: plan.webhook, secret: plan.secret };
}

/** The account's endpoints with their delivery counts and latest failure; never a secret. */
export async function listWebhooks(db: D1Database, accountId: string): Promise<WebhookSummary[]> {
  const { results } = await bind(db, webhookSql.list(accountId)).all<Parameters<typeof toSummary>[0]>();
  return results.map(toSummary);
}

/** Removes an endpoint of the account and its delivery records; false when there was none. */
export async function removeWebhook(db: D1Database, accountId: string, id: string): Promise<boolean> {
  const [deliveries, webhook] = webhookSql.remove(accountId, id);
  const { changes } = await batchByName(db, [bind(db, deliveries), named("webhook", bind(db, webhook))]);
  return changes.webhook > 0;
}

export async function subscribersOf(db: D1Database, accountId: string, type: EventType, happenedAt: string, eventId: string) {
  const { targets, deliveries, account } = await readBatch(db, {
    targets: bind(db, webhookSql.subscribers(accountId, type, happenedAt)),
    deliveries: bind(db, webhookSql.deliveriesOf(accountId, eventId)),
    account: db.prepare("SELECT moving_to FROM accounts WHERE id = ?").bind(accountId),
  });
  return {
    targets: targets as unknown as WebhookTarget[],
    deliveries: deliveries as unknown as DeliveryRow[],
    /** The account is moving to another database: its delivery records cannot be written until it has moved. */
    moving: Boolean((account[0] as { moving_to: string | null } | undefined)?.moving_to),
  };
}

export async function recordDeliveries(db: D1Database, records: Parameters<typeof webhookSql.record>[0][]): Promise<void> {
  if (records.length) await db.batch(records.map((r) => bind(db, webhookSql.record(r))));
}

export async function purgeFinishedDeliveries(db: D1Database, before: string): Promise<number> {
  const r = await bind(db, webhookSql.purgeFinished(before)).run();
  return r.meta.changes ?? 0;
}
