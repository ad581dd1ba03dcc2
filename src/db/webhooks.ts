/**
 * Every SQL statement about webhook endpoints and their deliveries, as plain
 * Sql values (no D1 types), so that the Worker binds them and the admin CLI
 * renders them for wrangler from one source; src/db/webhooks-d1.ts has the
 * operations over the Worker's D1. The secret column only ever holds an AES-GCM envelope; the
 * secret itself exists in clear only in planWebhook's result, shown once.
 */
import { notMoving } from "./move-account.ts";
import type { Sql } from "./provisioning.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import type { EventType } from "../domain/events.ts";
import { checkWebhookUrl, newWebhookSecret, parseEventTypes, secretPrefix, WEBHOOKS_PER_ACCOUNT, type EventSelection } from "../domain/webhooks.ts";
import { importConnectorKey, openText, sealText } from "../domain/crypto.ts";

export type DeliveryStatus = "pending" | "delivered" | "failed";

/** An endpoint as lists show it: never its secret. */
export interface WebhookSummary {
  id: string;
  url: string;
  /** `all` (every event, those added later too) or the types named. */
  events: EventSelection;
  secret_prefix: string;
  created_at: string;
  deliveries: { delivered: number; pending: number; failed: number };
  /** The latest delivery that went wrong: failed for good, or still `retrying` after a failed attempt. */
  last_failure: { event_id: string; event_type: string; attempts: number; last_error: string | null; at: string; retrying: boolean } | null;
}

export interface SummaryRow {
  id: string;
  url: string;
  events: string;
  secret_prefix: string;
  created_at: string;
  delivered: number;
  pending: number;
  failed: number;
  last_failure: string | null;
}

/** An endpoint with what delivering to it needs (the sealed secret). */
export interface WebhookTarget {
  id: string;
  account_id: string;
  url: string;
  secret: string;
}

export interface DeliveryRow {
  webhook_id: string;
  status: DeliveryStatus;
  attempts: number;
}

/** The additional data a secret is sealed with: its account and webhook. */
export const secretContext = (accountId: string, webhookId: string) => `taskgate/webhook/v1/${accountId}/${webhookId}`;

const count = (status: DeliveryStatus) =>
  `(SELECT count(*) FROM webhook_deliveries d WHERE d.webhook_id = w.id AND d.status = '${status}') AS ${status}`;

/**
 * The events column: `all` for every event (matched by no list, so an event
 * type a later version adds reaches the endpoint too), else the types
 * separated by commas.
 */
const storedEvents = (events: EventSelection) => (events === "all" ? "all" : events.join(","));
const readEvents = (column: string): EventSelection => (column === "all" ? "all" : (column.split(",") as EventType[]));

