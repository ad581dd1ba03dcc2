import { z } from "zod";
import { invalid, notFound } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { moveToTrash } from "../db/trash.ts";
import { liveStepsAre, reorderSteps, selectLiveSteps, requireLiveStep, requireStep, stepIsLive, taskForAppend, taskWithSteps, toStep, type Step } from "../db/steps.ts";
import { throwTaskMissing } from "../db/tasks.ts";
import { renewLeaseOfStep } from "../db/claims.ts";
import { AGAIN, defineTool, named, type AnyTool, type Condition, type Outcome, type ToolContext } from "../catalog/tool.ts";
import { ADDED_STEPS, DELETED_STEP, EDITED_STEP, LIST_SEPARATOR, plural, REORDERED_STEPS } from "../db/summaries.ts";
import {
  appendStep, roomForSteps, selectStepTask, setStep, stepDiffers, stepStatusSummary, stepSummary, stepTask, stepsNotInOrder,
} from "../db/step-writes.ts";
import { idempotencyKey, LIMITS, stepId, taskId } from "./schemas.ts";
import { stepStatus, trashedShape } from "./shapes.ts";

export const STEP_LIMITS = { text: 2_000, perTask: 500 } as const;


const stepText = z.string().trim().min(1, "must not be empty").max(STEP_LIMITS.text);

const stepShape = z.object({
  id: z.string(),
  task_id: z.string(),
  position: z.number().describe("1-based place in the checklist"),
  text: z.string(),
  status: stepStatus,
  created_at: z.string(),
  updated_at: z.string(),
});

const TASK_HINT = "list_tasks or search_tasks finds task ids";

const listSteps = defineTool({
  name: "list_steps",
  description: "A task's checklist: its steps in order, each with its status.",
  input: z.strictObject({ task_id: taskId }),
  output: z.object({ task_id: z.string(), steps: z.array(stepShape) }),
  async handler(ctx, { task_id }) {
    const { task, steps } = await taskWithSteps(ctx.db, ctx.principal.accountId, task_id);
    if (!task) return throwTaskMissing(ctx.db, ctx.principal.accountId, task_id, TASK_HINT);
    return { task_id, steps };
  },
});

const addSteps = defineTool({
  name: "add_steps",
  description: "Append steps (texts, in order) to a task's checklist as pending. Returns steps.",
  input: z.strictObject({
    task_id: taskId,
    steps: z.array(stepText).min(1).max(LIMITS.batch).meta({ detail: "the steps' texts, in order" }),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({ task_id: z.string(), steps: z.array(stepShape) }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    // A live task with room: each step is placed after the last one placed.
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) => {
        const steps = args.steps.map((text) => ({
          id: newId(ID_PREFIX.step),
          task_id: args.task_id,
          text,
          status: "pending" as const,
          created_at: ctx.now,
          updated_at: ctx.now,
        }));
        const ids = steps.map((s) => s.id).join(LIST_SEPARATOR);
        return ctx.commit(
          {
            statements: [
              ctx.guard(roomForSteps({ taskId: args.task_id, accountId: p.accountId, adding: steps.length, limit: STEP_LIMITS.perTask }), miss),
              ...steps.map((s) => named(s.id, appendStep(db, p.accountId, s))),
            ],
            activity: { target: args.task_id, summary: ADDED_STEPS.text({ count: steps.length, s: plural(steps.length), ids }) },
          },
          (rows) => ({ task_id: args.task_id, steps: steps.map((s) => toStep(rows[s.id][0] as Step)) }),
        );
      },
      // Missed: the task is missing or in the trash, or has no room for these steps (refused).
      async diagnose() {
        const { task, live } = await taskForAppend(db, p.accountId, args.task_id);
        if (!task) return throwTaskMissing(db, p.accountId, args.task_id, TASK_HINT);
        if (live + args.steps.length > STEP_LIMITS.perTask) {
          throw invalid(
            `steps: task ${args.task_id} has ${live} steps and may hold at most ${STEP_LIMITS.perTask}; add at most ${Math.max(0, STEP_LIMITS.perTask - live)}, or delete_step finished ones first.`,
          );
        }
        return AGAIN;
      },
    });
  },
});

/**
 * A live step's status or text set, when it changes, in one batch; answered
 * with the step as written. Missed: the step is missing or in the trash
 * (requireLiveStep says which), or already so (a no-op).
 */
function setStepOutcome(
  ctx: ToolContext, stepIdValue: string, column: "status" | "text", value: string, summary: string | Condition,
  /** Statements to run first (a claim's renewal); the guard still rolls them back on a miss. */
  before: D1PreparedStatement[] = [],
): Outcome<{ step: Step; changed: boolean }> {
  const { db, principal: p } = ctx;
  return {
    subject: `step ${stepIdValue}`,
    apply: (miss) =>
      ctx.commit(
        {
          statements: [
            ...before,
            ctx.guard(stepDiffers({ stepId: stepIdValue, accountId: p.accountId, column, value }), miss),
            named("step", setStep(db, p.accountId, stepIdValue, column, value, ctx.now)),
          ],
          activity: { target: null, targetSql: stepTask(p.accountId, stepIdValue), ...(typeof summary === "string" ? { summary } : { summarySql: summary }) },
        },
        (rows) => ({ step: toStep(rows.step[0] as Step), changed: true }),
      ),
    async diagnose() {
      const row = await requireLiveStep(db, p.accountId, stepIdValue);
      return row[column] === value ? { step: toStep(row), changed: false } : AGAIN;
    },
  };
}

