import { z } from "zod";
import type { StepStatus, TaskStatus } from "../domain/vocabulary.ts";
import type { RunStatus } from "../db/runs.ts";
import { conflict, invalid, notFound } from "../domain/errors.ts";
import { actorName } from "../domain/principal.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import {
  agentExists, assigneeExists, insertTaskFrom, projectIsLive, taskInProject, taskIsLive, priorityIndex, requireTask, taskAtVersion, taskChangesEach, toTask,
  type TaskRow, updateTaskReturning, throwTaskMissing,
} from "../db/tasks.ts";
import { indexNewTask, reindexTask } from "../db/search-index.ts";
import { readBatchInProject, requireProject } from "../db/projects.ts";
import { selectTaskList, taskDetailStatements } from "../db/task-views.ts";
import { readBatch } from "../db/batch.ts";
import { APPROVAL_KINDS, toLatestAnswer, toPendingRequest } from "../db/approvals.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { claimExpiry } from "../domain/claims.ts";
import { scopeShown } from "../domain/scopes.ts";
import { AGAIN, defineTool, named, type BatchStep, type ToolContext } from "../catalog/tool.ts";
import type { Schedule } from "../domain/recurrence.ts";
import { CREATED_REPEATING, CREATED_TASK, LIST_SEPARATOR, UPDATED_REPEATING, UPDATED_TASK } from "../db/summaries.ts";
import {
  assigneeName, cursor, idempotencyKey, isoTime, limit, longText, priority, projectId, scopeArg, scopeValue, taskId, taskStatus, title, toUtc,
} from "./schemas.ts";
import { CLAIM_EXPIRES, personShape, runStatus, stepStatus, taskList, taskRef, taskShape, waitsOnRef } from "./shapes.ts";
import type { WaitsOnRef } from "../db/dependencies.ts";
import { selectSeries, selectTimeZone, type OccurrenceRow } from "../db/series.ts";
import { describeRecurrence, describeSeries, newSeriesId, recurrenceRule, recurrenceView, scheduleFor, seriesView } from "./series.ts";

async function timeZoneOf(db: D1Database, accountId: string): Promise<string> {
  return (await selectTimeZone(db, accountId).first<{ time_zone: string }>())?.time_zone ?? "UTC";
}

