/**
 * What a confirmation step shows before something that cannot wait (a delete,
 * a revoke, a purge, a device removed): the thing itself and how much goes
 * with it, read in one batch with the page's frame. Nothing here writes.
 */
import { readBatch } from "./batch.ts";
import { frameOf, frameStatements, type Frame } from "./console.ts";
import { selectProjectWithCounts, type CountedProjectRow } from "./projects.ts";
import { liveSubtree } from "./tasks.ts";
import { TRASH_COLUMNS, type TrashRow } from "./trash.ts";

/** The kinds of thing a confirmation step describes. */
export type ConfirmSubject = "task" | "project" | "token" | "trash_item" | "trash_all" | "push_device";

export type ConfirmFacts =
  | { subject: "task"; task: { id: string; title: string; status: string; subtasks: number } | null }
  | { subject: "project"; project: CountedProjectRow | null }
  | {
      subject: "token";
      token: { id: string; label: string; kind: "human" | "agent"; scope: "read" | "write"; agent: string | null; prefix: string; client_name: string | null; client_id: string | null; revoked_at: string | null } | null;
    }
  | { subject: "trash_item"; item: TrashRow | null }
  | { subject: "trash_all"; trash: { items: number; rows: number } }
  | { subject: "push_device"; device: { id: string; label: string; created_at: string } | null };

export type ConfirmPage = Frame & { facts: ConfirmFacts };

/** A live task with how many live subtasks (at any depth) go with it. Binds: task, account. */
const TASK = `${liveSubtree("?1", "?2")}
  SELECT t.id, t.title, t.status, (SELECT count(*) FROM sub) - 1 AS subtasks FROM tasks t WHERE t.id = ?1 AND t.account_id = ?2 AND t.trash_id IS NULL`;

function subjectStatement(db: D1Database, accountId: string, personId: string, subject: ConfirmSubject, id: string): D1PreparedStatement {
  switch (subject) {
    case "task":
      return db.prepare(TASK).bind(id, accountId);
    case "project":
      return selectProjectWithCounts(db, accountId, id);
    case "token":
      return db
        .prepare(
          `SELECT t.id, t.label, t.kind, t.scope, a.name AS agent, t.prefix, t.client_name, t.client_id, t.revoked_at
             FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = ? AND t.account_id = ?`,
        )
        .bind(id, accountId);
    case "trash_item":
      return db.prepare(`SELECT ${TRASH_COLUMNS} FROM trash WHERE id = ? AND account_id = ?`).bind(id, accountId);
    case "trash_all":
      return db.prepare("SELECT count(*) AS items, coalesce(sum(item_count), 0) AS rows FROM trash WHERE account_id = ?").bind(accountId);
    case "push_device":
      return db.prepare("SELECT id, label, created_at FROM push_subscriptions WHERE id = ? AND person_id = ? AND account_id = ?").bind(id, personId, accountId);
  }
}

/** The confirmation step's page: the frame and the subject `id` names (null when there is none such), in one round trip. */
export async function readConfirmPage(db: D1Database, accountId: string, personId: string, subject: ConfirmSubject, id: string): Promise<ConfirmPage> {
  const r = await readBatch(db, { ...frameStatements(db, accountId), row: subjectStatement(db, accountId, personId, subject, id) });
  const row = (r.row[0] ?? null) as never;
  const facts: ConfirmFacts =
    subject === "task" ? { subject, task: row }
    : subject === "project" ? { subject, project: row }
    : subject === "token" ? { subject, token: row }
    : subject === "trash_item" ? { subject, item: row }
    : subject === "trash_all" ? { subject, trash: (r.row[0] as { items: number; rows: number } | undefined) ?? { items: 0, rows: 0 } }
    : { subject, device: row };
  return { ...frameOf(r, accountId), facts };
}
