/**
 * A person's decision of a pending action (a call an agent's policy asked
 * about; src/db/pending-actions.ts): approve_task and reject_task with an
 * `approval_id`. Approved, the decision commits first (guarded: still pending,
 * not expired), then the call runs once, as the agent (the registry lends the
 * run: ctx.runApproved), and its result is kept; deciding again applies
 * nothing and answers with what is kept. Rejected or expired, nothing runs.
 */
import { ACTION_EXPIRED, ANSWER_REASON, APPROVED_ACTION, REJECTED_ACTION } from "../db/summaries.ts";
import { conflict, invalid } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { named, type ToolContext } from "../catalog/tool.ts";
import { requireApproval } from "../db/approvals.ts";
import { findTask, toTask, type Task } from "../db/tasks.ts";
import {
  actionApproval, actionDecided, actionIsDecidable, decideAction, effectiveStatus, expireAction, findPendingAction, recordActionResult,
  selectPendingAction, toolTitle, type ActionApproval, type PendingActionWithTask,
} from "../db/pending-actions.ts";

/** What a decision names: a task (its pending request) or a pending action. */
export type DecisionTarget = { kind: "task"; taskId: string } | { kind: "action"; row: PendingActionWithTask };

/**
 * Exactly one of task_id and approval_id. An approval_id of a question or a
 * sign-off decides its task's request, as task_id does.
 */
export async function decisionTarget(ctx: ToolContext, tool: string, args: { task_id?: string; approval_id?: string }): Promise<DecisionTarget> {
  if (args.task_id !== undefined && args.approval_id !== undefined) {
    throw invalid(`${tool}: pass task_id or approval_id, not both (approval_id names a pending action or one approval; task_id a task's pending request).`);
  }
  if (args.task_id !== undefined) return { kind: "task", taskId: args.task_id };
  if (args.approval_id === undefined) {
    throw invalid(`${tool}: pass task_id (a task's pending question or sign-off) or approval_id (list_pending_approvals names them, pending actions among them).`);
  }
  const row = await findPendingAction(ctx.db, ctx.principal.accountId, args.approval_id);
  if (row) return { kind: "action", row };
  const approval = await requireApproval(ctx.db, ctx.principal.accountId, args.approval_id);
  return { kind: "task", taskId: approval.task_id };
}

/** The action's task as it is now (null: it names none, or the task is gone). */
async function taskOf(ctx: ToolContext, row: PendingActionWithTask): Promise<Task | null> {
  if (!row.task_id) return null;
  const t = await findTask(ctx.db, ctx.principal.accountId, row.task_id);
  return t ? toTask(t) : null;
}

const read = (ctx: ToolContext, id: string) => findPendingAction(ctx.db, ctx.principal.accountId, id) as Promise<PendingActionWithTask>;

/** Refuses a decision of an action that is no longer open, saying what it is. */
function closed(view: ActionApproval, verb: string): never {
  const what = `pending action ${view.id} (${view.action.title}, asked by ${view.requested_by})`;
  if (view.status === "expired") throw conflict(`${what} expired at ${view.action.expires_at} before a person decided it; nothing ran and nothing can be ${verb} now. The agent may ask again.`);
  if (view.status === "withdrawn") throw conflict(`${what} was withdrawn by the agent that asked; nothing ran.`);
  if (view.status === "rejected") throw conflict(`${what} was already rejected${view.decided_by ? ` by ${view.decided_by}` : ""}; nothing ran, and it cannot be ${verb} now. The agent may ask again.`);
  throw conflict(`${what} was already approved and ran; get_approval shows its result.`);
}

/** Marks an action past its expiry as expired (a person's batch), so the record says so. */
async function markExpired(ctx: ToolContext, row: PendingActionWithTask): Promise<void> {
  if (row.status !== "pending") return;
  await ctx.commitWithResults({
    statements: [expireAction(ctx.db, ctx.principal.accountId, row.id, ctx.now)],
    activity: { target: row.task_id ?? row.id, summary: ACTION_EXPIRED.text({ action: row.id, tool: row.tool }) },
  });
}

