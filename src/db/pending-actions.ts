/**
 * Pending actions: a call an agent's policy asks the person about
 * (src/catalog/policy.ts "ask"), stored as the agent made it and not run. A
 * person approves it (the server then runs it once, as the agent, and keeps
 * its result here) or rejects it; the agent that asked may withdraw it; past
 * expires_at it is expired, whether or not the daily job marked it yet.
 * schema.sql's consent_action_decision holds who decides (C3).
 */
import { personRef, type PersonRef } from "../domain/principal.ts";
import { personNameOf } from "./people.ts";
import type { Condition } from "../catalog/tool.ts";
import { TOOL_TITLES, isToolName } from "../catalog/effects.ts";
import type { ReachedRow } from "../catalog/policy.ts";
import { notFound } from "../domain/errors.ts";
import { newEvent, type EventTask, type TaskgateEvent } from "../domain/events.ts";
import type { CursorKey } from "./cursor.ts";
import { serverBatch } from "./consent.ts";
import { notMoving } from "./move-account.ts";
import { SERVER_WRITERS } from "./server-caller.ts";
import type { TaskStatus } from "../domain/vocabulary.ts";

export const ACTION_STATUSES = ["pending", "approved", "rejected", "expired", "withdrawn"] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

/** How long a pending action waits for a person. */
export const ACTION_TTL_MS = 24 * 3600 * 1000;

export interface PendingActionRow {
  id: string;
  account_id: string;
  agent_id: string;
  token_id: string;
  requested_by: string;
  tool: string;
  arguments: string;
  arguments_hash: string;
  task_id: string | null;
  project_id: string | null;
  rule: string;
  reason: string;
  preview: string;
  status: ActionStatus;
  decided_by: string | null;
  decided_by_token: string | null;
  decided_by_person_id: string | null;
  /** The deciding person's shown name now (read beside the row). */
  decided_by_person_name?: string | null;
  decided_at: string | null;
  note: string | null;
  result: string | null;
  ran_at: string | null;
  created_at: string;
  expires_at: string;
}

/** A pending action with its task as it is now (null when it names none, or the task is gone). */
export interface PendingActionWithTask extends PendingActionRow {
  task_title: string | null;
  task_status: TaskStatus | null;
  task_assignee: string | null;
  task_auto_ok: number | null;
  task_project_id: string | null;
  task_due_at: string | null;
}

/** The stored result of the run: the call's own answer. */
export interface ActionResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** As the tools show it: an approval of kind `action`. */
export interface ActionView {
  tool: string;
  title: string;
  /** Canonical JSON. */
  arguments: string;
  arguments_in_words: string;
  rule: string;
  reason: string;
  touches: ReachedRow[];
  expires_at: string;
  ran_at: string | null;
  result: { is_error: boolean; text: string } | null;
}

export interface ActionApproval {
  id: string;
  task_id: string | null;
  task_title: string | null;
  kind: "action";
  status: ActionStatus;
  question: string;
  requested_by: string;
  decided_by: string | null;
  decided_by_person: PersonRef | null;
  reason: string | null;
  created_at: string;
  decided_at: string | null;
  /** What a question has (an action offers no choices and takes no words). */
  choices: null;
  accepts_words: false;
  answer: null;
  action: ActionView;
}

/** Its status as of `now`: a pending one past its expiry is expired. */
export function effectiveStatus(row: Pick<PendingActionRow, "status" | "expires_at">, now: string): ActionStatus {
  return row.status === "pending" && row.expires_at <= now ? "expired" : row.status;
}

export function toolTitle(tool: string): string {
  return isToolName(tool) ? TOOL_TITLES[tool] : tool;
}

