import { actorName, type Principal } from "./principal.ts";

/**
 * The claim rule, in one place. A task is claimed while it is in_progress and
 * assigned to an agent (claim_task makes it so) and its lease has not run out.
 * While it is, another agent's writes on it (the claim-guarded tools of
 * src/catalog/effects.ts) are refused, naming the holder; the holder and any
 * person may still do everything, and comments stay open to all. A lapsed
 * claim is no claim: another agent's claim_task takes the task over. A claim
 * without a lease (a person's assignment, or one made before leases) never
 * lapses; an agent's claim, by claim_task or assign_task, has one.
 *
 * A claim is one way of holding a task (holderOf); the consent rules of
 * schema.sql hold every row of a held task, read through the view `holds`,
 * inside every batch, so that a claim taken between a call's read and its
 * write still stops it.
 */

/** What the rule reads of a task. */
export interface ClaimFields {
  id: string;
  status: string;
  assignee: string | null;
  /** When the agent's lease runs out (ISO 8601 UTC); null: no lease. */
  claim_expires_at: string | null;
}

/** The assignee name of the account's person (not an agent). */
export const PERSON_ASSIGNEE = "human";

/** claim_task's lease, in minutes. */
export const LEASE_MINUTES = { default: 30, min: 1, max: 1440 } as const;

/** What a refused call would have done, for the tools whose verb is not "change it". */
const DOING: Record<string, string> = {
  claim_task: "take it over",
  assign_task: "release or reassign it",
  start_run: "start a run on it",
  log_run_event: "log to a run on it",
  finish_run: "finish a run on it",
  cancel_run: "cancel a run on it",
  complete_task: "complete it",
  request_approval: "ask a question or request a sign-off on it",
  delete_task: "delete it",
};

/** In progress and assigned to an agent: a claim, live or lapsed. */
function agentHeld(t: ClaimFields): boolean {
  return t.status === "in_progress" && t.assignee !== null && t.assignee !== PERSON_ASSIGNEE;
}

/**
 * Who holds the task at `now`, the one definition of "held" (C1 of
 * docs/approvals-and-claims.md): its assignee, an agent or the person, while
 * the task is blocked or awaiting sign-off, or in progress with a claim whose
 * lease has not run out (a claim without a lease never lapses). The view
 * `holds` of schema.sql, which every consent rule and refusal reads, is this
 * rule in SQL; test/claims.test.ts holds the two to the same answers.
 */
export function holderOf(t: ClaimFields, now: string): string | null {
  if (t.assignee === null) return null;
  if (t.status === "blocked" || t.status === "awaiting_approval") return t.assignee;
  return t.status === "in_progress" && (t.claim_expires_at === null || t.claim_expires_at > now) ? t.assignee : null;
}

/** The agent that holds a claim on the task at `now` (held, in progress, by an agent), or null (a lapsed claim holds nothing). */
export function claimHolder(t: ClaimFields, now: string): string | null {
  return agentHeld(t) ? holderOf(t, now) : null;
}

/** The agent whose claim on the task has lapsed at `now` (its lease ran out), or null. */
export function lapsedHolder(t: ClaimFields, now: string): string | null {
  return agentHeld(t) && t.claim_expires_at !== null && t.claim_expires_at <= now ? t.assignee : null;
}

/** When the agent's claim on the task lapses (past: it has lapsed), or null: no claim, a person's, or one without a lease. */
export function claimExpiry(t: ClaimFields): string | null {
  return agentHeld(t) ? t.claim_expires_at : null;
}

/** The lease's end for a claim made or renewed at `nowMs`. */
export function leaseEnd(nowMs: number, minutes: number): string {
  return new Date(nowMs + minutes * 60_000).toISOString();
}

/**
 * Why this caller may not run `tool` (a claim-guarded tool, src/catalog/effects.ts) on the
 * task because another agent holds it, or null when it may. The way on is a
 * person's decision or another task, never a tool that would take it anyway.
 */
export function claimRefusal(p: Principal, t: ClaimFields, tool: string, now: string): string | null {
  if (p.kind === "human") return null;
  const holder = claimHolder(t, now);
  const me = actorName(p);
  if (holder === null || holder === me) return null;
  return (
    `task ${t.id} is claimed by agent ${holder} (in progress and assigned to it${t.claim_expires_at ? `, lease until ${t.claim_expires_at}` : ""}), ` +
    `so ${me} may not ${DOING[tool] ?? "change it"} (${tool}). While an agent holds a task, only it and a person may change it. ` +
    "Ask a person to decide (comment_on_task stays open to everyone), or pick another task (list_tasks with unassigned: true, or list_my_tasks)."
  );
}
