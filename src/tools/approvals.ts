import { z } from "zod";
import { conflict, forbidden, invalid } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import {
  approvalIsPending, decideApproval, decidedValue, approvalWithTask, selectApprovalWithTask, selectPendingApproval, toApproval, type Approval, type ApprovalAnswer, type ApprovalRow,
} from "../db/approvals.ts";
import { indexComment } from "../db/search-index.ts";
import { readPendingWithContext } from "../db/inbox.ts";
import { insertTaskComment, readTaskState } from "../db/lifecycle.ts";
import { toTask, type TaskRow } from "../db/tasks.ts";
import { requireProject } from "../db/projects.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { AGAIN, defineTool, named, type Rows, type ToolContext } from "../catalog/tool.ts";
import { approvalId, cursor, idempotencyKey, limit, nextCursor, projectId, taskId } from "./schemas.ts";
import { decideUrl, runEventKind, runStatus, taskShape, taskStatus, waitingDecideUrl } from "./shapes.ts";
import { completedWith, followUp, type FollowUp } from "./series.ts";
import { endTaskRuns } from "../db/runs.ts";
import { approvalRequested, approvalShape, asAnyApproval, requestShape, completedBy, nextOccurrenceShape, NO_FOLLOW_UP, REASON_MAX } from "./lifecycle.ts";
import { selectTaskNow, taskSummary } from "../db/task-writes.ts";
import {
  approvalCompletion, approvedSummary, askableCondition, decidableCondition, decidePendingApproval, insertRequest, ownPendingRequest, rejectSet,
  REJECTABLE_BACK, rejectedSummary, requestedSummary, setTaskWhere, SIGNOFF_AWAITED, WITHDRAW_SET, withdrewSummary,
} from "../db/lifecycle-writes.ts";
import { ANSWER_CHOICE, ANSWER_REASON, ANSWER_WORDS, ANSWERED_QUESTION, reasonText } from "../db/summaries.ts";
import { approveAction, decisionTarget, rejectAction } from "./pending-actions.ts";
import { actionApproval, selectOpenActionsPage, selectPendingAction, type PendingActionWithTask } from "../db/pending-actions.ts";
import { readBatch } from "../db/batch.ts";
import { eventTask, newEvent } from "../domain/events.ts";

const reason = z.string().trim().min(1, "must not be empty").max(REASON_MAX);

/** How many choices a question may offer, and how long each may be. */
export const CHOICES = { min: 2, max: 8 } as const;
export const CHOICE_MAX = 100;

const choiceText = z.string().trim().min(1, "must not be empty").max(CHOICE_MAX, `must be at most ${CHOICE_MAX} characters; shorten it`);

/** A question's choices: 2 to 8 short texts, no two the same ignoring case. */
const choiceList = z
  .array(choiceText)
  .min(CHOICES.min, `offer ${CHOICES.min} to ${CHOICES.max} choices (leave choices out for a yes/no question)`)
  .max(CHOICES.max, `offer at most ${CHOICES.max} choices; merge or drop some`)
  .superRefine((list, ctx) => {
    const seen = new Map<string, number>();
    list.forEach((c, i) => {
      const key = c.toLowerCase();
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else ctx.addIssue({ code: "custom", message: `choices ${first + 1} and ${i + 1} are the same ("${c}", ignoring case); make each choice different` });
    });
  });

/** A list of choices as a message quotes it. */
const listed = (choices: string[]) => choices.map((c) => JSON.stringify(c)).join(", ");

/** The answer an approve_task call gives a question: a choice, words, both, or neither (a plain yes). */
const givenAnswer = (choice: string | undefined, words: string | undefined): ApprovalAnswer | null =>
  choice === undefined && words === undefined ? null : { choice: choice ?? null, words: words ?? null };

