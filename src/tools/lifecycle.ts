import { z } from "zod";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { APPROVAL_KINDS, APPROVAL_STATUSES, selectPendingApproval, toApproval, type Approval, type ApprovalRow } from "../db/approvals.ts";
import { readTaskState } from "../db/lifecycle.ts";
import { toTask, type Task, type TaskRow } from "../db/tasks.ts";
import { claimHolder, claimRefusal, lapsedHolder, LEASE_MINUTES, leaseEnd } from "../domain/claims.ts";
import { claimStateIn, claimStateStatements, leaseStillEnds, NO_LEASE, noticeLapse, readClaimState, restartLease } from "../db/claims.ts";
import { AGAIN, defineTool, named, type BatchStep, type Rows, type ToolContext } from "../catalog/tool.ts";
import { claimPicked, countReady, pickNext, readNothingReady, selectPicked, someReady, scopeFree, selectPickedScopeHolders, selectScopeHolders, type NextFilter, type NothingReady, type ScopeHolder } from "../db/claim-next.ts";
import { overlapWords } from "../domain/scopes.ts";
import { holdsIn, selectHolds } from "../db/guards.ts";
import { endTaskRuns } from "../db/runs.ts";
import { claimLapsedEvent, eventTask, newEvent } from "../domain/events.ts";
import { idempotencyKey, projectId, taskId } from "./schemas.ts";
import { CLAIM_EXPIRES, personShape, reachedRow, taskShape, waitingDecideUrl } from "./shapes.ts";
import { completedWith, followUp, type FollowUp } from "./series.ts";
import { setLiveTask } from "./live-task.ts";
import { liveTaskIs, selectTaskNow, setTask, taskSummary } from "../db/task-writes.ts";
import {
  autoOkDiffers, autoOkSet, claimSet, claimable, completableCondition, completedSummary, completion, decidePendingApproval, insertSignoffAsking,
  reopenedSummary, REOPEN_SET, REOPENABLE, setTaskWhere, type Decided,
} from "../db/lifecycle-writes.ts";
import { AUTO_OK_OFF, AUTO_OK_ON, CLAIM_STALE_RUN, CLAIM_TAKEOVER, CLAIMED, reasonText } from "../db/summaries.ts";

export const REASON_MAX = 2000;

/** What a pending action holds: the call an agent's policy asked the person about, and once approved and run, its result. */
export const actionShape = z.object({
  tool: z.string(),
  title: z.string(),
  arguments: z.string().describe("JSON"),
  arguments_in_words: z.string(),
  rule: z.string(),
  reason: z.string(),
  touches: z.array(reachedRow),
  expires_at: z.string(),
  ran_at: z.string().nullable(),
  result: z.object({ is_error: z.boolean(), text: z.string() }).nullable().describe("once run; a success's text is its result as JSON"),
});

/** A question or a sign-off, as the tools that open or close one answer it (complete_task, request_approval, reopen_task). */
export const requestShape = z.object({
  id: z.string(),
  task_id: z.string().nullable(),
  task_title: z.string().nullable(),
  kind: z
    .enum([...APPROVAL_KINDS, "action"])
    .describe("action: a call the agent's policy holds, run once approved"),
  status: z.enum([...APPROVAL_STATUSES, "expired"]),
  question: z.string(),
  requested_by: z.string(),
  decided_by: z.string().nullable(),
  decided_by_person: personShape.nullable().describe("which person, when decided_by is `human`"),
  reason: z.string().nullable().describe("why rejected or closed, or the approver's note"),
  created_at: z.string(),
  decided_at: z.string().nullable(),
  choices: z.array(z.string()).nullable().describe("a question's choices; null: yes or no"),
  accepts_words: z.boolean(),
  answer: z.object({ choice: z.string().nullable(), words: z.string().nullable() }).nullable().describe("null until given"),
});

/** Any approval, as the tools that list and decide them answer it: a question, a sign-off or a pending action. */
export const approvalShape = requestShape.extend({ action: actionShape.nullable() });

