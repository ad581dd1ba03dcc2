import { newEvent, type TaskgateEvent } from "../domain/events.ts";
import { named } from "../catalog/tool.ts";
import { batchByName } from "../db/batch.ts";
import { forgetFinishedStatement, noticeStatement, unannouncedStaleRuns } from "../db/stale-runs.ts";
import { staleRunMinutes } from "../domain/stale-runs.ts";
import type { Env } from "../env.ts";
import { enqueueEvents } from "./queue.ts";

/** Runs announced per cron run; the rest wait for the next minute. */
const PER_RUN = 200;

/**
 * The moment a run becomes stale (STALE_RUN_MINUTES without an event, the
 * rule fleet_status shows): one run.stale event per silence, enqueued after
 * the notices are written. Returns the events sent.
 */
export async function announceStaleRuns(env: Env, nowMs: number): Promise<TaskgateEvent<"run.stale">[]> {
  const db = env.DB;
  const minutes = staleRunMinutes(env);
  const now = new Date(nowMs).toISOString();
  const runs = await unannouncedStaleRuns(db, new Date(nowMs - minutes * 60_000).toISOString(), PER_RUN);
  const events = runs.map((r) =>
    newEvent("run.stale", r.account_id, now, {
      run: { id: r.id, task_id: r.task_id, agent: r.agent, started_at: r.started_at, last_event_at: r.last_event_at },
      task: { id: r.task_id, title: r.task_title },
      stale_after_minutes: minutes,
    }),
  );
  // Each notice is named by its event; a notice this run recorded returns a row.
  const { rows } = await batchByName(db, [...runs.map((r, i) => named(events[i].id, noticeStatement(db, r, events[i].id, now))), forgetFinishedStatement(db)]);
  const claimed = events.filter((e) => rows[e.id].length > 0);
  await enqueueEvents(env, claimed);
  return claimed;
}
