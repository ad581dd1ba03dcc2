/**
 * What a per-agent policy reads and writes (src/catalog/policy.ts decides):
 * the rows a call reaches, with the project each lies in, for a project rule
 * and for the preview a person sees before approving; and the stored rules of
 * an agent (agents.policy) and of a connection (tokens.policy), which only a
 * person changes (schema.sql's consent_agent_policy and consent_token_policy).
 */

import type { ReachedRow } from "../catalog/policy.ts";

export type { ReachedRow };

const ID = /^(prj|tsk|stp|cmt|run|apr|lbl|cal|trs)_[a-z0-9]{4,40}$/;

/** The ids among a call's arguments (strings of a known prefix, at most 100). */
export function idsNamed(args: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const walk = (v: unknown) => {
    if (out.size >= 100) return;
    if (typeof v === "string") {
      if (ID.test(v)) out.add(v);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(args);
  return [...out];
}

const CLIP = 120;

/**
 * Each named row of the account with its project, in one round trip: one
 * statement per kind of row (D1 allows few terms in a compound SELECT), ids
 * the account does not hold left out. `?1` the account, `?2` the ids as JSON.
 */
const REACHED_KINDS = [
  "SELECT 'project' AS kind, p.id, p.name AS name, p.id AS project_id, NULL AS status FROM projects p JOIN ids ON ids.id = p.id WHERE p.account_id = ?1",
  "SELECT 'task', t.id, t.title, t.project_id, t.status FROM tasks t JOIN ids ON ids.id = t.id WHERE t.account_id = ?1",
  "SELECT 'step', s.id, s.text, t.project_id, s.status FROM steps s JOIN ids ON ids.id = s.id JOIN tasks t ON t.id = s.task_id WHERE s.account_id = ?1",
  "SELECT 'comment', c.id, c.body, t.project_id, NULL FROM comments c JOIN ids ON ids.id = c.id JOIN tasks t ON t.id = c.task_id WHERE c.account_id = ?1",
  "SELECT 'run', r.id, coalesce(r.summary, 'run of ' || t.title), t.project_id, r.status FROM runs r JOIN ids ON ids.id = r.id JOIN tasks t ON t.id = r.task_id WHERE r.account_id = ?1",
  "SELECT 'approval', a.id, a.question, t.project_id, a.status FROM approvals a JOIN ids ON ids.id = a.id JOIN tasks t ON t.id = a.task_id WHERE a.account_id = ?1",
  "SELECT 'calendar_link', l.id, l.title, t.project_id, NULL FROM calendar_links l JOIN ids ON ids.id = l.id JOIN tasks t ON t.id = l.task_id WHERE l.account_id = ?1",
  "SELECT 'label', l.id, l.name, NULL, NULL FROM labels l JOIN ids ON ids.id = l.id WHERE l.account_id = ?1",
  `SELECT 'trash_item', x.id, x.title,
          CASE x.kind WHEN 'project' THEN x.target_id WHEN 'task' THEN (SELECT project_id FROM tasks WHERE id = x.target_id)
                      ELSE (SELECT t.project_id FROM tasks t WHERE t.id = coalesce((SELECT task_id FROM steps WHERE id = x.target_id), (SELECT task_id FROM comments WHERE id = x.target_id))) END,
          NULL
     FROM trash x JOIN ids ON ids.id = x.id WHERE x.account_id = ?1`,
];

const reachedSql = (rows: string) => `
WITH ids(id) AS (SELECT value FROM json_each(?2)), r(kind, id, name, project_id, status) AS (${rows})
SELECT r.kind, r.id, substr(r.name, 1, ${CLIP}) AS name, r.project_id, p.name AS project_name, r.status,
       CASE r.kind WHEN 'task' THEN (SELECT count(*) FROM tasks c WHERE c.parent_id = r.id AND c.account_id = ?1 AND c.trash_id IS NULL) END AS subtasks
  FROM r LEFT JOIN projects p ON p.id = r.project_id AND p.account_id = ?1`;

/** The rows a call names, in one round trip; none when it names no id. */
export async function rowsReached(db: D1Database, accountId: string, args: Record<string, unknown>): Promise<ReachedRow[]> {
  const ids = idsNamed(args);
  if (ids.length === 0) return [];
  const json = JSON.stringify(ids);
  const read = await db.batch(REACHED_KINDS.map((rows) => db.prepare(reachedSql(rows)).bind(accountId, json)));
  const results = read.flatMap((r) => r.results as unknown as ReachedRow[]);
  const order = new Map(ids.map((id, i) => [id, i]));
  return results.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
}

/**
 * The projects a call reaches, for a project rule: each named row's project
 * (null for a row in no project). A call that creates a task or project in a
 * project names it (project_id); one that names nothing reaches no project.
 */
export function projectsOf(rows: readonly ReachedRow[]): (string | null)[] {
  return [...new Set(rows.map((r) => r.project_id))];
}

/** An agent's stored rules (JSON text, null: none). */
export function selectAgentPolicy(db: D1Database, accountId: string, agentId: string): D1PreparedStatement {
  return db.prepare("SELECT id, name, policy FROM agents WHERE id = ? AND account_id = ?").bind(agentId, accountId);
}

/** Sets an agent's rules (null: none); a person's write (consent_agent_policy refuses an agent's batch). */
export function setAgentPolicy(db: D1Database, accountId: string, agentId: string, rules: string | null): D1PreparedStatement {
  return db.prepare("UPDATE agents SET policy = ? WHERE id = ? AND account_id = ?").bind(rules, agentId, accountId);
}

/** Sets a connection's own rules (null: none), on a live agent token; a person's write (consent_token_policy). */
export function setTokenPolicy(db: D1Database, accountId: string, tokenId: string, rules: string | null): D1PreparedStatement {
  return db
    .prepare("UPDATE tokens SET policy = ? WHERE id = ? AND account_id = ? AND kind = 'agent' AND revoked_at IS NULL")
    .bind(rules, tokenId, accountId);
}
