import {
  PENDING_APPROVAL_COLUMNS, PENDING_TASK_IDS, pendingPageSql, selectPendingNewestFirst, toApproval, type Approval, type ApprovalRow, type PendingApprovalRow, type PendingPage,
} from "./approvals.ts";
import { readBatch } from "./batch.ts";
import { selectOpenActionsNewestFirst, type PendingActionWithTask } from "./pending-actions.ts";

/** How many pending actions the inbox's first page shows (each has its own page). */
const INBOX_ACTIONS = 20;
import { frameOf, frameStatements, type Frame } from "./console.ts";
import type { RunEventKind, RunStatus } from "./runs.ts";

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
  status: RunStatus;
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
  kind: RunEventKind;
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
  /** Pending actions waiting for the person, newest first (the first page only). */
  actions: PendingActionWithTask[];
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
    actions: selectOpenActionsNewestFirst(db, accountId, new Date().toISOString(), l.offset === 0 ? INBOX_ACTIONS : 0),
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
    approvals: (r.approvals as ApprovalRow<PendingApprovalRow>[]).map(toApproval) as PendingApprovalRow[],
    actions: r.actions as PendingActionWithTask[],
    runs: r.runs as InboxRun[],
    events: r.events as InboxEvent[],
    comments: r.comments as InboxComment[],
  };
}

/** The latest run of a pending approval's task, with the tail of its event log. */
export interface ApprovalRun {
  id: string;
  task_id: string;
  agent: string;
  status: RunStatus;
  summary: string | null;
  started_at: string;
  events: { kind: RunEventKind; message: string; created_at: string }[];
}

export interface ApprovalComment {
  task_id: string;
  author: string;
  body: string;
  created_at: string;
}

export interface PendingWithContext {
  /** limit + 1 rows, oldest first (the caller pages them). */
  approvals: Approval[];
  runs: Map<string, ApprovalRun>;
  comments: Map<string, ApprovalComment>;
}

/**
 * A page of pending approvals with what the inbox shows beside each (the
 * latest run of its task and the tail of that run's log, the latest comment),
 * in one round trip. Texts come cut to `clip` characters plus one, so the
 * reader can mark what it shortened.
 */
export async function readPendingWithContext(
  db: D1Database,
  accountId: string,
  opts: PendingPage,
  l: { eventsPerRun: number; clip: number },
  /** Another read of the same page in the same round trip (the pending actions beside the approvals): its rows come back as `also`. */
  also?: D1PreparedStatement,
): Promise<PendingWithContext & { also: unknown[] }> {
  const clip = l.clip + 1;
  const page = pendingPageSql(accountId, opts, PENDING_APPROVAL_COLUMNS);
  const ids = pendingPageSql(accountId, opts, "a.task_id");
  const latestRuns = `SELECT id, task_id, agent, status, summary, started_at FROM (
      SELECT r.id, r.task_id, g.name AS agent, r.status, substr(r.summary, 1, ?) AS summary, r.started_at,
             row_number() OVER (PARTITION BY r.task_id ORDER BY r.started_at DESC, r.id DESC) AS n
        FROM runs r JOIN agents g ON g.id = r.agent_id
       WHERE r.account_id = ? AND r.task_id IN (${ids.sql})) WHERE n = 1`;
  const runBinds = [clip, accountId, ...ids.binds];
  const r = await readBatch(db, {
    approvals: db.prepare(page.sql).bind(...page.binds),
    runs: db.prepare(latestRuns).bind(...runBinds),
    events: db
      .prepare(
        `SELECT run_id, kind, message, created_at FROM (
           SELECT e.run_id, e.id, e.kind, substr(e.message, 1, ?) AS message, e.created_at,
                  row_number() OVER (PARTITION BY e.run_id ORDER BY e.created_at DESC, e.id DESC) AS n
             FROM run_events e WHERE e.account_id = ? AND e.run_id IN (SELECT id FROM (${latestRuns})))
          WHERE n <= ? ORDER BY run_id, created_at, id`,
      )
      .bind(clip, accountId, ...runBinds, l.eventsPerRun),
    comments: db
      .prepare(
        // Each task's latest comment through comments_task, one task at a time (never the account-wide trash index).
        `SELECT c.task_id, c.author, substr(c.body, 1, ?) AS body, c.created_at FROM comments c
          WHERE c.id IN (SELECT (SELECT k.id FROM comments k WHERE k.task_id = p.task_id AND k.account_id = ? AND k.trash_id IS NULL
                                  ORDER BY k.created_at DESC, k.id DESC LIMIT 1)
                           FROM (${ids.sql}) p)`,
      )
      .bind(clip, accountId, ...ids.binds),
    ...((also ? { also } : {}) as { also: D1PreparedStatement }),
  });
  const runs = new Map<string, ApprovalRun>();
  for (const run of r.runs as Omit<ApprovalRun, "events">[]) runs.set(run.task_id, { ...run, events: [] });
  const byRun = new Map([...runs.values()].map((run) => [run.id, run]));
  for (const e of r.events as { run_id: string; kind: RunEventKind; message: string; created_at: string }[]) {
    byRun.get(e.run_id)?.events.push({ kind: e.kind, message: e.message, created_at: e.created_at });
  }
  const comments = new Map((r.comments as ApprovalComment[]).map((c) => [c.task_id, c]));
  return { approvals: (r.approvals as ApprovalRow[]).map(toApproval) as Approval[], runs, comments, also: r.also ?? [] };
}