function clip(s: string, n = 80): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** The call's arguments as a person reads them: each field, and each row it names by its name. */
export function argumentsInWords(args: Record<string, unknown>, touches: readonly ReachedRow[]): string {
  const names = new Map(touches.map((r) => [r.id, r]));
  const word = (v: unknown): string => {
    if (typeof v === "string") {
      const row = names.get(v);
      return row ? `${row.kind.replace("_", " ")} “${clip(row.name)}” (${v})` : `“${clip(v)}”`;
    }
    if (Array.isArray(v)) return v.length ? v.map(word).join(", ") : "none";
    if (v && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${k}: ${word(x)}`).join("; ")}}`;
    return String(v);
  };
  const parts = Object.entries(args)
    .filter(([k]) => k !== "idempotency_key")
    .map(([k, v]) => `${k.replaceAll("_", " ")}: ${word(v)}`);
  return parts.length ? parts.join("; ") : "no arguments";
}

function parsed<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** The stored CallToolResult, in the shape an approval shows it. */
export function resultView(stored: string | null): ActionView["result"] {
  const r = parsed<ActionResult | null>(stored, null);
  if (!r) return null;
  // A success's text is the JSON of its structured result (the registry writes it so).
  const text = r.structuredContent && !r.isError ? JSON.stringify(r.structuredContent) : (r.content ?? []).map((c) => c.text ?? "").filter(Boolean).join("\n");
  return { is_error: r.isError === true, text };
}

/** A pending action as an approval of kind `action`, as of `now`. */
export function actionApproval(row: PendingActionRow & { task_title?: string | null }, now: string): ActionApproval {
  const args = parsed<Record<string, unknown>>(row.arguments, {});
  const touches = parsed<ReachedRow[]>(row.preview, []);
  const title = toolTitle(row.tool);
  const words = argumentsInWords(args, touches);
  return {
    id: row.id,
    task_id: row.task_id,
    task_title: row.task_title ?? null,
    kind: "action",
    status: effectiveStatus(row, now),
    question: `${row.requested_by} asks to run “${title}” (${row.tool}): ${words}.`,
    requested_by: row.requested_by,
    decided_by: row.decided_by,
    decided_by_person: personRef(row.decided_by_person_id, row.decided_by_person_name),
    reason: row.note,
    created_at: row.created_at,
    decided_at: row.decided_at,
    choices: null,
    accepts_words: false,
    answer: null,
    action: {
      tool: row.tool,
      title,
      arguments: row.arguments,
      arguments_in_words: words,
      rule: row.rule,
      reason: row.reason,
      touches,
      expires_at: row.expires_at,
      ran_at: row.ran_at,
      result: resultView(row.result),
    },
  };
}

export interface NewPendingAction {
  id: string;
  accountId: string;
  agentId: string;
  tokenId: string;
  requestedBy: string;
  tool: string;
  arguments: string;
  argumentsHash: string;
  taskId: string | null;
  projectId: string | null;
  rule: string;
  reason: string;
  preview: string;
  now: string;
  expiresAt: string;
}

/** The same call's pending action past its expiry, marked expired (so a new one may wait in its place). */
export function expireSameCall(db: D1Database, a: NewPendingAction): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE pending_actions SET status = 'expired' WHERE token_id = ? AND tool = ? AND arguments_hash = ? AND account_id = ?
          AND status = 'pending' AND expires_at <= ?`,
    )
    .bind(a.tokenId, a.tool, a.argumentsHash, a.accountId, a.now);
}

/** A new pending action, unless the same call already waits (pending_actions_one_call): then nothing. */
export function insertPendingAction(db: D1Database, a: NewPendingAction): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO pending_actions (id, account_id, agent_id, token_id, requested_by, tool, arguments, arguments_hash, task_id, project_id,
                                    rule, reason, preview, status, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 'pending', ?14, ?15)
       ON CONFLICT (token_id, tool, arguments_hash) WHERE status = 'pending' DO NOTHING`,
    )
    .bind(a.id, a.accountId, a.agentId, a.tokenId, a.requestedBy, a.tool, a.arguments, a.argumentsHash, a.taskId, a.projectId, a.rule, a.reason, a.preview, a.now, a.expiresAt);
}

const WITH_TASK = `SELECT x.*, ${personNameOf("x.decided_by_person_id")} AS decided_by_person_name, t.title AS task_title, t.status AS task_status, t.assignee AS task_assignee, t.auto_ok AS task_auto_ok,
       t.project_id AS task_project_id, t.due_at AS task_due_at
  FROM pending_actions x LEFT JOIN tasks t ON t.id = x.task_id AND t.account_id = x.account_id AND t.trash_id IS NULL`;

/** The pending action of this call (the one waiting, new or earlier). */
export function selectWaitingCall(db: D1Database, a: Pick<NewPendingAction, "accountId" | "tokenId" | "tool" | "argumentsHash">): D1PreparedStatement {
  return db
    .prepare(`${WITH_TASK} WHERE x.token_id = ? AND x.tool = ? AND x.arguments_hash = ? AND x.account_id = ? AND x.status = 'pending'`)
    .bind(a.tokenId, a.tool, a.argumentsHash, a.accountId);
}

export function selectPendingAction(db: D1Database, accountId: string, id: string): D1PreparedStatement {
  return db.prepare(`${WITH_TASK} WHERE x.id = ? AND x.account_id = ?`).bind(id, accountId);
}

/** A pending action of the account, or null. */
export function findPendingAction(db: D1Database, accountId: string, id: string): Promise<PendingActionWithTask | null> {
  return selectPendingAction(db, accountId, id).first<PendingActionWithTask>();
}

export async function requirePendingAction(db: D1Database, accountId: string, id: string): Promise<PendingActionWithTask> {
  const row = await findPendingAction(db, accountId, id);
  if (!row) throw notFound("approval", id, "list_pending_approvals lists the open ones");
  return row;
}

/** Guard: still pending and not expired at `now`. */
export function actionIsDecidable(c: { id: string; accountId: string; now: string }): Condition {
  return {
    sql: "EXISTS (SELECT 1 FROM pending_actions WHERE id = ? AND account_id = ? AND status = 'pending' AND expires_at > ?)",
    binds: [c.id, c.accountId, c.now],
  };
}

