/**
 * The consent rules' side of a write batch. The rules themselves are triggers
 * of schema.sql (C1–C5 of docs/approvals-and-claims.md): they read the caller
 * of the batch from `call_actor`, which every batch of a tool call fills first
 * and empties last, and refuse a forbidden row with a code (`taskgate:claim`,
 * …). This module writes the caller and reads, after a refusal, what the
 * refusal was about.
 */

/** The codes the consent triggers refuse with. */
export const CONSENT_CODES = ["claim", "consent", "decision", "undo", "paused", "waits"] as const;
export type ConsentCode = (typeof CONSENT_CODES)[number];

/** The rule a failed batch's error names, or null when it is not a consent refusal. */
export function consentCodeOf(message: string): ConsentCode | null {
  const m = /taskgate:(claim|consent|decision|undo|paused|waits)\b/.exec(message);
  return m ? (m[1] as ConsentCode) : null;
}

export interface Actor {
  kind: "human" | "agent";
  /** `human` or the agent's name. */
  name: string;
  now: string;
}

/** The first statement of a batch: who writes, for the triggers (removed by `actorOut`, the last). */
export function actorIn(db: D1Database, batch: string, a: Actor): D1PreparedStatement {
  return db.prepare("INSERT INTO call_actor (batch, kind, name, now) VALUES (?, ?, ?, ?)").bind(batch, a.kind, a.name, a.now);
}

export function actorOut(db: D1Database, batch: string): D1PreparedStatement {
  return db.prepare("DELETE FROM call_actor WHERE batch = ?").bind(batch);
}

export interface HeldTask {
  id: string;
  title: string;
  status: string;
  holder: string;
  claim_expires_at: string | null;
  /** 1 when the call names the task itself (or its step, run or link), 0 when it reaches it through a parent, project or label. */
  named: number;
}

/** What C1 calls held, over a task row `h` (binds: ?3 the writing agent, ?4 now), as the view held_by_other has it. */
const HELD_BY_OTHER = `h.assignee IS NOT NULL AND h.assignee <> ?3 AND h.trash_id IS NULL
  AND (h.status IN ('blocked', 'awaiting_approval') OR (h.status = 'in_progress' AND (h.claim_expires_at IS NULL OR h.claim_expires_at > ?4)))`;

/**
 * The tasks held by someone other than `actor` among those a call's
 * arguments name, by any route: the tasks named, their parents and every
 * task below them, the tasks of a named project, the task of a named step,
 * run, link or label, the tasks of a named trash item. One read, after a
 * refused batch, to say whose tasks stood in the way.
 *
 * Its cost is the rows it reaches: each route is an indexed lookup from the
 * ids named (CROSS JOIN keeps them the outer loop), the walk goes down by the
 * parent index, and its tasks are looked up by id (the account's other rows
 * are never read).
 */
export async function heldTasksNamed(db: D1Database, accountId: string, actor: string, now: string, named: string[]): Promise<HeldTask[]> {
  const { results } = await db
    .prepare(
      `WITH RECURSIVE ids(v) AS (SELECT value FROM json_each(?1)),
       direct(id) AS (
                   SELECT v FROM ids
         UNION ALL SELECT s.task_id FROM ids CROSS JOIN steps s ON s.id = ids.v WHERE s.account_id = ?2
         UNION ALL SELECT r.task_id FROM ids CROSS JOIN runs r ON r.id = ids.v WHERE r.account_id = ?2
         UNION ALL SELECT c.task_id FROM ids CROSS JOIN calendar_links c ON c.id = ids.v WHERE c.account_id = ?2
       ),
       roots(id) AS (
                   SELECT t.id FROM direct CROSS JOIN tasks t ON t.id = direct.id WHERE t.account_id = ?2
         UNION ALL SELECT t.parent_id FROM ids CROSS JOIN tasks t ON t.id = ids.v WHERE t.account_id = ?2 AND t.parent_id IS NOT NULL
         UNION ALL SELECT t.id FROM ids CROSS JOIN tasks t ON t.account_id = ?2 AND t.project_id = ids.v
         UNION ALL SELECT t.id FROM ids CROSS JOIN tasks t ON t.trash_id = ids.v WHERE t.account_id = ?2
         UNION ALL SELECT l.task_id FROM ids CROSS JOIN task_labels l ON l.label_id = ids.v WHERE l.account_id = ?2
       ),
       tree(id) AS (SELECT id FROM roots UNION SELECT t.id FROM tree JOIN tasks t INDEXED BY tasks_parent ON t.parent_id = tree.id WHERE t.account_id = ?2)
       SELECT h.id, h.title, h.status, h.assignee AS holder, h.claim_expires_at, h.id IN (SELECT id FROM direct) AS named
         FROM tree CROSS JOIN tasks h ON h.id = tree.id
        WHERE h.account_id = ?2 AND ${HELD_BY_OTHER}
        ORDER BY h.created_at LIMIT 6`,
    )
    .bind(JSON.stringify(named), accountId, actor, now)
    .all<HeldTask>();
  return results;
}

export interface NamedApproval {
  id: string;
  task_id: string;
  kind: string;
  requested_by: string;
}

/** The pending requests on the tasks a call names (for a refused decision). */
export async function pendingRequestsNamed(db: D1Database, accountId: string, named: string[]): Promise<NamedApproval[]> {
  const { results } = await db
    .prepare(
      `SELECT id, task_id, kind, requested_by FROM approvals
        WHERE account_id = ?2 AND status = 'pending' AND (task_id IN (SELECT value FROM json_each(?1)) OR id IN (SELECT value FROM json_each(?1)))
        LIMIT 3`,
    )
    .bind(JSON.stringify(named), accountId)
    .all<NamedApproval>();
  return results;
}

/** The paused agents among the names a call holds (for a refused assignment). */
export async function pausedAgentsNamed(db: D1Database, accountId: string, named: string[]): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT name FROM agents WHERE account_id = ?2 AND paused_at IS NOT NULL AND name IN (SELECT value FROM json_each(?1)) LIMIT 3")
    .bind(JSON.stringify(named), accountId)
    .all<{ name: string }>();
  return results.map((r) => r.name);
}

/** What the tasks a call names wait on that is not finished (for a refused completion). */
export async function unfinishedDependenciesNamed(db: D1Database, accountId: string, named: string[]): Promise<{ task_id: string; id: string; title: string; status: string }[]> {
  const { results } = await db
    .prepare(
      `SELECT d.task_id, w.id, w.title, w.status FROM task_dependencies d JOIN tasks w ON w.id = d.depends_on_id AND w.account_id = d.account_id
        WHERE d.account_id = ?2 AND d.task_id IN (SELECT value FROM json_each(?1)) AND w.status NOT IN ('done', 'cancelled') AND w.trash_id IS NULL
        LIMIT 5`,
    )
    .bind(JSON.stringify(named), accountId)
    .all<{ task_id: string; id: string; title: string; status: string }>();
  return results;
}
