import { claimLapsedEvent, eventTask, type TaskgateEvent } from "../domain/events.ts";
import { named } from "../catalog/tool.ts";
import { batchByName } from "../db/batch.ts";
import { noticeLapse, unannouncedLapses } from "../db/claims.ts";
import type { Env } from "../env.ts";
import { enqueueEvents } from "./queue.ts";

/** Lapses announced per cron run; the rest wait for the next minute. */
const PER_RUN = 200;

/**
 * The moment an agent's claim lease runs out with nobody taking the task over:
 * one claim.lapsed event per lapse (a take-over that comes first sends it
 * itself, and the notice keeps either from sending it twice). Returns the events sent.
 */
export async function announceLapsedClaims(env: Env, nowMs: number): Promise<TaskgateEvent<"claim.lapsed">[]> {
  const db = env.DB;
  const now = new Date(nowMs).toISOString();
  const lapses = await unannouncedLapses(db, now, PER_RUN);
  if (lapses.length === 0) return [];
  const events = lapses.map((t) =>
    claimLapsedEvent(t.account_id, now, {
      task: eventTask(t),
      holder: t.assignee,
      lease_expired_at: t.claim_expires_at,
      taken_over_by: null,
      stale_run_id: null,
    }),
  );
  // Each notice is named by its event; a notice this run recorded returns a row (an announced lapse returns none).
  const { rows } = await batchByName(
    db,
    lapses.map((t, i) => named(events[i].id, noticeLapse(db, { taskId: t.id, accountId: t.account_id, expiredAt: t.claim_expires_at, eventId: events[i].id, now }))),
  );
  const sent = events.filter((e) => rows[e.id].length > 0);
  await enqueueEvents(env, sent);
  return sent;
}
