import type { Condition } from "../catalog/tool.ts";
import type { PersonRef } from "../domain/principal.ts";
import { assignSet } from "./task-writes.ts";
import { HANDED_OFF, RELEASED, sqlLiteral, UNASSIGNED, ASSIGNED } from "./summaries.ts";

/**
 * What assign_task ends when it takes a task from the one who holds it: its
 * holder's release (the assignee cleared) or hand-off (given to another
 * agent), or a person's. All of it reads the task row as it is before the
 * change, inside the one batch, so a claim taken or ended a moment earlier
 * counts.
 *
 * A task is *held* here as its assignee holds it: in progress (a claim, live
 * or lapsed but not taken over), blocked or awaiting sign-off. Releasing a
 * claim that lapsed is still its release; the view `holds` of schema.sql,
 * which decides who may call, counts only a live claim.
 */
const HELD_BY_ASSIGNEE = "assignee IS NOT NULL AND status IN ('in_progress', 'blocked', 'awaiting_approval')";

/** A task with nobody is not in progress: unassigned, in_progress goes back to open (and so does a block's status to return to). */
const REOPEN_UNASSIGNED = "CASE WHEN status = 'in_progress' THEN 'open' ELSE status END";

/**
 * assign_task's SET: the new assignee with its lease (the old one's goes with
 * it); cleared, a task in progress is open again.
 */
export function reassignSet(
  assignee: string | null,
  lease: { claim_expires_at: string | null; claim_lease_minutes: number | null },
  person: PersonRef | null,
): Condition {
  const set = assignSet(assignee, lease, person);
  if (assignee !== null) return set;
  return {
    sql: `${set.sql}, status = ${REOPEN_UNASSIGNED},
      status_before_block = CASE WHEN status_before_block = 'in_progress' THEN 'open' ELSE status_before_block END`,
    binds: set.binds,
  };
}

/** Who holds the task before the change (none: no row). Named in the batch before the task's update. */
export function selectHolder(db: D1Database, accountId: string, taskId: string): D1PreparedStatement {
  return db
    .prepare(`SELECT assignee AS holder, status FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL AND ${HELD_BY_ASSIGNEE}`)
    .bind(taskId, accountId);
}

/** The holder read by selectHolder, or null. */
export const holderIn = (rows: unknown[] | undefined): string | null => (rows?.[0] as { holder: string } | undefined)?.holder ?? null;

/** endRunsOfReassigned's `holder` for a release: whoever holds the task. */
export const ANY_HOLDER = { any: true } as const;

/**
 * Ends the task's running runs as cancelled (all but `keep`'s, the new
 * assignee's), with why in the summary, and answers their ids. The reason
 * is `held` when `holder` (or anyone, ANY_HOLDER) holds the task before the
 * change (its release or hand-off), else `otherwise`. Placed before the
 * task's update.
 */
export function endRunsOfReassigned(
  db: D1Database,
  accountId: string,
  taskId: string,
  o: { keep: string | null; holder: string | null | typeof ANY_HOLDER; held: string; otherwise: string; now: string },
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE runs SET status = 'cancelled', finished_at = ?2, last_event_at = ?2,
          summary = CASE WHEN EXISTS (SELECT 1 FROM tasks t WHERE t.id = ?4 AND t.account_id = ?3 AND t.assignee = coalesce(?6, t.assignee) AND ?8 = 1
                                        AND t.status IN ('in_progress', 'blocked', 'awaiting_approval')) THEN ?7 ELSE ?1 END
        WHERE account_id = ?3 AND status = 'running' AND task_id = ?4
          AND (?5 IS NULL OR agent_id IS NOT (SELECT id FROM agents WHERE account_id = ?3 AND name = ?5))
        RETURNING id`,
    )
    .bind(o.otherwise, o.now, accountId, taskId, o.keep, typeof o.holder === "string" ? o.holder : null, o.held, o.holder === null ? 0 : 1);
}

/**
 * assign_task's history row, over the task before: cleared from a holder, a
 * release naming both; given by its holding agent `giver` to another agent,
 * a hand-off; otherwise the plain assignment.
 */
export function reassignedSummary(o: { by: string; assignee: string | null; giver: string | null; until: string | null }): Condition {
  if (o.assignee === null) {
    const released = RELEASED.sql({ holder: { sql: "assignee" }, status: { sql: `(${REOPEN_UNASSIGNED})` } }, { by: o.by });
    const plain = sqlLiteral(UNASSIGNED.text());
    return { sql: `CASE WHEN ${HELD_BY_ASSIGNEE} THEN ${released.sql} ELSE ${plain.sql} END`, binds: released.binds };
  }
  const assigned = ASSIGNED.sql({}, { assignee: o.assignee });
  if (o.giver === null) return assigned;
  const handed = HANDED_OFF.sql({}, { from: o.giver, to: o.assignee, until: o.until ?? "none" });
  return {
    sql: `CASE WHEN assignee = ? AND ${HELD_BY_ASSIGNEE} THEN ${handed.sql} ELSE ${assigned.sql} END`,
    binds: [o.giver, ...handed.binds, ...assigned.binds],
  };
}
