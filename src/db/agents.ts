import type { Condition } from "../catalog/tool.ts";
import { notFound } from "../domain/errors.ts";
import type { CursorKey } from "./cursor.ts";
import { RUN_COLUMNS, RUNS_FROM, type Run } from "./runs.ts";
import { readBatch } from "./batch.ts";
import type { TaskStatus } from "../domain/vocabulary.ts";

export interface AgentRow {
  id: string;
  name: string;
  paused_at: string | null;
  paused_by: string | null;
  last_seen_at: string | null;
  created_at: string;
}

export interface AgentWithTokens extends AgentRow {
  active_tokens: number;
}

const AGENT_COLUMNS = "g.id, g.name, g.paused_at, g.paused_by, g.last_seen_at, g.created_at";

/** Tokens of the agent that still work (not revoked, not expired); `?` is now. */
const ACTIVE_TOKENS =
  "(SELECT count(*) FROM tokens k WHERE k.agent_id = g.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)) AS active_tokens";

const AGENT_HINT = "list_agents names the agents of this account";

/** Statuses of a task someone is still holding. */
const UNFINISHED = "('open', 'in_progress', 'blocked', 'awaiting_approval')";

export async function requireAgentByName(db: D1Database, accountId: string, name: string): Promise<AgentRow> {
  const row = await db
    .prepare(`SELECT ${AGENT_COLUMNS} FROM agents g WHERE g.account_id = ? AND g.name = ?`)
    .bind(accountId, name)
    .first<AgentRow>();
  if (!row) throw notFound("agent", name, AGENT_HINT);
  return row;
}

/** Agents by name, with their working token counts; fetches limit + 1 after the cursor's name. */
export async function listAgents(db: D1Database, accountId: string, now: string, after: CursorKey | null, limit: number): Promise<AgentWithTokens[]> {
  const { results } = await selectAgents(db, accountId, now, after, limit).all<AgentWithTokens>();
  return results;
}

/** The statement of listAgents, to ride in a caller's batch. */
export function selectAgents(db: D1Database, accountId: string, now: string, after: CursorKey | null, limit: number): D1PreparedStatement {
  const where = ["g.account_id = ?"];
  const binds: unknown[] = [now, accountId];
  if (after) (where.push("g.name > ?"), binds.push(after.k));
  return db
    .prepare(`SELECT ${AGENT_COLUMNS}, ${ACTIVE_TOKENS} FROM agents g WHERE ${where.join(" AND ")} ORDER BY g.name LIMIT ?`)
    .bind(...binds, limit + 1);
}

export interface AgentDetail {
  agent: AgentWithTokens;
  recentRuns: Run[];
  running: number;
  claimed: number;
}

/** One agent with its recent runs and counts: one round trip. */
export async function agentDetail(db: D1Database, accountId: string, name: string, now: string, recent: number): Promise<AgentDetail> {
  const agentId = "(SELECT id FROM agents WHERE account_id = ?1 AND name = ?2)";
  const { agent, runs, running, claimed } = await readBatch(db, {
    agent: db.prepare(`SELECT ${AGENT_COLUMNS}, ${ACTIVE_TOKENS.replace("?", "?3")} FROM agents g WHERE g.account_id = ?1 AND g.name = ?2`).bind(accountId, name, now),
    runs: db
      .prepare(`SELECT ${RUN_COLUMNS} ${RUNS_FROM} WHERE r.account_id = ?1 AND r.agent_id = ${agentId} ORDER BY r.started_at DESC, r.id DESC LIMIT ?3`)
      .bind(accountId, name, recent),
    running: db.prepare(`SELECT count(*) AS n ${RUNS_FROM} WHERE r.account_id = ?1 AND r.agent_id = ${agentId} AND r.status = 'running'`).bind(accountId, name),
    claimed: db
      .prepare(`SELECT count(*) AS n FROM tasks WHERE account_id = ?1 AND assignee = ?2 AND status IN ${UNFINISHED} AND trash_id IS NULL`)
      .bind(accountId, name),
  });
  const row = agent[0] as AgentWithTokens | undefined;
  if (!row) throw notFound("agent", name, AGENT_HINT);
  return {
    agent: row,
    recentRuns: runs as Run[],
    running: (running[0] as { n: number }).n,
    claimed: (claimed[0] as { n: number }).n,
  };
}