const createTask = defineTool({
  name: "create_task",
  description: "Create a task in a project or under parent_id (joining its project). auto_ok defaults from the project, then the account. Returns task.",
  input: z.strictObject({
    title,
    project_id: projectId.optional(),
    parent_id: taskId.optional().meta({ detail: "make it a subtask of this task (it joins the parent's project)" }),
    notes: longText.optional(),
    priority: priority.default("normal"),
    due_at: isoTime.optional(),
    estimate_minutes: z.number().int().min(1).max(100_000).optional(),
    assignee: assigneeName.optional(),
    auto_ok: z.boolean().optional().describe("agents may complete it without a person's approval"),
    recurrence: recurrenceRule.optional().describe("RRULE (FREQ=DAILY|WEEKLY|MONTHLY|YEARLY; INTERVAL, BYDAY, BYMONTHDAY, COUNT, UNTIL) from due_at, in the account's zone"),
    scope: scopeArg.optional(),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({ task: taskShape }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const dueAt = args.due_at ? toUtc(args.due_at) : null;
    // A recurring task's schedule starts in the account's zone; a rule or due time it cannot start from is refused once the rows are checked.
    const zone = args.recurrence ? await timeZoneOf(db, a) : "UTC";
    const start = () => (args.recurrence ? scheduleFor(args.recurrence, zone, dueAt) : null);
    return ctx.write({
      subject: "the new task's parent, project or assignee",
      // The parent, project and assignee it names are guards; its project and auto-OK are computed in the insert.
      async apply(miss) {
        let schedule: Schedule | null;
        try {
          schedule = start();
        } catch {
          throw miss;
        }
        const statements: BatchStep<"task">[] = [];
        if (args.parent_id) {
          statements.push(ctx.guard(taskIsLive({ taskId: args.parent_id, accountId: a }), miss));
          if (args.project_id) statements.push(ctx.guard(taskInProject({ taskId: args.parent_id, accountId: a, projectId: args.project_id }), miss));
        } else if (args.project_id) {
          statements.push(ctx.guard(projectIsLive({ projectId: args.project_id, accountId: a }), miss));
        }
        if (args.assignee && args.assignee !== "human") statements.push(ctx.guard(agentExists({ accountId: a, name: args.assignee }), miss));
        const t = {
          id: newId(ID_PREFIX.task),
          accountId: a,
          projectId: args.parent_id ? null : args.project_id ?? null,
          parentId: args.parent_id ?? null,
          title: args.title,
          notes: args.notes ?? "",
          priority: priorityIndex(args.priority),
          dueAt,
          estimateMinutes: args.estimate_minutes ?? null,
          assignee: args.assignee ?? null,
          assigneePerson: p.person,
          autoOk: args.auto_ok ?? null,
          createdBy: actorName(p),
          now: ctx.now,
          schedule,
          seriesId: schedule ? newSeriesId() : null,
          scope: args.scope ? scopeValue(args.scope) : null,
        };
        statements.push(named("task", insertTaskFrom(db, t)));
        statements.push(indexNewTask(db, a, t));
        const repeats = schedule ? CREATED_REPEATING.text({ rule: schedule.rule, series: t.seriesId as string }) : "";
        return ctx.commit(
          { statements, activity: { target: t.id, summary: CREATED_TASK.text({ title: t.title, repeats }) } },
          (rows) => ({ task: toTask(rows.task[0] as TaskRow) }),
        );
      },
      // Missed: the parent, project or assignee is missing, the project is not the parent's, or the recurrence cannot start.
      async diagnose() {
        if (args.parent_id) {
          const parent = await requireTask(db, a, args.parent_id);
          if (args.project_id && args.project_id !== parent.project_id) {
            throw invalid(`project_id: a subtask lives in its parent's project (${parent.project_id ?? "none"}); omit project_id or use move_task on the parent.`);
          }
        } else if (args.project_id) {
          await requireProject(db, a, args.project_id);
        }
        if (args.assignee && !(await assigneeExists(db, a, args.assignee))) {
          throw notFound("agent", args.assignee, "list_agents names the agents; `human` is the account's person");
        }
        start();
        return AGAIN;
      },
    });
  },
});

const getTask = defineTool({
  name: "get_task",
  description: "One task with its steps, labels, dependencies, comments, runs, pending request, latest answer, last block and recurrence.",
  input: z.strictObject({ task_id: taskId }),
  output: z.object({
    task: taskShape,
    steps: z.array(z.object({ id: z.string(), position: z.number(), text: z.string(), status: stepStatus })),
    labels: z.array(z.object({ id: z.string(), name: z.string() })),
    waits_on: z.array(waitsOnRef).describe("what it waits on, unfinished ones in the trash too"),
    blocks: z.array(taskRef),
    latest_comments: z.array(z.object({ id: z.string(), author: z.string(), body: z.string(), created_at: z.string() })),
    recent_runs: z.array(z.object({ id: z.string(), agent: z.string(), status: runStatus, started_at: z.string(), finished_at: z.string().nullable() })),
    pending_approval: z
      .object({
        id: z.string(),
        kind: z.enum(APPROVAL_KINDS),
        question: z.string(),
        requested_by: z.string(),
        created_at: z.string(),
        choices: z.array(z.string()).nullable().describe("the choices a question offers (null: yes/no)"),
        accepts_words: z.boolean().describe("true when the question takes an answer in words"),
      })
      .nullable()
      .describe("the request waiting for a person: a question, or a sign-off"),
    latest_answer: z
      .object({
        id: z.string(),
        question: z.string(),
        answer: z.enum(["yes", "no"]).describe("yes: go on (with choice and words when given); no: see reason"),
        reason: z.string().nullable(),
        decided_by: z.string(),
        decided_at: z.string(),
        decided_by_person: personShape.nullable().describe("which person answered"),
        choice: z.string().nullable().describe("the choice the person picked, of a question that offered choices"),
        words: z.string().nullable().describe("the person's answer in words"),
      })
      .nullable()
      .describe("a person's answer to the task's latest answered question"),
    subtask_count: z.number(),
    recurrence: recurrenceView.describe("the schedule the live occurrence of a recurring task repeats by"),
    series: seriesView.describe("the occurrences of the task's series (a recurring task, or a past occurrence)"),
    claim_expires_at: CLAIM_EXPIRES,
    scope: z.array(z.string()),
    last_block: z
      .object({ reason: z.string(), blocked_by: z.string().nullable(), blocked_at: z.string() })
      .nullable()
      .describe("the task's latest block, kept after it ends: its reason, who blocked it, when"),
  }),
  async handler(ctx, { task_id }) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const [seriesRows, seriesCount] = selectSeries(db, a, task_id);
    const { task, steps, labels, waitsOn, blocks, comments, runs, approval, answer, subtasks, lastBlock, zone, series, count } = await readBatch(db, {
      ...taskDetailStatements(db, a, task_id),
      zone: selectTimeZone(db, a),
      series: seriesRows,
      count: seriesCount,
    });
    const row = task[0] as TaskRow | undefined;
    if (!row) return throwTaskMissing(db, a, task_id);
    type R<T> = T[];
    return {
      task: toTask(row),
      steps: steps as R<{ id: string; position: number; text: string; status: StepStatus }>,
      labels: labels as R<{ id: string; name: string }>,
      waits_on: waitsOn as R<WaitsOnRef>,
      blocks: blocks as R<{ id: string; title: string; status: TaskStatus }>,
      latest_comments: comments as R<{ id: string; author: string; body: string; created_at: string }>,
      recent_runs: runs as R<{ id: string; agent: string; status: RunStatus; started_at: string; finished_at: string | null }>,
      pending_approval: approval[0] ? toPendingRequest(approval[0] as Parameters<typeof toPendingRequest>[0]) : null,
      latest_answer: answer[0] ? toLatestAnswer(answer[0] as Parameters<typeof toLatestAnswer>[0]) : null,
      subtask_count: (subtasks[0] as { n: number }).n,
      recurrence: describeRecurrence(row, (zone[0] as { time_zone: string } | undefined)?.time_zone ?? "UTC", ctx.nowMs),
      series: describeSeries(row, series as OccurrenceRow[], (count[0] as { n: number }).n),
      claim_expires_at: claimExpiry(row),
      scope: scopeShown(row.scope),
      last_block: (lastBlock[0] as { reason: string; blocked_by: string | null; blocked_at: string } | undefined) ?? null,
    };
  },
});

const listTasks = defineTool({
  name: "list_tasks",
  description: "All the account's tasks, newest first, filtered by project, status, label, assignee or due range.",
  input: z.strictObject({
    project_id: projectId.optional(),
    status: z.array(taskStatus).min(1).max(6).optional().meta({ detail: "any of these statuses (default: all)" }),
    label: z.string().min(1).max(100).optional().meta({ detail: "label name" }),
    assignee: assigneeName.optional(),
    unassigned: z.boolean().optional().meta({ detail: "only tasks without an assignee" }),
    due_after: isoTime.optional(),
    due_before: isoTime.optional(),
    include_snoozed: z.boolean().default(true),
    limit,
    cursor,
  }),
  output: taskList,
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const { list } = await readBatchInProject(ctx.db, a, args.project_id, {
      list: selectTaskList(ctx.db, a, {
        projectId: args.project_id,
        statuses: args.status,
        label: args.label,
        assignee: args.assignee,
        unassigned: args.unassigned,
        dueAfter: args.due_after ? toUtc(args.due_after) : undefined,
        dueBefore: args.due_before ? toUtc(args.due_before) : undefined,
        hideSnoozedAt: args.include_snoozed ? undefined : ctx.now,
        after: decodeCursor(args.cursor),
        limit: args.limit,
      }),
    });
    const { items, next_cursor } = page(list as TaskRow[], args.limit, (r) => ({ k: r.created_at, id: r.id }));
    return { items: items.map(toTask), next_cursor };
  },
});