/** A person's decision (approved or rejected), or the asker's withdrawal, of a pending action still open at `now`. */
export function decideAction(
  db: D1Database,
  accountId: string,
  id: string,
  d: { status: "approved" | "rejected" | "withdrawn"; decidedBy: string; decidedByToken: string; decidedByPerson: PersonRef | null; note: string | null; now: string },
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE pending_actions SET status = ?, decided_by = ?, decided_by_token = ?, decided_by_person_id = ?, note = ?, decided_at = ?
        WHERE id = ? AND account_id = ? AND status = 'pending' AND expires_at > ?`,
    )
    .bind(d.status, d.decidedBy, d.decidedByToken, d.decidedByPerson?.id ?? null, d.note, d.now, id, accountId, d.now);
}

/** A pending action past its expiry, marked expired. */
export function expireAction(db: D1Database, accountId: string, id: string, now: string): D1PreparedStatement {
  return db
    .prepare("UPDATE pending_actions SET status = 'expired' WHERE id = ? AND account_id = ? AND status = 'pending' AND expires_at <= ?")
    .bind(id, accountId, now);
}

/** The run's result, kept once (a second recording changes nothing). */
export function recordActionResult(db: D1Database, accountId: string, id: string, result: string, now: string): D1PreparedStatement {
  return db
    .prepare("UPDATE pending_actions SET result = ?, ran_at = ? WHERE id = ? AND account_id = ? AND status = 'approved' AND ran_at IS NULL")
    .bind(result, now, id, accountId);
}

/**
 * The daily job: every pending action past its expiry marked expired, in this
 * database (a moving account's rows wait for the move's end), as the server's
 * writer. Reads treat one as expired already; this makes the record say so.
 */
export async function expirePendingActions(db: D1Database, now: string): Promise<number> {
  const [r] = await serverBatch(db, SERVER_WRITERS.expire, [
    db.prepare(`UPDATE pending_actions SET status = 'expired' WHERE status = 'pending' AND expires_at <= ? AND ${notMoving()}`).bind(now),
  ], now);
  return r.meta.changes ?? 0;
}

/** One page of the account's open pending actions, oldest first (limit + 1 rows). */
export function selectOpenActionsPage(
  db: D1Database,
  accountId: string,
  opts: { projectId?: string; after: CursorKey | null; limit: number },
  now: string,
): D1PreparedStatement {
  const where = ["x.account_id = ?", "x.status = 'pending'", "x.expires_at > ?"];
  const binds: unknown[] = [accountId, now];
  if (opts.projectId) (where.push("x.project_id = ?"), binds.push(opts.projectId));
  if (opts.after) (where.push("(x.created_at > ? OR (x.created_at = ? AND x.id > ?))"), binds.push(opts.after.k, opts.after.k, opts.after.id));
  return db.prepare(`${WITH_TASK} WHERE ${where.join(" AND ")} ORDER BY x.created_at, x.id LIMIT ?`).bind(...binds, opts.limit + 1);
}

/** The account's open pending actions, newest first (the console's inbox). */
export function selectOpenActionsNewestFirst(db: D1Database, accountId: string, now: string, limit: number): D1PreparedStatement {
  return db
    .prepare(`${WITH_TASK} WHERE x.account_id = ? AND x.status = 'pending' AND x.expires_at > ? ORDER BY x.created_at DESC, x.id DESC LIMIT ?`)
    .bind(accountId, now, limit);
}

/** The action's task for an event: as it is now, or null (it names none, or the task is gone). */
function eventTaskOf(row: PendingActionWithTask): EventTask | null {
  if (!row.task_id || row.task_title === null) return null;
  return { id: row.task_id, title: row.task_title, status: row.task_status ?? "open", project_id: row.task_project_id, assignee: row.task_assignee, due_at: row.task_due_at };
}

/** approval.requested for a pending action: what a receiver and the person's devices are told (the tool's title first). */
export function actionRequested(accountId: string, now: string, row: PendingActionWithTask, view: ActionApproval): TaskgateEvent<"approval.requested"> {
  return newEvent("approval.requested", accountId, now, {
    task: eventTaskOf(row),
    approval: { id: view.id, kind: "action", question: view.question, requested_by: view.requested_by, choices: null, accepts_words: false },
    action: { tool: view.action.tool, title: view.action.title, arguments_in_words: view.action.arguments_in_words, expires_at: view.action.expires_at },
  });
}

/** approval.decided: a person approved a pending action (with the run's result) or rejected it. */
export function actionDecided(accountId: string, now: string, row: PendingActionWithTask, view: ActionApproval): TaskgateEvent<"approval.decided"> {
  return newEvent("approval.decided", accountId, now, {
    task: eventTaskOf(row),
    approval: { id: view.id, kind: "action", requested_by: view.requested_by, tool: view.action.tool, title: view.action.title },
    decision: view.status === "approved" ? "approved" : "rejected",
    decided_by: view.decided_by ?? "human",
    note: view.reason,
    result: view.action.result,
  });
}