/** Refuses an answer the question does not take, saying what it takes. */
function checkAnswer(q: Approval, given: ApprovalAnswer | null): void {
  const choice = given?.choice ?? null;
  const words = given?.words ?? null;
  const list = q.choices;
  if (!list) {
    if (choice !== null) {
      throw invalid(`choice: question ${q.id} offers no choices; leave choice out and answer yes (approve_task, optionally with answer in words) or no (reject_task with a reason).`);
    }
    return;
  }
  if (choice !== null && !list.includes(choice)) {
    const near = list.find((c) => c.toLowerCase() === choice.toLowerCase());
    throw invalid(
      `choice: "${choice}" is not one of the choices of question ${q.id}: ${listed(list)}. ${near ? `Did you mean "${near}"? ` : ""}Send one of them exactly as written.`,
    );
  }
  if (words !== null && !q.accepts_words) {
    throw invalid(`answer: question ${q.id} takes no answer in words; pick one of its choices instead: ${listed(list)} (note keeps a note beside it).`);
  }
  if (choice === null && words === null) {
    throw invalid(
      q.accepts_words
        ? `choice: required: question ${q.id} asks you to pick one of ${listed(list)}, or to answer in words (answer); reject_task answers no.`
        : `choice: required: question ${q.id} asks you to pick one of ${listed(list)}; reject_task answers no.`,
    );
  }
}

/** The answer a person gave, in the activity summary: the choice and the words, or yes/no. */
function answerWords(yes: boolean, given: ApprovalAnswer | null): string {
  const parts = [
    ...(given?.choice != null ? [ANSWER_CHOICE.text({ choice: given.choice })] : []),
    ...(given?.words != null ? [ANSWER_WORDS.text({ words: given.words })] : []),
  ];
  return parts.length ? parts.join(", ") : yes ? "yes" : "no";
}

/** Two lists of choices the same (null: none). */
const sameChoices = (a: string[] | null, b: string[] | null) => JSON.stringify(a) === JSON.stringify(b);

/** How much of an agent's text beside an approval the list shows (the console's task page shows it all). */
const CONTEXT_CLIP = 280;
const RUN_TAIL = 3;

const clipped = (text: string) => (text.length > CONTEXT_CLIP ? `${text.slice(0, CONTEXT_CLIP)}…` : text);

const pendingItem = approvalShape.extend({
  run: z
    .object({
      id: z.string(),
      agent: z.string(),
      status: runStatus,
      summary: z.string().nullable(),
      started_at: z.string(),
      events: z.array(z.object({ kind: runEventKind, message: z.string(), created_at: z.string() })).describe("the last events of its log, oldest first"),
    })
    .nullable()
    .describe("the latest run of its task"),
  latest_comment: z.object({ author: z.string(), body: z.string(), created_at: z.string() }).nullable(),
  decide_url: decideUrl,
});

const listPending = defineTool({
  name: "list_pending_approvals",
  description: "Approvals waiting for a person, oldest first, each with its task and question.",
  input: z.strictObject({ project_id: projectId.optional(), limit, cursor }),
  output: z.object({
    items: z.array(pendingItem),
    next_cursor: nextCursor,
    can_decide: z.boolean().describe("true for a person's connection that may call approve_task and reject_task"),
  }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    if (args.project_id) await requireProject(ctx.db, a, args.project_id);
    const opts = { projectId: args.project_id, after: decodeCursor(args.cursor), limit: args.limit };
    // Questions, sign-offs and pending actions in one queue, oldest first, read in one round trip.
    const found = await readPendingWithContext(ctx.db, a, opts, { eventsPerRun: RUN_TAIL, clip: CONTEXT_CLIP }, selectOpenActionsPage(ctx.db, a, opts, ctx.now));
    const actions = found.also as PendingActionWithTask[];
    const merged = [...found.approvals.map(asAnyApproval), ...actions.map((r) => actionApproval(r, ctx.now))].sort((x, y) =>
      x.created_at === y.created_at ? (x.id < y.id ? -1 : x.id > y.id ? 1 : 0) : x.created_at < y.created_at ? -1 : 1,
    );
    const { items, next_cursor } = page(merged, args.limit, (r) => ({ k: r.created_at, id: r.id }));
    const withContext = items.map((approval) => {
      const run = approval.task_id === null ? undefined : found.runs.get(approval.task_id);
      const comment = approval.task_id === null ? undefined : found.comments.get(approval.task_id);
      return {
        ...approval,
        run: run
          ? {
              id: run.id, agent: run.agent, status: run.status, summary: run.summary === null ? null : clipped(run.summary), started_at: run.started_at,
              events: run.events.map((e) => ({ ...e, message: clipped(e.message) })),
            }
          : null,
        latest_comment: comment ? { author: comment.author, body: clipped(comment.body), created_at: comment.created_at } : null,
      };
    });
    // approve_task and reject_task are a person's writes (HUMAN_TOOLS, WRITE_TOOLS): what the registry lets this principal call.
    const p = ctx.principal;
    return { items: withContext, next_cursor, can_decide: p.kind === "human" && p.scope === "write" && !p.paused };
  },
});