const updateTask = defineTool({
  name: "update_task",
  description: "Overwrite a task's fields; expected_version refuses a stale edit. Returns task.",
  input: z.strictObject({
    task_id: taskId,
    title: title.optional(),
    notes: longText.optional(),
    priority: priority.optional(),
    due_at: isoTime.nullable().optional().describe("null clears it"),
    estimate_minutes: z.number().int().min(1).max(100_000).nullable().optional().describe("null clears it"),
    recurrence: recurrenceRule
      .nullable()
      .optional()
      .describe("as in create_task; null stops repeating"),
    scope: scopeArg.optional(),
    expected_version: z.number().int().min(1).optional().meta({ detail: "the version you read; refused if the task has changed since" }),
  }),
  output: z.object({ task: taskShape, changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    // The fields given, as stored. In the usual case each of them changes (so each is named in the history), at the expected version.
    const given: Record<string, unknown> = {};
    if (args.title !== undefined) given.title = args.title;
    if (args.notes !== undefined) given.notes = args.notes;
    if (args.priority !== undefined) given.priority = priorityIndex(args.priority);
    if (args.due_at) given.due_at = toUtc(args.due_at);
    if (args.estimate_minutes !== undefined) given.estimate_minutes = args.estimate_minutes;
    if (args.scope !== undefined) given.scope = scopeValue(args.scope);
    // A recurrence, or a due time cleared, is decided over the task as it is (diagnose reads it), as is a call that gives no field.
    const usual = args.recurrence === undefined && args.due_at !== null && Object.keys(given).length > 0;
    return ctx.write({
      subject: `task ${args.task_id}`,
      apply: (miss) =>
        usual
          ? writeTaskChanges(ctx, ctx.guard(taskChangesEach({ taskId: args.task_id, accountId: a, version: args.expected_version, changes: given }), miss), args.task_id, given, "")
          : Promise.reject(miss),
      // Missed: the task is missing or stale, or not every field given changes, or the call sets a recurrence or clears the due time.
      async diagnose(lost) {
        const row = await requireTask(db, a, args.task_id);
        if (args.expected_version !== undefined && row.version !== args.expected_version) {
          throw conflict(`task ${args.task_id} has changed since version ${args.expected_version}: get_task shows the current version and values; apply your change to those and pass that version.`);
        }
        const changes: Record<string, unknown> = {};
        if (args.title !== undefined && args.title !== row.title) changes.title = args.title;
        if (args.notes !== undefined && args.notes !== row.notes) changes.notes = args.notes;
        if (args.priority !== undefined && priorityIndex(args.priority) !== row.priority) changes.priority = priorityIndex(args.priority);
        if (args.due_at !== undefined) {
          const due = args.due_at === null ? null : toUtc(args.due_at);
          if (due !== row.due_at) changes.due_at = due;
        }
        if (args.estimate_minutes !== undefined && args.estimate_minutes !== row.estimate_minutes) changes.estimate_minutes = args.estimate_minutes;
        if (args.scope !== undefined && scopeValue(args.scope) !== row.scope) changes.scope = scopeValue(args.scope);
        let repeats = "";
        if (args.recurrence === null && row.recurrence) changes.recurrence = null;
        if (typeof args.recurrence === "string") {
          if (row.status === "done" || row.status === "cancelled") {
            throw conflict(`task ${row.id} is ${row.status}: only an unfinished task can repeat. reopen_task brings it back first, or create_task with recurrence starts a new series.`);
          }
          const due = changes.due_at !== undefined ? (changes.due_at as string | null) : row.due_at;
          const schedule = JSON.stringify(scheduleFor(args.recurrence, await timeZoneOf(db, a), due));
          if (schedule !== row.recurrence) {
            changes.recurrence = schedule;
            if (!row.recurrence) changes.series_id = newSeriesId();
            repeats = UPDATED_REPEATING.text({ rule: JSON.parse(schedule).rule });
          }
        }
        const willRepeat = changes.recurrence !== undefined ? changes.recurrence !== null : row.recurrence !== null;
        if (willRepeat && changes.due_at === null) {
          throw invalid("due_at: a recurring task needs a due time; pass recurrence: null as well to stop repeating it.");
        }
        const fields = Object.keys(changes);
        if (fields.length === 0) return { task: toTask(row), changed: false };
        if (usual && fields.length === Object.keys(given).length) return AGAIN;
        // Another outcome: only the fields that change (with a recurrence, from the task as read), at the version read.
        return writeTaskChanges(ctx, ctx.guard(taskAtVersion({ taskId: row.id, accountId: a, version: row.version }), lost), row.id, changes, repeats);
      },
    });
  },
});

/** Sets the changed fields of a live task (guarded by `guard`) and names them in the history; series_id is not a field the caller named. */
function writeTaskChanges(ctx: ToolContext, guard: D1PreparedStatement, taskId: string, changes: Record<string, unknown>, repeats: string) {
  const a = ctx.principal.accountId;
  const fields = Object.keys(changes).filter((f) => f !== "series_id");
  return ctx.commit(
    {
      statements: [guard, named("task", updateTaskReturning(ctx.db, a, taskId, changes, ctx.now)), ...reindexTask(ctx.db, a, taskId, changes)],
      activity: { target: taskId, summary: UPDATED_TASK.text({ fields: fields.join(LIST_SEPARATOR), repeats }) },
    },
    (rows) => ({ task: toTask(rows.task[0] as TaskRow), changed: true }),
  );
}

export const taskTools = [listTasks, getTask, createTask, updateTask];