export const webhookSql = {
  insert(w: { id: string; accountId: string; url: string; events: EventSelection; envelope: string; prefix: string; now: string }): Sql {
    return {
      // Inserts nothing once the account has WEBHOOKS_PER_ACCOUNT endpoints (the caller checks the change count).
      sql: `INSERT INTO webhooks (id, account_id, url, events, secret, secret_prefix, created_at)
            SELECT ?, ?, ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM webhooks WHERE account_id = ?) < ?`,
      params: [w.id, w.accountId, w.url, storedEvents(w.events), w.envelope, w.prefix, w.now, w.accountId, WEBHOOKS_PER_ACCOUNT],
    };
  },
  list(accountId: string): Sql {
    return {
      sql: `SELECT w.id, w.url, w.events, w.secret_prefix, w.created_at, ${count("delivered")}, ${count("pending")}, ${count("failed")},
              (SELECT json_object('event_id', d.event_id, 'event_type', d.event_type, 'attempts', d.attempts, 'last_error', d.last_error, 'at', d.updated_at,
                                  'retrying', json(CASE d.status WHEN 'pending' THEN 'true' ELSE 'false' END))
                 FROM webhook_deliveries d WHERE d.webhook_id = w.id AND (d.status = 'failed' OR (d.status = 'pending' AND d.attempts > 0))
                ORDER BY d.updated_at DESC LIMIT 1) AS last_failure
              FROM webhooks w WHERE w.account_id = ? ORDER BY w.created_at, w.id`,
      params: [accountId],
    };
  },
  /** The endpoint's account (to check an id before removing it). */
  find(id: string): Sql {
    return { sql: "SELECT id, account_id FROM webhooks WHERE id = ?", params: [id] };
  },
  /** Removing an endpoint removes its delivery records. */
  remove(accountId: string, id: string): Sql[] {
    return [
      { sql: "DELETE FROM webhook_deliveries WHERE account_id = ? AND webhook_id = ?", params: [accountId, id] },
      { sql: "DELETE FROM webhooks WHERE account_id = ? AND id = ?", params: [accountId, id] },
    ];
  },
  /** Endpoints of the account subscribed to the event (to all events, or to its type by name), registered no later than it happened. */
  subscribers(accountId: string, type: EventType, happenedAt: string): Sql {
    return {
      sql: `SELECT id, account_id, url, secret FROM webhooks
             WHERE account_id = ? AND created_at <= ? AND (events = 'all' OR instr(',' || events || ',', ',' || ? || ',') > 0) ORDER BY created_at, id`,
      params: [accountId, happenedAt, type],
    };
  },
  deliveriesOf(accountId: string, eventId: string): Sql {
    return {
      sql: "SELECT webhook_id, status, attempts FROM webhook_deliveries WHERE event_id = ? AND account_id = ?",
      params: [eventId, accountId],
    };
  },
  /** One attempt's outcome; a delivery already delivered or failed is left alone. */
  record(d: {
    accountId: string;
    webhookId: string;
    eventId: string;
    eventType: string;
    status: DeliveryStatus;
    httpStatus: number | null;
    error: string | null;
    now: string;
  }): Sql {
    return {
      sql: `INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, event_type, status, attempts, last_status, last_error, created_at, updated_at, delivered_at)
            VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)
            ON CONFLICT (webhook_id, event_id) DO UPDATE SET
              status = excluded.status, attempts = webhook_deliveries.attempts + 1, last_status = excluded.last_status,
              last_error = excluded.last_error, updated_at = excluded.updated_at, delivered_at = excluded.delivered_at
            WHERE webhook_deliveries.status = 'pending'`,
      params: [
        newId(ID_PREFIX.delivery), d.accountId, d.webhookId, d.eventId, d.eventType, d.status, d.httpStatus, d.error,
        d.now, d.now, d.status === "delivered" ? d.now : null,
      ],
    };
  },
  /** Finished delivery records older than `before` (the daily cron keeps 30 days). */
  purgeFinished(before: string): Sql {
    return { sql: `DELETE FROM webhook_deliveries WHERE created_at < ? AND status <> 'pending' AND ${notMoving()}`, params: [before] };
  },
};

export function toSummary(r: SummaryRow): WebhookSummary {
  return {
    id: r.id,
    url: r.url,
    events: readEvents(r.events),
    secret_prefix: r.secret_prefix,
    created_at: r.created_at,
    deliveries: { delivered: r.delivered, pending: r.pending, failed: r.failed },
    last_failure: r.last_failure ? (JSON.parse(r.last_failure) as WebhookSummary["last_failure"]) : null,
  };
}

export interface WebhookRequest {
  accountId: string;
  url: string;
  /** Comma-separated event types, or `all`. */
  events: string;
  /** CONNECTOR_KEY (base64 of 32 bytes): the secret is stored sealed under it. */
  key: string | undefined;
  /** Accept http:// (local development only). */
  allowHttp: boolean;
}

export interface PlannedWebhook {
  webhook: WebhookSummary;
  /** The signing secret, in clear: show it once and forget it. */
  secret: string;
  statements: Sql[];
}

/** A new endpoint, checked, with its secret made and sealed. Throws WebhookInputError naming the field. */
export async function planWebhook(req: WebhookRequest, now: string): Promise<PlannedWebhook> {
  const url = checkWebhookUrl(req.url, req.allowHttp);
  const events = parseEventTypes(req.events);
  const key = await importConnectorKey(req.key);
  const id = newId(ID_PREFIX.webhook);
  const secret = newWebhookSecret();
  const envelope = await sealText(key, secretContext(req.accountId, id), secret);
  const prefix = secretPrefix(secret);
  return {
    webhook: { id, url, events, secret_prefix: prefix, created_at: now, deliveries: { delivered: 0, pending: 0, failed: 0 }, last_failure: null },
    secret,
    statements: [webhookSql.insert({ id, accountId: req.accountId, url, events, envelope, prefix, now })],
  };
}

/** The signing secret of an endpoint, opened. */
export async function openSecret(key: CryptoKey, target: WebhookTarget): Promise<string> {
  return openText(key, secretContext(target.account_id, target.id), target.secret);
}