const getApproval = defineTool({
  name: "get_approval",
  description:
    "One approval (pending or decided) with its question, decision and reason, and its task; for a pending action, the call, what it touches and, once approved, its result.",
  input: z.strictObject({ approval_id: approvalId }),
  output: z.object({
    approval: approvalShape,
    task: z
      .object({ id: z.string(), title: z.string(), status: taskStatus, assignee: z.string().nullable(), auto_ok: z.boolean() })
      .nullable()
      .describe("null only for a pending action that names no task, or whose task is gone"),
    decide_url: decideUrl,
  }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    // The id names an approval or a pending action: both looked up in one round trip.
    const read = await readBatch(ctx.db, { action: selectPendingAction(ctx.db, a, args.approval_id), approval: selectApprovalWithTask(ctx.db, a, args.approval_id) });
    const action = read.action[0] as PendingActionWithTask | undefined;
    if (action) {
      const t = action.task_id && action.task_title !== null && action.task_status !== null ? action : null;
      return {
        approval: actionApproval(action, ctx.now),
        task: t && { id: t.task_id as string, title: t.task_title as string, status: t.task_status!, assignee: t.task_assignee, auto_ok: t.task_auto_ok === 1 },
      };
    }
    const { task_status, task_assignee, task_auto_ok, ...approval } = approvalWithTask(read.approval[0], args.approval_id);
    return {
      approval: asAnyApproval(approval),
      task: { id: approval.task_id, title: approval.task_title, status: task_status, assignee: task_assignee, auto_ok: task_auto_ok === 1 },
    };
  },
});

/** request_approval's refusal of a second, different request while one waits: the pending one, quoted. */
function alreadyPending(taskId: string, pending: Approval) {
  const what = pending.kind === "question" ? "question" : "sign-off";
  return conflict(
    `task ${taskId} already has a pending ${what} from ${pending.requested_by} (${pending.id}, asked ${pending.created_at}): "${pending.question}". ` +
      "One request waits at a time: a person answers it first (get_task shows the answer); meanwhile comment_on_task adds to it.",
  );
}

/**
 * The asking agent takes its pending request back (C3): recorded as
 * withdrawn, not decided; a sign-off's task goes back to in_progress. A
 * repeat answers with the withdrawal it made.
 */
async function withdrawRequest(ctx: ToolContext, taskId: string) {
  const { db, principal: p, now } = ctx;
  const a = p.accountId;
  const me = actorName(p);
  return ctx.write({
    subject: `task ${taskId}`,
    apply(miss) {
      const d = { status: "withdrawn" as const, decidedBy: me, decidedByPerson: p.person, reason: "withdrawn by the one who asked", now };
      return ctx.commit(
        {
          statements: [
            ctx.guard(ownPendingRequest({ taskId, accountId: a, requestedBy: me }), miss),
            // A sign-off's task goes back to work.
            setTaskWhere(db, a, taskId, WITHDRAW_SET, SIGNOFF_AWAITED, now),
            named("withdrawn", decidePendingApproval(db, a, taskId, d)),
            named("task", selectTaskNow(db, a, taskId)),
          ],
          activity: { target: taskId, summarySql: withdrewSummary({ taskId, accountId: a, question: "question", signoff: "sign-off request" }) },
          events: (rows) => {
            const { task, approval } = withdrawal(rows);
            return [
              newEvent("approval.withdrawn", a, now, {
                task: eventTask(task),
                approval: { id: approval.id, kind: approval.kind, question: approval.question, requested_by: approval.requested_by },
                reason: null,
              }),
            ];
          },
        },
        (rows) => ({ approval: withdrawal(rows).approval, changed: true }),
      );
    },
    // Missed: nothing pending (a repeat of this withdrawal answers with it), or someone else's request (refused).
    async diagnose() {
      const { task: t, pending, latest } = await readTaskState(db, a, taskId);
      if (!pending) {
        if (latest && latest.status === "withdrawn" && latest.decided_by === me) return { approval: latest, changed: false };
        throw conflict(`task ${t.id} has no pending request to withdraw; get_task shows its latest answer.`);
      }
      if (pending.requested_by !== me) {
        throw forbidden(
          `${pending.kind === "question" ? "question" : "sign-off"} ${pending.id} on task ${t.id} was asked by ${pending.requested_by}; only the one who asked may withdraw it, and only a person decides it (approve_task, reject_task).`,
        );
      }
      return AGAIN;
    },
  });
}

