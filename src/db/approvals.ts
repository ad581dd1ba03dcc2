import type { Condition } from "../catalog/tool.ts";
import { notFound } from "../domain/errors.ts";
import type { CursorKey } from "./cursor.ts";
import type { TaskStatus } from "../domain/vocabulary.ts";
import { personRef, type PersonRef } from "../domain/principal.ts";
import { personNameOf, personNameSql } from "./people.ts";

export const APPROVAL_STATUSES = ["pending", "approved", "rejected", "closed", "withdrawn"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
/** A question about unfinished work (answered, the task stays where it is) or a sign-off on finished work (approved, it is done). */
export const APPROVAL_KINDS = ["question", "signoff"] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/** A person's answer to a question by choice or in words (each null when not given). */
export interface ApprovalAnswer {
  choice: string | null;
  words: string | null;
}

/** An approval as the tools show it, with its task's title. */
export interface Approval {
  id: string;
  task_id: string;
  task_title: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  question: string;
  requested_by: string;
  decided_by: string | null;
  reason: string | null;
  created_at: string;
  decided_at: string | null;
  /** Which person decided it (id and shown name now), when a person's call did; null otherwise. */
  decided_by_person: PersonRef | null;
  /** The choices a question offers; null: a yes/no question (or a sign-off). */
  choices: string[] | null;
  /** Whether the question takes an answer in words. */
  accepts_words: boolean;
  /** The person's answer by choice or in words; null until one is given. */
  answer: ApprovalAnswer | null;
}

/** The columns an approval's shown values are read from: who decided, by id and shown name; the choices as JSON and the answer's two parts. */
export interface StoredApprovalColumns {
  decided_by_person_id: string | null;
  decided_by_person_name: string | null;
  choices: string | null;
  accepts_words: number;
  answer_choice: string | null;
  answer_words: string | null;
}

type ShownFields = "decided_by_person" | "choices" | "accepts_words" | "answer";

/** An approval as its queries read it (APPROVAL_COLUMNS, or RETURNING with task_title added); toApproval shows it. */
export type ApprovalRow<A extends object = Approval> = Omit<A, ShownFields> & StoredApprovalColumns;

/** A row of an approval query as the tools show it: the person who decided it as one value, its choices as a list, its answer as one value. */
export function toApproval<R extends StoredApprovalColumns>(row: R): Omit<R, keyof StoredApprovalColumns> & Pick<Approval, ShownFields> {
  const { decided_by_person_id, decided_by_person_name, choices, accepts_words, answer_choice, answer_words, ...rest } = row;
  return {
    ...rest,
    decided_by_person: personRef(decided_by_person_id, decided_by_person_name),
    choices: choices === null || choices === undefined ? null : (JSON.parse(choices) as string[]),
    accepts_words: accepts_words === 1,
    answer: answer_choice == null && answer_words == null ? null : { choice: answer_choice ?? null, words: answer_words ?? null },
  };
}

/** The choice and answer columns, for a RETURNING (which takes no table alias) or a SELECT over `a`. */
export const CHOICE_COLUMNS = "choices, accepts_words, answer_choice, answer_words";

/** `a` is approvals, `t` its (live) task, `dp` the person who decided it. */
const APPROVAL_COLUMNS =
  "a.id, a.task_id, t.title AS task_title, a.kind, a.status, a.question, a.requested_by, a.decided_by, a.reason, a.created_at, a.decided_at" +
  `, a.decided_by_person_id, ${personNameSql("dp")} AS decided_by_person_name, a.choices, a.accepts_words, a.answer_choice, a.answer_words`;

const FROM_LIVE =
  "FROM approvals a JOIN tasks t ON t.id = a.task_id AND t.account_id = a.account_id AND t.trash_id IS NULL LEFT JOIN people dp ON dp.id = a.decided_by_person_id";

/** What an approval's UPDATE … RETURNING gives back (task_title is the caller's to add): the row as decided, with who decided it. */
export const APPROVAL_RETURNING =
  `id, task_id, kind, status, question, requested_by, decided_by, reason, created_at, decided_at, decided_by_person_id, ${personNameOf("decided_by_person_id")} AS decided_by_person_name, ${CHOICE_COLUMNS}`;

export function selectPendingApproval(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(`SELECT ${APPROVAL_COLUMNS} ${FROM_LIVE} WHERE a.task_id = ? AND a.account_id = ? AND a.status = 'pending'`)
    .bind(taskId, accountId);
}

/** The task's most recently decided (approved, rejected or closed) approval. */
export function selectLatestDecision(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${APPROVAL_COLUMNS} ${FROM_LIVE}
        WHERE a.task_id = ? AND a.account_id = ? AND a.status <> 'pending'
        ORDER BY a.decided_at DESC, a.created_at DESC LIMIT 1`,
    )
    .bind(taskId, accountId);
}

export interface ApprovalWithTask extends Approval {
  task_status: TaskStatus;
  task_assignee: string | null;
  task_auto_ok: number | null;
}

/** An approval of a live task with that task's current state (no row: none such). */
export function selectApprovalWithTask(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${APPROVAL_COLUMNS}, t.status AS task_status, t.assignee AS task_assignee, t.auto_ok AS task_auto_ok
        ${FROM_LIVE} WHERE a.id = ? AND a.account_id = ?`,
    )
    .bind(id, accountId);
}