export interface FleetRunRow {
  id: string;
  agent_id: string;
  task_id: string;
  task_title: string;
  started_at: string;
  last_event_at: string;
  stale: number;
  total: number;
}

export interface FleetTaskRow {
  id: string;
  title: string;
  status: TaskStatus;
  assignee: string;
  claim_expires_at: string | null;
  /** The areas it works in (src/domain/scopes.ts). */
  scope: string | null;
  total: number;
}

/** Held tasks are counted up to this many per agent, so the count costs the same in any account. */
export const HELD_COUNT_CAP = 1000;

/**
 * Everything fleet_status shows, as one batch (one round trip): the agents,
 * their running runs (split into fresh and stale at `staleBefore`) and the
 * unfinished tasks they hold, at most `perAgent` of each kind per agent, with totals.
 * Held tasks: each agent's count (up to HELD_COUNT_CAP) and its most recently
 * updated tasks come from tasks_account_assignee_recent alone, so the cost
 * does not grow with the account.
 */
export async function fleetSnapshot(
  db: D1Database,
  accountId: string,
  staleBefore: string,
  perAgent: number,
): Promise<{ agents: AgentRow[]; runs: FleetRunRow[]; tasks: FleetTaskRow[] }> {
  const [agents, runs, tasks] = fleetStatements(db, accountId, staleBefore, perAgent);
  const read = await readBatch(db, { agents, runs, tasks });
  return { agents: read.agents as AgentRow[], runs: read.runs as FleetRunRow[], tasks: read.tasks as FleetTaskRow[] };
}

/**
 * The three statements of fleetSnapshot (agents, runs, held tasks), to ride in
 * a caller's batch. With `page`, only the agents after `afterName` by name
 * (`limit` + 1 of them, so the caller knows whether more follow) and their runs and tasks.
 */
export function fleetStatements(
  db: D1Database,
  accountId: string,
  staleBefore: string,
  perAgent: number,
  page?: { afterName: string; limit: number },
): D1PreparedStatement[] {
  /** The page's agents, as a subquery of their ids. */
  const pageIds = (account: string, after: string, limit: string) =>
    `SELECT id FROM agents WHERE account_id = ${account} AND name > ${after} ORDER BY name LIMIT ${limit}`;
  return [
    page
      ? db.prepare(`SELECT ${AGENT_COLUMNS} FROM agents g WHERE g.account_id = ? AND g.name > ? ORDER BY g.name LIMIT ?`).bind(accountId, page.afterName, page.limit + 1)
      : db.prepare(`SELECT ${AGENT_COLUMNS} FROM agents g WHERE g.account_id = ? ORDER BY g.name`).bind(accountId),
    db
      .prepare(
        `SELECT id, agent_id, task_id, task_title, started_at, last_event_at, stale, total FROM (
           SELECT r.id, r.agent_id, r.task_id, t.title AS task_title, r.started_at, r.last_event_at,
                  (r.last_event_at < ?1) AS stale,
                  row_number() OVER (PARTITION BY r.agent_id, r.last_event_at < ?1 ORDER BY r.started_at DESC, r.id DESC) AS n,
                  count(*) OVER (PARTITION BY r.agent_id, r.last_event_at < ?1) AS total
             FROM runs r JOIN tasks t ON t.id = r.task_id AND t.account_id = r.account_id AND t.trash_id IS NULL
            WHERE r.account_id = ?2 AND r.status = 'running'
              ${page ? `AND r.agent_id IN (${pageIds("?2", "?4", "?5")})` : ""})
          WHERE n <= ?3 ORDER BY started_at DESC, id DESC`,
      )
      .bind(staleBefore, accountId, perAgent, ...(page ? [page.afterName, page.limit] : [])),
    db
      .prepare(
        `WITH held AS MATERIALIZED (
           SELECT g.name, (SELECT count(*) FROM (SELECT 1 FROM tasks c
                            WHERE c.account_id = ?1 AND c.assignee = g.name AND c.trash_id IS NULL AND c.status IN ${UNFINISHED}
                            LIMIT ${HELD_COUNT_CAP})) AS total
             FROM agents g WHERE g.account_id = ?1 ${page ? `AND g.id IN (${pageIds("?1", "?3", "?4")})` : ""})
         SELECT t.id, t.title, t.status, t.assignee, t.claim_expires_at, t.scope, held.total
           FROM held CROSS JOIN tasks t
          WHERE held.total > 0 AND t.rid IN (
                SELECT h.rid FROM tasks h
                 WHERE h.account_id = ?1 AND h.assignee = held.name AND h.trash_id IS NULL AND h.status IN ${UNFINISHED}
                 ORDER BY h.updated_at DESC LIMIT ?2)
          ORDER BY t.updated_at DESC, t.rid DESC`,
      )
      .bind(accountId, perAgent, ...(page ? [page.afterName, page.limit] : [])),
  ];
}