/** The task and the request a withdrawal's batch decided. */
function withdrawal(rows: Rows<"withdrawn" | "task">) {
  const task = toTask(rows.task[0] as TaskRow);
  return { task, approval: toApproval({ ...(rows.withdrawn[0] as Omit<ApprovalRow, "task_title">), task_title: task.title }) as Approval };
}

const requestApproval = defineTool({
  name: "request_approval",
  description:
    "Ask a person a question on unfinished work, yes/no or with choices and/or an answer in words, one per task (get_task shows the answer), or withdraw your own. Returns approval.",
  input: z.strictObject({
    task_id: taskId,
    question: reason.optional().meta({ detail: "what the person should decide" }),
    choices: choiceList.optional().describe("2 to 8 answers the person picks one of (none: a yes/no question)"),
    accepts_words: z.boolean().optional().describe("true: the person may answer in words"),
    withdraw: z.literal(true).optional(),
  }),
  output: z.object({ approval: requestShape, changed: z.boolean(), decide_url: waitingDecideUrl }),
  async handler(ctx, args) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    if (args.withdraw) {
      if (args.question !== undefined) throw invalid("question: leave it out with withdraw: true (a withdrawal asks nothing).");
      if (args.choices !== undefined) throw invalid("choices: leave it out with withdraw: true (a withdrawal asks nothing).");
      if (args.accepts_words !== undefined) throw invalid("accepts_words: leave it out with withdraw: true (a withdrawal asks nothing).");
      return withdrawRequest(ctx, args.task_id);
    }
    if (args.question === undefined) {
      await readTaskState(db, a, args.task_id); // a task that is gone or in the trash says so first
      throw invalid("question: required: what the person should decide (or pass withdraw: true to withdraw your pending request).");
    }
    const question = args.question;
    const choices = args.choices ?? null;
    const acceptsWords = args.accepts_words ?? false;
    // A question with choices or words is about unfinished work: never the sign-off of a task that awaits approval.
    const questionOnly = choices !== null || acceptsWords;
    const request = {
      id: newId(ID_PREFIX.approval), accountId: a, taskId: args.task_id, question, requestedBy: actorName(p), requestedByToken: p.tokenId, now, choices, acceptsWords,
    };
    return ctx.write({
      subject: `task ${args.task_id}`,
      // A question about unfinished work, or the sign-off of a task that awaits approval, on a task without a pending request.
      apply(miss) {
        const made = (rows: Rows<"approval" | "task">) => ({ task: toTask(rows.task[0] as TaskRow), approval: toApproval(rows.approval[0] as ApprovalRow) as Approval });
        return ctx.commit(
          {
            statements: [
              ctx.guard(askableCondition({ taskId: args.task_id, accountId: a, questionOnly }), miss),
              insertRequest(db, request),
              named("approval", selectPendingApproval(db, a, args.task_id)),
              named("task", selectTaskNow(db, a, args.task_id)),
            ],
            activity: { target: args.task_id, summarySql: taskSummary(a, args.task_id, requestedSummary(request.id, question)) },
            events: (rows) => {
              const { task, approval } = made(rows);
              return [approvalRequested(a, now, task, approval)];
            },
          },
          (rows) => ({ approval: made(rows).approval, changed: true }),
        );
      },
      // Missed: a request is pending (the same one again is a no-op; another is refused), or the task is finished.
      async diagnose() {
        const { task: t, pending } = await readTaskState(db, a, args.task_id);
        if (pending) {
          if (pending.question === question && sameChoices(pending.choices, choices) && pending.accepts_words === acceptsWords) return { approval: pending, changed: false };
          throw alreadyPending(t.id, pending);
        }
        if (t.status === "done" || t.status === "cancelled") {
          throw conflict(`task ${t.id} is ${t.status}; there is nothing left to ask about. reopen_task brings it back first.`);
        }
        if (questionOnly && t.status === "awaiting_approval") {
          throw invalid(
            `${choices !== null ? "choices" : "accepts_words"}: task ${t.id} awaits a sign-off of finished work, which a person approves or rejects; ` +
              "choices and words are for a question about unfinished work. Leave them out to request the sign-off.",
          );
        }
        return AGAIN;
      },
    });
  },
});