/** A question's or a sign-off's approval among all kinds (the pending action's part empty). */
export const asAnyApproval = <A extends object>(a: A): A & { action: null } => ({ ...a, action: null });

/** Why a task's running runs ended when it was completed. */
export const completedBy = (who: string) => `the task was completed by ${who}`;

/** What a completion that creates no next occurrence adds: nothing. */
export const NO_FOLLOW_UP: FollowUp = { change: {}, statements: [], next: null, summary: "" };

/** A lapsed claim a claim_task takes over: its holder, when its lease ended, and the holder's run that ends as stale. */
interface Lapse {
  holder: string;
  expiredAt: string;
  runId: string | null;
}

export const nextOccurrenceShape = taskShape.nullable().describe("the next occurrence its completion created (a recurring task)");

/** The event of a newly opened approval. */
export function approvalRequested(accountId: string, now: string, task: Task, approval: Approval) {
  return newEvent("approval.requested", accountId, now, {
    task: eventTask(task),
    approval: {
      id: approval.id, kind: approval.kind, question: approval.question, requested_by: approval.requested_by,
      choices: approval.choices, accepts_words: approval.accepts_words,
    },
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
    approval: requestShape.nullable().describe("the approval this call opened, reused or decided"),
    next_occurrence: nextOccurrenceShape,
    changed: z.boolean(),
    decide_url: waitingDecideUrl,
  }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const me = actorName(p);
    const agent = p.kind !== "human";
    // A person's completion signs off a pending sign-off and closes an open question unanswered. An agent decides
    // nothing (C3): under auto-OK it withdraws its own sign-off request; a question waits for its answer.
    const decided: Decided & { question?: Decided } = agent
      ? { status: "withdrawn", reason: "completed by the agent under auto-OK" }
      : { status: "approved", reason: args.note ?? null, question: { status: "closed", reason: completedBy(me) } };
    const done = completion(agent, now);

    /** The completion, in one batch: done (its pending request decided, its running runs ended) or, an agent's without auto-OK, awaiting sign-off. */
    const complete = (guard: D1PreparedStatement, next: FollowUp) => {
      // The sign-off an agent's completion opens (unless one is pending already, which it awaits instead).
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
      const statements: BatchStep<"decided" | "task" | "approval">[] = [
        guard,
        ...(agent ? [insertSignoffAsking(db, created)] : []),
        named("decided", decidePendingApproval(db, a, args.task_id, { ...decided, decidedBy: me, decidedByPerson: p.person, now, onlyIf: done.completes })),
        // Done: its running runs end with it.
        endTaskRuns(db, a, args.task_id, completedBy(me), now, { onlyIf: done.completes }),
        setTaskWhere(db, a, args.task_id, done.set, done.where, now),
        ...next.statements,
        named("task", selectTaskNow(db, a, args.task_id)),
        named("approval", selectPendingApproval(db, a, args.task_id)),
      ];
      const outcomeOf = (rows: Rows<"decided" | "task" | "approval">) => {
        const task = toTask(rows.task[0] as TaskRow);
        if (task.status === "done") {
          const d = rows.decided[0] as Omit<ApprovalRow, "task_title"> | undefined;
          return { task, outcome: "completed" as const, approval: d ? toApproval({ ...d, task_title: task.title }) : null, next_occurrence: next.next, changed: true };
        }
        return { task, outcome: "awaiting_approval" as const, approval: toApproval(rows.approval[0] as ApprovalRow) as Approval, next_occurrence: null, changed: true };
      };
      return ctx.commit(
        {
          statements,
          activity: { target: args.task_id, summarySql: taskSummary(a, args.task_id, completedSummary({ agent, decided, next: next.summary, createdId: created.id })) },
          events: (rows) => {
            const { task, outcome, approval } = outcomeOf(rows);
            if (outcome === "awaiting_approval") return approval.id === created.id ? [approvalRequested(a, now, task, approval)] : [];
            const occurrence = next.next ? { id: next.next.id, due_at: next.next.due_at } : null;
            return [newEvent("task.completed", a, now, { task: eventTask(task), completed_by: me, completed_by_person: agent ? null : p.person, approval_id: approval?.id ?? null, next_occurrence: occurrence })];
          },
        },
        outcomeOf,
      );
    };

    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) => complete(ctx.guard(completableCondition({ taskId: args.task_id, accountId: a, agent: agent ? me : null }), miss), NO_FOLLOW_UP),
      async diagnose(lost) {
        const state = await readTaskState(db, a, args.task_id);
        const { task: t, pending, timeZone } = state;
        if (t.status === "done") return { task: toTask(t), outcome: "completed" as const, ...completedWith(state), changed: false };
        if (t.status === "cancelled") throw conflict(`task ${t.id} is cancelled; reopen_task brings it back to open before it can be completed.`);
        if (!agent || t.auto_ok === 1) {
          if (agent && pending && (pending.kind === "question" || pending.requested_by !== me)) throw questionPending(me, t.id, pending);
          if (!t.recurrence) return AGAIN;
          // A recurring task's completion creates its next occurrence, computed from the task as read.
          const guard = completableCondition({ taskId: t.id, accountId: a, agent: agent ? me : null, version: t.version });
          return complete(ctx.guard(guard, lost), followUp(ctx, t, timeZone));
        }
        if (t.status === "awaiting_approval" && pending?.kind === "signoff") {
          // Only the asker is answered with its own sign-off; anyone else is told whose it is (C3), never that it acted.
          // (Another agent's call on the task its holder awaits sign-off for is refused before this, by the named-task check.)
          if (pending.requested_by !== me) throw questionPending(me, t.id, pending);
          return { task: toTask(t), outcome: "awaiting_approval" as const, approval: pending, next_occurrence: null, changed: false };
        }
        // A question waits for a person's answer (C3): the agent that asked it waits, or withdraws it first.
        if (pending?.kind === "question") throw questionPending(me, t.id, pending);
        return AGAIN;
      },
    });
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
  output: z.object({ task: taskShape, closed_approval: requestShape.nullable(), changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply(miss) {
        const g = liveTaskIs(a, args.task_id, REOPENABLE);
        const close = decidePendingApproval(db, a, args.task_id, { status: closingStatus(p), decidedBy: actorName(p), decidedByPerson: p.person, reason: args.reason ?? "task reopened", now });
        return ctx.commit(
          {
            statements: [ctx.guard(g, miss), named("closed", close), named("task", setTask(db, a, args.task_id, REOPEN_SET, now))],
            activity: { target: args.task_id, summarySql: taskSummary(a, args.task_id, reopenedSummary(reasonText(args.reason))) },
          },
          (rows) => {
            const task = toTask(rows.task[0] as TaskRow);
            const closed = rows.closed[0] as Omit<ApprovalRow, "task_title"> | undefined;
            return { task, closed_approval: closed ? toApproval({ ...closed, task_title: task.title }) : null, changed: true };
          },
        );
      },
      // Missed: the task is open already (a no-op), still being worked on (refused), or missing or in the trash (readTaskState says which).
      async diagnose() {
        const { task: t } = await readTaskState(db, a, args.task_id);
        if (t.status === "open") return { task: toTask(t), closed_approval: null, changed: false };
        if (t.status === "in_progress" || t.status === "blocked") {
          const hint = t.status === "blocked" ? " unblock_task clears a block." : "";
          throw conflict(`task ${t.id} is ${t.status}, not finished: reopen_task brings back done, cancelled or awaiting_approval tasks.${hint}`);
        }
        return AGAIN;
      },
    });
  },
});

