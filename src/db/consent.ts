/**
 * The consent rules' side of a write batch. The rules themselves are triggers
 * of schema.sql (C1–C5 of docs/approvals-and-claims.md): they read the caller
 * of the batch from `call_actor`, which every batch of a tool call fills first
 * and empties last, and refuse a forbidden row with a code (`taskgate:claim`,
 * …). This module writes the caller and reads, after a refusal, what the
 * refusal was about.
 */

import { UNFINISHED } from "./dependencies.ts";
import { CONSENT_CODES, type ConsentCode } from "../domain/consent-rules.ts";
import { serverBatchId, type ServerWriter } from "./server-caller.ts";

export type { ConsentCode };

/** The rule a failed batch's error names (src/domain/consent-rules.ts), or null when it is not a consent refusal. */
export function consentCodeOf(message: string): ConsentCode | null {
  const m = /taskgate:([a-z]+)\b/.exec(message);
  return m && (CONSENT_CODES as readonly string[]).includes(m[1]) ? (m[1] as ConsentCode) : null;
}

export interface Actor {
  /** A person, an agent, or the server's own writer (a job, the admin CLI, a move, seeding). */
  kind: "human" | "agent" | "server";
  /** `human`, the agent's name, or the server writer's (`server:purge`, …). */
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

/** The first and last statements of a batch the server writes itself, as `name`. */
export function asServer(db: D1Database, name: ServerWriter, now = new Date().toISOString()): { in: D1PreparedStatement; out: D1PreparedStatement } {
  const batch = serverBatchId();
  return { in: actorIn(db, batch, { kind: "server", name, now }), out: actorOut(db, batch) };
}

/**
 * Runs statements as one batch of the server's writer `name`: the caller
 * recorded first and removed last, as a tool call's batch does. The results
 * are the statements' own (without the caller's two).
 */
export async function serverBatch(db: D1Database, name: ServerWriter, statements: D1PreparedStatement[], now?: string): Promise<D1Result[]> {
  const own = asServer(db, name, now);
  const results = await db.batch([own.in, ...statements, own.out]);
  return results.slice(1, -1);
}


/**
 * What an agent's claim-guarded call names, checked first in its batch (the
 * table named_task of schema.sql stores nothing; its trigger refuses a task
 * another holds): a call that would change nothing on a held task is refused
 * as one that changes it, never answered as if it acted. The task itself, or
 * the task of a named step.
 */
export function namedTaskCheck(db: D1Database, accountId: string, named: { task_id: string } | { step_id: string }): D1PreparedStatement {
  return "task_id" in named
    ? db.prepare("INSERT INTO named_task (task_id) VALUES (?)").bind(named.task_id)
    : db.prepare("INSERT INTO named_task (task_id) SELECT task_id FROM steps WHERE id = ? AND account_id = ?").bind(named.step_id, accountId);
}

export interface HeldTask {
  id: string;
  title: string;
  status: string;
  holder: string;
  claim_expires_at: string | null;
  /** 1 when the call names the task itself (or its step, run or link), 0 when it reaches it through another row. */
  named: number;
}

/**
 * How a call reached a held task, nearest first: 1 the task it names (or the
 * task of a named step, run or link), 2 a task below one it names, 3 the
 * parent of one it names, 4 a task of a named project, label or trash item
 * (not the tasks below those: a label or a trash item holds its own tasks).
 */
const REACHED = `WITH RECURSIVE ids(v) AS (SELECT value FROM json_each(?1)),
  direct(id) AS (
              SELECT t.id FROM ids CROSS JOIN tasks t ON t.id = ids.v WHERE t.account_id = ?2
    UNION ALL SELECT s.task_id FROM ids CROSS JOIN steps s ON s.id = ids.v WHERE s.account_id = ?2
    UNION ALL SELECT r.task_id FROM ids CROSS JOIN runs r ON r.id = ids.v WHERE r.account_id = ?2
    UNION ALL SELECT c.task_id FROM ids CROSS JOIN calendar_links c ON c.id = ids.v WHERE c.account_id = ?2),
  roots(id, r) AS (
              SELECT id, 1 FROM direct
    UNION ALL SELECT t.parent_id, 3 FROM direct CROSS JOIN tasks t ON t.id = direct.id WHERE t.account_id = ?2 AND t.parent_id IS NOT NULL
    UNION ALL SELECT t.id, 4 FROM ids CROSS JOIN tasks t ON t.account_id = ?2 AND t.project_id = ids.v
    UNION ALL SELECT t.id, 4 FROM ids CROSS JOIN tasks t ON t.trash_id = ids.v WHERE t.account_id = ?2
    UNION ALL SELECT l.task_id, 4 FROM ids CROSS JOIN task_labels l ON l.label_id = ids.v WHERE l.account_id = ?2),
  tree(id, r) AS (
    SELECT id, r FROM roots
    UNION SELECT t.id, CASE tree.r WHEN 1 THEN 2 ELSE tree.r END FROM tree JOIN tasks t INDEXED BY tasks_parent ON t.parent_id = tree.id
     WHERE t.account_id = ?2 AND tree.r IN (1, 2)),
  reached(id, r) AS (SELECT id, min(r) FROM tree GROUP BY id)`;

/**
 * The tasks held by someone other than `actor` that a refused call reached,
 * by the nearest route only (REACHED): a call that names a held task is told
 * of that task, not of others in its tree or project. "Held" is the view
 * `holds` of schema.sql, read in a batch that records the caller as the
 * write did; a task in the trash counts when the call names its trash item.
 * One round trip, after a refused batch, to say whose tasks stood in the way.
 * Its cost is the rows it reaches: each route is an indexed lookup from the
 * ids named (CROSS JOIN keeps them the outer loop), the walk goes down by the
 * parent index, and its tasks are looked up by id.
 */
export async function heldTasksNamed(db: D1Database, accountId: string, actor: string, now: string, named: string[]): Promise<HeldTask[]> {
  const batch = `rd_${crypto.randomUUID()}`;
  const [, read] = await db.batch([
    actorIn(db, batch, { kind: "agent", name: actor, now }),
    db
      .prepare(
        `${REACHED}
         SELECT t.id, t.title, t.status, h.holder, t.claim_expires_at, (r.r = 1) AS named, r.r AS route
           FROM reached r CROSS JOIN holds h ON h.task_id = r.id CROSS JOIN tasks t ON t.id = r.id
          WHERE h.account_id = ?2 AND (h.trash_id IS NULL OR r.r = 1 OR h.trash_id IN (SELECT v FROM ids))
          ORDER BY r.r, t.created_at LIMIT 6`,
      )
      .bind(JSON.stringify(named), accountId),
    actorOut(db, batch),
  ]);
  const rows = (read.results ?? []) as (HeldTask & { route: number })[];
  const nearest = rows[0]?.route;
  return rows.filter((r) => r.route === nearest).map(({ route: _route, ...t }) => t);
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
export async function unfinishedDependenciesNamed(db: D1Database, accountId: string, named: string[]): Promise<{ task_id: string; id: string; title: string; status: string; trash_id: string | null }[]> {
  const { results } = await db
    .prepare(
      `SELECT d.task_id, w.id, w.title, w.status, w.trash_id FROM task_dependencies d JOIN tasks w ON w.id = d.depends_on_id AND w.account_id = d.account_id
        WHERE d.account_id = ?2 AND d.task_id IN (SELECT value FROM json_each(?1)) AND ${UNFINISHED("w")}
        LIMIT 5`,
    )
    .bind(JSON.stringify(named), accountId)
    .all<{ task_id: string; id: string; title: string; status: string; trash_id: string | null }>();
  return results;
}
