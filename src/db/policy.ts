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
 * Each named row of the account with its project, in one read (ids the
 * account does not hold are left out): each id looked up by key in each table
 * its prefix may name. `?1` the account, `?2` the ids as JSON.
 */
const REACHED_SQL = `
SELECT r.kind, r.id, substr(r.name, 1, ${CLIP}) AS name, r.project_id, pp.name AS project_name, r.status,
       CASE r.kind WHEN 'task' THEN (SELECT count(*) FROM tasks c WHERE c.parent_id = r.id AND c.account_id = ?1 AND c.trash_id IS NULL) END AS subtasks
  FROM (
    SELECT ids.value AS id,
           CASE WHEN p.id IS NOT NULL THEN 'project' WHEN t.id IS NOT NULL THEN 'task' WHEN s.id IS NOT NULL THEN 'step'
                WHEN c.id IS NOT NULL THEN 'comment' WHEN r.id IS NOT NULL THEN 'run' WHEN a.id IS NOT NULL THEN 'approval'
                WHEN l.id IS NOT NULL THEN 'calendar_link' WHEN b.id IS NOT NULL THEN 'label' WHEN x.id IS NOT NULL THEN 'trash_item' END AS kind,
           coalesce(p.name, t.title, s.text, c.body, r.summary, 'run of ' || o.title, a.question, l.title, b.name, x.title) AS name,
           CASE WHEN p.id IS NOT NULL THEN p.id WHEN t.id IS NOT NULL THEN t.project_id WHEN o.id IS NOT NULL THEN o.project_id
                WHEN x.id IS NOT NULL THEN CASE x.kind WHEN 'project' THEN x.target_id
                  ELSE (SELECT project_id FROM tasks WHERE account_id = ?1 AND id = coalesce(
                    (SELECT id FROM tasks WHERE id = x.target_id), (SELECT task_id FROM steps WHERE id = x.target_id), (SELECT task_id FROM comments WHERE id = x.target_id))) END
           END AS project_id,
           coalesce(t.status, s.status, r.status, a.status) AS status
      FROM json_each(?2) ids
      LEFT JOIN projects p ON p.id = ids.value AND p.account_id = ?1
      LEFT JOIN tasks t ON t.id = ids.value AND t.account_id = ?1
      LEFT JOIN steps s ON s.id = ids.value AND s.account_id = ?1
      LEFT JOIN comments c ON c.id = ids.value AND c.account_id = ?1
      LEFT JOIN runs r ON r.id = ids.value AND r.account_id = ?1
      LEFT JOIN approvals a ON a.id = ids.value AND a.account_id = ?1
      LEFT JOIN calendar_links l ON l.id = ids.value AND l.account_id = ?1
      LEFT JOIN labels b ON b.id = ids.value AND b.account_id = ?1
      LEFT JOIN trash x ON x.id = ids.value AND x.account_id = ?1
      LEFT JOIN tasks o ON o.id = coalesce(s.task_id, c.task_id, r.task_id, a.task_id, l.task_id) AND o.account_id = ?1
  ) r
  LEFT JOIN projects pp ON pp.id = r.project_id AND pp.account_id = ?1
 WHERE r.kind IS NOT NULL`;

/** The rows a call names, in one read; none when it names no id. */
export async function rowsReached(db: D1Database, accountId: string, args: Record<string, unknown>): Promise<ReachedRow[]> {
  const ids = idsNamed(args);
  if (ids.length === 0) return [];
  const { results } = await db.prepare(REACHED_SQL).bind(accountId, JSON.stringify(ids)).all<ReachedRow>();
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
