import { PERSON_ASSIGNEE } from "./claims.ts";

/**
 * What a caller is told when the consent rules refuse a write (C1–C5 of
 * docs/approvals-and-claims.md). The rules are enforced on the rows (the
 * triggers of schema.sql); these sentences say which rule, whose rows, and
 * the way on.
 */

/** Argument names that carry consent: an agent passing one is refused whatever its value. */
export const CONSENT_FIELDS: ReadonlySet<string> = new Set(["auto_ok", "default_auto_ok"]);

/** The consent fields among a call's arguments (top level, and inside lists of objects such as decompose_task's subtasks). */
export function consentFieldsIn(args: Record<string, unknown>): string[] {
  const found = new Set<string>();
  for (const [k, v] of Object.entries(args)) {
    if (CONSENT_FIELDS.has(k) && v !== undefined) found.add(k);
    if (Array.isArray(v)) for (const item of v) if (item && typeof item === "object") for (const f of consentFieldsIn(item as Record<string, unknown>)) found.add(f);
  }
  return [...found];
}

/** C2 at the door: an agent passed a consent field. */
export function consentFieldRefusal(tool: string, fields: string[]): string {
  const which = fields.map((f) => `\`${f}\``).join(" and ");
  return (
    `${tool} was not run: ${which} is the person's choice, and an agent may not set it (nothing was written). ` +
    "Call again without it: a new task takes auto-OK from its project, else the account. " +
    "Ask the person to decide; they set it with set_auto_ok on a task, or a project's default auto-OK in the console."
  );
}

export interface HeldBy {
  id: string;
  title: string;
  status: string;
  holder: string;
  claim_expires_at: string | null;
}

const whose = (holder: string) => (holder === PERSON_ASSIGNEE ? "the person" : `agent ${holder}`);

function state(t: HeldBy): string {
  if (t.status === "awaiting_approval") return "awaiting a person's sign-off";
  if (t.status === "blocked") return "blocked";
  return `in progress${t.claim_expires_at ? `, lease until ${t.claim_expires_at}` : ""}`;
}

/** C1: the call would have changed rows of tasks others hold. */
export function claimRefusalFor(me: string, tool: string, held: HeldBy[]): string {
  const first = held[0];
  const named = first
    ? `task ${first.id} ("${first.title.slice(0, 80)}") is held by ${whose(first.holder)} (${state(first)})` +
      (held.length > 1 ? `, and ${held.slice(1).map((t) => `${t.id} by ${whose(t.holder)}`).join(", ")} too` : "")
    : "a task this call reaches is held by someone else";
  return (
    `${named}, so ${me} may not change it or what belongs to it through ${tool}; nothing was written. ` +
    "While a task is held, only its holder and a person may change it, its steps, runs, requests, labels, dependencies, links " +
    "and its place in the tree (subtasks, its parent, its project). comment_on_task stays open to everyone: ask a person there, or pick another task (list_tasks with unassigned: true)."
  );
}

/** C2 at the rows: a consent value would have changed. */
export function consentRefusal(tool: string): string {
  return (
    `${tool} would change what only the person decides (auto-OK on a task or a project's default, the account's settings, pausing an agent, revoking a token), so nothing was written. ` +
    "Ask the person: they use set_auto_ok, pause_agent, resume_agent, update_account_settings or the console."
  );
}

export interface PendingRequest {
  id: string;
  task_id: string;
  kind: string;
  requested_by: string;
}

/** C3: an agent would have decided or closed a pending request. */
export function decisionRefusal(me: string, tool: string, pending: PendingRequest[]): string {
  const p = pending[0];
  const what = p ? `${p.kind === "question" ? "question" : "sign-off"} ${p.id} on task ${p.task_id} (asked by ${p.requested_by})` : "a pending request";
  const own = p && p.requested_by === me;
  return (
    `${what} waits for a person: only a person decides it (approve_task, reject_task), so ${tool} wrote nothing. ` +
    (own
      ? `${me} asked it and may withdraw it with request_approval {"task_id": "${p.task_id}", "withdraw": true}, or wait: get_task shows the answer.`
      : "Wait for the person's answer (get_task shows it), or ask them in a comment.")
  );
}

/** C4: an agent would have undone what a person decided. */
export function undoRefusal(tool: string): string {
  return (
    `a person decided this (completed, approved or cancelled the task, trashed the item, or archived the project), and an agent may not undo it; ${tool} wrote nothing. ` +
    "Ask the person in a comment (comment_on_task) if it should change."
  );
}

/** C5: a paused agent would have been given something. */
export function pausedRefusal(tool: string, names: string[]): string {
  const who = names.length ? `agent ${names.join(", ")} is paused` : "the agent is paused";
  return `${who}: nothing may be given to it until a person resumes it (resume_agent), so ${tool} wrote nothing. Give the task to another agent, or leave it unassigned.`;
}

/** Every string an argument holds (ids among them), for finding what a refused call reached. */
export function namedIds(args: Record<string, unknown>): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string" && v.length <= 100) out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(args);
  return out.slice(0, 100);
}

/** An agent would have completed a task that waits on unfinished work (in the trash or not). */
export function waitsRefusal(tool: string, waits: { task_id: string; id: string; title: string; status: string; trash_id: string | null }[]): string {
  const on = waits.map((w) => `${w.id} ("${w.title.slice(0, 80)}", ${w.status}${w.trash_id ? `, in the trash as ${w.trash_id}` : ""})`).join(", ");
  const task = waits[0]?.task_id ?? "the task";
  const trashed = waits.some((w) => w.trash_id);
  return (
    `task ${task} waits on unfinished work${on ? `: ${on}` : ""}, so ${tool} did not complete it; nothing was written. ` +
    "An agent completes it once what it waits on is done or cancelled (list_dependencies shows it)" +
    (trashed ? "; a task in the trash still counts as unfinished until it is restored (restore_from_trash) and finished" : "") +
    "; a person may complete it anyway or drop the link."
  );
}

/** A person's gate: an agent would have removed a dependency a person added. */
export function gateRefusal(me: string, tool: string): string {
  return (
    `a person made this task wait on another (a dependency they added), and only a person lifts that gate, so ${me} may not remove it through ${tool}; nothing was written. ` +
    "Finish what the task waits on, or ask the person in a comment (comment_on_task) to remove the dependency."
  );
}

/**
 * The rules failed closed: a batch recorded no caller. Never the caller's
 * doing (every write of a tool call records it), so this is an internal
 * error, logged and answered as one; the words say what happened for the log.
 */
export function nocallerRefusal(tool: string): string {
  return `${tool}: this write named no caller and was refused; nothing was written.`;
}

/** The task a call acts on, as its arguments name it: the task itself, or the task of a named step; null when they name neither. */
export function namedTarget(args: Record<string, unknown>): { task_id: string } | { step_id: string } | null {
  if (typeof args.task_id === "string") return { task_id: args.task_id };
  if (typeof args.step_id === "string") return { step_id: args.step_id };
  return null;
}