/**
 * A person's answer to a pending question: yes (go on) or no (with the
 * reason). The question is decided and the task stays where it is; the
 * agent reads the answer in get_task, a receiver in approval.answered.
 */
function answerQuestion<X extends object>(
  ctx: ToolContext, t: TaskRow, question: Approval, yes: boolean, reason: string | null, lost: Error, extra: X, given: ApprovalAnswer | null = null,
) {
  const { db, principal: p, now } = ctx;
  const a = p.accountId;
  // A yes answers as the question asks (a choice of its choices, words where it takes them); a no is a no, with its reason.
  if (yes) checkAnswer(question, given);
  const answer = yes ? given : null;
  const d = { status: yes ? ("approved" as const) : ("rejected" as const), decidedBy: actorName(p), decidedByPerson: p.person, reason, now, answer };
  const task = toTask(t);
  const event = newEvent("approval.answered", a, now, {
    task: eventTask(task),
    approval: { id: question.id, question: question.question, requested_by: question.requested_by },
    answer: yes ? "yes" : "no",
    reason,
    answered_by: actorName(p),
    answered_by_person: p.person,
    choice: answer?.choice ?? null,
    words: answer?.words ?? null,
  });
  return ctx.commit(
    {
      statements: [ctx.guard(approvalIsPending({ approvalId: question.id, accountId: a }), lost), decideApproval(db, a, question.id, d)],
      activity: {
        target: t.id,
        summary: ANSWERED_QUESTION.text({ approval: question.id, answer: answerWords(yes, answer), reason: reason ? ANSWER_REASON.text({ reason }) : "", status: t.status }),
      },
      events: [event],
    },
    // The whole answer goes to commit: an idempotency key records it as the call returns it.
    { task, approval: asAnyApproval(decidedValue(question, d)), changed: true, ...extra },
  );
}

/** The same answer again: the task has no pending request and its latest is this answer to a question (the same choice and words too). */
const answeredAlready = (t: TaskRow, latest: Approval | null, status: "approved" | "rejected", reason: string | null, given: ApprovalAnswer | null = null) =>
  !!latest && latest.kind === "question" && latest.status === status && latest.reason === reason && t.status !== "awaiting_approval" &&
  (latest.answer?.choice ?? null) === (given?.choice ?? null) && (latest.answer?.words ?? null) === (given?.words ?? null);

const decisionOutput = z.object({
  task: taskShape.nullable().describe("the task as it is after the decision (for a pending action: the task it names, null when none or gone)"),
  approval: approvalShape.nullable().describe("the approval decided by this call (or the earlier decision when nothing changed)"),
  changed: z.boolean(),
});

/** A decision's batch read back: the task as it is after it, and the approval it decided (none when nothing was pending). */
function decidedIn(rows: Rows<"decided" | "task">) {
  const task = toTask(rows.task[0] as TaskRow);
  const decided = rows.decided[0] as Omit<ApprovalRow, "task_title"> | undefined;
  return { task, approval: decided ? asAnyApproval(toApproval({ ...decided, task_title: task.title }) as Approval) : null };
}

