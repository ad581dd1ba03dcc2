/**
 * The digest's reads, one statement per section, run as one batch. Each
 * returns at most `limit` rows and carries the section's full count in every
 * row (`total`, a window over the whole result before the LIMIT).
 */
import { readBatch } from "./batch.ts";
export interface DigestWindow {
  accountId: string;
  since: string;
  now: string;
  dueUntil: string;
  limit: number;
}

const COMPLETED = `
  SELECT t.id, t.title, t.assignee, t.project_id, t.completed_at, count(*) OVER () AS total
    FROM tasks t
   WHERE t.account_id = ?1 AND t.status = 'done' AND t.completed_at >= ?2 AND t.trash_id IS NULL
   ORDER BY t.completed_at DESC, t.id DESC LIMIT ?5`;

const AWAITING_APPROVAL = `
  SELECT t.id AS task_id, t.title AS task_title, t.status, ap.id AS approval_id, ap.question, ap.requested_by,
         coalesce(ap.created_at, t.updated_at) AS waiting_since, count(*) OVER () AS total
    FROM tasks t
    LEFT JOIN approvals ap ON ap.task_id = t.id AND ap.account_id = t.account_id AND ap.status = 'pending'
   WHERE t.account_id = ?1 AND t.trash_id IS NULL AND t.id IN (
           SELECT id FROM tasks WHERE account_id = ?1 AND status = 'awaiting_approval'
           UNION SELECT task_id FROM approvals WHERE account_id = ?1 AND status = 'pending')
   ORDER BY waiting_since, t.id LIMIT ?5`;

/** Blocked now, and blocked (by block_task, else last changed) since `since`. */
const NEWLY_BLOCKED = `
  SELECT id, title, blocked_reason, assignee, blocked_at, count(*) OVER () AS total FROM (
    SELECT t.id, t.title, t.blocked_reason, t.assignee,
           coalesce((SELECT max(a.created_at) FROM activity a
                      WHERE a.target_id = t.id AND a.account_id = ?1 AND a.tool = 'block_task'), t.updated_at) AS blocked_at
      FROM tasks t
     WHERE t.account_id = ?1 AND t.status = 'blocked' AND t.trash_id IS NULL)
   WHERE blocked_at >= ?2
   ORDER BY blocked_at DESC, id DESC LIMIT ?5`;

const FAILED_RUNS = `
  SELECT r.id AS run_id, r.task_id, t.title AS task_title, g.name AS agent, r.summary,
         coalesce(r.finished_at, r.last_event_at) AS finished_at, count(*) OVER () AS total
    FROM runs r
    JOIN tasks t ON t.id = r.task_id AND t.account_id = r.account_id AND t.trash_id IS NULL
    LEFT JOIN agents g ON g.id = r.agent_id
   WHERE r.account_id = ?1 AND r.status = 'failed' AND coalesce(r.finished_at, r.last_event_at) >= ?2
   ORDER BY finished_at DESC, r.id DESC LIMIT ?5`;

const DUE_SOON = `
  SELECT t.id, t.title, t.status, t.priority, t.assignee, t.due_at, count(*) OVER () AS total
    FROM tasks t
   WHERE t.account_id = ?1 AND t.due_at >= ?3 AND t.due_at < ?4 AND t.trash_id IS NULL
     AND t.status NOT IN ('done', 'cancelled') AND (t.snoozed_until IS NULL OR t.snoozed_until <= ?3)
   ORDER BY t.due_at, t.id LIMIT ?5`;

export const DIGEST_SECTIONS = ["completed", "awaiting_approval", "newly_blocked", "failed_runs", "due_soon"] as const;
export type DigestSection = (typeof DIGEST_SECTIONS)[number];

const SQL: Record<DigestSection, string> = {
  completed: COMPLETED,
  awaiting_approval: AWAITING_APPROVAL,
  newly_blocked: NEWLY_BLOCKED,
  failed_runs: FAILED_RUNS,
  due_soon: DUE_SOON,
};

/** Every section in one round trip; rows keep their `total` column. */
export async function readDigest(db: D1Database, w: DigestWindow): Promise<Record<DigestSection, Record<string, unknown>[]>> {
  const statements = Object.fromEntries(
    DIGEST_SECTIONS.map((s) => [s, db.prepare(SQL[s]).bind(w.accountId, w.since, w.now, w.dueUntil, w.limit)]),
  ) as Record<DigestSection, D1PreparedStatement>;
  return (await readBatch(db, statements)) as Record<DigestSection, Record<string, unknown>[]>;
}