/** A claim's lease columns: an agent's, or none (a person's). */
type Lease = { claim_expires_at: string | null; claim_lease_minutes: number | null };

/** What claim_task answers. */
interface ClaimAnswer {
  task: Task | null;
  claim_expires_at: string | null;
  taken_over_from: string | null;
  changed: boolean;
  chosen: { reason: string; ready_left: number } | null;
  nothing_ready: NothingReady | null;
  scope_overlap: string | null;
}

/** An agent's claim refused for a scope: the held tasks it overlaps, their holders and the areas. */
async function scopeRefusal(ctx: ToolContext, c: { taskId: string; accountId: string; caller: string; now: string }): Promise<Error> {
  const { results } = await selectScopeHolders(ctx.db, c).all<ScopeHolder>();
  return scopeRefusalOf(c.taskId, results);
}

/** The refusal of a claim whose task's scope overlaps a held task's, naming those (selectScopeHolders's rows). */
function scopeRefusalOf(taskId: string, holders: ScopeHolder[]): Error {
  return conflict(
    `task ${taskId} overlaps the scope of a task another holds: ${overlapWords(holders)}. ` +
      "While a task is held, no other agent claims a task whose scope overlaps it. Pick another task (claim_task without task_id skips it), or ask a person to decide (comment_on_task reaches them).",
  );
}

