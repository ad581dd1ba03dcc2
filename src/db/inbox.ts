import { PENDING_TASK_IDS, selectPendingNewestFirst, type PendingApprovalRow } from "./approvals.ts";
import { readBatch } from "./batch.ts";
import { frameOf, frameStatements, type Frame } from "./console.ts";

/**
 * The person's inbox in one round trip: the pending approvals of live tasks
 * (newest first) and, for each task, its runs (the latest `runsPerTask`,
 * whoever ran them) with the tail of each run's event log, and its latest
 * comments. Long texts come cut to `clip`
 * characters plus one, so the page can mark what it shortened.
 */
export interface InboxRun {
  id: string;
  task_id: string;
  agent: string;
  status: string;
  summary: string | null;
  started_at: string;
  finished_at: string | null;
  event_count: number;
  /** All the runs of its task, shown or not. */
  run_total: number;
}

export interface InboxEvent {
  run_id: string;
  id: string;
  kind: string;
  message: string;
  url: string | null;
  created_at: string;
}

export interface InboxComment {
  task_id: string;
  id: string;
  author: string;
  body: string;
  created_at: string;
}

export interface Inbox extends Frame {
  approvals: PendingApprovalRow[];
  runs: InboxRun[];
  events: InboxEvent[];
  comments: InboxComment[];
}

export interface InboxLimits {
  approvals: number;
  offset: number;
  runsPerTask: number;
  eventsPerRun: number;
  commentsPerTask: number;
  clip: number;
}

/** The latest ?6 runs of each task of the page. Binds: ?1 account, ?2 limit, ?4 clip, ?5 offset, ?6 runs a task. */
const TASK_RUNS = `SELECT id, task_id, agent, status, summary, started_at, finished_at, run_total FROM (
    SELECT r.id, r.task_id, g.name AS agent, r.status, substr(r.summary, 1, ?4) AS summary, r.started_at, r.finished_at,
           row_number() OVER (PARTITION BY r.task_id ORDER BY r.started_at DESC, r.id DESC) AS n,
           count(*) OVER (PARTITION BY r.task_id) AS run_total
      FROM runs r JOIN agents g ON g.id = r.agent_id
     WHERE r.account_id = ?1 AND r.task_id IN (${PENDING_TASK_IDS}))
  WHERE n <= ?6`;

export async function readInbox(db: D1Database, accountId: string, l: InboxLimits): Promise<Inbox> {
  const clip = l.clip + 1;
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    approvals: selectPendingNewestFirst(db, accountId, l.approvals, l.offset, clip),
    runs: db
      .prepare(
        `WITH shown AS (${TASK_RUNS})
         SELECT shown.*, (SELECT count(*) FROM run_events e WHERE e.run_id = shown.id AND e.account_id = ?1) AS event_count
           FROM shown ORDER BY task_id, started_at DESC, id DESC`,
      )
      .bind(accountId, l.approvals, 0, clip, l.offset, l.runsPerTask),
    events: db
      .prepare(
        `WITH shown AS (${TASK_RUNS})
         SELECT run_id, id, kind, message, url, created_at FROM (
           SELECT e.run_id, e.id, e.kind, substr(e.message, 1, ?4) AS message, e.url, e.created_at,
                  row_number() OVER (PARTITION BY e.run_id ORDER BY e.created_at DESC, e.id DESC) AS n
             FROM run_events e WHERE e.account_id = ?1 AND e.run_id IN (SELECT id FROM shown))
          WHERE n <= ?3 ORDER BY run_id, created_at, id`,
      )
      .bind(accountId, l.approvals, l.eventsPerRun, clip, l.offset, l.runsPerTask),
    comments: db
      .prepare(
        `SELECT task_id, id, author, body, created_at FROM (
           SELECT c.task_id, c.id, c.author, substr(c.body, 1, ?4) AS body, c.created_at,
                  row_number() OVER (PARTITION BY c.task_id ORDER BY c.created_at DESC, c.id DESC) AS n
             FROM comments c WHERE c.account_id = ?1 AND c.trash_id IS NULL AND c.task_id IN (${PENDING_TASK_IDS}))
          WHERE n <= ?3 ORDER BY task_id, created_at DESC, id DESC`,
      )
      .bind(accountId, l.approvals, l.commentsPerTask, clip, l.offset),
  });
  return {
    ...frameOf(r, accountId),
    approvals: r.approvals as PendingApprovalRow[],
    runs: r.runs as InboxRun[],
    events: r.events as InboxEvent[],
    comments: r.comments as InboxComment[],
  };
}