const setStatus = defineTool({
  name: "set_step_status",
  description: "Set a step's status. Returns step and changed.",
  input: z.strictObject({ step_id: stepId, status: stepStatus }),
  output: z.object({ step: stepShape, changed: z.boolean() }),
  async handler(ctx, { step_id, status }) {
    const { db, principal: p } = ctx;
    return ctx.write(
      setStepOutcome(ctx, step_id, "status", status, stepSummary(p.accountId, step_id, stepStatusSummary(step_id, status)), [
        renewLeaseOfStep(db, p.accountId, step_id, actorName(p), ctx.now),
      ]),
    );
  },
});

const updateStep = defineTool({
  name: "update_step",
  description: "Overwrite a step's text. Returns step and changed.",
  input: z.strictObject({ step_id: stepId, text: stepText }),
  output: z.object({ step: stepShape, changed: z.boolean() }),
  async handler(ctx, { step_id, text }) {
    return ctx.write(setStepOutcome(ctx, step_id, "text", text, EDITED_STEP.text({ step: step_id })));
  },
});

const deleteStep = defineTool({
  name: "delete_step",
  description: "Move a step to the trash (restore_from_trash puts it back in place). Returns trash_id and purge_after.",
  input: z.strictObject({ step_id: stepId }),
  output: trashedShape.extend({ step_id: z.string(), task_id: z.string() }),
  async handler(ctx, { step_id }) {
    const { db, principal: p } = ctx;
    return ctx.write({
      subject: `step ${step_id}`,
      apply: (miss) => {
        const trash = moveToTrash(db, { accountId: p.accountId, kind: "step", targetId: step_id, deletedBy: actorName(p), deletedByToken: p.tokenId, now: ctx.now });
        return ctx.commit(
          {
            statements: [ctx.guard(stepIsLive({ stepId: step_id, accountId: p.accountId }), miss), named("item", trash.item), ...trash.marks, named("task", selectStepTask(db, p.accountId, step_id))],
            activity: {
              target: null,
              targetSql: stepTask(p.accountId, step_id),
              summary: DELETED_STEP.text({ step: step_id, trash: trash.trashId }),
            },
          },
          (rows) => {
            const item = rows.item[0] as { id: string; purge_after: string };
            return { step_id, task_id: (rows.task[0] as { task_id: string }).task_id, trash_id: item.id, purge_after: item.purge_after, item_count: 1, already_in_trash: false };
          },
        );
      },
      // Missed: the step (or its task) is missing, or the step is in the trash already (a repeat answers with its trash item).
      async diagnose() {
        const row = await requireStep(db, p.accountId, step_id);
        if (!row.trash_id) return AGAIN;
        if (!row.trash_purge_after) throw notFound("step", step_id, "list_steps shows a task's step ids");
        return { step_id, task_id: row.task_id, trash_id: row.trash_id, purge_after: row.trash_purge_after, item_count: 1, already_in_trash: true };
      },
    });
  },
});

const reorder = defineTool({
  name: "reorder_steps",
  description: "Reorder a task's checklist: every live step id exactly once, in the new order. Returns steps.",
  input: z.strictObject({
    task_id: taskId,
    step_ids: z.array(stepId).min(1).max(STEP_LIMITS.perTask).meta({ detail: "all the task's live step ids, in the new order" }),
  }),
  output: z.object({ task_id: z.string(), steps: z.array(stepShape), changed: z.boolean() }),
  async handler(ctx, { task_id, step_ids }) {
    const { db, principal: p } = ctx;
    // The ids are exactly the live steps, in an order other than theirs.
    return ctx.write({
      subject: `task ${task_id}`,
      apply: (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(liveStepsAre({ taskId: task_id, accountId: p.accountId, stepIds: step_ids }), miss),
              ctx.guard(stepsNotInOrder({ taskId: task_id, accountId: p.accountId, stepIds: step_ids }), miss),
              reorderSteps(db, p.accountId, task_id, step_ids, ctx.now),
              named("steps", selectLiveSteps(db, p.accountId, task_id)),
            ],
            activity: { target: task_id, summary: REORDERED_STEPS.text({ count: step_ids.length, ids: step_ids.join(LIST_SEPARATOR) }) },
          },
          (rows) => ({ task_id, steps: (rows.steps as Step[]).map(toStep), changed: true }),
        ),
      // Missed: the task is missing or in the trash, the ids are not its live steps once each (refused), or already in this order (a no-op).
      async diagnose() {
        const { task, steps } = await taskWithSteps(db, p.accountId, task_id);
        if (!task) return throwTaskMissing(db, p.accountId, task_id, TASK_HINT);
        const seen = new Set<string>();
        const duplicates = new Set<string>();
        for (const id of step_ids) (seen.has(id) ? duplicates : seen).add(id);
        const live = new Set(steps.map((s) => s.id));
        const foreign = [...seen].filter((id) => !live.has(id));
        const missing = steps.filter((s) => !seen.has(s.id)).map((s) => s.id);
        if (duplicates.size || foreign.length || missing.length) {
          const problems = [
            missing.length ? `missing: ${missing.join(", ")}` : "",
            foreign.length ? `not live steps of this task: ${foreign.join(", ")}` : "",
            duplicates.size ? `listed more than once: ${[...duplicates].join(", ")}` : "",
          ].filter(Boolean);
          throw invalid(`step_ids must list each live step of task ${task_id} exactly once (${problems.join("; ")}). list_steps shows the current ids.`);
        }
        return step_ids.every((id, i) => steps[i].id === id) ? { task_id, steps, changed: false } : AGAIN;
      },
    });
  },
});

export const stepTools: AnyTool[] = [listSteps, addSteps, setStatus, updateStep, deleteStep, reorder];
