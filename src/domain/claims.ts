import { actorName, type Principal } from "./principal.ts";

/**
 * The claim rule, in one place. A task is claimed while it is in_progress and
 * assigned to an agent (claim_task makes it so). While it is, another agent's
 * work on it (start_run, complete_task, request_approval) is refused, naming
 * the holder; the holder and any person may still do everything.
 *
 * src/db/claims.ts is the same rule as an SQL condition, checked inside each of
 * those writes' batches so that a claim taken between a call's read and its
 * write still stops it. Change the two together (test/claims.test.ts holds
 * them to the same answers); a claim lease would add its expiry to both.
 */

/** What the rule reads of a task. */
export interface ClaimFields {
  id: string;
  status: string;
  assignee: string | null;
}

/** The assignee name of the account's person (not an agent). */
export const PERSON_ASSIGNEE = "human";

/** The tools a claim keeps other agents from. */
export type ClaimGuardedTool = "start_run" | "complete_task" | "request_approval";

const DOING: Record<ClaimGuardedTool, string> = {
  start_run: "start a run on it",
  complete_task: "complete it",
  request_approval: "request an approval on it",
};

/** The agent that holds a claim on the task, or null when none does. */
export function claimHolder(t: ClaimFields): string | null {
  return t.status === "in_progress" && t.assignee !== null && t.assignee !== PERSON_ASSIGNEE ? t.assignee : null;
}

/** Why this caller may not run `tool` on the task because another agent holds it, or null when it may. */
export function claimRefusal(p: Principal, t: ClaimFields, tool: ClaimGuardedTool): string | null {
  if (p.kind === "human") return null;
  const holder = claimHolder(t);
  const me = actorName(p);
  if (holder === null || holder === me) return null;
  return (
    `task ${t.id} is claimed by agent ${holder} (in progress and assigned to it), so ${me} may not ${DOING[tool]}. ` +
    "Pick another task (list_tasks with unassigned: true, or list_my_tasks), or ask a person to reassign it to you (assign_task)."
  );
}