const approveTask = defineTool({
  name: "approve_task",
  description:
    "Approve a task's pending request (task_id: a sign-off completes the task, a question is answered yes, by choice or in words where it asks) or a pending action (approval_id: the agent's call runs once, as asked). Returns task, approval, next_occurrence.",
  input: z.strictObject({
    task_id: taskId.optional().meta({ detail: "the task whose pending question or sign-off you approve; or give approval_id" }),
    approval_id: approvalId.optional().meta({ detail: "a pending action (or any pending approval) to approve; or give task_id" }),
    note: reason.optional().meta({ detail: "an optional note kept on the approval" }),
    choice: choiceText.optional().describe("a question's choice, exactly as offered (required when it offers choices and takes no words)"),
    answer: reason.optional().describe("an answer in words, to a question that takes words or offers no choices"),
    idempotency_key: idempotencyKey,
  }),
  output: decisionOutput.extend({ next_occurrence: nextOccurrenceShape }),
  async handler(ctx, input) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const me = actorName(p);
    const note = input.note ?? null;
    const target = await decisionTarget(ctx, "approve_task", input);
    if (target.kind === "action") {
      if (input.choice !== undefined || input.answer !== undefined) {
        throw invalid("choice, answer: leave them out for a pending action: it is approved as the agent asked it; choices and words answer a question.");
      }
      return approveAction(ctx, target.row, note);
    }
    const args = { ...input, task_id: target.taskId };
    const given = givenAnswer(args.choice, args.answer);

    const done = approvalCompletion(now);
    /** The sign-off approved, in one batch: its task done (unless it is already), its running runs ended. */
    const approve = (guard: D1PreparedStatement, next: FollowUp) => {
      return ctx.commit(
        {
          statements: [
            guard,
            named("decided", decidePendingApproval(db, a, args.task_id, { status: "approved", decidedBy: me, decidedByPerson: p.person, reason: note, now })),
            endTaskRuns(db, a, args.task_id, completedBy(me), now, { onlyIf: done.completes }),
            named("done", setTaskWhere(db, a, args.task_id, done.set, done.where, now)),
            ...next.statements,
            named("task", selectTaskNow(db, a, args.task_id)),
          ],
          activity: { target: args.task_id, summarySql: taskSummary(a, args.task_id, approvedSummary(reasonText(args.note), next.summary)) },
          events: (rows, changes) => {
            if (!changes.done) return [];
            const { task, approval } = decidedIn(rows);
            const occurrence = next.next ? { id: next.next.id, due_at: next.next.due_at } : null;
            return [newEvent("task.completed", a, now, { task: eventTask(task), completed_by: me, completed_by_person: p.person, approval_id: approval?.id ?? null, next_occurrence: occurrence })];
          },
        },
        (rows) => ({ ...decidedIn(rows), next_occurrence: next.next, changed: true }),
      );
    };

    return ctx.write({
      subject: `task ${args.task_id}`,
      // An answer by choice or in words is a question's alone: it never approves a sign-off, so it starts from the rows.
      apply: (miss) =>
        given ? Promise.reject(miss) : approve(ctx.guard(decidableCondition({ taskId: args.task_id, accountId: a, approve: true }), miss), NO_FOLLOW_UP),
      async diagnose(lost) {
        const state = await readTaskState(db, a, args.task_id);
        const { task: t, pending, latest, timeZone } = state;
        if (pending?.kind === "question") return answerQuestion(ctx, t, pending, true, note, lost, { next_occurrence: null }, given);
        if (given) {
          if (!pending && answeredAlready(t, latest, "approved", note, given)) return { task: toTask(t), approval: latest && asAnyApproval(latest), next_occurrence: null, changed: false };
          const field = given.choice !== null ? "choice" : "answer";
          if (pending || t.status === "awaiting_approval") {
            throw invalid(
              `${field}: task ${t.id} waits for a sign-off${pending ? ` (${pending.id})` : ""}, which is approved or rejected, not answered by choice or in words; ` +
                "leave choice and answer out (note keeps a note on the approval).",
            );
          }
          throw conflict(`task ${t.id} has no pending question (it is ${t.status}); nothing to answer. get_task shows its latest answer.`);
        }
        if (!pending && answeredAlready(t, latest, "approved", note)) {
          return { task: toTask(t), approval: latest && asAnyApproval(latest), next_occurrence: null, changed: false };
        }
        // Approved already (or done another way): answered as the first call was, with the occurrence it created, from the same read.
        if (t.status === "done" && !pending) return { task: toTask(t), approval: latest && asAnyApproval(latest), next_occurrence: completedWith(state).next_occurrence, changed: false };
        if (!pending && t.status !== "awaiting_approval") {
          throw conflict(`task ${t.id} has no pending approval (it is ${t.status}); nothing to approve. As a person, complete_task completes it directly.`);
        }
        if (t.status === "cancelled") throw conflict(`task ${t.id} is cancelled; reopen_task brings it back before it can be approved.`);
        if (!t.recurrence || t.status === "done") return AGAIN;
        // A recurring task's approval creates its next occurrence, computed from the task as read.
        const guard = decidableCondition({ taskId: t.id, accountId: a, approve: true, version: t.version });
        return approve(ctx.guard(guard, lost), followUp(ctx, t, timeZone));
      },
    });
  },
});

