import { z } from "zod";
import { conflict } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import {
  approvalIsPending, APPROVAL_KINDS, APPROVAL_STATUSES, decideApproval, decidedValue, insertApproval, newApprovalValue,
  noPendingApproval, type Approval,
} from "../db/approvals.ts";
import { readTaskState, taskAtVersion, transitioned, transitionTask, type TaskTransition } from "../db/lifecycle.ts";
import { toTask, type Task } from "../db/tasks.ts";
import { claimHolder, claimRefusal, lapsedHolder, LEASE_MINUTES, leaseEnd } from "../domain/claims.ts";
import { lapseUnannounced, NO_LEASE, noticeLapse, readLapse, restartLease } from "../db/claims.ts";
import { AGAIN, defineTool, named, type BatchStep, type Rows } from "../catalog/tool.ts";
import { endTaskRuns } from "../db/runs.ts";
import { claimLapsedEvent, eventTask, newEvent, type TaskgateEvent } from "../domain/events.ts";
import { idempotencyKey, taskId } from "./schemas.ts";
import { CLAIM_EXPIRES, taskShape, waitingDecideUrl } from "./shapes.ts";
import { completedWith, followUp } from "./series.ts";
import { fastOr, writeTaskAtOnce } from "./fast.ts";
import { liveTaskIs, setTask, taskSummary } from "../db/task-writes.ts";
import {
  AUTO_OK_DIFFERS, AUTO_OK_SET, CLAIM_SET, CLAIMABLE, completedByAgentSummary, decidePendingApproval, REOPEN_SET, completableCondition, completeSet, insertApprovalUnlessAutoOk, reopenedSummary, REOPENABLE,
} from "../db/lifecycle-writes.ts";
import {
  APPROVAL_DECIDED, AUTO_OK_OFF, AUTO_OK_ON, CLAIM_STALE_RUN, CLAIM_TAKEOVER, CLAIMED, COMPLETED, COMPLETED_AUTO_OK, COMPLETED_AWAITING, REOPEN_CLOSED, REOPENED, reasonText,
} from "../db/summaries.ts";
import type { TaskRow } from "../db/tasks.ts";

export const REASON_MAX = 2000;

export const approvalShape = z.object({
  id: z.string(),
  task_id: z.string(),
  task_title: z.string(),
  kind: z.enum(APPROVAL_KINDS).describe("question: about unfinished work, answered yes or no (the task stays where it is); signoff: approving completes the task"),
  status: z.enum(APPROVAL_STATUSES),
  question: z.string(),
  requested_by: z.string().describe("`human` or the agent's name"),
  decided_by: z.string().nullable(),
  reason: z.string().nullable().describe("why it was rejected or closed, or the approver's note"),
  created_at: z.string(),
  decided_at: z.string().nullable(),
});

/**
 * Runs a read → decide → commit attempt whose batch is guarded by what it read.
 * When a concurrent call changed those rows first, a guard fails with `lost`
 * and the attempt runs again on the fresh state, which then finds the work
 * done (a no-op) or names who got there first.
 */
export async function optimistic<R>(what: string, attempt: (lost: Error) => Promise<R>): Promise<R> {
  const lost = conflict(`${what} changed while this call ran; read it again and retry.`);
  for (let tries = 1; ; tries++) {
    try {
      return await attempt(lost);
    } catch (e) {
      if (e !== lost || tries >= 3) throw e;
    }
  }
}

/** Why a task's running runs ended when it was completed. */
export const completedBy = (who: string) => `the task was completed by ${who}`;

const DONE: TaskTransition = { status: "done", blocked_reason: null, status_before_block: null };

export const nextOccurrenceShape = taskShape.nullable().describe("the next occurrence its completion created (a recurring task)");

/** The event of a newly opened approval. */
export function approvalRequested(accountId: string, now: string, task: Task, approval: Approval) {
  return newEvent("approval.requested", accountId, now, {
    task: eventTask(task),
    approval: { id: approval.id, kind: approval.kind, question: approval.question, requested_by: approval.requested_by },
  });
}