/** selectApprovalWithTask's row as shown; not found when it read none. */
export function approvalWithTask(row: unknown, id: string): ApprovalWithTask {
  if (!row) throw notFound("approval", id, "list_pending_approvals lists the open ones, get_task shows a task's pending approval");
  return toApproval(row as ApprovalRow<ApprovalWithTask>);
}

/** An approval of a live task, with that task's current state; not found otherwise. */
export async function requireApproval(db: D1Database, accountId: string, id: string): Promise<ApprovalWithTask> {
  return approvalWithTask(await selectApprovalWithTask(db, accountId, id).first(), id);
}

export interface PendingPage {
  projectId?: string;
  after: CursorKey | null;
  limit: number;
}

/** One page of pending approvals of live tasks, oldest first (the queue a person works through; limit + 1 rows), selecting `columns`; positional binds. */
export function pendingPageSql(accountId: string, opts: PendingPage, columns: string): { sql: string; binds: unknown[] } {
  const where = ["a.account_id = ?", "a.status = 'pending'"];
  const binds: unknown[] = [accountId];
  if (opts.projectId) (where.push("t.project_id = ?"), binds.push(opts.projectId));
  if (opts.after) (where.push("(a.created_at > ? OR (a.created_at = ? AND a.id > ?))"), binds.push(opts.after.k, opts.after.k, opts.after.id));
  return { sql: `SELECT ${columns} ${FROM_LIVE} WHERE ${where.join(" AND ")} ORDER BY a.created_at, a.id LIMIT ?`, binds: [...binds, opts.limit + 1] };
}

export const PENDING_APPROVAL_COLUMNS = APPROVAL_COLUMNS;

/** How many approvals of live tasks wait for a person, and how many pending actions (not expired): `{ n, actions }`. */
export function selectPendingCount(db: D1Database, accountId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT (SELECT count(*) ${FROM_LIVE} WHERE a.account_id = ?1 AND a.status = 'pending') AS n,
              (SELECT count(*) FROM pending_actions x WHERE x.account_id = ?1 AND x.status = 'pending' AND x.expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) AS actions`,
    )
    .bind(accountId);
}

export interface PendingApprovalRow extends Approval {
  task_status: TaskStatus;
  task_assignee: string | null;
  task_notes: string;
  project_id: string | null;
  project_name: string | null;
  /** Which person a `human` task assignee is, and their shown name. */
  task_assignee_person_id: string | null;
  task_assignee_person_name: string | null;
}

/**
 * One page of the pending approvals of live tasks, newest first, with their
 * task (notes cut to `clip` characters) and project.
 */
export function selectPendingNewestFirst(db: D1Database, accountId: string, limit: number, offset: number, clip: number): D1PreparedStatement {
  return db
    .prepare(
      `SELECT ${APPROVAL_COLUMNS}, t.status AS task_status, t.assignee AS task_assignee, substr(t.notes, 1, ?4) AS task_notes,
              t.project_id, p.name AS project_name,
              t.assignee_person_id AS task_assignee_person_id, ${personNameOf("t.assignee_person_id")} AS task_assignee_person_name
         ${FROM_LIVE} LEFT JOIN projects p ON p.id = t.project_id AND p.account_id = t.account_id
        WHERE a.account_id = ?1 AND a.status = 'pending' ORDER BY a.created_at DESC, a.id DESC LIMIT ?2 OFFSET ?3`,
    )
    .bind(accountId, limit, offset, clip);
}

/** The task ids of that page, as a subquery. Binds: ?1 account id, ?2 limit, ?5 offset. */
export const PENDING_TASK_IDS =
  `SELECT a.task_id ${FROM_LIVE} WHERE a.account_id = ?1 AND a.status = 'pending' ORDER BY a.created_at DESC, a.id DESC LIMIT ?2 OFFSET ?5`;

export interface NewApproval {
  id: string;
  kind: ApprovalKind;
  accountId: string;
  taskId: string;
  taskTitle: string;
  question: string;
  requestedBy: string;
  requestedByToken: string;
  now: string;
  /** A question's choices (none: yes/no) and whether it takes words; request_approval's alone. */
  choices?: string[] | null;
  acceptsWords?: boolean;
}

export function insertApproval(db: D1Database, a: NewApproval): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO approvals (id, account_id, task_id, kind, status, question, requested_by, requested_by_token, created_at)
       VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
    )
    .bind(a.id, a.accountId, a.taskId, a.kind, a.question, a.requestedBy, a.requestedByToken, a.now);
}

/** The approval as `insertApproval` wrote it. */
export function newApprovalValue(a: NewApproval): Approval {
  return {
    id: a.id,
    task_id: a.taskId,
    task_title: a.taskTitle,
    kind: a.kind,
    status: "pending",
    question: a.question,
    requested_by: a.requestedBy,
    decided_by: null,
    reason: null,
    created_at: a.now,
    decided_at: null,
    decided_by_person: null,
    choices: a.choices ?? null,
    accepts_words: a.acceptsWords ?? false,
    answer: null,
  };
}

/** A decision: its status, who decided (`human` or the agent's name) and, a person's, which person; `answer`, a question's answer by choice or in words. */
export interface Decision {
  status: Exclude<ApprovalStatus, "pending">;
  decidedBy: string;
  /** The person who decided (Principal.person); null for an agent or a token of no person. */
  decidedByPerson: PersonRef | null;
  reason: string | null;
  now: string;
  answer?: ApprovalAnswer | null;
}

/** Decides a pending approval (approved, rejected or closed); touches nothing already decided. */
export function decideApproval(db: D1Database, accountId: string, id: string, d: Decision): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE approvals SET status = ?, decided_by = ?, reason = ?, decided_at = ?, decided_by_person_id = ?, answer_choice = ?, answer_words = ?
        WHERE id = ? AND account_id = ? AND status = 'pending'`,
    )
    .bind(d.status, d.decidedBy, d.reason, d.now, d.decidedByPerson?.id ?? null, d.answer?.choice ?? null, d.answer?.words ?? null, id, accountId);
}