export interface WorkloadRow {
  assignee: string | null;
  status: string;
  n: number;
}

/** Unfinished tasks counted per assignee and status, and the agents (so idle ones show too): one round trip. */
export async function workload(
  db: D1Database,
  accountId: string,
  opts: { projectId?: string; hideSnoozedAt?: string },
): Promise<{ rows: WorkloadRow[]; agents: { name: string; paused_at: string | null }[]; projectFound: boolean }> {
  const where = ["account_id = ?", "trash_id IS NULL", `status IN ${UNFINISHED}`];
  const binds: unknown[] = [accountId];
  if (opts.projectId) (where.push("project_id = ?"), binds.push(opts.projectId));
  if (opts.hideSnoozedAt) (where.push("(snoozed_until IS NULL OR snoozed_until <= ?)"), binds.push(opts.hideSnoozedAt));
  const { rows, agents, project } = await readBatch(db, {
    rows: db.prepare(`SELECT assignee, status, count(*) AS n FROM tasks WHERE ${where.join(" AND ")} GROUP BY assignee, status`).bind(...binds),
    agents: db.prepare("SELECT name, paused_at FROM agents WHERE account_id = ? ORDER BY name").bind(accountId),
    project: db.prepare("SELECT 1 AS ok FROM projects WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(opts.projectId ?? null, accountId),
  });
  return {
    rows: rows as WorkloadRow[],
    agents: agents as { name: string; paused_at: string | null }[],
    projectFound: project.length > 0,
  };
}

/** Guard: the account has an agent of this name, paused (or not). */
export function agentNamedIs(c: { accountId: string; name: string; paused: boolean }): Condition {
  return { sql: `EXISTS (SELECT 1 FROM agents WHERE account_id = ? AND name = ? AND paused_at IS ${c.paused ? "NOT " : ""}NULL)`, binds: [c.accountId, c.name] };
}

/** Pauses (with when and by whom) or resumes (pausedAt null) the agent of this name; its data stays as it is. Returns the agent. */
export function setPausedByName(db: D1Database, accountId: string, name: string, pausedAt: string | null, pausedBy: string | null): D1PreparedStatement {
  return db
    .prepare(
      "UPDATE agents SET paused_at = ?, paused_by = ? WHERE account_id = ? AND name = ? RETURNING id, name, paused_at, paused_by, last_seen_at, created_at",
    )
    .bind(pausedAt, pausedBy, accountId, name);
}

/** The id of an agent by name, for the activity row. */
export function agentIdByName(accountId: string, name: string): { sql: string; binds: unknown[] } {
  return { sql: "SELECT id FROM agents WHERE account_id = ? AND name = ?", binds: [accountId, name] };
}