/** Runs an approved action once and keeps its result; a second recording changes nothing. */
async function runAndRecord(ctx: ToolContext, row: PendingActionWithTask): Promise<PendingActionWithTask> {
  const a = ctx.principal.accountId;
  const result = await ctx.runApproved({ id: row.id, accountId: a, tokenId: row.token_id, tool: row.tool, arguments: JSON.parse(row.arguments) as Record<string, unknown> });
  const ranAt = new Date().toISOString();
  const { rows } = await ctx.commitWithResults({
    statements: [named("recorded", recordActionResult(ctx.db, a, row.id, JSON.stringify(result), ranAt)), named("action", selectPendingAction(ctx.db, a, row.id))],
    // Bookkeeping: the run wrote its own history, as the agent.
    activity: null,
    events: (r, changes) => {
      const now = r.action[0] as PendingActionWithTask;
      return changes.recorded ? [actionDecided(a, ranAt, now, actionApproval(now, ranAt))] : [];
    },
  });
  return rows.action[0] as PendingActionWithTask;
}

/**
 * approve_task on a pending action: the decision, then the run as the agent,
 * then its result kept; answered with the approval and its result. Approved
 * already: nothing applied again (a run cut short before its result was kept
 * is finished under the same key, which replays what it applied).
 */
export async function approveAction(ctx: ToolContext, first: PendingActionWithTask, note: string | null) {
  const { db, principal: p, now } = ctx;
  const a = p.accountId;
  let row = first;
  let changed = false;
  if (effectiveStatus(row, now) === "pending") {
    const id = row.id;
    changed = await ctx.write({
      subject: `pending action ${id}`,
      apply: async (miss) => {
        await ctx.commitWithResults({
          statements: [
            ctx.guard(actionIsDecidable({ id, accountId: a, now }), miss),
            decideAction(db, a, id, { status: "approved", decidedBy: actorName(p), decidedByToken: p.tokenId, decidedByPerson: p.person, note, now }),
          ],
          activity: { target: row.task_id ?? id, summary: APPROVED_ACTION.text({ title: toolTitle(row.tool), tool: row.tool, agent: row.requested_by, action: id, note: note ? ANSWER_REASON.text({ reason: note }) : "" }) },
        });
        return true;
      },
      // Decided (or expired) meanwhile: read again below and answered as it is.
      diagnose: async () => false,
    });
    row = await read(ctx, id);
  }
  const status = effectiveStatus(row, now);
  if (status === "expired") await markExpired(ctx, row);
  if (status !== "approved") closed(actionApproval(row, now), "approved");
  if (row.ran_at === null) row = await runAndRecord(ctx, row);
  return { task: await taskOf(ctx, row), approval: actionApproval(row, ctx.now), next_occurrence: null, changed };
}

/** reject_task on a pending action: rejected with the reason, nothing run; the same rejection again changes nothing. */
export async function rejectAction(ctx: ToolContext, first: PendingActionWithTask, reason: string) {
  const { db, principal: p, now } = ctx;
  const a = p.accountId;
  let row = first;
  if (effectiveStatus(row, now) === "pending") {
    const id = row.id;
    const decided = await ctx.write({
      subject: `pending action ${id}`,
      apply: async (miss) => {
        const { rows } = await ctx.commitWithResults({
          statements: [
            ctx.guard(actionIsDecidable({ id, accountId: a, now }), miss),
            decideAction(db, a, id, { status: "rejected", decidedBy: actorName(p), decidedByToken: p.tokenId, decidedByPerson: p.person, note: reason, now }),
            named("action", selectPendingAction(db, a, id)),
          ],
          activity: { target: row.task_id ?? id, summary: REJECTED_ACTION.text({ title: toolTitle(row.tool), tool: row.tool, agent: row.requested_by, action: id, reason }) },
          events: (r) => {
            const after = r.action[0] as PendingActionWithTask;
            return [actionDecided(a, now, after, actionApproval(after, now))];
          },
        });
        return rows.action[0] as PendingActionWithTask;
      },
      // Decided (or expired) meanwhile: read again below and answered as it is.
      diagnose: async () => null,
    });
    if (decided) return { task: await taskOf(ctx, decided), approval: actionApproval(decided, now), comment_id: null, changed: true };
    row = await read(ctx, id);
  }
  const view = actionApproval(row, now);
  if (view.status === "expired") await markExpired(ctx, row);
  if (view.status === "rejected" && row.note === reason) return { task: await taskOf(ctx, row), approval: view, comment_id: null, changed: false };
  return closed(view, "rejected");
}
