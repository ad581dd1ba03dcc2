import type { Condition } from "../catalog/tool.ts";
import { notFound } from "../domain/errors.ts";
import type { CursorKey } from "./cursor.ts";
import { STARTED_RUN, STARTED_RUN_PROGRESS } from "./summaries.ts";
import { readBatch } from "./batch.ts";

export const RUN_STATUSES = ["running", "succeeded", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const RUN_EVENT_KINDS = ["progress", "note", "artifact"] as const;
export type RunEventKind = (typeof RUN_EVENT_KINDS)[number];

/** A run as the tools show it: its task's title and its agent's name joined in. */
export interface Run {
  id: string;
  task_id: string;
  task_title: string;
  agent: string;
  status: RunStatus;
  summary: string | null;
  started_at: string;
  finished_at: string | null;
  last_event_at: string;
}

export interface RunRow extends Run {
  agent_id: string;
}

export interface RunEvent {
  id: string;
  kind: RunEventKind;
  message: string;
  url: string | null;
  created_at: string;
}

/** `r` runs, `t` its live task, `g` its agent. */
export const RUN_COLUMNS =
  "r.id, r.task_id, t.title AS task_title, g.name AS agent, r.status, r.summary, r.started_at, r.finished_at, r.last_event_at";

export const RUNS_FROM =
  "FROM runs r JOIN tasks t ON t.id = r.task_id AND t.account_id = r.account_id AND t.trash_id IS NULL JOIN agents g ON g.id = r.agent_id";

export function toRun(r: Run): Run {
  return {
    id: r.id, task_id: r.task_id, task_title: r.task_title, agent: r.agent, status: r.status, summary: r.summary,
    started_at: r.started_at, finished_at: r.finished_at, last_event_at: r.last_event_at,
  };
}

const RUN_HINT = "list_runs finds run ids (by task, agent or status)";

/** A run of a live task in this account, or not found. */
export async function requireRun(db: D1Database, accountId: string, id: string): Promise<RunRow> {
  const row = await db
    .prepare(`SELECT ${RUN_COLUMNS}, r.agent_id ${RUNS_FROM} WHERE r.id = ? AND r.account_id = ?`)
    .bind(id, accountId)
    .first<RunRow>();
  if (!row) throw notFound("run", id, RUN_HINT);
  return row;
}

/** A run with its latest `max` events (returned oldest first) and how many events it has: one round trip. */
export async function runWithEvents(
  db: D1Database,
  accountId: string,
  id: string,
  max: number,
): Promise<{ run: Run; events: RunEvent[]; count: number }> {
  const { run, events, count } = await readBatch(db, {
    run: db.prepare(`SELECT ${RUN_COLUMNS} ${RUNS_FROM} WHERE r.id = ? AND r.account_id = ?`).bind(id, accountId),
    events: db
      .prepare(
        `SELECT * FROM (SELECT id, kind, message, url, created_at FROM run_events WHERE run_id = ? AND account_id = ?
           ORDER BY created_at DESC, id DESC LIMIT ?) ORDER BY created_at, id`,
      )
      .bind(id, accountId, max),
    count: db.prepare("SELECT count(*) AS n FROM run_events WHERE run_id = ? AND account_id = ?").bind(id, accountId),
  });
  const row = run[0] as Run | undefined;
  if (!row) throw notFound("run", id, RUN_HINT);
  return { run: toRun(row), events: events as RunEvent[], count: (count[0] as { n: number }).n };
}

export interface RunFilter {
  taskId?: string;
  agent?: string;
  statuses?: RunStatus[];
  after: CursorKey | null;
  limit: number;
}

/** Runs of live tasks, newest first, filtered; fetches limit + 1. */
/** One row when the task is live in the account (none for null). */
export function selectLiveTaskExists(db: D1Database, accountId: string, taskId: string | null): D1PreparedStatement {
  return db.prepare("SELECT 1 AS ok FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(taskId, accountId);
}

/** One row when the account has an agent of this name (none for null). */
export function selectAgentExists(db: D1Database, accountId: string, name: string | null): D1PreparedStatement {
  return db.prepare("SELECT 1 AS ok FROM agents WHERE name = ? AND account_id = ?").bind(name, accountId);
}

export function selectRuns(db: D1Database, accountId: string, f: RunFilter): D1PreparedStatement {
  const where = ["r.account_id = ?"];
  const binds: unknown[] = [accountId];
  if (f.taskId) (where.push("r.task_id = ?"), binds.push(f.taskId));
  if (f.agent) (where.push("r.agent_id = (SELECT id FROM agents WHERE account_id = ? AND name = ?)"), binds.push(accountId, f.agent));
  if (f.statuses) (where.push(`r.status IN (${f.statuses.map(() => "?").join(", ")})`), binds.push(...f.statuses));
  if (f.after) (where.push("(r.started_at < ? OR (r.started_at = ? AND r.id < ?))"), binds.push(f.after.k, f.after.k, f.after.id));
  return db
    .prepare(`SELECT ${RUN_COLUMNS} ${RUNS_FROM} WHERE ${where.join(" AND ")} ORDER BY r.started_at DESC, r.id DESC LIMIT ?`)
    .bind(...binds, f.limit + 1);
}

export function insertRun(
  db: D1Database,
  r: { id: string; accountId: string; taskId: string; agentId: string; now: string },
): D1PreparedStatement {
  return db
    .prepare("INSERT INTO runs (id, account_id, task_id, agent_id, status, started_at, last_event_at) VALUES (?, ?, ?, ?, 'running', ?, ?)")
    .bind(r.id, r.accountId, r.taskId, r.agentId, r.now, r.now);
}

/** Appends an event and stamps the run's last_event_at: both go in the same batch. */
export function appendEvent(
  db: D1Database,
  accountId: string,
  runId: string,
  e: RunEvent,
): D1PreparedStatement[] {
  return [
    db
      .prepare("INSERT INTO run_events (id, account_id, run_id, kind, message, url, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .bind(e.id, accountId, runId, e.kind, e.message, e.url, e.created_at),
    db.prepare("UPDATE runs SET last_event_at = ? WHERE id = ? AND account_id = ?").bind(e.created_at, runId, accountId),
  ];
}

/** Ends a running run (succeeded, failed or cancelled). */
export function endRun(
  db: D1Database,
  accountId: string,
  runId: string,
  status: Exclude<RunStatus, "running">,
  summary: string | null,
  now: string,
): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE runs SET status = ?, summary = ?, finished_at = ?, last_event_at = ? WHERE id = ? AND account_id = ? AND status = 'running'",
    )
    .bind(status, summary, now, now, runId, accountId);
}

const END_RUNNING = "UPDATE runs SET status = 'cancelled', summary = ?1, finished_at = ?2, last_event_at = ?2 WHERE account_id = ?3 AND status = 'running'";

/**
 * Ends the task's running runs as cancelled, with why in the summary, in the
 * batch of the change that ends the work or gives it to someone else (done,
 * reassigned, taken over): no run stays running for work that is over.
 * `keep` names the agent whose runs go on (the new holder); `onlyIf` is an
 * SQL condition over the task row (`t`, no binds) under which they end.
 */
export function endTaskRuns(
  db: D1Database,
  accountId: string,
  taskId: string,
  reason: string,
  now: string,
  opts: { keep?: string | null; onlyIf?: string } = {},
): D1PreparedStatement {
  const when = opts.onlyIf ? ` AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = ?4 AND t.account_id = ?3 AND (${opts.onlyIf}))` : "";
  return db
    .prepare(`${END_RUNNING} AND task_id = ?4 AND (?5 IS NULL OR agent_id IS NOT (SELECT id FROM agents WHERE account_id = ?3 AND name = ?5))${when}`)
    .bind(reason, now, accountId, taskId, opts.keep ?? null);
}

/** endTaskRuns for every task a trash item holds (a deleted task and its subtasks, or a deleted project's tasks). */
export function endTrashedRuns(db: D1Database, accountId: string, trashId: string, reason: string, now: string): D1PreparedStatement {
  return db
    .prepare(`${END_RUNNING} AND task_id IN (SELECT id FROM tasks WHERE account_id = ?3 AND trash_id = ?4)`)
    .bind(reason, now, accountId, trashId);
}

/** Guard: the task is live and not done or cancelled. */
export function taskIsWorkable(c: { taskId: string; accountId: string }): Condition {
  return {
    sql: "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL AND status NOT IN ('done', 'cancelled'))",
    binds: [c.taskId, c.accountId],
  };
}

/** Moves an open task to in_progress (and nothing else). */
export function startTask(db: D1Database, accountId: string, taskId: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE tasks SET status = 'in_progress', version = version + 1, updated_at = ? WHERE id = ? AND account_id = ? AND status = 'open' AND trash_id IS NULL",
    )
    .bind(now, taskId, accountId);
}

