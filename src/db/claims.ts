import { PERSON_ASSIGNEE } from "../domain/claims.ts";

/**
 * The claim rule of src/domain/claims.ts (`claimHolder`) as SQL over the
 * tasks table: `CLAIMED` is true of a row held by an agent. Keep the two in
 * step; a claim lease adds its expiry to both.
 */
const CLAIMED = `status = 'in_progress' AND assignee IS NOT NULL AND assignee <> '${PERSON_ASSIGNEE}'`;

export interface Condition {
  condition: string;
  binds: unknown[];
}

/**
 * Guard condition for a write by `actor` (an agent's name) on a task: no other
 * agent holds a claim on it at this point of the batch. A person's writes need
 * no such guard.
 */
export function noClaimByOthers(taskId: string, accountId: string, actor: string): Condition {
  return {
    condition: `NOT EXISTS (SELECT 1 FROM tasks WHERE id = ? AND account_id = ? AND ${CLAIMED} AND assignee <> ?)`,
    binds: [taskId, accountId, actor],
  };
}
