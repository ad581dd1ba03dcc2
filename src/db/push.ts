/**
 * Web Push devices on D1: the Settings page adds, lists, changes and removes a
 * person's devices; the queue consumer reads the devices of an event's account,
 * records each delivery (a device gets an event once, however often the
 * message comes back) and removes devices the push service calls gone.
 */
import { DEVICES_PER_PERSON, type PushEvent } from "../domain/push.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";

export interface PushDevice {
  id: string;
  label: string;
  events: PushEvent[];
  created_at: string;
  last_delivered_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
}

/** A device with what sending to it needs. */
export interface PushTarget {
  id: string;
  account_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  origin: string;
}

interface DeviceRow extends Omit<PushDevice, "events"> {
  events: string;
}

const toDevice = (r: DeviceRow): PushDevice => ({ ...r, events: r.events.split(",").filter(Boolean) as PushEvent[] });

export interface NewDevice {
  accountId: string;
  personId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  origin: string;
  label: string;
  events: PushEvent[];
}

/**
 * Adds the device, or renews it when this browser subscribed before (same
 * endpoint: new keys, same choices). False when the person already has
 * DEVICES_PER_PERSON devices.
 */
export async function savePushDevice(db: D1Database, d: NewDevice, now: string): Promise<{ id: string } | null> {
  const id = newId(ID_PREFIX.pushSubscription);
  const row = await db
    .prepare(
      `INSERT INTO push_subscriptions (id, account_id, person_id, endpoint, p256dh, auth, origin, label, events, created_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
        WHERE (SELECT count(*) FROM push_subscriptions WHERE person_id = ?) < ?
           OR EXISTS (SELECT 1 FROM push_subscriptions WHERE endpoint = ? AND person_id = ?)
       ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth, origin = excluded.origin,
         last_failure_at = NULL, last_error = NULL
        WHERE push_subscriptions.person_id = excluded.person_id
       RETURNING id`,
    )
    .bind(id, d.accountId, d.personId, d.endpoint, d.p256dh, d.auth, d.origin, d.label, d.events.join(","), now,
      d.personId, DEVICES_PER_PERSON, d.endpoint, d.personId)
    .first<{ id: string }>();
  return row ?? null;
}

/** The person's devices, oldest first; never an endpoint or a key. */
export async function listPushDevices(db: D1Database, personId: string): Promise<PushDevice[]> {
  const { results } = await db
    .prepare(
      `SELECT id, label, events, created_at, last_delivered_at, last_failure_at, last_error FROM push_subscriptions
        WHERE person_id = ? ORDER BY created_at, id`,
    )
    .bind(personId)
    .all<DeviceRow>();
  return results.map(toDevice);
}

export async function setPushDeviceEvents(db: D1Database, personId: string, id: string, events: PushEvent[]): Promise<boolean> {
  const r = await db.prepare("UPDATE push_subscriptions SET events = ? WHERE id = ? AND person_id = ?").bind(events.join(","), id, personId).run();
  return (r.meta.changes ?? 0) > 0;
}

/** Removes one of the person's devices and its delivery records (one batch); false when there was none. */
export async function removePushDevice(db: D1Database, personId: string, id: string): Promise<boolean> {
  const [, removed] = await db.batch([
    db.prepare("DELETE FROM push_deliveries WHERE subscription_id IN (SELECT id FROM push_subscriptions WHERE id = ? AND person_id = ?)").bind(id, personId),
    db.prepare("DELETE FROM push_subscriptions WHERE id = ? AND person_id = ?").bind(id, personId),
  ]);
  return (removed.meta.changes ?? 0) > 0;
}

/** The account's devices that chose the event and have not had it yet (one batch). */
export async function pushTargetsOf(db: D1Database, accountId: string, type: PushEvent, eventId: string): Promise<PushTarget[]> {
  const { results } = await db
    .prepare(
      `SELECT s.id, s.account_id, s.endpoint, s.p256dh, s.auth, s.origin FROM push_subscriptions s
        WHERE s.account_id = ? AND instr(',' || s.events || ',', ',' || ? || ',') > 0
          AND NOT EXISTS (SELECT 1 FROM push_deliveries d WHERE d.subscription_id = s.id AND d.event_id = ?)
        ORDER BY s.created_at, s.id`,
    )
    .bind(accountId, type, eventId)
    .all<PushTarget>();
  return results;
}

export interface PushOutcome {
  target: PushTarget;
  /**
   * delivered; gone (404/410: removed); failed (kept, retried); refused (the endpoint is not on a browser push
   * service: never fetched, kept with the reason as its last failure, not retried).
   */
  result: "delivered" | "gone" | "failed" | "refused";
  error: string | null;
}

/** Every outcome of one message as one batch. */
export async function recordPushOutcomes(db: D1Database, eventId: string, outcomes: PushOutcome[], now: string): Promise<void> {
  if (outcomes.length === 0) return;
  const statements: D1PreparedStatement[] = [];
  for (const o of outcomes) {
    if (o.result === "delivered") {
      statements.push(
        db.prepare("INSERT OR IGNORE INTO push_deliveries (subscription_id, event_id, account_id, delivered_at) VALUES (?, ?, ?, ?)").bind(o.target.id, eventId, o.target.account_id, now),
        db.prepare("UPDATE push_subscriptions SET last_delivered_at = ? WHERE id = ?").bind(now, o.target.id),
      );
    } else if (o.result === "gone") {
      statements.push(
        db.prepare("DELETE FROM push_deliveries WHERE subscription_id = ?").bind(o.target.id),
        db.prepare("DELETE FROM push_subscriptions WHERE id = ?").bind(o.target.id),
      );
    } else {
      statements.push(db.prepare("UPDATE push_subscriptions SET last_failure_at = ?, last_error = ? WHERE id = ?").bind(now, o.error, o.target.id));
    }
  }
  await db.batch(statements);
}

/** Delivery records older than `before` (the daily cron keeps 30 days, as for webhooks). */
export async function purgePushDeliveries(db: D1Database, before: string): Promise<number> {
  const r = await db.prepare("DELETE FROM push_deliveries WHERE delivered_at < ?").bind(before).run();
  return r.meta.changes ?? 0;
}