/** The comment a rejection writes on its task, which the agent reads. */
const rejectionComment = (reason: string) => `Rejected: ${reason}`;

const rejectTask = defineTool({
  name: "reject_task",
  description:
    "Reject a task's pending request (task_id: a sign-off goes back to in_progress, reason as a comment; a question is answered no) or a pending action (approval_id: nothing runs). Returns task.",
  input: z.strictObject({
    task_id: taskId.optional().meta({ detail: "the task whose pending question or sign-off you reject; or give approval_id" }),
    approval_id: approvalId.optional().meta({ detail: "a pending action (or any pending approval) to reject; or give task_id" }),
    reason: reason.meta({ detail: "what must change; the agent reads it" }),
  }),
  output: decisionOutput.extend({ comment_id: z.string().nullable().describe("the comment holding a rejected sign-off's reason (null for a question or an action)") }),
  async handler(ctx, input) {
    const { db, principal: p, now } = ctx;
    const a = p.accountId;
    const me = actorName(p);
    const target = await decisionTarget(ctx, "reject_task", input);
    if (target.kind === "action") return rejectAction(ctx, target.row, input.reason);
    const args = { ...input, task_id: target.taskId };
    return ctx.write({
      subject: `task ${args.task_id}`,
      // The sign-off rejected (or none pending, the task no longer awaits one): back in progress, the reason as a comment the agent reads.
      apply(miss) {
        const commentId = newId(ID_PREFIX.comment);
        const body = rejectionComment(args.reason);
        return ctx.commit(
          {
            statements: [
              ctx.guard(decidableCondition({ taskId: args.task_id, accountId: a, approve: false }), miss),
              named("decided", decidePendingApproval(db, a, args.task_id, { status: "rejected", decidedBy: me, decidedByPerson: p.person, reason: args.reason, now })),
              setTaskWhere(db, a, args.task_id, rejectSet(now), REJECTABLE_BACK, now),
              insertTaskComment(db, { id: commentId, accountId: a, taskId: args.task_id, authorTokenId: p.tokenId, author: me, body, now }),
              indexComment(db, a, commentId, body),
              named("task", selectTaskNow(db, a, args.task_id)),
            ],
            activity: { target: args.task_id, summarySql: taskSummary(a, args.task_id, rejectedSummary(commentId, args.reason)) },
            events: (rows) => {
              const { task, approval } = decidedIn(rows);
              return [
                newEvent("task.rejected", a, now, { task: eventTask(task), approval_id: approval?.id ?? null, rejected_by: me, rejected_by_person: p.person, reason: args.reason, comment_id: commentId }),
              ];
            },
          },
          (rows) => ({ ...decidedIn(rows), comment_id: commentId as string | null, changed: true }),
        );
      },
      async diagnose(lost) {
        // With the comment a rejection already made for this reason, so a repeat answers with it in the same round trip.
        const { task: t, pending, latest, decisionCommentId } = await readTaskState(db, a, args.task_id, { decisionComment: rejectionComment(args.reason) });
        if (pending?.kind === "question") return answerQuestion(ctx, t, pending, false, args.reason, lost, { comment_id: null });
        if (!pending && t.status !== "awaiting_approval") {
          if (latest?.status === "rejected" && latest.reason === args.reason && t.status !== "done" && t.status !== "cancelled") {
            // The rejection already made: answered as it was, with the comment it wrote.
            return { task: toTask(t), approval: latest && asAnyApproval(latest), comment_id: latest.decided_at ? decisionCommentId : null, changed: false };
          }
          throw conflict(`task ${t.id} has no pending approval (it is ${t.status}); nothing to reject. comment_on_task adds a note instead.`);
        }
        if (t.status === "done" || t.status === "cancelled") {
          throw conflict(`task ${t.id} is ${t.status}; reopen_task brings it back first.`);
        }
        return AGAIN;
      },
    });
  },
});

export const approvalTools = [listPending, getApproval, requestApproval, approveTask, rejectTask];