/** Why the picked task came first, in words. */
function chosenReason(t: Task, left: number): string {
  const due = t.due_at ? `due ${t.due_at}` : "no due time";
  return `most urgent ready task: priority ${t.priority}, ${due}, created ${t.created_at}; ${left} more ready`;
}

/**
 * claim_task without task_id: in one batch, the activity row names the most
 * urgent ready task (read first), the claim takes that row while it is still
 * open, and the task and what is left are read back. Batches run one at a
 * time, so concurrent callers each get another task; a guard that finds
 * nothing ready rolls the batch back, and one more read says why.
 */
async function claimNext(ctx: ToolContext, narrow: { project_id?: string; label?: string }, lease: Lease): Promise<ClaimAnswer> {
  const { db, principal: p, now } = ctx;
  const me = actorName(p);
  const filter: NextFilter = { accountId: p.accountId, caller: me, agent: p.kind === "agent", now, projectId: narrow.project_id, label: narrow.label };
  const activityId = newId(ID_PREFIX.activity);
  return ctx.write<ClaimAnswer>({
    subject: "the next ready task",
    apply: (miss) =>
      ctx.commit(
        {
          statements: [
            ctx.guard(someReady(filter), miss),
            claimPicked(db, p.accountId, activityId, me, claimSet(me, lease, p.person), now),
            named("task", selectPicked(db, p.accountId, activityId)),
            named("left", countReady(db, filter)),
            ...(filter.agent ? [] : [named("overlaps", selectPickedScopeHolders(db, activityId, { accountId: p.accountId, caller: me, now }))]),
          ],
          activity: { id: activityId, target: null, targetSql: pickNext(filter), summary: CLAIMED.text({ claimant: me, takeover: "" }) },
        },
        (rows) => {
          const task = toTask(rows.task[0] as TaskRow);
          const left = (rows.left[0] as { n: number }).n;
          const overlaps = (rows.overlaps ?? []) as ScopeHolder[];
          return {
            task, claim_expires_at: lease.claim_expires_at, taken_over_from: null, changed: true, chosen: { reason: chosenReason(task, left), ready_left: left }, nothing_ready: null,
            scope_overlap: overlaps.length ? overlapWords(overlaps) : null,
          };
        },
      ),
    async diagnose() {
      const { ready, projectFound, ...why } = await readNothingReady(db, filter);
      if (!projectFound) throw notFound("project", narrow.project_id as string, "list_projects finds project ids");
      if (ready > 0) return AGAIN;
      return { task: null, claim_expires_at: null, taken_over_from: null, changed: false, chosen: null, nothing_ready: why, scope_overlap: null };
    },
  });
}

const leaseMinutes = z
  .number({ error: `must be a whole number of minutes from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max}` })
  .int(`must be a whole number of minutes from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max}`)
  .min(LEASE_MINUTES.min, `must be from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max} minutes`)
  .max(LEASE_MINUTES.max, `must be from ${LEASE_MINUTES.min} to ${LEASE_MINUTES.max} minutes`)
  .default(LEASE_MINUTES.default);