export function decidedValue(a: Approval, d: Decision): Approval {
  const answer = d.answer && (d.answer.choice !== null || d.answer.words !== null) ? d.answer : null;
  return { ...a, status: d.status, decided_by: d.decidedBy, reason: d.reason, decided_at: d.now, decided_by_person: d.decidedByPerson, answer };
}

/** Guard: this approval is still pending. */
export function approvalIsPending(c: { approvalId: string; accountId: string }): Condition {
  return { sql: "EXISTS (SELECT 1 FROM approvals WHERE id = ? AND account_id = ? AND status = 'pending')", binds: [c.approvalId, c.accountId] };
}

/** A person's answer to a question, as get_task shows it. */
export interface LatestAnswer {
  id: string;
  question: string;
  answer: "yes" | "no";
  reason: string | null;
  decided_by: string;
  decided_at: string;
  decided_by_person: PersonRef | null;
  /** The choice the person picked, of a question that offered choices. */
  choice: string | null;
  /** The person's answer in words. */
  words: string | null;
}

/** A latest answer as get_task shows it: the person who answered as one value. */
export function toLatestAnswer(row: Omit<LatestAnswer, "decided_by_person"> & { decided_by_person_id: string | null; decided_by_person_name: string | null }): LatestAnswer {
  const { decided_by_person_id, decided_by_person_name, ...rest } = row;
  return { ...rest, decided_by_person: personRef(decided_by_person_id, decided_by_person_name) };
}

/** The task's latest answered question (null: none answered); its row goes through toLatestAnswer. */
export function selectLatestAnswer(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT a.id, a.question, CASE a.status WHEN 'approved' THEN 'yes' ELSE 'no' END AS answer, a.reason, a.decided_by, a.decided_at,
              a.decided_by_person_id, ${personNameSql("dp")} AS decided_by_person_name, a.answer_choice AS choice, a.answer_words AS words
         FROM approvals a LEFT JOIN people dp ON dp.id = a.decided_by_person_id WHERE a.task_id = ? AND a.account_id = ? AND a.kind = 'question' AND a.status IN ('approved', 'rejected')
        ORDER BY a.decided_at DESC, a.id DESC LIMIT 1`,
    )
    .bind(taskId, accountId);
}

/** A pending request as get_task and the console's task page show it. */
export interface PendingRequest {
  id: string;
  kind: ApprovalKind;
  question: string;
  requested_by: string;
  created_at: string;
  choices: string[] | null;
  accepts_words: boolean;
}

/** A pending request's row (taskDetailStatements' `approval`) as shown: its choices as a list. */
export function toPendingRequest(row: Omit<PendingRequest, "choices" | "accepts_words"> & Pick<StoredApprovalColumns, "choices" | "accepts_words">): PendingRequest {
  return { ...row, choices: row.choices === null ? null : (JSON.parse(row.choices) as string[]), accepts_words: row.accepts_words === 1 };
}

/** Guard: the task has no pending approval. */
export function noPendingApproval(c: { taskId: string; accountId: string }): Condition {
  return { sql: "NOT EXISTS (SELECT 1 FROM approvals WHERE task_id = ? AND account_id = ? AND status = 'pending')", binds: [c.taskId, c.accountId] };
}