const completeTask = defineTool({
  name: "complete_task",
  description: "Mark a task done; an agent's task without auto-OK waits for a person's sign-off (awaiting_approval). Returns task, outcome, approval, next_occurrence.",
  input: z.strictObject({
    task_id: taskId,
    note: z.string().trim().min(1).max(REASON_MAX).optional().describe("what was done; the approver reads it"),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({
    task: taskShape,
    outcome: z.enum(["completed", "awaiting_approval", "rejected"]).describe("rejected only in the answer to a host that waited for the person"),
    approval: approvalShape.nullable().describe("the approval this call opened, reused or decided"),
    next_occurrence: nextOccurrenceShape,
    changed: z.boolean(),
    decide_url: waitingDecideUrl,
  }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const me = actorName(p);
    const slowly = async () => {
      return optimistic(`task ${args.task_id}`, async (lost) => {
        const state = await readTaskState(db, a, args.task_id);
        const { task: t, pending, timeZone } = state;
        if (t.status === "done") return { task: toTask(t), outcome: "completed" as const, ...completedWith(state), changed: false };
        if (t.status === "cancelled") throw conflict(`task ${t.id} is cancelled; reopen_task brings it back to open before it can be completed.`);
        const statements = [ctx.guard(taskAtVersion({ taskId: t.id, accountId: a, version: t.version }), lost)];

        if (p.kind === "human" || t.auto_ok === 1) {
          const next = followUp(ctx, t, timeZone);
          const change = { ...DONE, completed_at: now, ...next.change };
          statements.push(transitionTask(db, a, t, change, now), ...next.statements, endTaskRuns(db, a, t.id, completedBy(me), now));
          let approval: Approval | null = null;
          let summary = p.kind === "human" ? COMPLETED.text() : COMPLETED_AUTO_OK.text();
          if (pending) {
            // A person's completion signs off a pending sign-off and closes an open question unanswered. An agent decides
            // nothing (C3): under auto-OK it withdraws its own sign-off request; a question waits for its answer.
            if (p.kind === "agent" && (pending.kind === "question" || pending.requested_by !== me)) throw questionPending(me, t.id, pending);
            const d = p.kind === "human" && pending.kind === "signoff"
              ? { status: "approved" as const, decidedBy: me, reason: args.note ?? null, now }
              : p.kind === "human"
                ? { status: "closed" as const, decidedBy: me, reason: `the task was completed by ${me}`, now }
                : { status: "withdrawn" as const, decidedBy: me, reason: "completed by the agent under auto-OK", now };
            statements.push(ctx.guard(approvalIsPending({ approvalId: pending.id, accountId: a }), lost), decideApproval(db, a, pending.id, d));
            approval = decidedValue(pending, d);
            summary += APPROVAL_DECIDED.text({ approval: pending.id, status: d.status });
          }
          const task = toTask(transitioned(t, change, now));
          const event = newEvent("task.completed", a, now, {
            task: eventTask(task),
            completed_by: me,
            approval_id: approval?.id ?? null,
            next_occurrence: next.next ? { id: next.next.id, due_at: next.next.due_at } : null,
          });
          return ctx.commit(
            { statements, activity: { target: t.id, summary: summary + next.summary }, events: [event] },
            { task, outcome: "completed" as const, approval, next_occurrence: next.next, changed: true },
          );
        }

        if (t.status === "awaiting_approval" && pending?.kind === "signoff") {
          return { task: toTask(t), outcome: "awaiting_approval" as const, approval: pending, next_occurrence: null, changed: false };
        }
        let approval = pending?.kind === "signoff" ? pending : null;
        const closing = "";
        // A question waits for a person's answer (C3): the agent that asked it waits, or withdraws it first.
        if (pending?.kind === "question") throw questionPending(me, t.id, pending);
        if (!approval) {
          const created = {
            id: newId(ID_PREFIX.approval),
            kind: "signoff" as const,
            accountId: a,
            taskId: t.id,
            taskTitle: t.title,
            question: args.note ?? `${me} reports this task done. Approve to complete it, or reject with a reason to send it back.`,
            requestedBy: me,
            requestedByToken: p.tokenId,
            now,
          };
          if (!pending) statements.push(ctx.guard(noPendingApproval({ taskId: t.id, accountId: a }), lost));
          statements.push(insertApproval(db, created));
          approval = newApprovalValue(created);
        }
        let task = t;
        if (t.status !== "awaiting_approval") {
          const change: TaskTransition = { status: "awaiting_approval", blocked_reason: null, status_before_block: null };
          statements.push(transitionTask(db, a, t, change, now));
          task = transitioned(t, change, now);
        }
        const shown = toTask(task);
        const events = approval === pending ? [] : [approvalRequested(a, now, shown, approval)];
        return ctx.commit(
          { statements, activity: { target: t.id, summary: COMPLETED_AWAITING.text({ approval: approval.id }) + closing }, events },
          { task: shown, outcome: "awaiting_approval" as const, approval, next_occurrence: null, changed: true },
        );
      });
    };
    // The usual case in one batch (see completableCondition); the returned row says which way it went.
    return fastOr(async (miss) => {
      const agent = p.kind !== "human";
      const statements: BatchStep<"task">[] = [ctx.guard(completableCondition({ taskId: args.task_id, accountId: a, agent }), miss)];
      const created = {
        id: newId(ID_PREFIX.approval),
        kind: "signoff" as const,
        accountId: a,
        taskId: args.task_id,
        taskTitle: "",
        question: args.note ?? `${me} reports this task done. Approve to complete it, or reject with a reason to send it back.`,
        requestedBy: me,
        requestedByToken: p.tokenId,
        now,
      };
      if (agent) statements.push(insertApprovalUnlessAutoOk(db, created));
      // Done (a person's completion, or an agent's under auto-OK): its running runs end with it.
      statements.push(endTaskRuns(db, a, args.task_id, completedBy(me), now, agent ? { onlyIf: "coalesce(t.auto_ok, 0) = 1" } : {}));
      statements.push(named("task", setTask(db, a, args.task_id, completeSet(agent), [now], now)));
      const outcomeOf = (rows: Rows<"task">) => {
        const task = toTask(rows.task[0] as TaskRow);
        const approval = task.status === "done" ? null : newApprovalValue({ ...created, taskTitle: task.title });
        return { task, approval };
      };
      return ctx.commit(
        {
          statements,
          activity: agent
            ? { target: args.task_id, summarySql: taskSummary(a, args.task_id, completedByAgentSummary(created.id)) }
            : { target: args.task_id, summary: COMPLETED.text() },
          events: (rows) => {
            const { task, approval } = outcomeOf(rows);
            if (approval) return [approvalRequested(a, now, task, approval)];
            return [newEvent("task.completed", a, now, { task: eventTask(task), completed_by: me, approval_id: null, next_occurrence: null })];
          },
        },
        (rows) => {
          const { task, approval } = outcomeOf(rows);
          return approval
            ? { task, outcome: "awaiting_approval" as const, approval, next_occurrence: null, changed: true }
            : { task, outcome: "completed" as const, approval: null, next_occurrence: null, changed: true };
        },
      );
    }, slowly);
  },
});

/** How reopening closes a pending request: a person closes it; an agent withdraws its own (C3: the rows refuse anyone else's). */
const closingStatus = (p: { kind: string }) => (p.kind === "human" ? ("closed" as const) : ("withdrawn" as const));

/** C3: an agent's completion waits while a question is pending (or a request someone else made). */
function questionPending(me: string, taskId: string, pending: Approval) {
  const own = pending.requested_by === me;
  return conflict(
    `task ${taskId} has a pending ${pending.kind === "question" ? "question" : "sign-off"} (${pending.id}${own ? "" : `, asked by ${pending.requested_by}`}): "${pending.question}". ` +
      "Only a person decides it, so the task was not completed. " +
      (own ? `Wait for the answer (get_task shows it), or withdraw it with request_approval {"task_id": "${taskId}", "withdraw": true}, then complete.` : "Wait for the person's answer (get_task shows it)."),
  );
}

const reopenTask = defineTool({
  name: "reopen_task",
  description: "Reopen a done, cancelled or awaiting_approval task, closing its pending approval. Returns task.",
  input: z.strictObject({
    task_id: taskId,
    reason: z.string().trim().min(1).max(REASON_MAX).optional().meta({ detail: "why; recorded in the history and on a closed approval" }),
  }),
  output: z.object({ task: taskShape, closed_approval: approvalShape.nullable(), changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const slowly = async () => {
      return optimistic(`task ${args.task_id}`, async (lost) => {
        const { task: t, pending } = await readTaskState(db, a, args.task_id);
        if (t.status === "open") return { task: toTask(t), closed_approval: null, changed: false };
        if (t.status === "in_progress" || t.status === "blocked") {
          const hint = t.status === "blocked" ? " unblock_task clears a block." : "";
          throw conflict(`task ${t.id} is ${t.status}, not finished: reopen_task brings back done, cancelled or awaiting_approval tasks.${hint}`);
        }
        const change: TaskTransition = { status: "open", completed_at: null };
        const statements = [ctx.guard(taskAtVersion({ taskId: t.id, accountId: a, version: t.version }), lost), transitionTask(db, a, t, change, now)];
        let closed: Approval | null = null;
        if (pending) {
          const d = { status: closingStatus(p), decidedBy: actorName(p), reason: args.reason ?? "task reopened", now };
          statements.push(ctx.guard(approvalIsPending({ approvalId: pending.id, accountId: a }), lost), decideApproval(db, a, pending.id, d));
          closed = decidedValue(pending, d);
        }
        const summary = REOPENED.text({ status: t.status, closed: closed ? REOPEN_CLOSED.text({ approval: closed.id }) : "", reason: reasonText(args.reason) });
        return ctx.commit(
          { statements, activity: { target: t.id, summary } },
          { task: toTask(transitioned(t, change, now)), closed_approval: closed, changed: true },
        );
      });
    };
    return fastOr(async (miss) => {
      const g = liveTaskIs(a, args.task_id, REOPENABLE);
      const close = decidePendingApproval(db, a, args.task_id, { status: closingStatus(p), decidedBy: actorName(p), reason: args.reason ?? "task reopened", now });
      return ctx.commit(
        {
          statements: [ctx.guard(g, miss), named("closed", close), named("task", setTask(db, a, args.task_id, REOPEN_SET, [], now))],
          activity: { target: args.task_id, summarySql: taskSummary(a, args.task_id, reopenedSummary(reasonText(args.reason))) },
        },
        (rows) => {
          const task = toTask(rows.task[0] as TaskRow);
          const closed = rows.closed[0] as Omit<Approval, "task_title"> | undefined;
          return { task, closed_approval: closed ? { ...closed, task_title: task.title } : null, changed: true };
        },
      );
    }, slowly);
  },
});

const leaseMinutes = z
  .number({ error: `must be a whole number of minutes from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max}` })
  .int(`must be a whole number of minutes from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max}`)
  .min(LEASE_MINUTES.min, `must be from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max} minutes`)
  .max(LEASE_MINUTES.max, `must be from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max} minutes`)
  .default(LEASE_MINUTES.default);

const claimTask = defineTool({
  name: "claim_task",
  description:
    "Assign a task to the caller and start it (in_progress); refused while another agent holds it. An agent's claim lapses lease_minutes (1–1440) after its last run event, step status or comment, and may then be taken over. Returns task, claim_expires_at, taken_over_from.",
  input: z.strictObject({ task_id: taskId, lease_minutes: leaseMinutes }),
  output: z.object({
    task: taskShape,
    claim_expires_at: CLAIM_EXPIRES,
    taken_over_from: z.string().nullable(),
    changed: z.boolean(),
  }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const me = actorName(p);
    const lease = p.kind === "agent" ? { claim_expires_at: leaseEnd(ctx.nowMs, args.lease_minutes), claim_lease_minutes: args.lease_minutes } : NO_LEASE;
    const slowly = async () => {
      return optimistic(`task ${args.task_id}`, async (lost) => {
        const { task: t } = await readTaskState(db, a, args.task_id);
        if (t.status === "done" || t.status === "cancelled") {
          throw conflict(`task ${t.id} is ${t.status} and can't be claimed; reopen_task brings it back to open first.`);
        }
        const lapsed = t.assignee !== me ? lapsedHolder(t, now) : null;
        if (t.assignee !== null && t.assignee !== me && !lapsed) {
          const until = claimHolder(t, now) && t.claim_expires_at ? ` Its claim lapses at ${t.claim_expires_at} unless renewed.` : "";
          throw conflict(
            claimRefusal(p, t, "claim_task", now) ??
              `task ${t.id} is claimed by ${t.assignee}.${until} Pick another task (list_tasks with unassigned: true, or list_my_tasks), or ask a person to decide (comment_on_task reaches them).`,
          );
        }
        if (t.status === "awaiting_approval") {
          throw conflict(`task ${t.id} is awaiting a person's approval; approve_task or reject_task decides it first (list_pending_approvals).`);
        }
        if (t.assignee === me && (t.status === "in_progress" || t.status === "blocked")) {
          if (p.kind === "agent" && !(await restartLease(db, a, t.id, me, lease.claim_expires_at as string, args.lease_minutes).run()).meta.changes) throw lost;
          return { task: toTask(t), claim_expires_at: lease.claim_expires_at, taken_over_from: null, changed: false };
        }
        if (t.status === "blocked") {
          throw conflict(`task ${t.id} is blocked (${t.blocked_reason ?? "no reason given"}); unblock_task clears the block before it can be claimed.`);
        }
        const change: TaskTransition = { assignee: me, status: "in_progress", ...lease };
        const statements = [ctx.guard(taskAtVersion({ taskId: t.id, accountId: a, version: t.version }), lost)];
        let takeover = "";
        const events: TaskgateEvent[] = [];
        const task = toTask(transitioned(t, change, now));
        if (lapsed) {
          const expiredAt = t.claim_expires_at as string;
          const { runId, announced } = await readLapse(db, a, t.id, lapsed, expiredAt);

          takeover = CLAIM_TAKEOVER.text({ holder: lapsed, expired: expiredAt, run: runId ? CLAIM_STALE_RUN.text({ run: runId }) : "" });
          if (!announced) {
            const event = claimLapsedEvent(a, now, { task: eventTask(task), holder: lapsed, lease_expired_at: expiredAt, taken_over_by: me, stale_run_id: runId });
            statements.push(ctx.guard(lapseUnannounced({ taskId: t.id, accountId: a, expiredAt }), lost), noticeLapse(db, { taskId: t.id, accountId: a, expiredAt, eventId: event.id, now }));
            events.push(event);
          }
        }
        // Anyone else's running runs end: the task is the claimant's now.
        const why = lapsed ? `stale: the claim of ${lapsed} lapsed at ${t.claim_expires_at} and ${me} took the task over` : `${me} claimed the task`;
        statements.push(transitionTask(db, a, t, change, now), endTaskRuns(db, a, t.id, why, now, { keep: me }));
        return ctx.commit(
          { statements, activity: { target: t.id, summary: CLAIMED.text({ claimant: me, takeover }) }, events },
          { task, claim_expires_at: lease.claim_expires_at, taken_over_from: lapsed, changed: true },
        );
      });
    };
    return fastOr(
      (miss) =>
        writeTaskAtOnce(ctx, miss, {
          taskId: args.task_id,
          where: CLAIMABLE,
          whereBinds: [me],
          set: CLAIM_SET,
          setBinds: [me, lease.claim_expires_at, lease.claim_lease_minutes],
          summary: CLAIMED.text({ claimant: me, takeover: "" }),
          before: [endTaskRuns(db, a, args.task_id, `${me} claimed the task`, now, { keep: me })],
        }).then((r) => ({ ...r, claim_expires_at: lease.claim_expires_at, taken_over_from: null })),
      slowly,
    );
  },
});

const setAutoOk = defineTool({
  name: "set_auto_ok",
  description: "Let agents complete a task without a person's sign-off (true), or not. Returns task.",
  input: z.strictObject({ task_id: taskId, auto_ok: z.boolean() }),
  output: z.object({ task: taskShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        writeTaskAtOnce(ctx, miss, {
          taskId: args.task_id,
          where: AUTO_OK_DIFFERS,
          whereBinds: [args.auto_ok ? 1 : 0],
          set: AUTO_OK_SET,
          setBinds: [args.auto_ok ? 1 : 0],
          summary: (args.auto_ok ? AUTO_OK_ON : AUTO_OK_OFF).text(),
        }),
      // Missed: the task is already so (a no-op), or missing or in the trash (requireTask says which).
      async diagnose() {
        const { task: t } = await readTaskState(db, a, args.task_id);
        return (t.auto_ok === 1) === args.auto_ok ? { task: toTask(t), changed: false } : AGAIN;
      },
    });
  },
});

export const lifecycleTools = [completeTask, reopenTask, claimTask, setAutoOk];