const claimTask = defineTool({
  name: "claim_task",
  description:
    "Assign a task to the caller and start it (in_progress); refused while another agent holds it or a held task's scope overlaps. No task_id: the most urgent ready task. An agent's claim lapses lease_minutes (1–1440) after its last run event, step status or comment, and may then be taken over. Returns task, claim_expires_at, chosen, nothing_ready.",
  input: z.strictObject({
    task_id: taskId.optional(),
    project_id: projectId.optional().meta({ detail: "without task_id: only this project" }),
    label: z.string().trim().min(1).max(100).optional().meta({ detail: "without task_id: only with this label" }),
    lease_minutes: leaseMinutes,
  }),
  output: z.object({
    task: taskShape.nullable(),
    claim_expires_at: CLAIM_EXPIRES,
    taken_over_from: z.string().nullable(),
    changed: z.boolean(),
    chosen: z.object({ reason: z.string(), ready_left: z.number() }).nullable(),
    nothing_ready: z
      .object({ waiting_on_dependencies: z.number(), snoozed: z.number(), held: z.number(), scoped_out: z.number(), earliest_ready_at: z.string().nullable() })
      .nullable(),
    scope_overlap: z.string().nullable(),
  }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const me = actorName(p);
    const lease = p.kind === "agent" ? { claim_expires_at: leaseEnd(ctx.nowMs, args.lease_minutes), claim_lease_minutes: args.lease_minutes } : NO_LEASE;
    if (args.task_id === undefined) return claimNext(ctx, { project_id: args.project_id, label: args.label }, lease);
    if (args.project_id !== undefined || args.label !== undefined) {
      throw invalid("project_id and label narrow the claim of the next ready task: leave them out when you name task_id.");
    }
    const taskIdArg = args.task_id;
    const byId = { chosen: null, nothing_ready: null };

    /**
     * The claim, in one batch: the task is the claimant's, in progress; anyone else's running runs end (a lapsed holder's as stale).
     * `scopeMiss`: the error of the scope guard, when the diagnosis tells it apart; else the refusal names the holders.
     */
    const claim = (guard: D1PreparedStatement, lapse: Lapse | null, scopeMiss?: Error) => {
      // A lapse is announced with its take-over, unless it was already (by the minute cron): the notice returns a row only when this batch records it.
      const eventId = newId(ID_PREFIX.webhookEvent);
      const why = lapse ? `stale: the claim of ${lapse.holder} lapsed at ${lapse.expiredAt} and ${me} took the task over` : `${me} claimed the task`;
      // Scopes: another's held scope stops an agent's claim (its own guard, naming the holder); a person is told of it.
      const scoped = { taskId: taskIdArg, accountId: a, caller: me, now };
      const statements: BatchStep<"notice" | "task" | "overlaps">[] = [
        guard,
        ...(p.kind === "agent" ? [ctx.guard(scopeFree(scoped), scopeMiss ?? (() => scopeRefusal(ctx, scoped)))] : []),
        ...(lapse ? [named("notice", noticeLapse(db, { taskId: taskIdArg, accountId: a, expiredAt: lapse.expiredAt, eventId, now }))] : []),
        endTaskRuns(db, a, taskIdArg, why, now, { keep: me }),
        named("task", setTask(db, a, taskIdArg, claimSet(me, lease, p.person), now)),
        ...(p.kind === "agent" ? [] : [named("overlaps", selectScopeHolders(db, scoped))]),
      ];
      const takeover = lapse
        ? CLAIM_TAKEOVER.text({ holder: lapse.holder, expired: lapse.expiredAt, run: lapse.runId ? CLAIM_STALE_RUN.text({ run: lapse.runId }) : "" })
        : "";
      return ctx.commit(
        {
          statements,
          activity: { target: taskIdArg, summary: CLAIMED.text({ claimant: me, takeover }) },
          events: (rows) => {
            if (!lapse || !rows.notice?.length) return [];
            const task = eventTask(toTask(rows.task[0] as TaskRow));
            const data = { task, holder: lapse.holder, lease_expired_at: lapse.expiredAt, taken_over_by: me, stale_run_id: lapse.runId };
            // The event goes out under the id its notice recorded.
            return [{ ...claimLapsedEvent(a, now, data), id: eventId }];
          },
        },
        (rows) => ({
          task: toTask(rows.task[0] as TaskRow), claim_expires_at: lease.claim_expires_at, taken_over_from: lapse?.holder ?? null, changed: true, ...byId,
          scope_overlap: rows.overlaps?.length ? overlapWords(rows.overlaps as ScopeHolder[]) : null,
        }),
      );
    };

    /**
     * What a missed claim finds, in one round trip: the task as readClaimState reads it, and for an agent, in a
     * batch of the engine like every write (its caller recorded for the consent rules), its own claim's lease
     * started over should it hold the task (in progress or blocked), and the held tasks whose scope its overlaps
     * (null when its scope is free).
     */
    const readClaimDiagnosis = async (): Promise<{ task: TaskRow; staleRunId: string | null; scopeHolders: ScopeHolder[] | null }> => {
      if (p.kind !== "agent") return { ...(await readClaimState(db, a, taskIdArg)), scopeHolders: null };
      const scoped = { taskId: taskIdArg, accountId: a, caller: me, now };
      const reads = claimStateStatements(db, a, taskIdArg);
      const { rows } = await ctx.commitWithResults({
        statements: [
          named("task", reads.task), named("trashed", reads.trashed), named("run", reads.run),
          named("free", selectHolds(db, scopeFree(scoped))),
          named("holders", selectScopeHolders(db, scoped)),
          restartLease(db, a, taskIdArg, me, lease.claim_expires_at as string, args.lease_minutes),
        ],
        activity: null,
      });
      const state = claimStateIn(taskIdArg, rows);
      return { ...state, scopeHolders: holdsIn(rows.free) ? null : (rows.holders as ScopeHolder[]) };
    };

    return ctx.write({
      subject: `task ${taskIdArg}`,
      // A miss on either guard is diagnosed by one read, so a holder's repeat takes two round trips in all.
      apply: (miss) => claim(ctx.guard(liveTaskIs(a, taskIdArg, claimable(me)), miss), null, miss),
      async diagnose(lost) {
        const { task: t, staleRunId, scopeHolders } = await readClaimDiagnosis();
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
          // The holder's claim again: its lease started over in the diagnosis's own batch (no new version, no history entry).
          return { task: toTask(t), claim_expires_at: lease.claim_expires_at, taken_over_from: null, changed: false, ...byId, scope_overlap: null };
        }
        if (t.status === "blocked") {
          throw conflict(`task ${t.id} is blocked (${t.blocked_reason ?? "no reason given"}); unblock_task clears the block before it can be claimed.`);
        }
        // Claimable, but its scope overlaps a held task's: the scope guard missed.
        if (scopeHolders) throw scopeRefusalOf(t.id, scopeHolders);
        if (!lapsed) return AGAIN;
        // A lapsed claim taken over: as read, the holder's lease still ended then.
        const expiredAt = t.claim_expires_at as string;
        const guard = ctx.guard(leaseStillEnds({ taskId: t.id, accountId: a, version: t.version, expiredAt }), lost);
        return claim(guard, { holder: lapsed, expiredAt, runId: staleRunId });
      },
    });
  },
});

const setAutoOk = defineTool({
  name: "set_auto_ok",
  description: "Let agents complete a task without a person's sign-off (true), or not. Returns task.",
  input: z.strictObject({ task_id: taskId, auto_ok: z.boolean() }),
  output: z.object({ task: taskShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        setLiveTask(ctx, miss, {
          taskId: args.task_id,
          where: autoOkDiffers(args.auto_ok),
          set: autoOkSet(args.auto_ok),
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