/** Guard: the run is this agent's, running, on a live task. */
export function ownRunIsRunning(c: { runId: string; accountId: string; agentId: string | null | undefined }): Condition {
  return {
    sql: `EXISTS (SELECT 1 FROM runs r JOIN tasks t ON t.id = r.task_id AND t.account_id = r.account_id AND t.trash_id IS NULL
    WHERE r.id = ? AND r.account_id = ? AND r.agent_id = ? AND r.status = 'running')`,
    binds: [c.runId, c.accountId, c.agentId],
  };
}

/** The run as the tools show it, at this point of the batch. */
export function selectRun(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`SELECT ${RUN_COLUMNS}, t.status AS task_status ${RUNS_FROM} WHERE r.id = ? AND r.account_id = ?`).bind(id, accountId);
}

/** The task of a run, for the activity row. */
export function runTask(accountId: string, runId: string): { sql: string; binds: unknown[] } {
  return { sql: "SELECT task_id FROM runs WHERE id = ? AND account_id = ?", binds: [runId, accountId] };
}

/** start_run's summary from the task before: an open task goes in progress. */
export function startedRunSummary(accountId: string, taskId: string, runId: string): { sql: string; binds: unknown[] } {
  const e = STARTED_RUN.sql({ progress: { sql: `CASE WHEN status = 'open' THEN ${STARTED_RUN_PROGRESS.sql({}).sql} ELSE '' END` } }, { run: runId });
  return { sql: `SELECT ${e.sql} FROM tasks WHERE id = ? AND account_id = ?`, binds: [...e.binds, taskId, accountId] };
}
