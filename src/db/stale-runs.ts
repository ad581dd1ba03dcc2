/**
 * Running runs that have gone silent, for the minute cron's run.stale event.
 * A run is announced once per silence: the notice keeps the last_event_at it
 * was stale at, so a run that logs again and falls silent again is announced
 * again, and two overlapping crons never announce the same silence twice.
 */
import { notMoving } from "./move-account.ts";

export interface StaleRun {
  id: string;
  account_id: string;
  task_id: string;
  task_title: string;
  agent: string;
  started_at: string;
  last_event_at: string;
}

/** Runs of live tasks with no event since `staleBefore` that have not been announced for this silence. */
export async function unannouncedStaleRuns(db: D1Database, staleBefore: string, limit: number): Promise<StaleRun[]> {
  const { results } = await db
    .prepare(
      `SELECT r.id, r.account_id, r.task_id, t.title AS task_title, g.name AS agent, r.started_at, r.last_event_at
         FROM runs r
         JOIN tasks t ON t.id = r.task_id AND t.account_id = r.account_id AND t.trash_id IS NULL
         JOIN agents g ON g.id = r.agent_id
         LEFT JOIN stale_run_notices n ON n.run_id = r.id
        WHERE r.status = 'running' AND r.last_event_at < ? AND (n.run_id IS NULL OR n.last_event_at <> r.last_event_at) AND ${notMoving("r.account_id")}
        ORDER BY r.last_event_at LIMIT ?`,
    )
    .bind(staleBefore, limit)
    .all<StaleRun>();
  return results;
}

/** Records the announcement; RETURNING yields a row only for the call that made it. */
export function noticeStatement(db: D1Database, run: StaleRun, eventId: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO stale_run_notices (run_id, account_id, last_event_at, event_id, notified_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (run_id) DO UPDATE SET last_event_at = excluded.last_event_at, event_id = excluded.event_id, notified_at = excluded.notified_at
        WHERE stale_run_notices.last_event_at <> excluded.last_event_at
       RETURNING run_id`,
    )
    .bind(run.id, run.account_id, run.last_event_at, eventId, now);
}

/** Notices of runs that are no longer running (finished, cancelled or purged). */
export function forgetFinishedStatement(db: D1Database): D1PreparedStatement {
  return db.prepare(`DELETE FROM stale_run_notices WHERE run_id NOT IN (SELECT id FROM runs WHERE status = 'running') AND ${notMoving()}`);
}
